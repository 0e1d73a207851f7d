"""Every field a person fills on the journey's forms has a label naming it.

The browser journey finds fields by their labels, as a person using a screen
reader does; this check runs without a browser and names the unlabelled field.
"""

from html.parser import HTMLParser

import pytest

from apps.contracts.models import ChecklistItem
from tests.assessments.factories import make_assessment
from tests.contracts.factories import make_checklist
from tests.factories import FULL_SPEC, make_case, make_offer

UNLABELLED_TYPES = {"hidden", "submit", "button"}


class Fields(HTMLParser):
    """The form fields of a page and the ids that a ``<label for>`` names."""

    def __init__(self):
        super().__init__()
        self.fields: list[dict] = []
        self.label_for: set[str] = set()
        self.open_labels = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "label":
            self.open_labels += 1
            if attrs.get("for"):
                self.label_for.add(attrs["for"])
        elif tag in ("input", "select", "textarea"):
            if tag == "input" and attrs.get("type", "text") in UNLABELLED_TYPES:
                return
            self.fields.append({**attrs, "wrapped": self.open_labels > 0})

    def handle_endtag(self, tag):
        if tag == "label":
            self.open_labels = max(0, self.open_labels - 1)


def unlabelled(html: str) -> list[str]:
    parser = Fields()
    parser.feed(html)
    return [
        field.get("name", "?")
        for field in parser.fields
        if not (field["wrapped"] or field.get("aria-label") or field.get("id") in parser.label_for)
    ]


@pytest.fixture
def journey(people):
    priya, lena = people["priya"], people["lena"]
    case = make_case(priya)
    offer = make_offer(priya, case, spec=FULL_SPEC)
    checklist = make_checklist(lena, offer=offer, statuses={"prepayment": "needs_negotiation"})
    assessment = make_assessment(lena, case)
    flagged = ChecklistItem.objects.get(checklist=checklist, key="prepayment")
    return case, offer, flagged, assessment


def test_the_forms_of_the_journey_label_every_field(browser_as, journey, people):
    case, offer, flagged, assessment = journey
    fresh = make_case(people["priya"])  # a case without an assessment yet: the new form
    pages = {
        "lena": [
            f"/offers/{offer.pk}/clause-checklist/",
            f"/clause-checklist-items/{flagged.pk}/waive/",
            f"/cases/{fresh.pk}/data-export/new/",
            f"/data-export/{assessment.pk}/edit/",
            f"/data-export/{assessment.pk}/sign-off/",
        ],
        "tariq": [
            f"/offers/{offer.pk}/spec/",
            f"/cases/{case.pk}/access-matrix/edit/",
            f"/cases/{case.pk}/harness-tokens/",
            f"/cases/{case.pk}/approval/decide/",
        ],
        "priya": [f"/cases/{case.pk}/approval/submit/"],
        "aude": ["/packets/verify/", "/audit/verify-export/"],
    }
    for person, urls in pages.items():
        client = browser_as(person)
        for url in urls:
            response = client.get(url)
            assert response.status_code == 200, url
            assert unlabelled(response.content.decode()) == [], url


def test_an_unlabelled_field_is_named():
    html = (
        '<label for="id_a">A</label><input id="id_a" name="a">'
        '<label><input type="checkbox" name="b"> B</label>'
        '<input name="c" aria-label="C"><input type="hidden" name="d">'
        '<textarea id="id_e" name="e"></textarea>'
    )
    assert unlabelled(html) == ["e"]
