"""The offer matrix: every offer of a case on one row, side by side.

Nothing here judges an offer. The fit to the demand, the prices, the scores, the
red flags, the verdicts and the gates are what the comparison, the approval gates,
the evidence and the acceptance already say, read once for the case inside
``shared_reads()``: two offers and fifty cost the same queries. This module lines
them up, sorts them and marks each cell that differs from the best of the case.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.acceptance import rules as acceptance_rules
from apps.acceptance.models import AcceptancePlan
from apps.acceptance.selectors import AcceptanceState, acceptance_state, active_plan, case_plans
from apps.approvals.gates import ChecklistFacts, DemandFitFacts, Gate, SpecFacts, VerificationFacts
from apps.approvals.selectors import OfferGates, case_gates
from apps.contracts.selectors import OfferTerms, case_contract_terms
from apps.core import formats
from apps.core.reads import shared_reads
from apps.evidence.models import SpecVerification
from apps.evidence.selectors import case_verifications
from apps.evidence.wording import in_words
from apps.offers.models import Offer
from apps.scorecards.pricing import CapacityCost, PriceNormalisation
from apps.scorecards.scoring import OfferScore
from apps.scorecards.selectors import OfferComparisonRow, case_comparison
from apps.scorecards.unit_cost import UnitCost, unit_cost
from apps.sizing.fit import DemandFit

# The columns, in the order the page and the exports show them; each key is also the
# value of ``?sort=`` (``-key`` sorts the other way).
COLUMNS: tuple[tuple[str, Promise], ...] = (
    ("vendor", gettext_lazy("Vendor")),
    ("hardware", gettext_lazy("Hardware")),
    ("fit", gettext_lazy("Fit to the demand")),
    ("spec", gettext_lazy("Declared spec")),
    ("price", gettext_lazy("Price per GPU-hour")),
    ("cost", gettext_lazy("Cost of the capacity needed")),
    ("score", gettext_lazy("Weighted score")),
    ("spread", gettext_lazy("Reviewer spread")),
    ("flags", gettext_lazy("Red flags and waivers")),
    ("evidence", gettext_lazy("Evidence")),
    ("gates", gettext_lazy("Gates held")),
    ("acceptance", gettext_lazy("Acceptance")),
)


@dataclass(frozen=True)
class Mark:
    """How a cell stands against the rest of the case: the best of it, or different
    from the best, with the words that say so (the colour is never the only cue)."""

    best: bool = False
    differs: bool = False
    cue: str = ""


@dataclass
class Acceptance:
    """The offer's acceptance. Only the plan in force is evaluated, as on the
    acceptance page; another offer's plan waits for a decision on that offer."""

    plan: AcceptancePlan | None = None
    state: AcceptanceState | None = None

    @property
    def rank(self) -> int | None:
        """Accepted first, an offer without a plan last (None)."""
        if self.plan is None:
            return None
        if self.state is None:
            return 4
        if self.state.accepted:
            return 0
        return {acceptance_rules.PASSED: 1, acceptance_rules.IN_PROGRESS: 2}.get(
            self.state.overall, 3
        )

    @property
    def text(self) -> str:
        if self.plan is None:
            return _("No acceptance plan")
        if self.state is None:
            return _("Plan drawn up; not the plan in force")
        if self.state.accepted:
            return _("Accepted")
        if self.state.overall == acceptance_rules.PASSED:
            return _("Passed every layer; not accepted yet")
        if self.state.overall == acceptance_rules.FAILED:
            return _("Failed")
        return _("In progress")


