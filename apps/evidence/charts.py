"""Line charts of a load test against concurrency: one series per round and prompt set.

Geometry only, drawn as SVG by the template (like apps/scorecards/charts.py), so
the page needs no JavaScript and the packet can reuse it. Concurrency sits on
a log-2 axis, the ladder's natural spacing.
"""

import math
from dataclasses import dataclass

from apps.core.charts import PALETTE

WIDTH, HEIGHT = 420, 220
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 12, 34

METRICS = (
    ("ttft_p50", "TTFT P50 (ms)", lambda cell: cell["ttft_ms"].get("p50")),
    ("ttft_p95", "TTFT P95 (ms)", lambda cell: cell["ttft_ms"].get("p95")),
    ("tpot_p50", "TPOT P50 (ms)", lambda cell: cell["tpot_ms"].get("p50")),
    ("output_tok_s", "Output tokens/s", lambda cell: cell.get("output_tok_s")),
)


@dataclass(frozen=True)
class Series:
    label: str
    colour: str
    points: str  # "x,y x,y" for <polyline>
    dots: tuple[tuple[float, float, str], ...]


@dataclass(frozen=True)
class Chart:
    key: str
    title: str
    series: tuple[Series, ...]
    x_ticks: tuple[tuple[float, str], ...]
    y_ticks: tuple[tuple[float, str], ...]
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    bottom: int = HEIGHT - BOTTOM


def _tick(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


def line_chart(key: str, title: str, cells: list[dict], value_of) -> Chart | None:
    groups: dict = {}
    for cell in cells:
        value = value_of(cell)
        if value is not None:
            label = f"round {cell['round']} · {cell['prompt_set']}"
            groups.setdefault(label, []).append((cell["concurrency"], value))
    return series_chart(key, title, dict(sorted(groups.items())))


def series_chart(key: str, title: str, groups: dict[str, list]) -> Chart | None:
    """One line per label, in the order given, of (concurrency, value) points."""
    groups = {label: points for label, points in groups.items() if points}
    if not groups:
        return None
    xs = sorted({c for points in groups.values() for c, _ in points})
    top = max(v for points in groups.values() for _, v in points) or 1.0
    span_x = max(math.log2(xs[-1]) - math.log2(xs[0]), 1.0)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x_of(c):
        return LEFT + (math.log2(c) - math.log2(xs[0])) / span_x * plot_w

    def y_of(v):
        return TOP + plot_h - v / (top * 1.1) * plot_h

    series = []
    for index, (label, points) in enumerate(groups.items()):
        points = sorted(points)
        coords = [(round(x_of(c), 1), round(y_of(v), 1), f"c{c}: {_tick(v)}") for c, v in points]
        series.append(
            Series(
                label=label,
                colour=PALETTE[index % len(PALETTE)],
                points=" ".join(f"{x},{y}" for x, y, _ in coords),
                dots=tuple(coords),
            )
        )
    y_ticks = tuple((round(y_of(top * f), 1), _tick(top * f)) for f in (0, 0.5, 1.0))
    return Chart(
        key=key,
        title=title,
        series=tuple(series),
        x_ticks=tuple((round(x_of(c), 1), str(c)) for c in xs),
        y_ticks=y_ticks,
    )


def load_charts(cells: list[dict]) -> list[Chart]:
    charts = (line_chart(key, title, cells, fn) for key, title, fn in METRICS)
    return [chart for chart in charts if chart is not None]
