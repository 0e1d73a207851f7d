"""The areas' findings of many cases at once, for My work (docs/rules/findings.md#in-my-work).

A case's register (``apps.approvals.selectors.case_register``) is its gates' findings
and its areas' findings, each judged beside the acceptances recorded
(``apps.casework.gates.gather_case_gates``). Reading it whole costs some fifty queries
per case; My work reads every open case. Only the areas' findings can need an
acceptance (a gate's own finding always blocks, and My work names what the gates read
in each role's own items), so here the areas' findings of many cases are made by the
same rules (``AreaFindings``) from records read for all of them together
(``AreaRecords.of_cases``), and judged by the same ``judge``, in a fixed number of
queries whatever the number of cases.
"""

from dataclasses import dataclass
from datetime import date

from django.urls import reverse

from apps.approvals.findings import Entry, judge
from apps.approvals.models import Approval
from apps.approvals.selectors import acceptance_facts_of_cases
from apps.cases.models import ProcurementCase
from apps.casework.findings import AreaFindings, AreaRecords
from apps.offers.models import Offer
from apps.offers.selectors import offers_of_cases

# A case whose register can still stand in the way of a decision: not yet accepted.
OPEN_STATUSES = (
    ProcurementCase.Status.EVALUATING,
    ProcurementCase.Status.PENDING_APPROVAL,
    ProcurementCase.Status.REJECTED,
    ProcurementCase.Status.APPROVED,
)


# Decided: the offer the decision in force approved is the one whose work goes on.
DECIDED_STATUSES = (ProcurementCase.Status.APPROVED, ProcurementCase.Status.ACCEPTED)


def approved_offers(cases) -> dict[int, int]:
    """Each decided case's approved offer (1 query): its losing offers' work is closed."""
    ids = [case.pk for case in cases if case.status in DECIDED_STATUSES]
    if not ids:
        return {}
    return dict(
        Approval.objects.filter(
            case_id__in=ids,
            decision=Approval.Decision.APPROVED,
            superseded_at__isnull=True,
            offer__isnull=False,
        ).values_list("case_id", "offer_id")
    )


def approved_offer_id(case) -> int | None:
    """The offer the case's decision in force approved, once the case is decided."""
    return approved_offers([case]).get(case.pk)


def findings_url(case_pk: int) -> str:
    """Where a case's findings are accepted: their own page."""
    return reverse("approvals:findings", args=[case_pk])


@dataclass(frozen=True)
class CaseFindings:
    """One case's areas' findings as its register holds them, with its offers by id."""

    case: ProcurementCase
    entries: list[Entry]
    offers: dict[int, Offer]


def open_cases(limit: int) -> list[ProcurementCase]:
    """The open cases, the most recently changed first (1 query)."""
    return list(
        ProcurementCase.objects.filter(status__in=OPEN_STATUSES).order_by("-updated_at", "-pk")[
            :limit
        ]
    )


def area_registers(cases: list[ProcurementCase], *, today: date) -> list[CaseFindings]:
    """Each case's areas' findings, judged as its register judges them (in a fixed number
    of queries, whatever the number of cases)."""
    ids = [case.pk for case in cases]
    offers = offers_of_cases(ids)
    records = AreaRecords.of_cases(cases, offers)
    acceptances = acceptance_facts_of_cases(ids)
    by_case: dict[int, list[Offer]] = {pk: [] for pk in ids}
    for offer in offers:
        by_case[offer.case_id].append(offer)
    found = []
    for case in cases:
        mine = by_case[case.pk]
        areas = AreaFindings(case, records[case.pk], today=today)
        # Each finding once: those of the whole case come with every offer.
        findings = list({f.identity: f for offer in mine for f in areas.for_offer(offer)}.values())
        entries = judge(findings, acceptances[case.pk], today=today)
        found.append(CaseFindings(case, entries, {offer.pk: offer for offer in mine}))
    return found
