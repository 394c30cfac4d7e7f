"""Small inline SVG charts, no plotting library: deterministic text for golden files.

Three charts, each a function of plain numbers that returns one ``<svg>`` element with a
``<title>`` and ``<desc>`` for screen readers (``role="img"``), system fonts only and nothing
fetched from anywhere:

- :func:`rtt_chart` a link's round trip against its percentile level, on log scales
  (p50, p90, p99, p99.9...), with horizontal marks (commit SLO, Galera timeouts);
- :func:`hot_row_chart` one hot row's Callaghan bound under each option (log scale) against
  the rate it needs;
- :func:`topology_chart` the clusters of an option as boxes, their sites as nodes, the links
  labelled with their round trip.

Coordinates are written with one decimal, so the same numbers give the same bytes.
"""

from __future__ import annotations

__all__ = [
    "Bar",
    "Box",
    "Edge",
    "Mark",
    "Node",
    "Series",
    "hot_row_chart",
    "nines",
    "rtt_chart",
    "topology_chart",
]

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape

import numpy as np
import numpy.typing as npt

_FONT = 'font-family="system-ui, sans-serif"'
_OK, _BAD, _INK, _GRID, _MUTED = "#2e7d32", "#c62828", "#1f2933", "#d9dee3", "#5f6b76"
# Distinct for the usual colour blindnesses as far as eight go (Okabe-Ito, darkened for text).
_SERIES_COLOURS = (
    "#1565c0",
    "#ef6c00",
    "#6a1b9a",
    "#00838f",
    "#ad1457",
    "#558b2f",
    "#4e342e",
    "#37474f",
)


@dataclass(frozen=True)
class Series:
    """A line of the RTT chart: values [ms] at percentile levels given in nines."""

    label: str
    nines: Sequence[float]
    values_ms: Sequence[float]
    dashed: bool = False


@dataclass(frozen=True)
class Mark:
    """A horizontal threshold of the RTT chart [ms]."""

    label: str
    value_ms: float
    danger: bool = False


@dataclass(frozen=True)
class Bar:
    """One option's bound for a hot row [updates/s]; ``p99_per_s`` draws a tick."""

    label: str
    value_per_s: float
    p99_per_s: float | None = None


@dataclass(frozen=True)
class Node:
    name: str
    detail: str = ""
    dashed: bool = False  # an arbitrator, not a data site


@dataclass(frozen=True)
class Box:
    label: str
    nodes: Sequence[Node]


@dataclass(frozen=True)
class Edge:
    """A link between node ``a`` and node ``b``, each given as (box index, node index)."""

    a: tuple[int, int]
    b: tuple[int, int]
    label: str
    dashed: bool = False


