"""Geometry for the comparison chart: one stacked bar per offer, out of 100.

Plain SVG drawn by the template, so the page needs no JavaScript and the same
chart can go into the PDF packet.
"""

from dataclasses import dataclass
from decimal import Decimal

from apps.core.charts import PALETTE

BAR_HEIGHT = 26
BAR_GAP = 12
LABEL_WIDTH = 180
PLOT_WIDTH = 520


@dataclass(frozen=True)
class Segment:
    x: float
    width: float
    colour: str
    title: str


@dataclass(frozen=True)
class Bar:
    y: float
    label: str
    total: Decimal | None
    segments: tuple[Segment, ...]


def stacked_bars(rows, criteria) -> dict:
    """Bars for each offer's mean contribution per criterion (points out of 100)."""
    colours = {c.key: PALETTE[i % len(PALETTE)] for i, c in enumerate(criteria)}
    bars = []
    for index, row in enumerate(rows):
        x = float(LABEL_WIDTH)
        segments = []
        for criterion in criteria:
            mean = row.score.criterion_means.get(criterion.key) or Decimal(0)
            points = Decimal(criterion.weight) * mean / 5
            width = float(points) / 100 * PLOT_WIDTH
            if width > 0:
                segments.append(
                    Segment(x, width, colours[criterion.key], f"{criterion.label}: {points:.2f}")
                )
            x += width
        bars.append(
            Bar(
                y=index * (BAR_HEIGHT + BAR_GAP),
                label=str(row.offer.vendor),
                total=row.score.total,
                segments=tuple(segments),
            )
        )
    return {
        "bars": bars,
        "legend": [(c.label, colours[c.key]) for c in criteria],
        "height": max(1, len(rows)) * (BAR_HEIGHT + BAR_GAP),
        "width": LABEL_WIDTH + PLOT_WIDTH + 60,
        "label_width": LABEL_WIDTH,
        "plot_width": PLOT_WIDTH,
        "bar_height": BAR_HEIGHT,
    }
