"""Where the answer flips: the verdict over a grid of RTTs, distances or hot-row rates.

The engine evaluates the topology once (Monte Carlo, quorum, grouping); the sweep then moves
one quantity over a numpy grid, starting from the evidence, and re-applies the rules that
depend on it, vectorised (:data:`REJUDGED`). At today's value every link is its evidence, so
there the sweep returns the analysis's own verdict.

How each variable moves the links (:data:`MEANINGS`, which the table and the chart repeat):

- ``rtt`` [ms], the worst inter-site RTT p50: every link's p50 scales with it, and its
  measured distribution is shifted to that p50, not stretched: its spread in ms is kept. The
  RTT alone varies: a value below a link's fibre floor stands for nearer sites.
- ``distance`` [km], the farthest site pair: every distance scales with it. A measured RTT is
  its fibre floor over the route (the propagation share) plus the rest (routers, detours,
  queues): the floor scales to the new distance, the rest is kept. An estimated link keeps
  its estimate's structure the same way: the distance-proportional part of the fit scales,
  its fixed overhead stays, and the floor and the measured path that bound it move too.
- ``hot-row-rate`` [1/s], the hottest row's rate: every hot row's rate scales with it.

What that does to a commit: a writer's commit waits for the longest path ``w -> k -> j -> w``
over its cluster's members (the engine's model). Its network part, beyond the writer site's
LAN commit, grows in proportion to that path's length in link p50s, and every percentile
moves by as much as the median, as a shifted distribution does. An asynchronous channel's lag
moves by half its link's change (one way). Blockers that do not depend on the varied
quantity (:data:`CARRIED`: quorum, bandwidth, rows spanning clusters) are carried over as
they are, and the options are today's: a grouping the full engine would pick at another point
is not searched. The full engine on a topology moved the same way is the reference
(tests/test_sweep.py).
"""

from __future__ import annotations

__all__ = [
    "CARRIED",
    "MAX_POINTS",
    "MAX_VALUES",
    "MEANINGS",
    "REJUDGED",
    "VARIABLES",
    "SweepResult",
    "parse_range",
    "sweep",
]

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from advisor import verdict
from advisor.analysis import Analysis
from advisor.engine.evaluator import row_lock_wait_draws
from advisor.engine.evidence import LinkEvidence, RttEstimate
from advisor.engine.metrics import REPORTED_PERCENTS, AsyncLink, HotRowEval, Option, summarise
from advisor.errors import AdvisorError
from advisor.model import flow_control, physics, replication
from advisor.vocabulary import SWEEP_UNITS

