"""Weighted scorecards for comparing GPU cloud offers (docs/rules/offers.md#scorecard).

Each reviewer scores every criterion of an offer from 0 to 5; a criterion's
weight is in points and a set of weights sums to 100, so a weighted total is
"points out of 100". The rule asks for a scorecard comparing at least three
offers side by side; this module holds the arithmetic only (no Django, no I/O)
so the browser, the API, the packet and the benchmarks all compute the same
numbers.

Rules that matter to a reviewer or an auditor:

- An unanswered criterion scores 0: it counts against the offer, never for it.
  Otherwise a reviewer could lift an offer by leaving its weak points blank.
- Totals are ``Decimal`` quantized to 0.01 (half up) only at the end; the
  parts stay exact so the packet's rows add up to the shown total.
- Leaders are decided on the quantized totals, i.e. on what the reviewer sees:
  two offers shown as 71.40 and 71.40 are a tie, never a hidden win.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from types import MappingProxyType
from typing import TypeVar

from apps.core.formats import humanised

K = TypeVar("K", bound=Hashable)  # whatever names an offer: a pk, a name
SCORE_MIN = 0
SCORE_MAX = 5
WEIGHT_TOTAL = 100

_CENT = Decimal("0.01")
# Rescaled weights are kept to 1e-10 points: a million times finer than the
# 0.01 shown, yet short enough that sums of ten weights stay exact in
# Decimal's default 28-digit context (so "sums to exactly 100" really holds).
_WEIGHT_QUANTUM = Decimal("1E-10")


class ScoringInputError(ValueError):
    """Criteria or scores that fail validation; ``errors`` holds the messages."""

    def __init__(self, errors: Sequence[str] | Mapping[str, str]) -> None:
        self.errors = errors
        super().__init__("; ".join(errors.values() if isinstance(errors, Mapping) else errors))


@dataclass(frozen=True)
class Criterion:
    """One scorecard line; ``weight`` is in points out of 100."""

    key: str
    label: str
    weight: int


# docs/rules/offers.md#scorecard asks for price (incl. the 30–50 % prepayment premium), SLA,
# supply certainty, exit terms, compliance, measured performance and support.
# It also says the biggest risk of remote compute is not price but whether the
# business survives a supply interruption — hence reliability (SLA, support)
# and availability (supply certainty, no downgrade) together outweigh price,
# and exit terms get a full tenth. Measured performance is judged from the
# evidence (SpecVerification) and feeds networking/storage/orchestration here.
DEFAULT_CRITERIA: tuple[Criterion, ...] = (
    Criterion("pricing", "Price per GPU-hour incl. prepayment premium", 15),
    Criterion("reliability", "Reliability: SLA, maintenance, support", 15),
    Criterion("security", "Security and tenant isolation", 12),
    Criterion("compliance", "Compliance and data-export fit", 12),
    Criterion("availability", "Supply certainty: locked cards, quota, no downgrade", 10),
    Criterion("exit_terms", "Exit terms: data export, image delivery, no lock-in", 10),
    Criterion("networking", "Networking: interconnect, RDMA, latency", 8),
    Criterion("storage", "Storage: local NVMe, object storage", 6),
    Criterion("orchestration", "Orchestration and portability", 6),
    Criterion("monitoring", "Monitoring, logs and audit rights", 6),
)

_CRITERION_LABELS = {criterion.key: criterion.label for criterion in DEFAULT_CRITERIA}


def criterion_label(key: str) -> str:
    """How a criterion is named to a reader; a key no longer in the criteria, read aloud."""
    return _CRITERION_LABELS[key] if key in _CRITERION_LABELS else humanised(key)


@dataclass(frozen=True)
class CriterionContribution:
    """One row of a breakdown: ``contribution = weight × score / 5`` points."""

    key: str
    label: str
    weight: Decimal  # Decimal because sensitivity scenarios use fractional weights
    score: int | None  # None = unanswered, contributes 0
    contribution: Decimal


@dataclass(frozen=True)
class ScoreBreakdown:
    """One reviewer's scorecard: total out of 100 and the rows that make it."""

    total: Decimal
    rows: tuple[CriterionContribution, ...]
    unanswered: tuple[str, ...]  # criterion keys left blank, in criteria order