def nines(levels: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Percentile levels as "nines": 0.9 -> 1, 0.99 -> 2, 0.5 -> 0.301.

    >>> nines([0.5, 0.9, 0.999]).round(3).tolist()
    [0.301, 1.0, 3.0]
    """
    q = np.asarray(levels, dtype=np.float64)
    return -np.log10(1.0 - q)


def _f(value: float) -> str:
    return f"{value:.1f}"


def _text(
    x: float,
    y: float,
    text: str,
    *,
    anchor: str = "start",
    size: int = 12,
    colour: str = _INK,
    weight: str = "normal",
) -> str:
    return (
        f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}" font-size="{size}" '
        f'font-weight="{weight}" fill="{colour}" {_FONT}>{escape(text)}</text>'
    )


def _open(chart_id: str, width: float, height: float, title: str, desc: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{escape(chart_id)}" '
        f'class="chart" viewBox="0 0 {_f(width)} {_f(height)}" width="{_f(width)}" '
        f'height="{_f(height)}" role="img" aria-labelledby="{escape(chart_id)}-title '
        f'{escape(chart_id)}-desc"><title id="{escape(chart_id)}-title">{escape(title)}'
        f'</title><desc id="{escape(chart_id)}-desc">{escape(desc)}</desc>'
        f'<rect width="100%" height="100%" fill="#ffffff"/>'
    )


def _log_axis(low: float, high: float, start: float, end: float) -> Callable[[float], float]:
    span = math.log10(high) - math.log10(low)
    return lambda v: start + (math.log10(max(v, low)) - math.log10(low)) / span * (end - start)


def _decades(low: float, high: float) -> list[float]:
    return [10.0**e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)]


def _ms_label(ms: float) -> str:
    if ms >= 1000:
        return f"{ms / 1000:g} s"
    return f"{ms:g} ms"


def _rate_label(per_s: float) -> str:
    if per_s >= 100:
        return f"{per_s:,.0f}/s"
    return f"{per_s:.3g}/s"


def rtt_chart(
    chart_id: str, title: str, desc: str, series: Sequence[Series], marks: Sequence[Mark]
) -> str:
    """Round trip [ms, log] against percentile level [nines] with threshold marks."""
    width, left, right, bottom = 640.0, 64.0, 190.0, 44.0
    top = 22.0 + 16.0 * len(series)  # the legend sits above the plot
    height = top + 260.0 + bottom
    # a log axis: a zero (a timer set to PT0S) or negative value has no place on it
    values = [v for s in series for v in s.values_ms if v > 0] + [
        m.value_ms for m in marks if m.value_ms > 0
    ]
    low = 10.0 ** math.floor(math.log10(min(values) if values else 1.0))
    high = 10.0 ** math.ceil(math.log10(max(values) * 1.001 if values else 10.0))
    y = _log_axis(low, high, height - bottom, top)
    max_nines = max((max(s.nines) for s in series if len(s.nines)), default=2.0)
    x_high = max(2.0, math.ceil(max_nines * 2) / 2)
    x0, x1 = left, width - right

    def x(k: float) -> float:
        return x0 + (k - nines(0.5).item()) / (x_high - nines(0.5).item()) * (x1 - x0)

    out = [_open(chart_id, width, height, title, desc)]
    for decade in _decades(low, high):
        out.append(
            f'<line x1="{_f(x0)}" x2="{_f(x1)}" y1="{_f(y(decade))}" '
            f'y2="{_f(y(decade))}" stroke="{_GRID}"/>'
        )
        out.append(
            _text(x0 - 6, y(decade) + 4, _ms_label(decade), anchor="end", size=11, colour=_MUTED)
        )
    ticks = [
        (nines(0.5).item(), "p50"),
        *((float(k), _percentile_name(k)) for k in range(1, math.floor(x_high) + 1)),
    ]
    for k, name in ticks:
        out.append(
            f'<line x1="{_f(x(k))}" x2="{_f(x(k))}" y1="{_f(top)}" '
            f'y2="{_f(height - bottom)}" stroke="{_GRID}"/>'
        )
        out.append(_text(x(k), height - bottom + 16, name, anchor="middle", size=11, colour=_MUTED))
    out.append(
        _text(
            (x0 + x1) / 2,
            height - 6,
            "share of round trips at or below (percentile)",
            anchor="middle",
            size=11,
            colour=_MUTED,
        )
    )
    for n, mark in enumerate(marks):
        colour = _BAD if mark.danger else _MUTED
        out.append(
            f'<line x1="{_f(x0)}" x2="{_f(x1)}" y1="{_f(y(mark.value_ms))}" '
            f'y2="{_f(y(mark.value_ms))}" stroke="{colour}" stroke-dasharray="6 3"/>'
        )
        out.append(
            _text(
                x1 + 6,
                y(mark.value_ms) + 4 + 12 * _nudge(marks, n, y),
                mark.label,
                size=11,
                colour=colour,
            )
        )
    for n, line in enumerate(series):
        colour = _SERIES_COLOURS[n % len(_SERIES_COLOURS)]
        points = " ".join(
            f"{_f(x(k))},{_f(y(v))}" for k, v in zip(line.nines, line.values_ms, strict=True)
        )
        dash = ' stroke-dasharray="4 2"' if line.dashed else ""
        out.append(
            f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
        )
        ly = 14.0 + 16.0 * n
        out.append(
            f'<line x1="{_f(x0)}" x2="{_f(x0 + 20)}" y1="{_f(ly)}" y2="{_f(ly)}" '
            f'stroke="{colour}" stroke-width="2"{dash}/>'
        )
        out.append(_text(x0 + 26, ly + 4, line.label, size=11))
    out.append("</svg>")
    return "".join(out)


def _percentile_name(k: int) -> str:
    """The percentile k nines stand for: 1 -> p90, 2 -> p99, 3 -> p99.9."""
    return "p" + f"{100 - 100 / 10**k:.{max(k - 2, 0)}f}"


def _nudge(marks: Sequence[Mark], n: int, y: Callable[[float], float]) -> int:
    """Lines of offset for a mark's label that would overlap the previous one's."""
    offset = 0
    for earlier in marks[:n]:
        if abs(y(earlier.value_ms) - y(marks[n].value_ms)) < 12:
            offset += 1
    return offset


def hot_row_chart(
    chart_id: str, title: str, desc: str, required_per_s: float, bars: Sequence[Bar]
) -> str:
    """Horizontal bars of each option's bound [updates/s, log] against the required rate."""
    row_h, left, right, top = 34.0, 150.0, 90.0, 30.0
    width = 640.0
    height = top + row_h * len(bars) + 40.0
    values = [b.value_per_s for b in bars] + [required_per_s]
    values += [b.p99_per_s for b in bars if b.p99_per_s]
    # A bound rounded to 0/s (a 500 s commit) has no place on a log axis: it sits at its start.
    positive = [v for v in values if v > 0] or [1.0]
    low = 10.0 ** math.floor(math.log10(min(positive) / 2))
    high = 10.0 ** math.ceil(math.log10(max(positive) * 1.5))
    x = _log_axis(low, high, left, width - right)
    out = [_open(chart_id, width, height, title, desc)]
    for decade in _decades(low, high):
        out.append(
            f'<line x1="{_f(x(decade))}" x2="{_f(x(decade))}" y1="{_f(top - 6)}" '
            f'y2="{_f(height - 34)}" stroke="{_GRID}"/>'
        )
        out.append(
            _text(
                x(decade), height - 20, _rate_label(decade), anchor="middle", size=11, colour=_MUTED
            )
        )
    for n, bar in enumerate(bars):
        y0 = top + n * row_h
        fits = bar.value_per_s > required_per_s
        colour = _OK if fits else _BAD
        out.append(_text(left - 8, y0 + 17, bar.label, anchor="end", size=12))
        out.append(
            f'<rect x="{_f(left)}" y="{_f(y0 + 4)}" width="'
            f'{_f(max(x(bar.value_per_s) - left, 1.0))}" height="{_f(row_h - 12)}" '
            f'fill="{colour}" fill-opacity="0.85"/>'
        )
        if bar.p99_per_s:
            out.append(
                f'<line x1="{_f(x(bar.p99_per_s))}" x2="{_f(x(bar.p99_per_s))}" '
                f'y1="{_f(y0 + 2)}" y2="{_f(y0 + row_h - 6)}" stroke="{_INK}" '
                'stroke-width="2"/>'
            )
        verdict = "" if fits else " (too slow)"
        out.append(
            _text(
                x(bar.value_per_s) + 6,
                y0 + 17,
                _rate_label(bar.value_per_s) + verdict,
                size=11,
                colour=colour,
            )
        )
    rx = x(required_per_s)
    out.append(
        f'<line x1="{_f(rx)}" x2="{_f(rx)}" y1="{_f(top - 8)}" y2="{_f(height - 34)}" '
        f'stroke="{_INK}" stroke-width="2" stroke-dasharray="5 3"/>'
    )
    out.append(
        _text(
            rx,
            top - 12,
            f"needs {_rate_label(required_per_s)}",
            anchor="middle",
            size=11,
            weight="bold",
        )
    )
    out.append(
        _text(
            width - 6,
            height - 4,
            "bar: p50 bound, tick: p99 bound",
            anchor="end",
            size=10,
            colour=_MUTED,
        )
    )
    out.append("</svg>")
    return "".join(out)


@dataclass
class _Layout:
    box_w: float = 280.0
    gap: float = 90.0
    node_w: float = 150.0
    node_h: float = 40.0
    row_h: float = 76.0
    top: float = 40.0
    margin: float = 20.0
    centres: dict[tuple[int, int], tuple[float, float]] = field(default_factory=dict)

    def box_x(self, index: int) -> float:
        return self.margin + index * (self.box_w + self.gap)


def _short(text: str, limit: int = 22) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def topology_chart(
    chart_id: str, title: str, desc: str, boxes: Sequence[Box], edges: Sequence[Edge]
) -> str:
    """Clusters as boxes side by side, sites stacked inside, links with their labels."""
    lay = _Layout()
    rows = max((len(b.nodes) for b in boxes), default=1)
    width = lay.box_x(len(boxes)) - lay.gap + lay.margin
    height = lay.top + rows * lay.row_h + 30.0
    out = [_open(chart_id, width, height, title, desc)]
    for i, box in enumerate(boxes):
        bx = lay.box_x(i)
        out.append(
            f'<rect x="{_f(bx)}" y="{_f(lay.top - 28)}" width="{_f(lay.box_w)}" '
            f'height="{_f(len(box.nodes) * lay.row_h + 36)}" rx="10" fill="#f3f6f9" '
            f'stroke="{_MUTED}"/>'
        )
        out.append(_text(bx + 10, lay.top - 10, _short(box.label, 30), size=12, weight="bold"))
        for j, _ in enumerate(box.nodes):
            lay.centres[(i, j)] = (
                bx + lay.box_w - 20 - lay.node_w / 2,
                lay.top + 14 + j * lay.row_h + lay.node_h / 2,
            )
    for edge in edges:
        out.append(_edge(lay, edge))
    for i, box in enumerate(boxes):
        for j, node in enumerate(box.nodes):
            cx, cy = lay.centres[(i, j)]
            dash = ' stroke-dasharray="4 3"' if node.dashed else ""
            out.append(
                f'<g><title>{escape(node.name)}</title><rect x="{_f(cx - lay.node_w / 2)}" '
                f'y="{_f(cy - lay.node_h / 2)}" width="{_f(lay.node_w)}" '
                f'height="{_f(lay.node_h)}" rx="6" fill="#ffffff" stroke="{_INK}"{dash}/>'
            )
            out.append(
                _text(cx, cy - 2, _short(node.name), anchor="middle", size=12, weight="bold")
            )
            out.append(
                _text(cx, cy + 13, _short(node.detail, 26), anchor="middle", size=10, colour=_MUTED)
                + "</g>"
            )
    out.append("</svg>")
    return "".join(out)


def _edge(lay: _Layout, edge: Edge) -> str:
    (ax, ay), (bx, by) = lay.centres[edge.a], lay.centres[edge.b]
    dash = ' stroke-dasharray="6 4"' if edge.dashed else ""
    colour = _SERIES_COLOURS[1] if edge.dashed else _SERIES_COLOURS[0]
    if edge.a[0] == edge.b[0] and abs(edge.a[1] - edge.b[1]) == 1:  # neighbours: straight
        top, bottom = sorted((ay, by))
        y1, y2 = top + lay.node_h / 2, bottom - lay.node_h / 2
        line = (
            f'<line x1="{_f(ax)}" y1="{_f(y1)}" x2="{_f(ax)}" y2="{_f(y2)}" '
            f'stroke="{colour}" stroke-width="2"{dash}/>'
        )
        return line + _label(ax + 8, (y1 + y2) / 2 + 4, edge.label, "start")
    if edge.a[0] == edge.b[0]:  # same box, apart: a curve bulging to the left of the nodes
        bulge = 30.0 + 20.0 * abs(edge.a[1] - edge.b[1])
        left = ax - lay.node_w / 2
        cx, cy = left - bulge, (ay + by) / 2
        path = (
            f'<path d="M {_f(left)} {_f(ay)} Q {_f(cx)} {_f(cy)} {_f(left)} {_f(by)}" '
            f'fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
        )
        return path + _label(left - bulge / 2 - 4, cy + 4, edge.label, "end")
    if ax > bx:
        (ax, ay), (bx, by) = (bx, by), (ax, ay)
    x1, x2 = ax + lay.node_w / 2, bx - lay.node_w / 2
    line = (
        f'<line x1="{_f(x1)}" y1="{_f(ay)}" x2="{_f(x2)}" y2="{_f(by)}" stroke="{colour}" '
        f'stroke-width="2"{dash}/>'
    )
    return line + _label((x1 + x2) / 2, (ay + by) / 2 - 6, edge.label, "middle")


def _label(x: float, y: float, text: str, anchor: str) -> str:
    width = 6.2 * len(text) + 8
    left = {"middle": x - width / 2, "end": x - width + 4, "start": x - 4}[anchor]
    return (
        f'<rect x="{_f(left)}" y="{_f(y - 12)}" width="{_f(width)}" height="16" rx="3" '
        f'fill="#ffffff" fill-opacity="0.9"/>' + _text(x, y, text, anchor=anchor, size=11)
    )
