"""The scale benchmark's URLs are the product's: each one it measures resolves to a view,
so a renamed or moved page fails here, not in a benchmark run an hour later."""

import pytest
from django.urls import Resolver404, resolve

from benchmarks import scale

TARGETS = {
    "demo_case": 1,
    "demo_offer": 1,
    "generated_case": 2,
    "background_cases": [3],
    "generated_offer": 2,
    "bundle": 1,
    "real_bundle": 2,
    "portal": "a-link-secret",
    "sessions": {},
    "api_token": "",
}


@pytest.mark.parametrize("url", scale.measured_urls(TARGETS), ids=lambda url: url.label)
def test_every_measured_url_resolves_in_the_benchmarks_urls(url):
    path = url.path.split("?", 1)[0]
    try:
        match = resolve(path, urlconf="benchmarks.scale_urls")
    except Resolver404:
        pytest.fail(f"{url.label}: {path} is not a page of the product")
    assert callable(match.func)


def test_the_measured_personas_are_the_demos():
    from apps.casework.demo import DEMO_USERS

    personas = {username for username, *_rest in DEMO_USERS} | {"vendor"}
    assert {url.who for url in scale.measured_urls(TARGETS)} <= personas


def test_every_working_day_page_is_judged_and_the_verdict_names_a_slow_one():
    rows = [
        {
            "label": "trivial view",
            "p95_ms": 5.0,
            "day": False,
            "non_200": 0,
            "queries": 2,
            "queries_demo": 2,
        },
        {
            "label": "search",
            "p95_ms": 60.0,
            "day": True,
            "non_200": 0,
            "queries": 9,
            "queries_demo": 9,
        },
        {
            "label": "approval",
            "p95_ms": 40.0,
            "day": True,
            "non_200": 0,
            "queries": 10,
            "queries_demo": 11,
        },
        {
            "label": "case page uncached (demo case)",
            "p95_ms": 20.0,
            "day": False,
            "non_200": 0,
            "queries": 7,
            "queries_demo": 7,
            "edit_p95_ms": 120.0,
        },
    ]
    verdicts = scale.page_verdicts(rows, trivial_p95=5.0)
    assert verdicts["failed"] == ["search"]  # over 50 ms; the approval is within 100 ms, 8x
    assert verdicts["differing_queries"] == ["approval"]
    assert verdicts["edit_p95_ms"] == 120.0
    assert rows[2]["ratio"] == 8.0