@dataclass(frozen=True)
class OfferScore:
    """All reviewers' scorecards for one offer.

    ``total`` is the mean of the reviewers' totals (None and ``unscored`` when
    nobody has scored). ``criterion_means`` is each criterion's mean score
    (0–5) over reviewers, a blank counted as 0 as in the totals — so the means
    and the total tell the same story; ``criterion_unanswered`` says how many
    reviewers left each criterion blank, so a low mean can be told apart from
    a missing answer.
    """

    total: Decimal | None
    unscored: bool
    reviewer_count: int
    criterion_means: Mapping[str, Decimal | None]
    criterion_unanswered: Mapping[str, int]
    reviewers: tuple[ScoreBreakdown, ...]

    @property
    def spread(self) -> Decimal | None:
        """Points between the highest and the lowest reviewer's total; None below two
        reviewers. A wide spread says the reviewers disagree, whatever the mean."""
        if len(self.reviewers) < 2:
            return None
        totals = [breakdown.total for breakdown in self.reviewers]
        return max(totals) - min(totals)


@dataclass(frozen=True)
class SensitivityScenario:
    """The ranking after moving one criterion's weight by ``delta`` points.

    ``applied_delta`` is the move after clamping to 0–100 (0 when the weight
    could not move, e.g. −10 on a weight of 0).
    """

    criterion_key: str
    delta: int
    applied_delta: Decimal
    weights: Mapping[str, Decimal]
    totals: Mapping[Hashable, Decimal | None]
    leader: Hashable | None
    leaders: tuple[Hashable, ...]
    leader_changed: bool


@dataclass(frozen=True)
class SensitivityReport:
    """Does the winner survive ±``step`` points on any one criterion?

    ``stable`` is True when no scenario changes the set of leaders (vacuously
    True when no offer is scored).
    """

    step: int
    baseline_weights: Mapping[str, Decimal]
    baseline_totals: Mapping[Hashable, Decimal | None]
    baseline_leader: Hashable | None
    baseline_leaders: tuple[Hashable, ...]
    scenarios: tuple[SensitivityScenario, ...]
    stable: bool


def weights_errors(criteria: Sequence[Criterion]) -> list[str]:
    """Messages explaining why a criteria set is unusable; empty when valid."""
    if not criteria:
        return ["The scorecard has no criteria."]
    errors: list[str] = []
    seen: set[str] = set()
    for criterion in criteria:
        if criterion.key in seen:
            errors.append(f"Criterion key '{criterion.key}' is used more than once.")
        seen.add(criterion.key)
        if criterion.weight < 0:
            errors.append(
                f"Criterion '{criterion.key}' has a negative weight ({criterion.weight})."
            )
    weight_sum = sum(criterion.weight for criterion in criteria)
    if weight_sum != WEIGHT_TOTAL:
        errors.append(f"Weights must sum to {WEIGHT_TOTAL}; they sum to {weight_sum}.")
    return errors


def score_errors(criteria: Sequence[Criterion], scores: Mapping[str, int | None]) -> dict[str, str]:
    """Per-key messages for scores out of range or for unknown criteria."""
    known = {criterion.key for criterion in criteria}
    errors: dict[str, str] = {}
    for key, score in scores.items():
        if key not in known:
            errors[key] = f"'{key}' is not a criterion of this scorecard."
        elif score is None:
            continue
        # bool is an int subclass; True must not pass as a score of 1.
        elif isinstance(score, bool) or not isinstance(score, int):
            errors[key] = f"Score must be a whole number from {SCORE_MIN} to {SCORE_MAX}."
        elif not SCORE_MIN <= score <= SCORE_MAX:
            errors[key] = f"Score {score} is outside {SCORE_MIN}–{SCORE_MAX}."
    return errors


