"""API lists honour ``page_size`` within a bound."""

import pytest

from tests.factories import make_case

pytestmark = pytest.mark.django_db


@pytest.fixture
def many_cases(priya):
    return [make_case(priya, name=f"Case {n}") for n in range(7)]


@pytest.mark.parametrize(
    "query,shown",
    [
        ("", 7),
        ("?page_size=3", 3),
        ("?page_size=1", 1),
        ("?page_size=0", 7),  # not a positive size: the default
        ("?page_size=abc", 7),
        ("?page_size=-4", 7),
        ("?page_size=99999999999999999999999999999", 7),
    ],
)
def test_page_size(api_as, many_cases, query, shown):
    response = api_as("priya").get(f"/api/v1/cases/{query}")
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 7
    assert len(body["results"]) == shown


def test_page_size_is_capped(api_as, many_cases, monkeypatch):
    from apps.core.pagination import BoundedPageNumberPagination

    assert BoundedPageNumberPagination.max_page_size == 500
    monkeypatch.setattr(BoundedPageNumberPagination, "max_page_size", 4)
    response = api_as("priya").get("/api/v1/cases/?page_size=100000")
    assert response.status_code == 200
    assert len(response.json()["results"]) == 4


def test_the_next_link_keeps_the_size(api_as, many_cases):
    body = api_as("priya").get("/api/v1/cases/?page_size=3").json()
    assert "page_size=3" in body["next"]
