"""An offer's vendor cannot change once anything about the offer was reviewed.

A checklist, a waiver, the vendor's written claims, scores, evidence and
decisions all judged the offer as made by its vendor; moved to another vendor
they would vouch for an offer nobody reviewed. The refusal lives in the
service, so the web form, the API and the admin all get it.
"""

import hashlib
import itertools

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.contracts.services import red_flag_waive
from apps.core.services import tracked_create
from apps.evidence.models import EvidenceBundle
from apps.evidence.services import harness_token_create
from apps.offers.models import Offer
from apps.offers.services import declared_spec_update
from apps.scorecards.services import scorecard_save
from tests.acceptance.factories import approved_offer, make_plan
from tests.approvals.factories import make_verification
from tests.assessments.factories import make_assessment
from tests.contracts.factories import item, make_checklist, set_statuses
from tests.factories import FULL_SPEC, make_case, make_offer, make_vendor

_n = itertools.count(1)


def _plain_offer(people):
    case = make_case(people["priya"])
    return make_offer(people["priya"], case)


def _checklist(people):
    offer = _plain_offer(people)
    make_checklist(people["lena"], offer=offer)
    return offer


def _waiver(people):
    offer = _plain_offer(people)
    checklist = make_checklist(people["lena"], offer=offer)
    first = checklist.items.order_by("number").first()
    set_statuses(people["lena"], checklist, {first.key: "missing"})
    red_flag_waive(actor=people["lena"], item=item(checklist, first.key), reason="Accepted risk")
    return offer


def _declared_spec(people):
    offer = _plain_offer(people)
    declared_spec_update(
        actor=people["tariq"],
        spec=offer.declared_spec,
        fields={"driver_version": "550.127.05"},
        reason="From the quote",
    )
    return offer


def _scores(people):
    offer = _plain_offer(people)
    scorecard_save(actor=people["priya"], offer=offer, scores={"pricing": {"score": 4}})
    return offer


def _evidence_bundle(people):
    offer = _plain_offer(people)
    n = next(_n)
    token = harness_token_create(actor=people["tariq"], case=offer.case, offer=offer).record
    tracked_create(
        EvidenceBundle,
        actor=people["tariq"],
        reason="Evidence received",
        case=offer.case,
        offer=offer,
        token=token,
        sha256=hashlib.sha256(f"vendor-change-{n}".encode()).hexdigest(),
        size=100,
        storage_name=f"evidence/vendor-change-{n}.json",
        format_version="1",
        received_at=timezone.now(),
        nonce=f"vendor-change-{n}",
    )
    return offer


def _spec_verification(people):
    offer = _plain_offer(people)
    make_verification(people["tariq"], offer)
    return offer


def _assessment(people):
    offer = _plain_offer(people)
    make_assessment(people["lena"], offer.case, offer=offer)
    return offer


def _approval(people):
    return approved_offer(people)[1]


def _acceptance_plan(people):
    offer = approved_offer(people)[1]
    make_plan(people["tariq"], offer)
    return offer


# (what was reviewed, how it is made, the kinds the refusal names)
REVIEWS = [
    ("checklist", _checklist, ["clause checklist"]),
    ("waiver", _waiver, ["clause checklist", "red-flag waiver"]),
    ("declared spec", _declared_spec, ["declared spec"]),
    ("scores", _scores, ["scores"]),
    ("evidence bundle", _evidence_bundle, ["evidence bundle"]),
    ("spec verification", _spec_verification, ["evidence bundle", "spec verification"]),
    ("data-export assessment", _assessment, ["data-export assessment"]),
    ("approval decision", _approval, ["approval decision"]),
    ("acceptance plan", _acceptance_plan, ["acceptance plan"]),
]
IDS = [row[0] for row in REVIEWS]


def _edit_form(offer, vendor) -> dict:
    return {
        "vendor": vendor.pk,
        "accelerator_model": offer.accelerator_model,
        "accelerator_count": offer.accelerator_count,
        "unit_price": offer.unit_price,
        "currency": offer.currency,
        "billing_basis": offer.billing_basis,
        # The web form takes the prepayment in percent.
        "prepayment_ratio": "" if offer.prepayment_ratio is None else offer.prepayment_ratio * 100,
        "contract_term_months": offer.contract_term_months,
        "notes": offer.notes,
        "version": offer.version,
        "change_reason": "The quote came from the reseller, not the cloud",
    }