def weighted_total(
    criteria: Sequence[Criterion], scores: Mapping[str, int | None]
) -> ScoreBreakdown:
    """One reviewer's weighted total out of 100; raises ScoringInputError."""
    _require_valid(criteria, [scores])
    return _breakdown(criteria, _int_weights(criteria), scores)


def offer_score(
    criteria: Sequence[Criterion], reviewer_scores: Sequence[Mapping[str, int | None]]
) -> OfferScore:
    """Mean of all reviewers' totals for one offer; raises ScoringInputError."""
    _require_valid(criteria, reviewer_scores)
    return _offer_score(criteria, _int_weights(criteria), reviewer_scores)


def leaders(totals: Mapping[K, Decimal | None]) -> tuple[K, ...]:
    """Every offer sharing the highest total, in input order; () if none scored."""
    scored = {offer: total for offer, total in totals.items() if total is not None}
    if not scored:
        return ()
    best = max(scored.values())
    return tuple(offer for offer, total in scored.items() if total == best)


def leader(totals: Mapping[K, Decimal | None]) -> K | None:
    """The single offer with the highest total.

    None when nothing is scored *or* the top is tied — a tie is not a winner;
    call ``leaders`` to show "tie between A and B".
    """
    top = leaders(totals)
    return top[0] if len(top) == 1 else None


def rescale_weights(criteria: Sequence[Criterion], *, key: str, delta: int) -> dict[str, Decimal]:
    """Move ``key``'s weight by ``delta`` and rescale the rest to keep 100.

    The moved weight is clamped to 0–100. The others keep their proportions
    (each × new rest ÷ old rest) in Decimal to 1e-10 points rather than being
    rounded to whole points, which would itself move the ranking. When the
    rest is all zero there are no proportions, so freed weight is shared
    equally. The rounding residual (≤ 1e-9) goes to the largest remaining
    weight so the set sums to exactly 100.
    """
    _require_valid(criteria, [])
    weights = _int_weights(criteria)
    if key not in weights:
        raise ScoringInputError([f"'{key}' is not a criterion of this scorecard."])
    total = Decimal(WEIGHT_TOTAL)
    others = [k for k in weights if k != key]
    if not others:  # a lone criterion must carry all 100 points
        return weights
    moved = min(max(weights[key] + delta, Decimal(0)), total)
    old_rest, new_rest = total - weights[key], total - moved
    rescaled = {key: moved}
    for other in others:
        exact = weights[other] * new_rest / old_rest if old_rest else new_rest / len(others)
        rescaled[other] = exact.quantize(_WEIGHT_QUANTUM, ROUND_HALF_UP)
    residual = total - sum(rescaled.values())
    largest = max(others, key=lambda k: rescaled[k])
    rescaled[largest] += residual
    return rescaled


def weight_sensitivity(
    criteria: Sequence[Criterion],
    offer_scores: Mapping[Hashable, Sequence[Mapping[str, int | None]]],
    *,
    step: int = 10,
) -> SensitivityReport:
    """Recompute every offer's total and the leader under ±step on each weight.

    A reviewer should know whether the recommended offer wins only because of
    one debatable weight. Scenarios are listed in criteria order, +step then
    −step. Offers without reviewers stay unscored (total None) and never lead.
    """
    if not 1 <= step <= WEIGHT_TOTAL:
        raise ScoringInputError([f"Step must be 1–{WEIGHT_TOTAL} points; got {step}."])
    _require_valid(criteria, [s for scorecards in offer_scores.values() for s in scorecards])
    baseline_weights = _int_weights(criteria)
    baseline_totals = _totals(criteria, baseline_weights, offer_scores)
    baseline_leaders = leaders(baseline_totals)
    scenarios = []
    for criterion in criteria:
        for delta in (step, -step):
            weights = rescale_weights(criteria, key=criterion.key, delta=delta)
            totals = _totals(criteria, weights, offer_scores)
            top = leaders(totals)
            scenarios.append(
                SensitivityScenario(
                    criterion_key=criterion.key,
                    delta=delta,
                    applied_delta=weights[criterion.key] - baseline_weights[criterion.key],
                    weights=MappingProxyType(weights),
                    totals=MappingProxyType(totals),
                    leader=top[0] if len(top) == 1 else None,
                    leaders=top,
                    # Compared as sets: a clear win turning into a tie is a change.
                    leader_changed=set(top) != set(baseline_leaders),
                )
            )
    return SensitivityReport(
        step=step,
        baseline_weights=MappingProxyType(baseline_weights),
        baseline_totals=MappingProxyType(baseline_totals),
        baseline_leader=baseline_leaders[0] if len(baseline_leaders) == 1 else None,
        baseline_leaders=baseline_leaders,
        scenarios=tuple(scenarios),
        stable=not any(scenario.leader_changed for scenario in scenarios),
    )


