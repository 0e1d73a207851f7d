"""A later run against a pinned baseline, metric by metric (docs/rules/evidence.md#baseline:
the load test is equal to or better than the pinned baseline).

Plain functions on the server-recomputed summaries of two bundles. Each metric
has a direction (higher or lower is better) and a tolerance from the acceptance
plan; a metric worse than the baseline beyond its tolerance is a regression,
named in plain words with the baseline value and the new one. A correctness
answer that was right in the baseline and is wrong now is a regression too,
whatever the tolerance.
"""

from dataclasses import dataclass
from decimal import Decimal

from django.utils.translation import gettext as _

from apps.core import formats
from apps.evidence.recompute import MIN_SAMPLES, P95_MIN_SAMPLES
from apps.evidence.rules.performance import MATMUL_DTYPES, sustained_tflops

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

HIGHER, LOWER = "higher", "lower"
REGRESSION, HOLDS, NOT_COMPARED = "regression", "holds", "not_compared"

THROUGHPUT, TTFT, TPOT, ERRORS, MATMUL, BANDWIDTH = (
    "throughput",
    "ttft_p95",
    "tpot_p50",
    "error_rate",
    "matmul",
    "bandwidth",
)
# The groups a comparison is judged in, as the acceptance's layer lists them.
GROUPS = (THROUGHPUT, TTFT, TPOT, ERRORS, MATMUL, BANDWIDTH)

# Defaults where the offer has no acceptance plan: rounds that differ by more than 10 %
# are already an isolation problem (docs/rules/evidence.md#performance), so a change within it is
# noise.
DEFAULT_THROUGHPUT_PCT = Decimal("10")
DEFAULT_LATENCY_PCT = Decimal("10")
DEFAULT_ERROR_RATE_POINTS = Decimal("0.1")


@dataclass(frozen=True)
class Tolerances:
    """How much worse than the baseline a metric may be and still count as equal."""

    throughput_pct: Decimal = DEFAULT_THROUGHPUT_PCT  # tokens/s, TFLOP/s, GB/s may fall by
    latency_pct: Decimal = DEFAULT_LATENCY_PCT  # TTFT and TPOT may rise by
    error_rate_points: Decimal = DEFAULT_ERROR_RATE_POINTS  # percentage points
    from_plan: bool = False


@dataclass(frozen=True)
class MetricRow:
    """One metric of the two runs: where it was measured, both values and the verdict."""

    group: str
    where: str  # "4" (concurrency) or "bf16" (dtype) or "" (bandwidth)
    title: str
    unit: str
    direction: str
    baseline: float | None
    new: float | None
    tolerance: str
    status: str
    reason: str = ""

    @property
    def change_pct(self) -> float | None:
        if self.baseline is None or self.new is None or self.baseline == 0:
            return None
        return (self.new - self.baseline) * 100 / self.baseline

    @property
    def regression(self) -> bool:
        return self.status == REGRESSION

    @property
    def finding(self) -> str:
        """The regression in plain words, naming the metric and both values."""
        if not self.regression:
            return ""
        return _(
            "%(metric)s regressed: %(baseline)s in the baseline, %(new)s now "
            "(%(change)s; tolerance %(tolerance)s)"
        ) % {
            "metric": self.title,
            "baseline": self.baseline_text,
            "new": self.new_text,
            "change": self.change_text,
            "tolerance": self.tolerance,
        }

    def _value(self, value: float | None) -> str:
        if value is None:
            return "—"
        if self.group == ERRORS:
            return formats.percent(value * 100, 2, ratio=False)
        return f"{formats.number(value, 2)} {self.unit}"

    @property
    def baseline_text(self) -> str:
        return self._value(self.baseline)

    @property
    def new_text(self) -> str:
        return self._value(self.new)

    @property
    def change_text(self) -> str:
        if self.group == ERRORS and self.baseline is not None and self.new is not None:
            points = (self.new - self.baseline) * 100
            return _("%(points)s percentage points") % {"points": f"{points:+.2f}"}
        change = self.change_pct
        if change is None:
            return "—"
        return ("+" if change > 0 else "") + formats.percent(change, 1, ratio=False)

    def as_dict(self) -> dict:
        return {
            "metric": self.group,
            "where": self.where,
            "title": self.title,
            "unit": self.unit,
            "direction": self.direction,
            "baseline": self.baseline,
            "new": self.new,
            "change_pct": self.change_pct,
            "tolerance": self.tolerance,
            "regression": self.regression,
            "status": self.status,
            "reason": self.reason,
            "finding": self.finding,
        }


