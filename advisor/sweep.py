"""Where the answer flips: the verdict over a grid of RTTs, distances or hot-row rates.

The engine evaluates the topology once (Monte Carlo, quorum, grouping); the sweep then varies
one quantity over a numpy grid and re-applies the rules that depend on it, vectorised:

- ``rtt``: the worst inter-site RTT (p50) [ms]. Every inter-site round trip is scaled by
  the same factor; the WAN part of each commit latency (beyond its LAN commit) scales with it,
  as does asynchronous lag. Re-judged: COMMIT-LATENCY-SLO, HOT-ROW-RATE, ASYNC-DATA-LOSS.
- ``distance``: the same, with the RTT estimated from a distance [km] by the cloud-backbone
  fit (``7.5 ms + 1.39 x fibre floor``, network.md 2.2).
- ``hot-row-rate``: the hottest row's rate [updates/s], all rows scaled alike. Re-judged:
  HOT-ROW-RATE.

Blockers that do not depend on the varied quantity (quorum, bandwidth, rows spanning
clusters) are carried over as they are. The linear scaling is the same first-order model as
``what_would_change``; the full engine on any one point is the reference.
"""

from __future__ import annotations

__all__ = ["VARIABLES", "SweepResult", "parse_range", "sweep"]

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from advisor import physics, verdict
from advisor.errors import AdvisorError
from advisor.recommend import Analysis

FloatArray = npt.NDArray[np.float64]
VARIABLES = {"rtt": "ms", "distance": "km", "hot-row-rate": "1/s"}
_LATENCY_RULES = {"COMMIT-LATENCY-SLO", "HOT-ROW-RATE", "ASYNC-DATA-LOSS"}


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


def parse_range(text: str, *, points: int = 200) -> FloatArray:
    """``A:B`` or ``A:B:N`` into a grid of N points (default 200) from A to B."""
    parts = text.split(":")
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        numbers = []
    if (
        len(numbers) not in (2, 3)
        or not all(np.isfinite(numbers))
        or numbers[0] < 0
        or numbers[1] <= numbers[0]
        or (len(numbers) == 3 and not 2 <= numbers[2] <= 1e8)
    ):
        raise AdvisorError(f"--range must be A:B or A:B:N with 0 <= A < B and 2 <= N, got {text!r}")
    count = int(numbers[2]) if len(numbers) == 3 else points
    return np.linspace(numbers[0], numbers[1], count)


def sweep(analysis: Analysis, variable: str, values: npt.ArrayLike) -> SweepResult:
    """Evaluate the verdict at every point of ``values`` of ``variable``."""
    if variable not in VARIABLES:
        raise AdvisorError(
            f"unknown sweep variable {variable!r}; expected one of {', '.join(VARIABLES)}"
        )
    grid = np.asarray(values, dtype=float)
    worst = _worst_link_p50(analysis)
    if variable in {"rtt", "distance"} and worst <= 0:
        raise AdvisorError("the topology has a single site: there is no inter-site RTT to vary")
    if variable == "hot-row-rate" and not analysis.loaded.topology.workload.hot_rows:
        raise AdvisorError("the topology has no workload.hot_rows to vary")
    rtt = _estimated_rtt(grid) if variable == "distance" else grid
    current = _current(analysis, variable, worst)
    options = analysis.options
    scale = rtt / worst if variable != "hot-row-rate" else np.ones_like(grid)
    rate = grid / current if variable == "hot-row-rate" and current else np.ones_like(grid)
    judged = [_judge(analysis, option, scale, rate) for option in options]
    commit_p50 = np.array([commit for commit, _ in judged])
    cost = np.array([count for _, count in judged])
    clusters = np.array([len(o.clusters) for o in options])[:, None]
    # As verdict.choose: cheapest blockers to remove (none = viable), clusters, commit latency.
    key = cost * 1e12 + clusters * 1e9 + commit_p50
    return SweepResult(
        variable,
        VARIABLES[variable],
        grid,
        tuple(o.architecture for o in options),
        commit_p50,
        cost == 0,
        np.argmin(key, axis=0),
        current,
    )


