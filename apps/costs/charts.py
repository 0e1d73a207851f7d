"""Spend against budget, with the threshold lines: geometry for a server-drawn SVG.

Like apps/evidence/charts.py, this module only computes coordinates; the
template draws them, so the page needs no JavaScript and the packet reuses it.
Two charts: each month's bill against the monthly budget (bars), and the
cumulative bill against the total budget (a line).
"""

from dataclasses import dataclass
from decimal import Decimal

from apps.core import formats
from apps.costs.rules import BudgetLimits, Reconciliation

WIDTH, HEIGHT = 460, 230
LEFT, RIGHT, TOP, BOTTOM = 70, 56, 14, 34
BAR_COLOUR, LINE_COLOUR = "#4c72b0", "#4c72b0"
THRESHOLD_COLOURS = {True: "#c44e52", False: "#dd8452"}  # the 100 % line, the others


@dataclass(frozen=True)
class ThresholdLine:
    y: float
    label: str
    colour: str


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str  # period and amount, for the tooltip
    colour: str


@dataclass(frozen=True)
class SpendChart:
    key: str
    title: str
    bars: tuple[Bar, ...]
    points: str  # "x,y x,y" polyline; "" for a bar chart
    dots: tuple[tuple[float, float, str], ...]
    thresholds: tuple[ThresholdLine, ...]
    x_ticks: tuple[tuple[float, str], ...]
    y_ticks: tuple[tuple[float, str], ...]
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right_edge: int = WIDTH - RIGHT
    bottom: int = HEIGHT - BOTTOM


def _amount(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.2f} M"
    if value >= 1_000:
        return f"{value / 1_000:.0f} k"
    return f"{value:.0f}"


def _axes(values: list[float], limit: float | None, top_pct: int):
    top = max([*values, (limit or 0) * top_pct / 100, 1.0]) * 1.1
    plot_h = HEIGHT - TOP - BOTTOM

    def y_of(value: float) -> float:
        return round(TOP + plot_h - value / top * plot_h, 1)

    ticks = tuple((y_of(top * f / 1.1), _amount(top * f / 1.1)) for f in (0, 0.5, 1.0))
    return y_of, ticks


def _threshold_lines(y_of, limit: Decimal | None, thresholds) -> tuple[ThresholdLine, ...]:
    if not limit:
        return ()
    return tuple(
        ThresholdLine(y_of(float(limit) * t / 100), f"{t} %", THRESHOLD_COLOURS[t >= 100])
        for t in sorted(thresholds)
    )


def monthly_chart(reconciliation: Reconciliation, limits: BudgetLimits) -> SpendChart:
    rows = reconciliation.periods
    amounts = [float(r.usage.amount) for r in rows]
    limit = float(limits.per_month) if limits.per_month else None
    y_of, y_ticks = _axes(amounts, limit, max(limits.thresholds, default=100))
    slot = (WIDTH - LEFT - RIGHT) / max(len(rows), 1)
    bars, x_ticks = [], []
    for index, row in enumerate(rows):
        x = LEFT + index * slot + slot * 0.15
        y = y_of(float(row.usage.amount))
        crossed = bool(row.month_crossed)
        bars.append(
            Bar(
                x=round(x, 1),
                y=y,
                width=round(slot * 0.7, 1),
                height=round(HEIGHT - BOTTOM - y, 1),
                label=f"{row.usage.period:%Y-%m}: {formats.number(row.usage.amount, 2)}",
                colour=THRESHOLD_COLOURS[False] if crossed else BAR_COLOUR,
            )
        )
        x_ticks.append((round(LEFT + index * slot + slot / 2, 1), f"{row.usage.period:%Y-%m}"))
    return SpendChart(
        key="monthly",
        title="Monthly bill against the monthly budget",
        bars=tuple(bars),
        points="",
        dots=(),
        thresholds=_threshold_lines(y_of, limits.per_month, limits.thresholds),
        x_ticks=tuple(x_ticks),
        y_ticks=y_ticks,
    )


def cumulative_chart(reconciliation: Reconciliation, limits: BudgetLimits) -> SpendChart:
    rows = reconciliation.periods
    values = [float(r.cumulative) for r in rows]
    limit = float(limits.total) if limits.total else None
    y_of, y_ticks = _axes(values, limit, max(limits.thresholds, default=100))
    span = max(len(rows) - 1, 1)
    plot_w = WIDTH - LEFT - RIGHT
    dots, x_ticks = [], []
    for index, row in enumerate(rows):
        x = round(LEFT + (index / span if len(rows) > 1 else 0.5) * plot_w, 1)
        dots.append((x, y_of(float(row.cumulative)), f"{row.usage.period:%Y-%m}"))
        x_ticks.append((x, f"{row.usage.period:%Y-%m}"))
    return SpendChart(
        key="cumulative",
        title="Cumulative bill against the total budget",
        bars=(),
        points=" ".join(f"{x},{y}" for x, y, _ in dots),
        dots=tuple(dots),
        thresholds=_threshold_lines(y_of, limits.total, limits.thresholds),
        x_ticks=tuple(x_ticks),
        y_ticks=y_ticks,
    )


def spend_charts(reconciliation: Reconciliation, limits: BudgetLimits) -> list[SpendChart]:
    if not reconciliation.periods:
        return []
    return [monthly_chart(reconciliation, limits), cumulative_chart(reconciliation, limits)]