FloatArray = npt.NDArray[np.float64]
VARIABLES = SWEEP_UNITS
# What each swept value means, in the words the table and the chart print.
MEANINGS: dict[str, str] = {
    "rtt": (
        "the worst inter-site RTT p50; every link's measured distribution is shifted (shape "
        "kept) so that its p50 scales with this value"
    ),
    "distance": (
        "the farthest site pair's distance; every link's distance scales with it, and the "
        "propagation share of its measured RTT (its fibre floor) with that, the rest kept"
    ),
    "hot-row-rate": "the hottest row's updates per second; every hot row's rate scales with it",
}


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

    @property
    def meaning(self) -> str:
        """What the swept value is, and how it moves the evidence."""
        return MEANINGS[self.variable]

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
# The RTT sweep scales every round trip by value / today's worst p50: below 1 µs (ping prints
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
    """Evaluate the verdict at every point of ``values`` of ``variable`` (module docstring)."""
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
    current = _current(analysis, variable, worst)
    if current is None:
        raise AdvisorError(
            "no site pair has a distance to scale: give a link distance_km or route_km, or "
            "each site a location"
        )
    factor = grid / current
    links = _Links.moved(analysis, variable, factor)
    rate = factor if variable == "hot-row-rate" else np.ones_like(grid)
    on_grid = [_OnGrid(analysis, option, links, rate) for option in analysis.options]
    judged = [_judge(on) for on in on_grid]
    commit_p50 = np.array([commit for commit, _ in judged])
    cost = np.array([count for _, count in judged])
    options = analysis.options
    return SweepResult(
        variable,
        VARIABLES[variable],
        grid,
        tuple(o.architecture for o in options),
        commit_p50,
        cost == 0,
        verdict.rank(
            cost,
            [len(o.clusters) for o in options],
            commit_p50,
            [verdict.failovers(o) for o in options],
            np.array([on.unbounded() for on in on_grid]),
        ),
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


def _current(analysis: Analysis, variable: str, worst: float) -> float | None:
    """Where the topology sits today: the worst RTT p50, the farthest pair (its route where
    only the route is given), the hottest row's rate; None without one."""
    if variable == "rtt":
        return worst
    if variable == "distance":
        known = [link.distance_km or link.route_km for link in analysis.links]
        return max((km for km in known if km), default=None)
    rows = analysis.topology.workload.hot_rows
    return max(row.updates_per_s for row in rows) if rows else None


Pair = frozenset[str]


@dataclass(frozen=True)
class _Links:
    """Every link's small-message RTT p50 along the grid [ms], and today."""

    p50_ms: Mapping[Pair, FloatArray]
    today_ms: Mapping[Pair, float]

    @classmethod
    def moved(cls, analysis: Analysis, variable: str, factor: FloatArray) -> _Links:
        """The links with ``variable`` at ``factor`` times today's value."""
        today = {frozenset(link.sites): link.rtt_p50_ms for link in analysis.links}
        if variable == "rtt":
            return cls({pair: p50 * factor for pair, p50 in today.items()}, today)
        if variable != "distance":
            return cls({pair: np.full(factor.shape, p50) for pair, p50 in today.items()}, today)

        def measured(link: LinkEvidence, at: FloatArray) -> FloatArray:
            # The rest (beyond the floor) is kept; the floor scales with the distance.
            floor_ms = link.floor_rtt_ms or 0.0  # no distance: nothing to scale
            return np.maximum(link.rtt_p50_ms + floor_ms * (at - 1.0), 0.0)

        by_pair = {frozenset(link.sites): link for link in analysis.links}

        def leg(a: str, b: str, at: FloatArray) -> FloatArray:
            return measured(by_pair[frozenset((a, b))], at)

        moved = {
            pair: measured(link, factor)
            if link.estimate is None
            else _estimate_at(link.rtt_p50_ms, link.estimate, factor, leg)
            for pair, link in by_pair.items()
        }
        return cls(moved, today)

    def change_ms(self, a: str, b: str) -> FloatArray:
        """How far the pair's p50 moved from today along the grid [ms]."""
        pair = frozenset((a, b))
        return self.p50_ms[pair] - self.today_ms[pair]


def _estimate_at(
    p50_ms: float,
    estimate: RttEstimate,
    factor: FloatArray,
    leg: Callable[[str, str, FloatArray], FloatArray],
) -> FloatArray:
    """An estimated link's p50 along a distance grid [ms]: its fit, floor and measured
    bounds (whose legs ``leg`` moves) at ``factor`` times today's distances, clipped as the
    engine clips them (:func:`advisor.model.physics.bounded_estimate_ms`). Today's p50 plus
    the change, so that at today's distance it is the engine's own estimate."""
    at = np.append(factor, 1.0)
    # The fit is the band's fixed overhead plus the propagation share (route stretch x
    # floor, engine.evidence): only the latter grows with the distance.
    fit_ms = estimate.fit_ms + estimate.propagation_ms * (at - 1.0)
    bound_ms = (
        sum((leg(a, b, at) for a, b in itertools.pairwise(estimate.path)), np.zeros_like(at))
        if estimate.path
        else np.full_like(at, np.inf)
    )
    lower_ms = np.zeros_like(at)
    if estimate.lower_path:  # |near leg - the rest|, both moved
        hops = list(itertools.pairwise(estimate.lower_path))
        near = leg(*hops[0], at)
        rest = sum((leg(a, b, at) for a, b in hops[1:]), np.zeros_like(at))
        lower_ms = np.abs(near - rest)
    p50_at = np.asarray(
        physics.bounded_estimate_ms(
            fit_ms, estimate.floor_ms * at, bound_ms, lower_ms, estimate.scatter_factor
        )[0]
    )
    return np.asarray(np.maximum(p50_ms + (p50_at[:-1] - p50_at[-1]), 0.0))


class _OnGrid:
    """One option along the grid: the figures the re-judged rules read, moved."""

    def __init__(
        self, analysis: Analysis, option: Option, links: _Links, rate_scale: FloatArray
    ) -> None:
        self.analysis = analysis
        self.option = option
        self.links = links
        self.rate_scale = rate_scale
        self.shape = rate_scale.shape
        self._path_scale: dict[tuple[int, str], FloatArray] = {}
        self._waits: dict[str, dict[str, FloatArray]] = {}

    def commit_ms(self, index: int, site: str, key: str) -> FloatArray:
        """The commit percentile ``key`` at writing ``site`` in cluster ``index`` [ms]: today's,
        plus the network part of the commit at the cluster's writer (beyond the writer site's
        LAN commit) times the growth of its longest commit path, plus, at another site, the
        change of its round trip to the writer; every percentile moves as the median."""
        cluster = self.option.clusters[index]
        writer = cluster.writer_site or site
        now = cluster.commit_percentiles(site)
        at_writer = cluster.commit_percentiles(writer)
        wan_ms = max(at_writer["p50"] - self.analysis.lan_commit_ms[writer]["p50"], 0.0)
        moved = now[key] + wan_ms * (self.path_scale(index, writer) - 1.0)
        return moved if site == writer else moved + self.links.change_ms(site, writer)

    def row_write_ms(self, row: HotRowEval, key: str) -> FloatArray:
        """An update of a hot row at its writer site farthest from the writer [ms], as the
        engine sums it: its wait for the lock, the commit at the writer and the route, each
        moved. The wait is the engine's own queue (:func:`row_lock_wait_draws`: the commits
        at the writer shifted as the writer's commit moves, at the moved rate), run at a few
        points of the grid and interpolated in the row's utilisation between them, today's
        point among them; infinite from a utilisation of 1 on."""
        cluster = self.option.clusters[row.cluster]
        writer = cluster.writer_site or row.owner
        far = max(row.routed_rtt_ms, key=lambda w: row.routed_rtt_ms[w], default=None)
        route_ms = row.routed_rtt_ms[far] + self.links.change_ms(far, writer) if far else 0.0
        wait = self._row_waits(row)[key]
        moved: FloatArray = wait + self.commit_ms(row.cluster, writer, key) + route_ms
        return moved

    def _row_waits(self, row: HotRowEval) -> dict[str, FloatArray]:
        """The row's wait percentiles along the grid [ms] (see :meth:`row_write_ms`)."""
        if row.row.name in self._waits:
            return self._waits[row.row.name]
        cluster = self.option.clusters[row.cluster]
        writer = cluster.writer_site or row.owner
        hold_ms = float(np.mean(cluster.commit_ms[writer]))
        shift = np.broadcast_to(
            self.commit_ms(row.cluster, writer, "p50") - row.commit_ms["p50"], self.shape
        )
        rate = np.broadcast_to(row.row.updates_per_s * self.rate_scale, self.shape)
        rho = rate * (hold_ms + shift) / 1000.0
        stable = rho < 1.0
        knots = _knots(rho[stable].ravel())
        today_rho = row.row.updates_per_s * hold_ms / 1000.0
        if knots.size and knots[0] <= today_rho <= knots[-1]:
            knots = np.unique(np.append(knots, today_rho))
        summaries = []
        for value in knots:
            if value == today_rho:  # today's point: the engine's own run
                at_rate, at_shift = row.row.updates_per_s, 0.0
            else:
                i = int(np.argmin(np.abs(rho - value)))
                at_rate, at_shift = float(rate.flat[i]), float(shift.flat[i])
            draws = row_lock_wait_draws(cluster, row.row.name, at_rate, at_shift)
            summaries.append(summarise(draws))
        waits = {}
        for key in REPORTED_PERCENTS:
            values = np.array([s[key] for s in summaries])
            along = np.interp(rho, knots, values) if knots.size else np.zeros(self.shape)
            waits[key] = np.where(stable, along, np.inf)
        self._waits[row.row.name] = waits
        return waits

    def path_scale(self, index: int, writer: str) -> FloatArray:
        """The longest commit path from ``writer`` along the grid over today's (1: none)."""
        if (index, writer) not in self._path_scale:
            members = self.option.clusters[index].members
            links = self.links
            today = _longest_path_ms(
                lambda a, b: np.asarray(links.today_ms[frozenset((a, b))]), members, writer
            )
            along = _longest_path_ms(lambda a, b: links.p50_ms[frozenset((a, b))], members, writer)
            scale = along / today if today > 0 else np.ones(self.shape)
            self._path_scale[(index, writer)] = np.broadcast_to(scale, self.shape)
        return self._path_scale[(index, writer)]

    def row_commit_p50_ms(self, row: HotRowEval) -> FloatArray:
        """A hot row's median commit [ms]: the commit at its owner cluster's writer, which
        holds the row's lock, as the engine takes it."""
        cluster = self.option.clusters[row.cluster]
        if cluster.writer_site is None:
            return np.full(self.shape, row.commit_ms["p50"])
        return self.commit_ms(row.cluster, cluster.writer_site, "p50")

    def unbounded(self) -> npt.NDArray[np.bool_]:
        """Whether some channel of the option falls behind without bound along the grid: its
        bandwidth (carried), its appliers at the design's most, or the user's, threads, or
        its hottest row's in-order updates, each apply a commit of the receiving cluster
        moved as that cluster's writer's commit moves (advisor.engine.channels)."""
        behind = np.zeros(self.shape, dtype=bool)
        for link in self.option.async_links:
            if link.utilisation >= 1.0:
                return np.ones(self.shape, dtype=bool)
            behind |= self.apply_busy(link) >= 1.0
        return behind

    def apply_ms(self, link: AsyncLink) -> FloatArray:
        """The channel's mean apply along the grid [ms]: today's, moved as the receiving
        cluster's commit at its writer moves."""
        index = self.option.cluster_of(link.apply_site) if link.apply_site else None
        writer = self.option.clusters[index].writer_site if index is not None else None
        if index is None or writer is None:
            return np.full(self.shape, link.apply_ms)
        today = self.option.clusters[index].commit_percentiles(writer)["p50"]
        return np.maximum(link.apply_ms + self.commit_ms(index, writer, "p50") - today, 0.0)

    def apply_busy(self, link: AsyncLink) -> FloatArray:
        """The busier of the channel's appliers (at the most threads the design may set, or
        the user's, no more working than the write sets' dependencies allow) and its hottest
        row's one applier, along the grid [fraction]."""
        apply_ms = self.apply_ms(link)
        threads = (
            link.applier_threads if link.applier_threads_given else replication.MOST_APPLIER_THREADS
        )
        working = flow_control.appliers_at_work(threads, link.cert_deps_distance)
        appliers = link.commits_per_s * apply_ms / 1000.0 / working
        in_order = link.in_order_per_s * self.rate_scale * apply_ms / 1000.0
        busy: FloatArray = np.maximum(appliers, in_order)
        return busy

    def commit_p50_ms(self) -> FloatArray:
        """The option's median commit at its slowest writer site [ms] (0 without writers)."""
        commits = [
            self.commit_ms(index, writer, "p50")
            for index, cluster in enumerate(self.option.clusters)
            for writer in cluster.writers
        ]
        return np.max(commits, axis=0) if commits else np.zeros(self.shape)


def _knots(rho: FloatArray, count: int = 24) -> FloatArray:
    """Utilisations at which to run a row's queue along a grid: ``count`` spread over the
    grid's (denser towards 1, where the wait grows fastest), each one a point of the grid."""
    if rho.size == 0:
        return rho
    low, high = float(rho.min()), float(rho.max())
    spread = 1.0 - (1.0 - np.linspace(0.0, 1.0, count)) ** 2
    wanted = low + (high - low) * spread
    points = np.unique(rho[np.abs(rho[:, None] - wanted[None, :]).argmin(axis=0)])
    return points


def _longest_path_ms(
    rtt_ms: Callable[[str, str], FloatArray], members: tuple[str, ...], writer: str
) -> FloatArray:
    """The longest ``writer -> k -> j -> writer`` over ``members`` in round trips [ms] (a
    site to itself: 0)."""

    def rtt(a: str, b: str) -> FloatArray:
        return rtt_ms(a, b) if a != b else np.asarray(0.0)

    longest: FloatArray = np.asarray(0.0)
    for k, j in itertools.product(members, repeat=2):
        longest = np.maximum(longest, rtt(writer, k) + rtt(k, j) + rtt(j, writer))
    return longest


def _judge(on: _OnGrid) -> tuple[FloatArray, FloatArray]:
    """Median commit and the remedy cost of the option's blocking rules along the grid.

    Blockers of rules the sweep re-judges (:data:`REJUDGED`) are decided at every point,
    when the rule is a blocker; every other blocker is carried over as it is today.
    """
    analysis, option = on.analysis, on.option
    blocking = verdict.blockers(option, analysis.findings)
    carried = [f for f in blocking if f.rule not in REJUDGED]
    cost = np.full(on.shape, verdict.remedy_cost(carried, analysis.rules), float)
    for rule_id, still_ok in REJUDGED.items():
        rule = analysis.rules[rule_id]
        if rule.severity == "blocker":
            ok = still_ok(on, rule.parameters)
            # Today's findings of the rule say which remedy it needs; elsewhere its own cost.
            today = [f for f in blocking if f.rule == rule_id]
            cost += verdict.remedy_cost(today or [rule_id], analysis.rules) * (~ok)
    return on.commit_p50_ms(), cost


def _slo_ok(on: _OnGrid, params: Mapping[str, float]) -> npt.NDArray[np.bool_]:
    """COMMIT-LATENCY-SLO, vectorised: every writer's commit, and every hot row's update with
    its wait for the lock, within every limit."""
    ok = np.ones(on.shape, dtype=bool)
    slo = on.analysis.topology.requirements.commit_latency_ms
    limits = slo.given() if slo else {}
    for index, cluster in enumerate(on.option.clusters):
        for site in cluster.writers:
            for key, limit in limits.items():
                ok &= on.commit_ms(index, site, key) <= limit
    for row in on.option.hot_rows:
        # past the row's bound at the median commit the row is HOT-ROW-RATE's, as in the engine
        bounded = row.row.updates_per_s * on.rate_scale * on.row_commit_p50_ms(row) < 1000.0
        for key, limit in limits.items():
            ok &= (on.row_write_ms(row, key) <= limit) | ~bounded
    return ok


def _rows_ok(on: _OnGrid, params: Mapping[str, float]) -> npt.NDArray[np.bool_]:
    """HOT-ROW-RATE, vectorised: each row's utilisation below the rule's limit."""
    ok = np.ones(on.shape, dtype=bool)
    for row in on.option.hot_rows:
        p50 = on.row_commit_p50_ms(row)
        ok &= row.row.updates_per_s * on.rate_scale * p50 / 1000.0 < params["max_utilisation"]
    return ok


def _async_ok(on: _OnGrid, params: Mapping[str, float]) -> npt.NDArray[np.bool_]:
    """ASYNC-DATA-LOSS, vectorised: the slowest channel's p99 lag, which moves by half its
    link's RTT change (one way), within the limit."""
    allowed = on.analysis.topology.requirements.max_data_loss_s
    channels = on.option.async_links
    if allowed is None or not channels:
        return np.ones(on.shape, dtype=bool)
    lag_s = np.max([_lag_p99_ms(on, c) / 1000.0 for c in channels], axis=0)
    return np.asarray(np.broadcast_to(lag_s <= allowed, on.shape))


def _lag_p99_ms(on: _OnGrid, channel: AsyncLink) -> FloatArray:
    """A channel's p99 lag along the grid [ms]: its finite terms today, moved by half its
    link's change (one way) and by its apply's; infinite where it falls behind without bound.
    Where it fell behind today, its wait for an applier is left out where it keeps up."""
    parts = channel.lag_p99_parts_ms
    finite = sum(v for v in parts.values() if np.isfinite(v)) if parts else channel.lag_ms["p99"]
    moved = (
        finite + on.links.change_ms(*channel.sites) / 2 + (on.apply_ms(channel) - channel.apply_ms)
    )
    return np.where(on.apply_busy(channel) >= 1.0, np.inf, moved)


# The rules whose verdict depends on the varied quantities, each re-judged on the grid.
REJUDGED: dict[str, Callable[[_OnGrid, Mapping[str, float]], npt.NDArray[np.bool_]]] = {
    "COMMIT-LATENCY-SLO": _slo_ok,
    "HOT-ROW-RATE": _rows_ok,
    "ASYNC-DATA-LOSS": _async_ok,
}

# The shipped blockers the sweep carries over as they are today, and why none of them moves
# with an RTT, a distance or a hot row's rate. A blocker in neither this nor REJUDGED would be
# carried over wrongly: tests/test_sweep.py checks the shipped pack against the two.
CARRIED: dict[str, str] = {
    "QUORUM-NODE-LOSS": "which node losses a cluster survives: its members' weights",
    "QUORUM-SITE-LOSS": "which site losses and link cuts a cluster survives: its sites' weights",
    "BANDWIDTH": "the peak replicated traffic against each link's bandwidth",
    "MULTI-SITE-WRITES-ASYNC": "rows written at sites of different clusters: the partition",
    "FLOW-CONTROL": "the slowest member's appliers against the peak commit rate: its own "
    "local commit, not a round trip, a distance or a hot row's rate",
    "CPU-QUOTA": "a member's CPU limit over the CPU a write set costs it, against the peak "
    "commit rate: not a round trip, a distance or a hot row's rate",
}