@dataclass(frozen=True)
class AnswerRow:
    """A correctness item run in both: right in the baseline, and whether it still is."""

    item_id: str
    core: bool
    baseline_passed: bool
    new_passed: bool
    expected: str
    received: str
    reason: str

    @property
    def regression(self) -> bool:
        return self.baseline_passed and not self.new_passed

    @property
    def finding(self) -> str:
        if not self.regression:
            return ""
        return _(
            "Answer %(item)s regressed: right in the baseline, wrong now "
            "(expected %(expected)s, received %(received)s)"
        ) % {
            "item": self.item_id,
            "expected": _quote(self.expected),
            "received": _quote(self.received),
        }

    def as_dict(self) -> dict:
        return {
            "item": self.item_id,
            "core": self.core,
            "baseline_passed": self.baseline_passed,
            "new_passed": self.new_passed,
            "expected": self.expected,
            "received": self.received,
            "reason": self.reason,
            "regression": self.regression,
            "finding": self.finding,
        }


def _quote(text: str) -> str:
    text = " ".join((text or "").split())
    return f"“{text[:80]}{'…' if len(text) > 80 else ''}”"


@dataclass(frozen=True)
class Comparison:
    """Every metric and answer of a run against the baseline, with the regressions."""

    metrics: tuple[MetricRow, ...]
    answers: tuple[AnswerRow, ...]
    answers_compared: bool  # both runs answered the correctness set
    baseline_answered: bool  # the baseline answered a correctness set
    reference_differs: bool  # the two runs were judged against different reference files
    tolerances: Tolerances

    @property
    def regressions(self) -> list[MetricRow]:
        return [row for row in self.metrics if row.regression]

    @property
    def wrong_answers(self) -> list[AnswerRow]:
        return [row for row in self.answers if row.regression]

    @property
    def findings(self) -> list[str]:
        return [row.finding for row in self.regressions] + [
            row.finding for row in self.wrong_answers
        ]

    @property
    def compared(self) -> int:
        return sum(1 for row in self.metrics if row.status != NOT_COMPARED) + len(self.answers)

    @property
    def regressed(self) -> bool:
        return bool(self.regressions or self.wrong_answers)

    def group_rows(self, group: str) -> list[MetricRow]:
        return [row for row in self.metrics if row.group == group]


# --- reading the two summaries ------------------------------------------------


def _levels(summary: dict) -> dict[int, dict]:
    return {
        level["concurrency"]: level
        for level in (summary or {}).get("levels") or []
        if isinstance(level, dict) and isinstance(level.get("concurrency"), int)
    }


def _bandwidth(summary: dict) -> float | None:
    best = [m["best"] for m in ((summary or {}).get("bench") or {}).get("memory_bw") or []]
    best = [b for b in best if isinstance(b, (int, float)) and b]
    return max(best) if best else None


def _tolerance_pct(pct: Decimal, direction: str) -> str:
    share = formats.percent(pct, -2, ratio=False)
    if direction == HIGHER:
        return _("at most %(share)s lower") % {"share": share}
    return _("at most %(share)s higher") % {"share": share}


def _judge(
    baseline: float | None, new: float | None, direction: str, pct: Decimal
) -> tuple[str, str]:
    if baseline is None or new is None:
        return NOT_COMPARED, (
            _("not measured in the baseline") if baseline is None else _("not measured in this run")
        )
    margin = float(pct) / 100
    worse = new < baseline * (1 - margin) if direction == HIGHER else new > baseline * (1 + margin)
    return (REGRESSION if worse else HOLDS), ""


def _row(group, where, title, unit, direction, baseline, new, pct) -> MetricRow:
    status, reason = _judge(baseline, new, direction, pct)
    return MetricRow(
        group, where, title, unit, direction, baseline, new, _tolerance_pct(pct, direction), status,
        reason,
    )  # fmt: skip


def _percentile(level: dict | None, name: str, stat: str) -> tuple[float | None, int]:
    values = (level or {}).get(name) or {}
    return values.get(stat), int(values.get("n") or 0)


def _sampled_row(group, where, title, base_level, new_level, name, stat, least, pct) -> MetricRow:
    """A percentile is compared only where both runs hold enough requests to state it."""
    base, base_n = _percentile(base_level, name, stat)
    new, new_n = _percentile(new_level, name, stat)
    row = _row(group, where, title, "ms", LOWER, base, new, pct)
    if row.status != NOT_COMPARED and min(base_n, new_n) < least:
        return MetricRow(
            group,
            where,
            title,
            "ms",
            LOWER,
            base,
            new,
            row.tolerance,
            NOT_COMPARED,
            _("too few requests to state it (%(least)s needed; %(base)s and %(new)s sent)")
            % {"least": least, "base": base_n, "new": new_n},
        )
    return row


