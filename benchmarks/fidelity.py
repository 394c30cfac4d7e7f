"""Fidelity: every calibration case, predicted against measured, as a Markdown section.

The rows come from :mod:`benchmarks.cases` (the one place that rebuilds each case as a
topology); this module only tabulates them, takes the median absolute relative error, and
explains every row off by more than :data:`OFF_LIMIT`: the case's own reason and what would
fix it (:func:`fixes`, written after looking at each miss).
"""

from __future__ import annotations

__all__ = [
    "OFF_LIMIT",
    "TARGET_MEDIAN_ERROR",
    "Summary",
    "fixes",
    "markdown",
    "summarise",
    "uncovered_cases",
]

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from advisor.model import physics, tcp
from benchmarks.cases import Row

OFF_LIMIT = 0.25  # issue 6: rows off by more than this need a reason and a fix
TARGET_MEDIAN_ERROR = 0.15  # issue 6: median absolute relative error over all rows


def fixes() -> dict[str, str]:
    """What would bring each far-off case within 25 %, keyed by Row.case.

    Figures in the text are computed here from the model, so they follow it when it changes.
    """
    km = float(physics.great_circle_km(53.35, -6.26, 35.68, 139.69))  # as in cases.py
    implied_rtt_ms = 275.6 - 5.1  # the insert less the measured local commit
    route_km = (
        (implied_rtt_ms - physics.ESTIMATE_FIXED_OVERHEAD_MS)
        / 2
        * physics.propagation_km_per_ms("fiber")
    )
    estimate_ms = float(physics.estimated_rtt_ms(km))
    at_700_ms = float(tcp.request_response_ms(512 * 1024, 48 * 1024, 3.10, 700.0, in_flight=6))
    return {
        "field insert-intercontinental": (
            f"measure the link. The distance fit estimates {estimate_ms:.0f} ms over the"
            f" {km:,.0f} km great circle; the inserts imply about "
            f"{implied_rtt_ms:.0f} ms, a fibre path near {route_km:,.0f} km (give it as "
            "route_km), plausible for the 2012 route through the US"
        ),
        "field single-session-inserts-vs-delay": (
            "nothing in the model: a round trip per commit allows 1000 / (18 + 300) = 3 "
            "inserts/s; the 1/s point was read off a plot and the run likely hit client "
            "timeouts. Re-measure with longer timeouts, or drop the point"
        ),
        "field tcp-payload-400km": (
            f"give the link the bandwidth it carried: at bandwidth_mbps 700 (the source's "
            f"figure) the model predicts {at_700_ms:.2f} ms ({at_700_ms / 37.25 - 1:+.1%}); "
            "loss and retransmission would need a loss term in tcp.request_response_ms (for "
            "example Mathis et al. 1997)"
        ),
        "field pxc-7ms-send-window": (
            "count the write sets that share one EVS message under concurrency (about 1.3 per "
            "message at 50 clients); the model sends one per message"
        ),
        "lab hot-row-spread-writers-rtt10": (
            "let two clients on one node overlap one's execution with the other's commit"
        ),
    }


@dataclass(frozen=True)
class Summary:
    """The headline of the fidelity table."""

    rows: int
    median_abs_error: float  # relative, 0.05 = 5 %
    within_tolerance: int  # rows inside the tolerance their case states
    off: tuple[Row, ...]  # rows with |error| > OFF_LIMIT

    @property
    def met(self) -> bool:
        return self.median_abs_error <= TARGET_MEDIAN_ERROR


def summarise(rows: Sequence[Row]) -> Summary:
    """Median absolute relative error, rows within tolerance, rows beyond :data:`OFF_LIMIT`."""
    if not rows:
        raise ValueError("no calibration rows to summarise")
    return Summary(
        rows=len(rows),
        median_abs_error=statistics.median(abs(r.error) for r in rows),
        within_tolerance=sum(abs(r.error) <= r.tolerance for r in rows),
        off=tuple(r for r in rows if abs(r.error) > OFF_LIMIT),
    )


def uncovered_cases(rows: Sequence[Row], calibration_dir: Path) -> list[str]:
    """Case ids of the calibration YAML files that no row's case name mentions."""
    missing = []
    for name in ("lab-galera.yaml", "field-data.yaml"):
        path = calibration_dir / name
        if not path.is_file():
            continue
        cases = yaml.safe_load(path.read_text(encoding="utf-8")).get("cases", [])
        missing += [c["id"] for c in cases if not any(c["id"] in r.case for r in rows)]
    return missing


def _number(value: float) -> str:
    """Four significant figures, without exponents for the magnitudes in these tables."""
    if abs(value) >= 100:
        return f"{value:.1f}"
    return f"{value:.2f}" if abs(value) >= 1 else f"{value:.3f}"


def _percent(fraction: float) -> str:
    return f"{fraction:.0%}" if fraction >= 0.01 else f"{fraction:.1%}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(rows: Sequence[Row], calibration_dir: Path | None = None) -> str:
    """The fidelity section of BENCHMARKS.md: table, median, and every row off by > 25 %."""
    summary = summarise(rows)
    verdict = "met" if summary.met else "**missed**"
    lines = [
        "| case | quantity | unit | predicted | measured | error | tolerance |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        flag = " ⚠" if abs(r.error) > OFF_LIMIT else ""
        lines.append(
            f"| {_cell(r.case)} | {_cell(r.quantity)} | {r.unit} | {_number(r.predicted)} "
            f"| {_number(r.measured)} | {r.error:+.1%}{flag} | ±{_percent(r.tolerance)} |"
        )
    lines += [
        "",
        f"**Median absolute error: {summary.median_abs_error:.1%}** over {summary.rows} rows "
        f"(target ≤ {TARGET_MEDIAN_ERROR:.0%}: {verdict}); {summary.within_tolerance} of "
        f"{summary.rows} rows within the tolerance their case states; {len(summary.off)} off by "
        f"more than {OFF_LIMIT:.0%} (⚠).",
    ]
    if calibration_dir is not None:
        missing = uncovered_cases(rows, calibration_dir)
        lines += [
            "",
            "Every case of the calibration files has at least one row."
            if not missing
            else f"Cases of the calibration files with no row yet: {', '.join(missing)}.",
        ]
    if summary.off:
        known = fixes()
        lines += ["", f"### Rows off by more than {OFF_LIMIT:.0%}", ""]
        for r in summary.off:
            why = r.why or "no reason recorded with the case"
            fix = r.known_wrong or known.get(r.case, "no fix recorded yet: investigate this case")
            lines.append(
                f"- **{_cell(r.case)}, {_cell(r.quantity)}** ({r.error:+.1%}). "
                f"Why: {why}. What would fix it: {fix}."
            )
    return "\n".join(lines) + "\n"
