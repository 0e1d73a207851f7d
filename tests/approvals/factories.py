"""A case where every gate holds for one offer, built through each app's services.

The evidence app receives bundles only from the harness (a signed run); a
verification is recorded here directly with ``tracked_create``, as the upload
service would after parsing a bundle.
"""

import hashlib
from datetime import timedelta

from django.utils import timezone

from apps.access.services import access_matrix_review
from apps.contracts.services import checklist_save
from apps.core.services import tracked_create
from apps.evidence.models import EvidenceBundle, SpecVerification
from apps.evidence.rules import security
from apps.evidence.services import harness_token_create
from apps.scorecards.scoring import DEFAULT_CRITERIA
from apps.scorecards.services import scorecard_save
from tests.access.factories import make_matrix_in_place
from tests.assessments.factories import make_assessment
from tests.contracts.factories import all_acceptable, make_checklist, set_statuses
from tests.factories import FULL_SPEC, make_case, make_offer

_n = {"n": 0}

# An endpoint that refuses what it must: as the harness records its probes.
PASSING_PROBES = {
    "probes": [
        {"probe": "no_token", "ran": True, "status": 401, "expected": 401},
        {"probe": "wrong_token", "ran": True, "status": 401, "expected": 401},
        {"probe": "forbidden_token", "ran": True, "status": 403, "expected": 403},
        {
            "probe": "rate_limit",
            "ran": True,
            "declared_rps": 2,
            "requests": 9,
            "status_counts": {"200": 3, "429": 6},
            "expected": 429,
        },
    ]
}


def security_checks(probes: dict | None = PASSING_PROBES) -> list[dict]:
    """The verification's endpoint security checks, judged by the server's own rule."""
    return [c.as_dict() for c in security.judge(probes)]


def make_verification(actor, offer, *, verdict="verified", age_days=1, checks=None):
    _n["n"] += 1
    when = timezone.now() - timedelta(days=age_days)
    token = harness_token_create(actor=actor, case=offer.case, offer=offer).record
    bundle = tracked_create(
        EvidenceBundle,
        actor=actor,
        reason="Evidence received",
        case=offer.case,
        offer=offer,
        token=token,
        sha256=hashlib.sha256(f"bundle-{_n['n']}".encode()).hexdigest(),
        size=1234,
        storage_name=f"evidence/test-{_n['n']}.zip",
        format_version="1",
        received_at=when,
        run_started_at=when - timedelta(minutes=20),
        run_finished_at=when,
        nonce=f"nonce-{_n['n']}",
    )
    return tracked_create(
        SpecVerification,
        actor=actor,
        reason="Verified",
        bundle=bundle,
        offer=offer,
        verdict=verdict,
        checks=security_checks() if checks is None else checks,
        headline={},
        rules_version="test",
    )


def score_in_full(reviewer, offer, score: int = 3):
    return scorecard_save(
        actor=reviewer,
        offer=offer,
        scores={c.key: {"score": score, "comment": ""} for c in DEFAULT_CRITERIA},
    )


READY_TERMS = {"data_export_days": 90, "sla_availability_pct": "99.99", "image_format": "oci"}


def make_ready_case(people, *, offers=3):
    """priya's case with ``offers`` confirmed offers; the first passes every gate."""
    priya, lena, tariq = people["priya"], people["lena"], people["tariq"]
    case = make_case(priya)
    made = [make_offer(priya, case, spec=FULL_SPEC) for _ in range(offers)]
    for each in made:  # priced and scored in full: each counts as compared
        score_in_full(priya, each)
    offer = made[0]
    checklist = make_checklist(lena, offer=offer)
    set_statuses(lena, checklist, all_acceptable(checklist))
    # Terms that meet any need the tests set: a window to export our data, an SLA.
    checklist_save(
        actor=lena,
        checklist=checklist,
        items=[],
        reason="Terms read from the contract",
        contract_terms=READY_TERMS,
    )
    make_assessment(lena, case, signed=True)
    matrix = make_matrix_in_place(tariq, case, reason="Started")
    access_matrix_review(actor=tariq, matrix=matrix)
    make_verification(tariq, offer)
    case.refresh_from_db()
    return case, offer, made


def make_reminder_world(people):
    """The ready case, its owners with e-mail addresses for reminders and digests."""
    for name in ("lena", "tariq", "priya"):
        people[name].email = f"{name}@diligence.example"
        people[name].save()
    case, offer, _offers = make_ready_case(people)
    return case, offer