@pytest.mark.parametrize("kind,make,names", REVIEWS, ids=IDS)
def test_the_web_form_refuses_a_new_vendor_once_reviewed(people, browser_as, kind, make, names):
    offer = make(people)
    offer.refresh_from_db()
    before = (offer.vendor_id, offer.version, offer.history.count())
    other = make_vendor(people["priya"])
    response = browser_as("priya").post(
        reverse("offers:edit", kwargs={"pk": offer.pk}), _edit_form(offer, other)
    )
    assert response.status_code == 200
    [message] = response.context["form"].errors["vendor"]
    assert "its vendor cannot change" in message
    assert "Create a new offer for the other vendor" in message
    for name in names:
        assert name in message
    offer.refresh_from_db()
    assert (offer.vendor_id, offer.version, offer.history.count()) == before


@pytest.mark.parametrize("kind,make,names", REVIEWS, ids=IDS)
def test_the_api_refuses_a_new_vendor_once_reviewed(people, api_as, kind, make, names):
    offer = make(people)
    offer.refresh_from_db()
    before = (offer.vendor_id, offer.version, offer.history.count())
    other = make_vendor(people["priya"])
    response = api_as("priya").patch(
        f"/api/v1/offers/{offer.pk}/",
        {"vendor": other.pk, "version": offer.version, "change_reason": "Reseller"},
        format="json",
    )
    assert response.status_code == 400, response.content
    [message] = response.json()["vendor"]
    assert "its vendor cannot change" in message
    for name in names:
        assert name in message
    offer.refresh_from_db()
    assert (offer.vendor_id, offer.version, offer.history.count()) == before


def test_the_refusal_names_every_kind_found(people, browser_as):
    offer = _checklist(people)
    scorecard_save(actor=people["priya"], offer=offer, scores={"pricing": {"score": 3}})
    make_verification(people["tariq"], offer)
    offer.refresh_from_db()
    response = browser_as("priya").post(
        reverse("offers:edit", kwargs={"pk": offer.pk}),
        _edit_form(offer, make_vendor(people["priya"])),
    )
    [message] = response.context["form"].errors["vendor"]
    assert "(clause checklist, scores, evidence bundle, spec verification)" in message


def test_an_unreviewed_offer_changes_vendor_through_the_web_form(people, browser_as):
    offer = _plain_offer(people)
    other = make_vendor(people["priya"])
    response = browser_as("priya").post(
        reverse("offers:edit", kwargs={"pk": offer.pk}), _edit_form(offer, other)
    )
    assert response.status_code == 302
    offer.refresh_from_db()
    assert offer.vendor == other
    assert offer.history.first().history_change_reason.startswith("The quote came from")


def test_an_unreviewed_offer_changes_vendor_through_the_api(people, api_as):
    offer = _plain_offer(people)
    other = make_vendor(people["priya"])
    response = api_as("priya").patch(
        f"/api/v1/offers/{offer.pk}/",
        {"vendor": other.pk, "version": offer.version, "change_reason": "Reseller"},
        format="json",
    )
    assert response.status_code == 200, response.content
    offer.refresh_from_db()
    assert offer.vendor == other


def test_an_offer_created_empty_has_no_declared_spec_review(people, api_as):
    # Every offer opens with an empty declared spec; only stated claims count.
    offer = _plain_offer(people)
    assert offer.declared_spec.version == 1
    other = make_vendor(people["priya"])
    response = api_as("priya").patch(
        f"/api/v1/offers/{offer.pk}/",
        {"vendor": other.pk, "version": offer.version, "change_reason": "Reseller"},
        format="json",
    )
    assert response.status_code == 200, response.content


def test_other_fields_of_a_reviewed_offer_still_change(people, browser_as):
    offer = _checklist(people)
    offer.refresh_from_db()
    form = {**_edit_form(offer, offer.vendor), "notes": "Price held until June"}
    response = browser_as("priya").post(reverse("offers:edit", kwargs={"pk": offer.pk}), form)
    assert response.status_code == 302
    offer.refresh_from_db()
    assert offer.notes == "Price held until June"


def test_a_clash_with_another_offer_of_the_case_is_still_refused(people, browser_as):
    offer = _plain_offer(people)
    taken = make_offer(people["priya"], offer.case, spec=FULL_SPEC).vendor
    response = browser_as("priya").post(
        reverse("offers:edit", kwargs={"pk": offer.pk}), _edit_form(offer, taken)
    )
    assert response.status_code == 200
    assert "already has an offer" in response.context["form"].errors["vendor"][0]
    assert Offer.objects.get(pk=offer.pk).vendor_id == offer.vendor_id
