"""Candidate architectures and their evaluation into metrics (no verdicts, no findings).

An :class:`Option` is a partition of the data sites into Galera clusters: one group
(``single_cluster``), one per site (``per_site_clusters``) or anything between
(``grouped_clusters``). :class:`Evaluator` computes, per cluster, the commit latency draws
at every writer site, quorum under site loss, link cuts and node loss (placing a garbd where
that fixes it), the send-window limit and the traffic on each link; per option, the hot rows,
the asynchronous links between clusters and the closed-loop throughput. Clusters are cached
by their sites, so searching groupings evaluates each candidate group once.
"""

from __future__ import annotations

__all__ = [
    "AsyncLink",
    "ClusterEval",
    "Evaluator",
    "HotRowEval",
    "Option",
]

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

from advisor import galera, quorum
from advisor.evidence import LinkEvidence
from advisor.provider_options import effective_options
from advisor.rtt import RttDistribution
from advisor.topology import HotRow, Topology

FloatArray = npt.NDArray[np.float64]
Percentiles = dict[str, float]
REPORTED = ("p50", "p95", "p99", "p999", "max")


def summarise(draws: FloatArray, keys: Sequence[str] = REPORTED) -> Percentiles:
    """Percentiles of Monte Carlo draws [ms], keys as in FORMAT.md."""
    levels = {"p50": 50, "p95": 95, "p99": 99, "p999": 99.9, "max": 100}
    values = np.percentile(draws, [levels[k] for k in keys])
    return {k: round(float(v), 4) for k, v in zip(keys, values, strict=True)}


@dataclass
class ClusterEval:
    """One Galera cluster of an option, evaluated."""

    sites: tuple[str, ...]  # sites with data nodes
    arbitrator: str | None  # where garbd runs, if the plan needs one
    writers: tuple[str, ...]  # sites whose applications write into this cluster
    commit_ms: dict[str, FloatArray]  # writer site -> draws
    site_failures: list[quorum.Failure]
    node_failures: list[quorum.Failure]
    links: list[LinkEvidence]  # inter-site links inside the cluster (arbitrator's included)
    window_limit_commits_per_s: float
    user_send_window: int
    arbitrator_cost_ms: float = 0.0  # what the garbd adds to the worst commit p50
    unfixable_by_arbitrator: bool = False

    @property
    def members(self) -> tuple[str, ...]:
        return self.sites + (
            (self.arbitrator,) if self.arbitrator and self.arbitrator not in self.sites else ()
        )

    def commit_percentiles(self, site: str | None = None) -> Percentiles:
        """Commit latency at ``site`` or, by default, the worst writer site for each key."""
        if site is not None:
            if site not in self._summaries:
                self._summaries[site] = summarise(self.commit_ms[site])
            return dict(self._summaries[site])
        per_site = [self.commit_percentiles(s) for s in self.commit_ms]
        return {k: max(p[k] for p in per_site) for k in REPORTED} if per_site else {}

    local_commit_ms: float = galera.LOCAL_COMMIT_MS
    _summaries: dict[str, Percentiles] = field(default_factory=dict, repr=False)

    @property
    def safe_period_ms(self) -> float:
        """How often safe_seq advances: the worst writer's commit p50 less local work."""
        p50 = self.commit_percentiles().get("p50", self.local_commit_ms)
        return max(p50 - self.local_commit_ms, 1e-3)


@dataclass(frozen=True)
class AsyncLink:
    """Asynchronous replication between two clusters, over their nearest site pair."""

    clusters: tuple[int, int]
    sites: tuple[str, str]
    rtt_ms: Percentiles
    lag_ms: Percentiles


@dataclass
class HotRowEval:
    row: HotRow
    writer_sites: tuple[str, ...]
    owner: str  # the site that owns the row (first writer site)
    cluster: int  # index of the owner's cluster
    commit_ms: Percentiles  # at the worst writer site of the owner cluster
    spans_clusters: bool
    routed_rtt_ms: dict[str, float] = field(default_factory=dict)  # writer site -> RTT to owner
    conflicts_per_s: float = 0.0

    @property
    def bound_p50_per_s(self) -> float:
        return float(galera.callaghan_bound_per_s(self.commit_ms["p50"]))

    @property
    def bound_p99_per_s(self) -> float:
        return float(galera.callaghan_bound_per_s(self.commit_ms["p99"]))


