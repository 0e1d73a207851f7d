"""My work along one case, from its creation to its acceptance (docs/rules/my-work.md): at
each step, what each role must and must not find; and the cockpit once the case is
decided (the losing offers no longer need work, acceptance is not in place unmeasured)."""

from django.urls import reverse

from apps.acceptance.services import acceptance_signoff
from apps.approvals.services import approval_decide, case_submit_for_approval
from apps.cases.models import ProcurementCase
from apps.casework.cockpit import tile
from apps.casework.dashboard import dashboard_for
from apps.casework.inbox import work_items
from apps.casework.panels import case_panels
from apps.casework.registers import approved_offer_id
from apps.portal.claims import SPEC_CLAIMS
from apps.portal.models import ClaimSection, VendorDocument
from apps.portal.services import review
from tests.acceptance.factories import make_evidence, make_plan, record_faults
from tests.approvals.factories import make_ready_case
from tests.factories import make_case, make_offer
from tests.portal.factories import make_invitation
from tests.portal.review_factories import make_document, make_proposal


def keys(person) -> set[str]:
    return {item.key for item in work_items(dashboard_for(person))}


def of_case(person, case) -> set[str]:
    """The person's items on ``case``, but for the reminder of their harness tokens."""
    return {
        item.key
        for item in work_items(dashboard_for(person))
        if item.case_id == case.pk and not item.key.startswith("tokens:")
    }


def test_a_new_case_waits_for_procurement_then_for_legal_and_the_tech_lead(people):
    priya, lena, tariq, aude = (people[n] for n in ("priya", "lena", "tariq", "aude"))
    case = make_case(priya)
    assert of_case(priya, case) == {"offers:minimum"}
    offer = make_offer(priya, case)
    assert f"offer:{offer.pk}:score" in of_case(priya, case)
    # Legal starts the offer's clause checklist; the tech lead transcribes its spec.
    assert f"offer:{offer.pk}:checklist" in of_case(lena, case)
    assert f"offer:{offer.pk}:spec" in of_case(tariq, case)
    assert of_case(aude, case) == set()
    assert not of_case(people["fiona"], case)


def test_vendor_answers_await_the_reviewer_of_their_section(people):
    priya, lena, tariq = people["priya"], people["lena"], people["tariq"]
    invitation, _secret = make_invitation(priya)
    offer = invitation.offer
    for claim in SPEC_CLAIMS:
        make_proposal(invitation, ClaimSection.SPEC, claim.name, "1")
    make_proposal(invitation, ClaimSection.COMMERCIAL, "unit_price", "2.50")
    spec_key = f"offer:{offer.pk}:answers:spec"
    item = next(i for i in work_items(dashboard_for(tariq)) if i.key == spec_key)
    assert item.detail.startswith(f"{len(SPEC_CLAIMS)} vendor answers await your review")
    assert item.url == reverse("portal:answers", args=[offer.pk])
    # Each section to its reviewers only: the spec to the tech lead, prices to procurement.
    assert spec_key not in keys(lena) and spec_key not in keys(priya)
    assert f"offer:{offer.pk}:answers:commercial" in keys(priya)
    assert f"offer:{offer.pk}:answers:commercial" not in keys(tariq)


def test_vendor_documents_await_their_reviewers_until_decided(people):
    priya, tariq, aude = people["priya"], people["tariq"], people["aude"]
    invitation, _secret = make_invitation(priya)
    offer = invitation.offer
    first = make_document(invitation)
    make_document(invitation, name="dpa.pdf")
    key = f"offer:{offer.pk}:documents"
    item = next(i for i in work_items(dashboard_for(tariq)) if i.key == key)
    assert item.detail == "2 vendor documents await your review"
    assert item.url == reverse("portal:answers", args=[offer.pk]) + "#documents"
    assert key in keys(priya) and key in keys(people["lena"])
    assert key not in keys(aude)  # the auditor decides no document
    review.document_decide(actor=tariq, document=first, decision="accept", note="")
    item = next(i for i in work_items(dashboard_for(tariq)) if i.key == key)
    assert item.detail == "1 vendor document awaits your review"
    review.document_decide(
        actor=tariq, document=VendorDocument.objects.get(name="dpa.pdf"), decision="accept"
    )
    assert key not in keys(tariq)


def test_from_approval_to_acceptance(people, tomas, passing_harness):
    priya, lena, tariq, fiona = (people[n] for n in ("priya", "lena", "tariq", "fiona"))
    case, offer, offers = make_ready_case(people)
    losing = [o for o in offers if o.pk != offer.pk]
    make_evidence(tariq, offer)
    case = case_submit_for_approval(actor=priya, case=case)
    assert "decision" in of_case(tariq, case) and "decision" in of_case(tomas, case)
    # The losing offers have no checklist yet: legal's work while they are weighed.
    assert {f"offer:{o.pk}:checklist" for o in losing} <= of_case(lena, case)

    approval_decide(actor=tariq, case=case, decision="approved", comment="Held", offer=offer)
    assert "decision" not in of_case(tariq, case)
    assert of_case(lena, case) == set()  # the losing offers' work closed
    assert of_case(tariq, case) == {"acceptance:plan"}
    assert of_case(tomas, case) == {"acceptance:plan"}
    assert not of_case(fiona, case)

    # The cockpit after the decision: no area needs work for the losing offers, and
    # acceptance is not in place before anything is measured.
    case.refresh_from_db()
    winner = approved_offer_id(case)
    assert winner == offer.pk
    tiles = {
        t.area: t for t in (tile(case, p, winner=winner) for p in case_panels(case, actor=priya))
    }
    for area in ("offers", "contracts", "evidence"):
        assert not [
            line for line in tiles[area].missing if any(str(o.vendor) in line for o in losing)
        ]
    assert tiles["acceptance"].state == "todo"  # not started, never "in place"

    plan = make_plan(tariq, offer)
    acceptance = next(
        tile(case, p, winner=winner)
        for p in case_panels(case, actor=tariq)
        if p.area == "acceptance"
    )
    # Planned, the fault injections not recorded yet: it needs work, and says where.
    assert acceptance.state == "open"
    assert any(
        "Run the acceptance tests" in line
        and line.url == reverse("acceptance:result_create", args=[plan.pk])
        for line in acceptance.missing
    )
    assert "acceptance:record" in of_case(tariq, case)
    record_faults(tariq, plan)
    # Every layer passes: another tech lead than the one who recorded signs it off.
    assert "acceptance:signoff" in of_case(tomas, case)
    assert "acceptance:signoff" not in of_case(tariq, case)
    acceptance_signoff(actor=tomas, plan=plan, comment="All layers pass")
    case.refresh_from_db()
    assert case.status == ProcurementCase.Status.ACCEPTED
    for name in ("priya", "lena", "tariq", "fiona", "aude"):
        assert not of_case(people[name], case), name
