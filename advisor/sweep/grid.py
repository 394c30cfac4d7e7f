"""Where the answer flips: the verdict over a grid of RTTs, distances or hot-row rates.

The engine evaluates the topology once (Monte Carlo, quorum, grouping); the sweep then varies
one quantity over a numpy grid and re-applies the rules that depend on it, vectorised:

- ``rtt``: the worst inter-site RTT (p50) [ms]. Every inter-site round trip is scaled by
  the same factor; the WAN part of each commit latency (beyond its LAN commit) scales with it,
  as does asynchronous lag. Re-judged: COMMIT-LATENCY-SLO, HOT-ROW-RATE, ASYNC-DATA-LOSS.
- ``distance``: the same, with the RTT estimated from a distance [km] by the cloud-backbone
  fit (``7.5 ms + 1.39 x fibre floor``, its sources in advisor/model/physics.py).
- ``hot-row-rate``: the hottest row's rate [updates/s], all rows scaled alike. Re-judged:
  HOT-ROW-RATE.

Blockers that do not depend on the varied quantity (quorum, bandwidth, rows spanning
clusters) are carried over as they are. The linear scaling is the same first-order model as
``what_would_change``; the full engine on any one point is the reference.
"""

from __future__ import annotations

__all__ = [
    "MAX_POINTS",
    "MAX_VALUES",
    "REJUDGED",
    "VARIABLES",
    "SweepResult",
    "parse_range",
    "sweep",
]

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from advisor import verdict
from advisor.analysis import Analysis
from advisor.engine.metrics import ClusterEval, Option, Percentiles
from advisor.errors import AdvisorError
from advisor.model import physics
from advisor.vocabulary import SWEEP_UNITS

FloatArray = npt.NDArray[np.float64]
VARIABLES = SWEEP_UNITS


@dataclass(frozen=True)
class SweepResult:
    """The grid, each option's median commit and viability, and the recommended option."""

    variable: str
    unit: str
    values: FloatArray
    architectures: tuple[str, ...]
    commit_p50_ms: FloatArray  # (options, points)
    viable: npt.NDArray[np.bool_]  # (options, points)
    chosen: npt.NDArray[np.intp]  # index into architectures, per point
    current: float | None  # where the topology sits today

    def viability_changes(self) -> list[tuple[float, str, bool]]:
        """(value, option, viable from there on) wherever an option gains or loses viability."""
        changes = []
        for i, name in enumerate(self.architectures):
            for k in np.flatnonzero(np.diff(self.viable[i].astype(np.int8)) != 0):
                changes.append((float(self.values[k + 1]), name, bool(self.viable[i, k + 1])))
        return sorted(changes)

    def flips(self) -> list[tuple[float, str, str]]:
        """(value, before, after) wherever the recommendation changes along the grid."""
        change = np.flatnonzero(np.diff(self.chosen) != 0)
        return [
            (
                float(self.values[i + 1]),
                self.architectures[self.chosen[i]],
                self.architectures[self.chosen[i + 1]],
            )
            for i in change
        ]


# What a grid may span (SECURITY.md, limits). Points: a chart or a table of more than ten
# thousand rows shows nothing more, and the work grows with them. Values: the topology's own
# bounds (a round trip of at most 1,000 s, a rate of at most ten million a second), and half
# the Earth's circumference, the farthest two places on it can be (20,037.5 km, WGS 84).
MAX_POINTS = 10_000
# The sweep scales every round trip by value / today's worst p50: below 1 µs (ping prints
# three decimals of a ms) that ratio means nothing and can overflow to infinity.
MIN_WORST_RTT_MS = 1e-3
MAX_VALUES: dict[str, float] = {"rtt": 1e6, "distance": 20_037.5, "hot-row-rate": 1e7}