@dataclass
class MatrixRow:
    """One offer: its comparison row, its gates, its verification and its acceptance."""

    comparison: OfferComparisonRow
    gates: OfferGates
    verification: SpecVerification | None
    acceptance: Acceptance
    marks: dict[str, Mark] = field(default_factory=dict)
    # The contract's terms and their checks against the case (apps.contracts.terms).
    terms: OfferTerms | None = None

    @property
    def offer(self) -> Offer:
        return self.comparison.offer

    @property
    def hardware(self) -> str:
        return f"{self.offer.accelerator_count:,} × {self.offer.accelerator_model}"

    @property
    def fit(self) -> DemandFit | None:
        return self.comparison.fit

    @property
    def fit_facts(self) -> DemandFitFacts:
        return self.gates.inputs.demand_fit

    @property
    def idle_gpus(self) -> int | None:
        """GPUs the whole nodes add beyond the need: rented, paid for and idle. None where
        the need fills its nodes, or the offer is not priced for it."""
        fit = self.fit
        if fit is None or not fit.gpus_needed or not fit.gpus_in_whole_nodes:
            return None
        if self.comparison.needed_cost is None:
            return None
        idle = fit.gpus_in_whole_nodes - fit.gpus_needed
        return idle if idle > 0 else None

    @property
    def gpus_short(self) -> int | None:
        """GPUs the offer lacks for the demand in whole nodes (0: enough GPUs, though
        another shortfall may remain); None where no demand is sized for its cards."""
        fit = self.fit
        if fit is None or not fit.gpus_needed:
            return None
        needed = fit.gpus_in_whole_nodes or fit.gpus_needed
        return max(0, needed - fit.gpus_offered)

    @property
    def spec(self) -> SpecFacts:
        return self.gates.inputs.spec

    @property
    def price(self) -> PriceNormalisation | None:
        return self.comparison.price

    @property
    def needed_cost(self) -> CapacityCost | None:
        return self.comparison.needed_cost

    @cached_property
    def unit_cost(self) -> tuple[UnitCost | None, str]:
        """Cost per million output tokens and per thousand requests from the load test."""
        return unit_cost(self.price, self.verification.headline if self.verification else None)

    @property
    def score(self) -> OfferScore:
        return self.comparison.score

    @property
    def checklist(self) -> ChecklistFacts:
        return self.gates.inputs.checklist

    @property
    def evidence(self) -> VerificationFacts:
        return self.gates.inputs.verification

    @property
    def measured(self) -> list[tuple[str, str]]:
        """The verified numbers offers are compared on, as (label, value)."""
        if self.verification is None:
            return []
        headline = self.verification.headline or {}
        shown = [
            (_("Best output tokens/s"), headline.get("max_output_tok_s"), 1),
            (_("P50 time to first token (ms)"), headline.get("ttft_p50_ms_lowest_level"), 0),
            (_("Highest concurrency within SLOs"), headline.get("max_concurrency_within_slo"), 0),
        ]
        found = [(str(label), _value(value, places)) for label, value, places in shown if value]
        if self.bf16_matmul:
            found.append((_("BF16 matmul"), self.bf16_matmul))
        return found

    @property
    def bf16_matmul(self) -> str:
        """The measured BF16 matmul throughput, in the reader's words ("" if not measured)."""
        headline = (self.verification.headline or {}) if self.verification else {}
        measured = (headline.get("matmul") or {}).get("bf16")
        return in_words(measured) if measured else ""

    @property
    def open_gates(self) -> list[Gate]:
        return self.gates.open

    @property
    def gates_held(self) -> int:
        return len(self.gates.gates) - len(self.gates.open)


def _value(value: Any, places: int | None) -> str:
    if isinstance(value, str):
        return in_words(value)
    return formats.number(value, places)


def offer_matrix(case) -> list[MatrixRow]:
    """Every offer of the case as a matrix row, marked against the best of the case."""
    with shared_reads():
        comparison = {row.offer.pk: row for row in case_comparison(case).rows}
        gates = case_gates(case)
        verifications = case_verifications(case)
        plans = case_plans(case)
        in_force = active_plan(case, plans)
        state = acceptance_state(in_force) if in_force is not None else None
        contract_terms = {entry.offer.pk: entry for entry in case_contract_terms(case)}
    by_offer = {plan.offer_id: plan for plan in plans}
    rows = []
    for entry in gates:
        plan = by_offer.get(entry.offer.pk)
        rows.append(
            MatrixRow(
                comparison=comparison[entry.offer.pk],
                gates=entry,
                verification=verifications.get(entry.offer.pk),
                acceptance=Acceptance(
                    plan=plan, state=state if plan is not None and plan == in_force else None
                ),
                terms=contract_terms.get(entry.offer.pk),
            )
        )
    rows.sort(key=lambda row: row.offer.pk)
    _mark(rows)
    return rows


# --- differences ----------------------------------------------------------------


def _mark(rows: list[MatrixRow]) -> None:
    # Where the cell's own words already say how it stands (short by 8 GPUs, 2 open
    # red flags, failed), the mark needs no cue of its own.
    for row in rows:
        row.marks = {
            "fit": _state_mark(_meets(row)) if row.fit_facts.exists else Mark(),
            "spec": _state_mark(row.spec.confirmed),
            "price": _price_mark(row),
            "flags": _state_mark(_clear(row.checklist)),
            "evidence": _state_mark(_passing(row.evidence)),
            "gates": _state_mark(not row.open_gates),
        }
    _mark_cost(rows)
    _mark_score(rows)


def _meets(row: MatrixRow) -> bool:
    return row.fit_facts.meets and not row.fit_facts.error


def _passing(facts: VerificationFacts) -> bool:
    return facts.verdict_passing and not facts.blocked


def _clear(facts: ChecklistFacts) -> bool:
    return facts.exists and not facts.red_flags and not facts.not_reviewed