def _worst_link_p50(analysis: Analysis) -> float:
    sites = set(analysis.evaluator.data_sites)
    return max(
        (float(link.rtt.quantile(0.5)) for link in analysis.links if set(link.sites) <= sites),
        default=0.0,
    )


def _estimated_rtt(distance_km: FloatArray) -> FloatArray:
    return np.asarray(physics.estimated_rtt_ms(distance_km), dtype=float)


def _current(analysis: Analysis, variable: str, worst: float) -> float | None:
    if variable == "rtt":
        return worst
    if variable == "distance":
        known = [link.distance_km for link in analysis.links if link.distance_km]
        return max(known) if known else None
    rows = analysis.loaded.topology.workload.hot_rows
    return max(row.updates_per_s for row in rows) if rows else None


def _judge(
    analysis: Analysis, option: object, scale: FloatArray, rate: FloatArray
) -> tuple[FloatArray, npt.NDArray[np.int_]]:
    """Median commit and the remedy cost of its blocking rules along the grid."""
    from advisor.options import Option

    assert isinstance(option, Option)
    others = {f.rule for f in verdict.blockers(option, analysis.findings)} - _LATENCY_RULES
    slo_ok = np.ones(scale.shape, dtype=bool)
    rows_ok = np.ones(scale.shape, dtype=bool)
    async_ok = np.ones(scale.shape, dtype=bool)
    topology = analysis.loaded.topology
    lan = _lan_commit(analysis, option)
    commit_p50 = np.zeros_like(scale)
    slo = topology.requirements.commit_latency_ms
    for index, cluster in enumerate(option.clusters):
        for site in cluster.writers:
            now = cluster.commit_percentiles(site)
            base = lan[index]
            commit_p50 = np.maximum(commit_p50, base["p50"] + (now["p50"] - base["p50"]) * scale)
            for key, limit in (slo.given() if slo else {}).items():
                slo_ok &= base[key] + (now[key] - base[key]) * scale <= limit
    for row in option.hot_rows:
        base_p50 = lan[row.cluster]["p50"]
        p50 = base_p50 + (row.commit_ms["p50"] - base_p50) * scale
        rows_ok &= row.row.updates_per_s * rate * p50 / 1000.0 < _max_utilisation(analysis)
    allowed = topology.requirements.max_data_loss_s
    if allowed is not None and option.async_links and "ASYNC-DATA-LOSS" in _blocking_ids(analysis):
        lag_s = max(link.lag_ms["p99"] for link in option.async_links) / 1000.0
        async_ok &= lag_s * scale <= allowed
    cost = np.full(scale.shape, verdict.remedy_cost(others), dtype=np.intp)
    for rule, ok in (
        ("COMMIT-LATENCY-SLO", slo_ok),
        ("HOT-ROW-RATE", rows_ok),
        ("ASYNC-DATA-LOSS", async_ok),
    ):
        cost += verdict.remedy_cost([rule]) * (~ok)
    return commit_p50, cost


def _lan_commit(analysis: Analysis, option: object) -> Sequence[dict[str, float]]:
    """Each cluster's commit percentiles without a WAN part: a LAN cluster at its first site."""
    from advisor.options import Option

    assert isinstance(option, Option)
    evaluator = analysis.evaluator
    lan = []
    for cluster in option.clusters:
        site = cluster.writers[0] if cluster.writers else cluster.sites[0]
        single = evaluator.cluster([site])
        local = {k: evaluator.local_commit_ms for k in ("p50", "p95", "p99", "p999", "max")}
        lan.append(single.commit_percentiles(site) if site in single.commit_ms else local)
    return lan


def _max_utilisation(analysis: Analysis) -> float:
    return analysis.rules["HOT-ROW-RATE"].parameters["max_utilisation"]


def _blocking_ids(analysis: Analysis) -> set[str]:
    return {rule.id for rule in analysis.rules.values() if rule.severity == "blocker"}