def _require_valid(
    criteria: Sequence[Criterion], scorecards: Iterable[Mapping[str, int | None]]
) -> None:
    errors = weights_errors(criteria)
    if errors:
        raise ScoringInputError(errors)
    for scores in scorecards:
        errors_by_key = score_errors(criteria, scores)
        if errors_by_key:
            raise ScoringInputError(errors_by_key)


def _int_weights(criteria: Sequence[Criterion]) -> dict[str, Decimal]:
    return {criterion.key: Decimal(criterion.weight) for criterion in criteria}


def _breakdown(
    criteria: Sequence[Criterion], weights: Mapping[str, Decimal], scores: Mapping[str, int | None]
) -> ScoreBreakdown:
    rows = []
    for criterion in criteria:
        score = scores.get(criterion.key)
        weight = weights[criterion.key]
        contribution = Decimal(0) if score is None else weight * score / SCORE_MAX
        rows.append(
            CriterionContribution(criterion.key, criterion.label, weight, score, contribution)
        )
    return ScoreBreakdown(
        total=_quantize(sum((row.contribution for row in rows), Decimal(0))),
        rows=tuple(rows),
        unanswered=tuple(row.key for row in rows if row.score is None),
    )


def _offer_score(
    criteria: Sequence[Criterion],
    weights: Mapping[str, Decimal],
    reviewer_scores: Sequence[Mapping[str, int | None]],
) -> OfferScore:
    breakdowns = tuple(_breakdown(criteria, weights, scores) for scores in reviewer_scores)
    count = len(breakdowns)
    keys = [criterion.key for criterion in criteria]
    unanswered = {key: sum(key in b.unanswered for b in breakdowns) for key in keys}
    if not count:
        return OfferScore(
            total=None,
            unscored=True,
            reviewer_count=0,
            criterion_means=MappingProxyType(dict.fromkeys(keys)),
            criterion_unanswered=MappingProxyType(unanswered),
            reviewers=(),
        )
    # Mean of the exact sums, not of the rounded totals, so rounding happens once.
    exact_sum = sum(
        (row.contribution for breakdown in breakdowns for row in breakdown.rows), Decimal(0)
    )
    means = {
        key: _quantize(Decimal(sum(scores.get(key) or 0 for scores in reviewer_scores)) / count)
        for key in keys
    }
    return OfferScore(
        total=_quantize(exact_sum / count),
        unscored=False,
        reviewer_count=count,
        criterion_means=MappingProxyType(means),
        criterion_unanswered=MappingProxyType(unanswered),
        reviewers=breakdowns,
    )


def _totals(
    criteria: Sequence[Criterion],
    weights: Mapping[str, Decimal],
    offer_scores: Mapping[Hashable, Sequence[Mapping[str, int | None]]],
) -> dict[Hashable, Decimal | None]:
    return {
        offer: _offer_score(criteria, weights, scorecards).total
        for offer, scorecards in offer_scores.items()
    }


def _quantize(value: Decimal) -> Decimal:
    return value.quantize(_CENT, ROUND_HALF_UP)