def _state_mark(good: bool) -> Mark:
    return Mark(best=True) if good else Mark(differs=True)


def _price_mark(row: MatrixRow) -> Mark:
    if row.comparison.price_rank is None:
        return Mark()
    if row.comparison.price_rank == 1:
        return Mark(best=True, cue=_("cheapest"))
    premium = row.comparison.price_premium
    cue = _("dearer than the cheapest")
    if premium is not None:
        cue = _("%(premium)s over the cheapest") % {"premium": formats.percent(premium, 0)}
    return Mark(differs=True, cue=cue)


def _cost_value(row: MatrixRow) -> Decimal | None:
    """The total for the hours the demand states, else the cost per hour: every offer of
    a case is priced for the same hours, so either is compared like for like."""
    cost = row.needed_cost
    if cost is None:
        return None
    return cost.total if cost.total is not None else cost.per_hour


def _mark_cost(rows: list[MatrixRow]) -> None:
    """The lowest cost per currency is the best; a cost in another currency is not
    compared with it."""
    lowest: dict[str, Decimal] = {}
    for row in rows:
        value = _cost_value(row)
        if value is not None:
            currency = row.offer.currency
            lowest[currency] = min(value, lowest.get(currency, value))
    for row in rows:
        value, best = _cost_value(row), lowest.get(row.offer.currency)
        if value is None or best is None:
            row.marks["cost"] = Mark()
        elif value == best:
            row.marks["cost"] = Mark(best=True, cue=_("lowest"))
        elif not best:
            row.marks["cost"] = Mark(differs=True, cue=_("above the lowest"))
        else:
            premium = formats.percent((value - best) / best, 0)
            cue = _("%(premium)s over the lowest") % {"premium": premium}
            row.marks["cost"] = Mark(differs=True, cue=cue)


def _mark_score(rows: list[MatrixRow]) -> None:
    scored = [row.score.total for row in rows if row.score.total is not None]
    highest = max(scored, default=None)
    for row in rows:
        total = row.score.total
        if total is None or highest is None:
            row.marks["score"] = Mark()
        elif total == highest:
            row.marks["score"] = Mark(best=True, cue=_("highest"))
        else:
            row.marks["score"] = Mark(
                differs=True,
                cue=_("%(points)s points below the highest")
                % {"points": formats.number(highest - total, 2)},
            )


# --- sorting --------------------------------------------------------------------


def _fit_key(row: MatrixRow) -> tuple | None:
    if not row.fit_facts.exists:
        return None
    if _meets(row):
        return (0, 0)
    short = row.gpus_short
    # Short of GPUs by a known number ahead of an offer on which nothing fits at all.
    return (1, short if short is not None else float("inf"))


def _evidence_key(row: MatrixRow) -> int | None:
    facts = row.evidence
    if not facts.exists:
        return None
    if facts.verdict_passing and not facts.blocked:
        return 0
    return 1 if facts.verdict_passing else 2


def _flags_key(row: MatrixRow) -> tuple | None:
    facts = row.checklist
    if not facts.exists:
        return None
    return (len(facts.red_flags), len(facts.not_reviewed), len(facts.waived))


SORT_KEYS: dict[str, Callable[[MatrixRow], Any]] = {
    "vendor": lambda row: str(row.offer.vendor).casefold(),
    "hardware": lambda row: (row.offer.accelerator_model.casefold(), row.offer.accelerator_count),
    "fit": _fit_key,
    "spec": lambda row: len(row.spec.missing),
    "price": lambda row: row.price.effective_cost_per_gpu_hour if row.price else None,
    "cost": _cost_value,
    "score": lambda row: row.score.total,
    "spread": lambda row: row.score.spread,
    "flags": _flags_key,
    "evidence": _evidence_key,
    "gates": lambda row: len(row.open_gates),
    "acceptance": lambda row: row.acceptance.rank,
}


# Where the best is the highest, the first click on the heading sorts from the top.
DESCENDING_FIRST = frozenset({"score"})


def parse_sort(value: str | None) -> tuple[str, bool]:
    """``?sort=price`` → ("price", False); ``-price`` → descending; anything else → ("", False)."""
    value = (value or "").strip()
    descending = value.startswith("-")
    key = value.removeprefix("-")
    if key not in SORT_KEYS:
        return "", False
    return key, descending


def sort_rows(rows: list[MatrixRow], key: str, *, descending: bool = False) -> list[MatrixRow]:
    """Rows by ``key``; a row without a value for it comes last either way, ties keep
    the order the offers were added."""
    if key not in SORT_KEYS:
        return list(rows)
    value = SORT_KEYS[key]
    known = [row for row in rows if value(row) is not None]
    unknown = [row for row in rows if value(row) is None]
    return sorted(known, key=value, reverse=descending) + unknown