def parse_range(text: str, *, points: int = 200, variable: str | None = None) -> FloatArray:
    """``A:B`` or ``A:B:N`` into a grid of N points (default 200) from A to B.

    N is a whole number from 2 to :data:`MAX_POINTS`; with ``variable``, B is at most that
    variable's :data:`MAX_VALUES` entry.

    >>> parse_range("10:20:3", variable="rtt").tolist()
    [10.0, 15.0, 20.0]
    """
    parts = text.split(":")
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        numbers = []
    usage = f"--range must be A:B or A:B:N with 0 <= A < B and 2 <= N <= {MAX_POINTS:,}"
    if (
        len(numbers) not in (2, 3)
        or not all(np.isfinite(numbers))
        or numbers[0] < 0
        or numbers[1] <= numbers[0]
        or (len(numbers) == 3 and not (2 <= numbers[2] <= MAX_POINTS and numbers[2].is_integer()))
    ):
        raise AdvisorError(f"{usage}, got {text!r}")
    limit = MAX_VALUES.get(variable or "", np.inf)
    if numbers[1] > limit:
        unit = VARIABLES.get(variable, "")  # type: ignore[call-overload]
        raise AdvisorError(f"--range for {variable} ends at most at {limit:g} {unit}, got {text!r}")
    count = int(numbers[2]) if len(numbers) == 3 else points
    return np.linspace(numbers[0], numbers[1], count)


def sweep(analysis: Analysis, variable: str, values: npt.ArrayLike) -> SweepResult:
    """Evaluate the verdict at every point of ``values`` of ``variable``."""
    if variable not in VARIABLES:
        raise AdvisorError(
            f"unknown sweep variable {variable!r}; expected one of {', '.join(VARIABLES)}"
        )
    grid = _checked_grid(variable, values)
    worst = analysis.worst_link_p50_ms
    if variable in {"rtt", "distance"} and worst < MIN_WORST_RTT_MS:
        raise AdvisorError(
            "the topology has a single site: there is no inter-site RTT to vary"
            if len(analysis.topology.sites) < 2
            else f"the worst inter-site RTT p50 is {worst:g} ms, below 1 µs: "
            "too small to scale (was it measured in seconds or rounded to 0?)"
        )
    if variable == "hot-row-rate" and not analysis.topology.workload.hot_rows:
        raise AdvisorError("the topology has no workload.hot_rows to vary")
    rtt = _estimated_rtt(grid) if variable == "distance" else grid
    current = _current(analysis, variable, worst)
    options = analysis.options
    scale = rtt / worst if variable != "hot-row-rate" else np.ones_like(grid)
    rate = grid / current if variable == "hot-row-rate" and current else np.ones_like(grid)
    judged = [_judge(analysis, option, _Grid(scale, rate)) for option in options]
    commit_p50 = np.array([commit for commit, _ in judged])
    cost = np.array([count for _, count in judged])
    clusters = [len(o.clusters) for o in options]
    return SweepResult(
        variable,
        VARIABLES[variable],
        grid,
        tuple(o.architecture for o in options),
        commit_p50,
        cost == 0,
        verdict.rank(cost, clusters, commit_p50, [verdict.failovers(o) for o in options]),
        current,
    )


def _checked_grid(variable: str, values: npt.ArrayLike) -> FloatArray:
    """The grid as a 1-D float array within :data:`MAX_POINTS` and the variable's bounds."""
    try:
        grid = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as error:
        raise AdvisorError(f"sweep values must be numbers: {error}") from None
    if grid.ndim != 1 or not 1 <= grid.size <= MAX_POINTS:
        raise AdvisorError(
            f"sweep values must be a list of 1 to {MAX_POINTS:,} numbers, got shape {grid.shape}"
        )
    limit = MAX_VALUES[variable]
    if not np.all(np.isfinite(grid)) or grid.min() < 0 or grid.max() > limit:
        raise AdvisorError(
            f"sweep values for {variable} must lie in [0, {limit:g}] {VARIABLES[variable]}"  # type: ignore[index]
        )
    return grid


def _estimated_rtt(distance_km: FloatArray) -> FloatArray:
    return np.asarray(physics.estimated_rtt_ms(distance_km), dtype=float)


def _current(analysis: Analysis, variable: str, worst: float) -> float | None:
    if variable == "rtt":
        return worst
    if variable == "distance":
        known = [link.distance_km for link in analysis.links if link.distance_km]
        return max(known) if known else None
    rows = analysis.topology.workload.hot_rows
    return max(row.updates_per_s for row in rows) if rows else None


@dataclass(frozen=True)
class _Grid:
    """The varied quantity as factors on today's values: inter-site RTTs and hot-row rates."""

    rtt_scale: FloatArray
    rate_scale: FloatArray


