import re

import pytest


@pytest.mark.django_db
def test_the_schema_and_docs_load_without_any_cdn(browser_as, people):
    client = browser_as("aude")
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/cases/" in schema.content
    docs = client.get("/api/docs/").content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', docs)
    assert assets, "the docs page loads its assets"
    assert all(a.startswith("/static/") or a.startswith("/api/") for a in assets), assets


@pytest.mark.django_db
def test_the_header_names_the_role_as_people_read_it(browser_as, people):
    page = browser_as("priya").get("/cases/").content.decode()
    assert "Procurement reviewer" in page
    assert "procurement_reviewer" not in page
