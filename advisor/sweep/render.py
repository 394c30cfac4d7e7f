"""A sweep as a table and a chart: text (with a strip chart), JSON, CSV, or an SVG file."""

from __future__ import annotations

__all__ = ["render_sweep", "sweep_svg"]

import json
import textwrap
from xml.sax.saxutils import escape

import numpy as np

from advisor.sweep.grid import SweepResult
from advisor.text.report import table

_STRIP = 60  # characters of the text chart


def render_sweep(result: SweepResult, output_format: str, *, width: int = 100) -> str:
    if output_format == "json":
        return json.dumps(_data(result), indent=2)
    if output_format == "csv":
        return _csv(result)
    return _text(result, width)


def _data(result: SweepResult) -> dict[str, object]:
    return {
        "variable": result.variable,
        "unit": result.unit,
        "meaning": result.meaning,
        "current": result.current,
        "flips": [{"at": v, "from": a, "to": b} for v, a, b in result.flips()],
        "viability_changes": [
            {"at": v, "option": a, "viable": ok} for v, a, ok in result.viability_changes()
        ],
        "points": [
            {
                "value": float(v),
                "recommended": result.architectures[int(c)],
                "viable": {
                    a: bool(result.viable[i, k]) for i, a in enumerate(result.architectures)
                },
                "commit_p50_ms": {
                    a: round(float(result.commit_p50_ms[i, k]), 4)
                    for i, a in enumerate(result.architectures)
                },
            }
            for k, (v, c) in enumerate(zip(result.values, result.chosen, strict=True))
        ],
    }


def _csv(result: SweepResult) -> str:
    names = result.architectures
    head = [
        result.variable,
        "recommended",
        *(f"{a}_viable" for a in names),
        *(f"{a}_commit_p50_ms" for a in names),
    ]
    lines = [",".join(head)]
    for k, value in enumerate(result.values):
        cells = [
            f"{value:g}",
            names[int(result.chosen[k])],
            *(str(bool(result.viable[i, k])).lower() for i in range(len(names))),
            *(f"{result.commit_p50_ms[i, k]:.4f}" for i in range(len(names))),
        ]
        lines.append(",".join(cells))
    return "\n".join(lines)


def _text(result: SweepResult, width: int) -> str:
    unit = result.unit
    lines = [
        f"Sweep of {result.variable} [{unit}] from {result.values[0]:g} to "
        f"{result.values[-1]:g} ({result.values.size} points)",
        *textwrap.wrap(f"{result.variable}: {result.meaning}", max(width, 40)),
    ]
    if result.current is not None:
        lines.append(f"Today: {result.current:.4g} {unit}")
    flips = result.flips()
    if flips:
        lines += [f"The recommendation flips at {v:.4g} {unit}: {a} -> {b}" for v, a, b in flips]
    else:
        only = result.architectures[int(result.chosen[0])]
        lines.append(f"The recommendation does not change over this range: {only}")
    for value, name, viable in result.viability_changes():
        verb = "becomes viable" if viable else "stops being viable"
        lines.append(f"{name} {verb} at {value:.4g} {unit}")
    lines += ["", _chart(result), "", _table(result)]
    return "\n".join(lines)


def _columns(result: SweepResult) -> np.ndarray:
    return (
        np.linspace(0, result.values.size - 1, min(_STRIP, result.values.size)).round().astype(int)
    )


def _chart(result: SweepResult) -> str:
    """One strip per option: '#' recommended, '+' viable, '.' not viable."""
    columns = _columns(result)
    label = max(len(a) for a in result.architectures)
    rows = []
    for i, name in enumerate(result.architectures):
        marks = "".join(
            "#" if result.chosen[k] == i else "+" if result.viable[i, k] else "." for k in columns
        )
        rows.append(f"{name.ljust(label)} |{marks}|")
    gap = " " * max(len(columns) - 20, 0)
    axis = f"{' ' * label}  {result.values[0]:<10g}{gap}{result.values[-1]:>10g}"
    rows += [axis, f"{' ' * label}  # recommended   + viable   . blocked"]
    return "\n".join(rows)


def _table(result: SweepResult) -> str:
    picks = sorted(
        set(np.linspace(0, result.values.size - 1, 11).round().astype(int))
        | {k + 1 for k in np.flatnonzero(np.diff(result.chosen) != 0)}
    )
    names = result.architectures
    rows = [
        [
            f"{result.values[k]:.4g}",
            names[int(result.chosen[k])],
            *(
                f"{result.commit_p50_ms[i, k]:.1f}{'' if result.viable[i, k] else ' (x)'}"
                for i in range(len(names))
            ),
        ]
        for k in picks
    ]
    return table(
        [
            f"{result.variable} [{result.unit}]",
            "recommended",
            *(f"{a} commit p50 ms" for a in names),
        ],
        rows,
    )


def sweep_svg(result: SweepResult) -> str:
    """A standalone SVG: each option's median commit along the grid, recommended spans shaded."""
    width, height, pad = 720, 360, 50
    x0, x1 = float(result.values[0]), float(result.values[-1])
    top = float(np.nanmax(result.commit_p50_ms)) * 1.1 or 1.0

    def x(v: float) -> float:
        return pad + (v - x0) / (x1 - x0 or 1) * (width - 2 * pad)

    def y(v: float) -> float:
        return height - pad - v / top * (height - 2 * pad)

    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img">',
        f"<title>{escape(result.variable)} sweep: median commit per option</title>",
        f"<desc>{escape(result.variable)}: {escape(result.meaning)}</desc>",
        f'<text x="12" y="16" font-size="11">{escape(result.variable)}: '
        f"{escape(result.meaning)}</text>",
    ]
    columns = _columns(result)
    band = (width - 2 * pad) / len(columns)
    for k in columns:
        i = int(result.chosen[k])
        parts.append(
            f'<rect x="{x(result.values[k]):.1f}" y="{pad}" width="{band:.1f}" '
            f'height="{height - 2 * pad}" fill="{colours[i % 4]}" fill-opacity="0.08"/>'
        )
    for i, name in enumerate(result.architectures):
        points = " ".join(
            f"{x(result.values[k]):.1f},{y(result.commit_p50_ms[i, k]):.1f}" for k in columns
        )
        parts.append(
            f'<polyline points="{points}" fill="none" stroke="{colours[i % 4]}" stroke-width="2"/>'
        )
        parts.append(
            f'<text x="{width - pad + 4}" y="{pad + 14 * i}" font-size="11" '
            f'fill="{colours[i % 4]}">{escape(name)}</text>'
        )
    parts += [
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
        'stroke="#333"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#333"/>',
        f'<text x="{width / 2}" y="{height - 12}" font-size="12" text-anchor="middle">'
        f"{escape(result.variable)} [{escape(result.unit)}]: {x0:g} to {x1:g}</text>",
        f'<text x="12" y="{pad - 10}" font-size="12">median commit [ms], 0 to {top:.0f}</text>',
        "</svg>",
    ]
    return "\n".join(parts) + "\n"
