"""The areas' findings of many cases at once, for My work (docs/rules/findings.md#in-my-work).

A case's register (``apps.approvals.selectors.case_register``) is its gates' findings
and its areas' findings, each judged beside the acceptances recorded
(``apps.casework.gates.gather_case_gates``). Reading it whole costs some fifty queries
per case; My work reads every open case. Only the areas' findings can need an
acceptance (a gate's own finding always blocks, and My work names what the gates read
in each role's own items), so here the areas' findings of many cases are made by the
same rules (``AreaFindings``) from records read for all of them together, and judged
by the same ``judge``: five queries whatever the number of cases.
"""

from dataclasses import dataclass
from datetime import date

from django.urls import NoReverseMatch, reverse

from apps.approvals.findings import Entry, judge
from apps.approvals.selectors import acceptance_facts_of_cases
from apps.cases.models import ProcurementCase
from apps.casework.findings import AreaFindings
from apps.contracts.selectors import contract_terms_of_cases
from apps.offers.models import Offer
from apps.offers.selectors import offers_of_cases
from apps.sizing.selectors import requirements_of_cases

# A case whose register can still stand in the way of a decision: not yet accepted.
OPEN_STATUSES = (
    ProcurementCase.Status.EVALUATING,
    ProcurementCase.Status.PENDING_APPROVAL,
    ProcurementCase.Status.REJECTED,
    ProcurementCase.Status.APPROVED,
)


def findings_url(case_pk: int) -> str:
    """Where a case's findings are accepted: their own page, or until it is mounted, the
    findings on the case's approval page."""
    try:
        return reverse("approvals:findings", args=[case_pk])
    except NoReverseMatch:
        return reverse("approvals:case", args=[case_pk]) + "#findings"


@dataclass(frozen=True)
class CaseFindings:
    """One case's areas' findings as its register holds them, with its offers by id."""

    case: ProcurementCase
    entries: list[Entry]
    offers: dict[int, Offer]


class _ReadAreaFindings(AreaFindings):
    """``AreaFindings`` of one case over records already read for many."""

    def __init__(self, case, terms, requirement) -> None:  # reads nothing
        self.case = case
        self.terms = {entry.offer.pk: entry for entry in terms}
        self.requirement = requirement


def open_cases(limit: int) -> list[ProcurementCase]:
    """The open cases, the most recently changed first (1 query)."""
    return list(
        ProcurementCase.objects.filter(status__in=OPEN_STATUSES).order_by("-updated_at", "-pk")[
            :limit
        ]
    )


def area_registers(cases: list[ProcurementCase], *, today: date) -> list[CaseFindings]:
    """Each case's areas' findings, judged as its register judges them (4 queries)."""
    ids = [case.pk for case in cases]
    offers = offers_of_cases(ids)
    terms = contract_terms_of_cases(cases, offers)
    requirements = requirements_of_cases(ids)
    acceptances = acceptance_facts_of_cases(ids)
    by_case: dict[int, list[Offer]] = {pk: [] for pk in ids}
    for offer in offers:
        by_case[offer.case_id].append(offer)
    found = []
    for case in cases:
        mine = by_case[case.pk]
        areas = _ReadAreaFindings(case, terms[case.pk], requirements.get(case.pk))
        findings = [finding for offer in mine for finding in areas.for_offer(offer)]
        entries = judge(findings, acceptances[case.pk], today=today)
        found.append(CaseFindings(case, entries, {offer.pk: offer for offer in mine}))
    return found
