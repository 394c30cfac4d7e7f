"""The sweep layer: the verdict over a grid of RTTs, distances or hot-row rates, and its table
and chart.
"""

from typing import TYPE_CHECKING

from advisor._lazy import attach

if TYPE_CHECKING:
    from advisor.sweep import grid, render
    from advisor.sweep.grid import VARIABLES, SweepResult, parse_range, sweep
    from advisor.sweep.render import render_sweep, sweep_svg

__all__ = [
    "VARIABLES",
    "SweepResult",
    "grid",
    "parse_range",
    "render",
    "render_sweep",
    "sweep",
    "sweep_svg",
]

__getattr__, __dir__ = attach(
    __name__,
    ["grid", "render"],
    {
        "SweepResult": "grid",
        "VARIABLES": "grid",
        "parse_range": "grid",
        "sweep": "grid",
        "render_sweep": "render",
        "sweep_svg": "render",
    },
)