def _error_row(where: str, base_level: dict | None, new_level: dict | None, points: Decimal):
    base = (base_level or {}).get("error_rate")
    new = (new_level or {}).get("error_rate")
    tolerance = _("at most %(points)s percentage points higher") % {
        "points": formats.number(points, -2)
    }
    title = _("Error rate at concurrency %(c)s") % {"c": where}
    if base is None or new is None:
        status, reason = _judge(base, new, LOWER, Decimal(0))
    else:
        worse = (new - base) * 100 > float(points)
        status, reason = (REGRESSION if worse else HOLDS), ""
    return MetricRow(ERRORS, where, title, "", LOWER, base, new, tolerance, status, reason)


def load_rows(baseline: dict, new: dict, tolerances: Tolerances) -> list[MetricRow]:
    """Throughput, P95 TTFT, P50 TPOT and error rate at each concurrency either run measured."""
    base_levels, new_levels = _levels(baseline), _levels(new)
    rows = []
    for c in sorted(set(base_levels) | set(new_levels)):
        b, n = base_levels.get(c), new_levels.get(c)
        where = str(c)
        rows.append(
            _row(
                THROUGHPUT,
                where,
                _("Output tokens/s at concurrency %(c)s") % {"c": c},
                "tok/s",
                HIGHER,
                ((b or {}).get("output_tok_s") or {}).get("mean"),
                ((n or {}).get("output_tok_s") or {}).get("mean"),
                tolerances.throughput_pct,
            )
        )
        rows.append(
            _sampled_row(
                TTFT,
                where,
                _("P95 time to first token at concurrency %(c)s") % {"c": c},
                b,
                n,
                "ttft_ms",
                "p95",
                P95_MIN_SAMPLES,
                tolerances.latency_pct,
            )
        )
        rows.append(
            _sampled_row(
                TPOT,
                where,
                _("P50 time per output token at concurrency %(c)s") % {"c": c},
                b,
                n,
                "tpot_ms",
                "p50",
                MIN_SAMPLES[50],
                tolerances.latency_pct,
            )
        )
        rows.append(_error_row(where, b, n, tolerances.error_rate_points))
    return rows


def compute_rows(baseline: dict, new: dict, tolerances: Tolerances) -> list[MetricRow]:
    """Matmul TFLOP/s per dtype and device memory bandwidth, where either run measured them."""
    base_bench, new_bench = (baseline or {}).get("bench") or {}, (new or {}).get("bench") or {}
    rows = []
    for dtype in MATMUL_DTYPES:
        base, _regime = sustained_tflops(base_bench, dtype)
        now, _regime = sustained_tflops(new_bench, dtype)
        if base is None and now is None:
            continue
        title = _("%(dtype)s matmul") % {"dtype": dtype.upper()}
        rows.append(
            _row(MATMUL, dtype, title, "TFLOP/s", HIGHER, base, now, tolerances.throughput_pct)
        )
    base_bw, new_bw = _bandwidth(baseline), _bandwidth(new)
    if base_bw is not None or new_bw is not None:
        title = _("Device memory bandwidth")
        rows.append(
            _row(BANDWIDTH, "", title, "GB/s", HIGHER, base_bw, new_bw, tolerances.throughput_pct)
        )
    return rows


def answer_rows(baseline: dict, new: dict) -> list[AnswerRow]:
    """Every item both runs answered, by id."""
    base_items = {
        i["id"]: i for i in ((baseline or {}).get("correctness") or {}).get("items") or []
    }
    rows = []
    for item in ((new or {}).get("correctness") or {}).get("items") or []:
        before = base_items.get(item["id"])
        if before is None:
            continue
        rows.append(
            AnswerRow(
                item_id=item["id"],
                core=bool(item.get("core")),
                baseline_passed=bool(before.get("passed")),
                new_passed=bool(item.get("passed")),
                expected=item.get("expected") or "",
                received=item.get("received") or "",
                reason=item.get("reason") or "",
            )
        )
    return rows


def compare(baseline: dict, new: dict, tolerances: Tolerances | None = None) -> Comparison:
    """The new run's summary against the baseline's, metric by metric and answer by answer."""
    tolerances = tolerances or Tolerances()
    base_run = (baseline or {}).get("correctness") or {}
    new_run = (new or {}).get("correctness") or {}
    return Comparison(
        metrics=tuple(
            load_rows(baseline, new, tolerances) + compute_rows(baseline, new, tolerances)
        ),
        answers=tuple(answer_rows(baseline, new)),
        answers_compared=bool(base_run.get("items")) and bool(new_run.get("items")),
        baseline_answered=bool(base_run.get("items")),
        reference_differs=bool(base_run and new_run)
        and base_run.get("reference_sha256") != new_run.get("reference_sha256"),
        tolerances=tolerances,
    )


def measured_anything(summary: dict) -> bool:
    """Whether a run holds something a baseline comparison reads."""
    summary = summary or {}
    return bool(
        summary.get("levels")
        or (summary.get("bench") or {}).get("matmul")
        or (summary.get("bench") or {}).get("memory_bw")
        or (summary.get("correctness") or {}).get("items")
    )