@dataclass
class Option:
    architecture: str
    groups: list[tuple[str, ...]]
    clusters: list[ClusterEval]
    hot_rows: list[HotRowEval]
    async_links: list[AsyncLink]
    throughput: tuple[float, Percentiles, str] | None = None  # commits/s, txn ms, limited by

    @cached_property
    def commit_latency_ms(self) -> Percentiles:
        per = [c.commit_percentiles() for c in self.clusters if c.commit_ms]
        return {k: max(p[k] for p in per) for k in REPORTED} if per else {}

    @property
    def data_at_risk_s(self) -> float | None:
        if not self.async_links:
            return None
        return max(link.lag_ms["p99"] for link in self.async_links) / 1000.0

    def cluster_of(self, site: str) -> int:
        return next(i for i, g in enumerate(self.groups) if site in g)


class Evaluator:
    """Evaluates clusters and options of one topology; caches clusters by their sites."""

    def __init__(
        self,
        topology: Topology,
        links: Sequence[LinkEvidence],
        *,
        writeset_bytes: tuple[float, float],
        draws: int = galera.DRAWS,
    ) -> None:
        self.topology = topology
        self.draws = draws
        self.writeset_p50_bytes, self.writeset_p99_bytes = writeset_bytes
        self.links = {frozenset(link.sites): link for link in links}
        self.options = effective_options(topology.galera.flavor, topology.galera.provider_options)
        self.sites = {s.name: s for s in topology.sites}
        self.data_sites = [s.name for s in topology.sites if s.nodes > 0]
        self.writing = [s.name for s in topology.sites if s.writes and s.nodes > 0]
        self.arbitrator_sites = [s.name for s in topology.sites if s.arbitrator]
        self._clusters: dict[frozenset[str], ClusterEval] = {}
        self._lan = {
            name: self._lan_pair(site.lan_rtt_ms.given()) for name, site in self.sites.items()
        }
        self._draws: dict[frozenset[str], tuple[FloatArray, FloatArray]] = {}
        self._medians: dict[frozenset[str], float] = {}
        given_local = topology.workload.local_commit_ms
        self.local_commit_ms = galera.LOCAL_COMMIT_MS if given_local is None else given_local
        # One gmcast.segment per site unless the user pins one segment for every node.
        self.segments = "gmcast.segment" not in topology.galera.provider_options

    # -- link lookups ----------------------------------------------------------------

    def _lan_pair(self, given: dict[str, float]) -> tuple[RttDistribution, RttDistribution]:
        from advisor import tcp

        small = RttDistribution.from_percentiles(given)
        size = self.writeset_p50_bytes
        # Inside a site: 10 Gbit/s, warm window (a LAN cluster's links are busy and short).
        return small, small.map(
            lambda v: np.asarray(tcp.request_response_ms(size, 128, v, 10_000.0, window="warm"))
        )

    def pair_draws(self, a: str, b: str) -> tuple[FloatArray, FloatArray]:
        """Draws of (small, write-set) round trips between a and b (inside a site if a == b).

        Drawn once per pair and kept: every candidate cluster reuses them.
        """
        key = frozenset((a, b))
        if key not in self._draws:
            if a == b:
                small, writeset = self._lan[a]
            else:
                link = self.links[key]
                small, writeset = link.rtt, link.writeset_rtt(self.writeset_p50_bytes)[0]
            u = galera.uniforms(a, b, self.draws)
            self._draws[key] = galera.draw_pair(small, writeset, u)
        return self._draws[key]

    def median_rtt_ms(self, a: str, b: str) -> float:
        """A pair's small-message RTT p50 [ms], cached (the grouping search asks often)."""
        key = frozenset((a, b))
        if key not in self._medians:
            self._medians[key] = float(self.links[key].rtt.quantile(0.5))
        return self._medians[key]

    def link(self, a: str, b: str) -> LinkEvidence:
        return self.links[frozenset((a, b))]

    # -- clusters --------------------------------------------------------------------

    def cluster(self, sites: Sequence[str]) -> ClusterEval:
        key = frozenset(sites)
        if key not in self._clusters:
            self._clusters[key] = self._evaluate_cluster(
                tuple(s for s in self.data_sites if s in key)
            )
        return self._clusters[key]

    def _members(self, sites: tuple[str, ...], arbitrator: str | None) -> dict[str, list[int]]:
        weights = {s: [self.sites[s].weight] * self.sites[s].nodes for s in sites}
        if arbitrator is not None:
            weights.setdefault(arbitrator, []).append(1)  # garbd: pc.weight 1
        return weights

    def _failures(
        self, sites: tuple[str, ...], arbitrator: str | None, writers: tuple[str, ...]
    ) -> tuple[list[quorum.Failure], list[quorum.Failure]]:
        members = self._members(sites, arbitrator)
        weights = {s: float(sum(w)) for s, w in members.items()}
        survive_site = self.topology.requirements.survive == "site"
        site_failures = quorum.site_failures(weights, set(writers)) if survive_site else []
        return site_failures, quorum.node_loss_failures(members)

    def _commit(
        self, sites: tuple[str, ...], arbitrator: str | None, writers: tuple[str, ...]
    ) -> dict[str, FloatArray]:
        members = {
            s: n for s, n in ((s, len(w)) for s, w in self._members(sites, arbitrator).items())
        }
        spec = galera.Cluster(members, segments=self.segments and len(members) > 1)
        return galera.commit_latency_draws(
            spec, writers, self.pair_draws, local_commit_ms=self.local_commit_ms
        )

    def _evaluate_cluster(self, sites: tuple[str, ...]) -> ClusterEval:
        writers = tuple(s for s in sites if s in self.writing)
        arbitrator = None
        site_failures, node_failures = self._failures(sites, None, writers)
        commit = self._commit(sites, None, writers)
        cost = 0.0
        unfixable = False
        if site_failures or node_failures:
            fix = self._best_arbitrator(sites, writers, commit)
            if fix is not None:
                arbitrator, commit, cost = fix
                site_failures, node_failures = self._failures(sites, arbitrator, writers)
            else:
                unfixable = True
        user_window = int(self.options["evs.user_send_window"])
        evaluated = ClusterEval(
            sites=sites,
            arbitrator=arbitrator,
            writers=writers,
            commit_ms=commit,
            site_failures=site_failures,
            node_failures=node_failures,
            links=[
                self.link(a, b)
                for i, a in enumerate(self._member_sites(sites, arbitrator))
                for b in self._member_sites(sites, arbitrator)[i + 1 :]
            ],
            window_limit_commits_per_s=0.0,
            user_send_window=user_window,
            arbitrator_cost_ms=cost,
            unfixable_by_arbitrator=unfixable,
            local_commit_ms=self.local_commit_ms,
        )
        evaluated.window_limit_commits_per_s = galera.window_limit_commits_per_s(
            user_window, evaluated.safe_period_ms, self.writeset_p50_bytes
        )
        return evaluated

    @staticmethod
    def _member_sites(sites: tuple[str, ...], arbitrator: str | None) -> list[str]:
        return list(sites) + ([arbitrator] if arbitrator and arbitrator not in sites else [])

    def _best_arbitrator(
        self, sites: tuple[str, ...], writers: tuple[str, ...], commit: dict[str, FloatArray]
    ) -> tuple[str, dict[str, FloatArray], float] | None:
        """The garbd site that makes quorum hold at the least commit cost, if any."""
        worst = max((float(np.median(d)) for d in commit.values()), default=0.0)
        best: tuple[str, dict[str, FloatArray], float] | None = None
        for candidate in self.arbitrator_sites:
            site_f, node_f = self._failures(sites, candidate, writers)
            if site_f or node_f:
                continue
            with_garbd = self._commit(sites, candidate, writers)
            cost = max((float(np.median(d)) for d in with_garbd.values()), default=0.0) - worst
            if best is None or cost < best[2]:
                best = (candidate, with_garbd, cost)
        return best

    # -- options ---------------------------------------------------------------------

    def option(self, architecture: str, partition: Sequence[Sequence[str]]) -> Option:
        # Sites within a group, and groups, in declaration order.
        groups = sorted(
            (tuple(s for s in self.data_sites if s in g) for g in partition),
            key=lambda g: self.data_sites.index(g[0]),
        )
        clusters = [self.cluster(g) for g in groups]
        option = Option(architecture, groups, clusters, [], [])
        # A partial option (one candidate group) judges only the rows its groups own.
        option.hot_rows = [
            self._hot_row(option, row)
            for row in self.topology.workload.hot_rows
            if any(self._owner(row) in g for g in groups)
        ]
        option.async_links = self._async_links(option)
        option.throughput = self._throughput(option)
        return option

    def _owner(self, row: HotRow) -> str:
        """The site that owns a row: its first writer site (declaration order by default)."""
        return (row.writer_sites or self.writing or self.data_sites)[0]

    def _hot_row(self, option: Option, row: HotRow) -> HotRowEval:
        writers = tuple(row.writer_sites or self.writing)
        owner = self._owner(row)
        index = option.cluster_of(owner)
        cluster = option.clusters[index]
        in_cluster = [w for w in writers if w in cluster.commit_ms]
        commit = (
            max((cluster.commit_percentiles(w) for w in in_cluster), key=lambda p: p["p50"])
            if in_cluster
            else cluster.commit_percentiles()
        )
        spans = any(w not in cluster.sites for w in writers)
        routed = {w: self.median_rtt_ms(w, owner) for w in writers if w not in cluster.sites}
        # Writers at several sites of one cluster write on several members: each site's
        # share of the rate races the others within one commit latency.
        rates = (
            [row.updates_per_s / len(in_cluster)] * len(in_cluster) if len(in_cluster) > 1 else []
        )
        windows = [float(np.median(cluster.commit_ms[w])) for w in in_cluster] if rates else []
        conflicts = galera.conflict_rate_per_s(rates, windows) if rates else 0.0
        return HotRowEval(row, writers, owner, index, commit, spans, routed, conflicts)

    def _async_links(self, option: Option) -> list[AsyncLink]:
        links = []
        for i in range(len(option.groups)):
            for j in range(i + 1, len(option.groups)):
                pairs = [(a, b) for a in option.groups[i] for b in option.groups[j]]
                a, b = min(pairs, key=lambda p: self.median_rtt_ms(*p))
                rtt = self.link(a, b).rtt
                rtt_p = {k: float(rtt.quantile(q)) for k, q in (("p50", 0.5), ("p99", 0.99))}
                lag = {k: galera.async_lag_ms(v) for k, v in rtt_p.items()}
                links.append(AsyncLink((i, j), (a, b), rtt_p, lag))
        return links

    def _throughput(self, option: Option) -> tuple[float, Percentiles, str] | None:
        clients = self.topology.workload.clients
        if clients is None or not self.writing:
            return None
        site = self.writing[0]  # the clients sit with the first writing site
        if not any(site in g for g in option.groups):
            return None  # a partial option (one candidate group) without the clients
        cluster = option.clusters[option.cluster_of(site)]
        lan_commit = self.cluster([site]).commit_ms[site]
        added = (cluster.commit_ms[site] - float(np.median(lan_commit))) * clients.commits_per_txn
        cap = cluster.window_limit_commits_per_s / clients.commits_per_txn
        rate, latency = galera.closed_loop(
            clients.concurrency, clients.baseline_txn_latency_ms, np.maximum(added, 0.0), cap
        )
        limited = "send window" if math.isclose(rate, cap) else "commit latency"
        txn = summarise(latency, ("p50", "p95"))
        return rate * clients.commits_per_txn, txn, limited
