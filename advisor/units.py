"""How a figure is written wherever it appears (the summary, the terminal report, the design
document, the ADR): one rounding, so that the same figure reads the same everywhere."""

from __future__ import annotations

import math

__all__ = ["ms_number", "ms_text"]


def ms_number(value: float) -> str:
    """A duration in milliseconds, without its unit: three significant figures below 100 ms
    (0.467, 2.69, 21.5), whole milliseconds from 100 on (1,234); ``unbounded`` for one that
    grows without end (a channel that cannot keep up)."""
    if not math.isfinite(value):
        return "unbounded"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def ms_text(value: float) -> str:
    """:func:`ms_number` with its unit: ``2.69 ms``; ``unbounded`` alone."""
    number = ms_number(value)
    return number if number == "unbounded" else f"{number} ms"