def _judge(analysis: Analysis, option: Option, grid: _Grid) -> tuple[FloatArray, FloatArray]:
    """Median commit and the remedy cost of the option's blocking rules along the grid.

    Blockers of rules the sweep re-judges (:data:`REJUDGED`) are decided at every point,
    when the rule is a blocker; every other blocker is carried over as it is today.
    """
    lan = _lan_commit(analysis, option)
    blocking = verdict.blockers(option, analysis.findings)
    carried = [f for f in blocking if f.rule not in REJUDGED]
    cost = np.full(grid.rtt_scale.shape, verdict.remedy_cost(carried, analysis.rules), float)
    for rule_id, still_ok in REJUDGED.items():
        rule = analysis.rules[rule_id]
        if rule.severity == "blocker":
            ok = still_ok(analysis, option, lan, grid, rule.parameters)
            # Today's findings of the rule say which remedy it needs; elsewhere its own cost.
            today = [f for f in blocking if f.rule == rule_id]
            cost += verdict.remedy_cost(today or [rule_id], analysis.rules) * (~ok)
    return _commit_p50(option, lan, grid.rtt_scale), cost


def _commit_p50(option: Option, lan: Sequence[Percentiles], scale: FloatArray) -> FloatArray:
    commit_p50 = np.zeros_like(scale)
    for index, cluster in enumerate(option.clusters):
        wan = _wan_scale(cluster, scale)
        for site in cluster.writers:
            now = cluster.commit_percentiles(site)
            commit_p50 = np.maximum(
                commit_p50, verdict.scaled_latency_ms(now["p50"], lan[index]["p50"], wan)
            )
    return commit_p50


def _wan_scale(cluster: ClusterEval, scale: FloatArray) -> FloatArray:
    """The RTT scale a cluster's commits follow: none for a cluster inside one site, which
    crosses no inter-site link (its spread above the LAN p50 is LAN, not WAN)."""
    return scale if len(cluster.members) > 1 else np.ones_like(scale)


def _slo_ok(
    analysis: Analysis,
    option: Option,
    lan: Sequence[Percentiles],
    grid: _Grid,
    params: Mapping[str, float],
) -> npt.NDArray[np.bool_]:
    """COMMIT-LATENCY-SLO, vectorised: every writer's commit within every limit."""
    ok = np.ones(grid.rtt_scale.shape, dtype=bool)
    slo = analysis.topology.requirements.commit_latency_ms
    for index, cluster in enumerate(option.clusters):
        scale = _wan_scale(cluster, grid.rtt_scale)
        for site in cluster.writers:
            now = cluster.commit_percentiles(site)
            for key, limit in (slo.given() if slo else {}).items():
                ok &= verdict.scaled_latency_ms(now[key], lan[index]["p50"], scale) <= limit
    return ok


def _rows_ok(
    analysis: Analysis,
    option: Option,
    lan: Sequence[Percentiles],
    grid: _Grid,
    params: Mapping[str, float],
) -> npt.NDArray[np.bool_]:
    """HOT-ROW-RATE, vectorised: each row's utilisation below the rule's limit."""
    ok = np.ones(grid.rtt_scale.shape, dtype=bool)
    for row in option.hot_rows:
        scale = _wan_scale(option.clusters[row.cluster], grid.rtt_scale)
        p50 = verdict.scaled_latency_ms(row.commit_ms["p50"], lan[row.cluster]["p50"], scale)
        ok &= row.row.updates_per_s * grid.rate_scale * p50 / 1000.0 < params["max_utilisation"]
    return ok


def _async_ok(
    analysis: Analysis,
    option: Option,
    lan: Sequence[Percentiles],
    grid: _Grid,
    params: Mapping[str, float],
) -> npt.NDArray[np.bool_]:
    """ASYNC-DATA-LOSS, vectorised: the lag, which scales with the RTT, within the limit."""
    allowed = analysis.topology.requirements.max_data_loss_s
    at_risk = option.data_at_risk_s
    if allowed is None or at_risk is None:
        return np.ones(grid.rtt_scale.shape, dtype=bool)
    return np.asarray(at_risk * grid.rtt_scale <= allowed)


# The rules whose verdict depends on the varied quantities, each re-judged on the grid.
REJUDGED = {
    "COMMIT-LATENCY-SLO": _slo_ok,
    "HOT-ROW-RATE": _rows_ok,
    "ASYNC-DATA-LOSS": _async_ok,
}


def _lan_commit(analysis: Analysis, option: Option) -> list[Percentiles]:
    """Each cluster's LAN commit, which the first-order scaling keeps fixed."""
    return [analysis.lan_base_ms(cluster) for cluster in option.clusters]
