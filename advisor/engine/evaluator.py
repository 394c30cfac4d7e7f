"""The evaluation of candidate architectures into metrics (no verdicts, no findings).

:class:`Evaluator` computes, per cluster, the commit latency draws at every writer site,
quorum under site loss, link cuts and node loss (placing a garbd where that fixes it), the
send-window limit and the traffic on each link; per option, the hot rows, the asynchronous
links between clusters and the closed-loop throughput. What it returns is plain data
(:mod:`advisor.engine.metrics`). Clusters are cached by their sites, so searching groupings
evaluates each candidate group once.
"""

from __future__ import annotations

__all__ = ["Evaluator"]

import math
from collections.abc import Sequence

import numpy as np

from advisor.engine.evidence import LinkEvidence
from advisor.engine.metrics import (
    AsyncLink,
    ClusterEval,
    FloatArray,
    HotRowEval,
    LimitedBy,
    Option,
    Percentiles,
    Throughput,
    safe_period_ms,
    summarise,
    worst,
)
from advisor.engine.workload import WritesetSizes
from advisor.inputs.topology import HotRow, Topology
from advisor.model import galera, quorum, tcp
from advisor.model.provider_options import effective_options
from advisor.model.rtt import RttDistribution
from advisor.vocabulary import Architecture


class Evaluator:
    """Evaluates clusters and options of one topology; caches clusters by their sites."""

    def __init__(
        self,
        topology: Topology,
        links: Sequence[LinkEvidence],
        *,
        writeset_bytes: WritesetSizes,
        draws: int = galera.DRAWS,
    ) -> None:
        self.topology = topology
        self.draws = draws
        self.writeset_p50_bytes = writeset_bytes.p50_bytes
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

    def lan_commit_ms(self, site: str) -> Percentiles:
        """Commit percentiles of a cluster inside ``site`` alone: the LAN part of any commit
        there (the local commit time alone where the site does not write)."""
        single = self.cluster([site])
        if site in single.commit_by_site_ms:
            return single.commit_percentiles(site)
        return {k: self.local_commit_ms for k in ("p50", "p95", "p99", "p999", "max")}

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
        by_site = {site: summarise(draws) for site, draws in commit.items()}
        user_window = int(self.options["evs.user_send_window"])
        period_ms = safe_period_ms(worst(list(by_site.values())), self.local_commit_ms)
        members = self._member_sites(sites, arbitrator)
        return ClusterEval(
            sites=sites,
            arbitrator=arbitrator,
            writers=writers,
            commit_ms=commit,
            commit_by_site_ms=by_site,
            site_failures=tuple(site_failures),
            node_failures=tuple(node_failures),
            links=tuple(self.link(a, b) for i, a in enumerate(members) for b in members[i + 1 :]),
            user_send_window=user_window,
            local_commit_ms=self.local_commit_ms,
            window_limit_commits_per_s=galera.window_limit_commits_per_s(
                user_window, period_ms, self.writeset_p50_bytes
            ),
            arbitrator_cost_ms=cost,
            unfixable_by_arbitrator=unfixable,
        )

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

    def option(self, architecture: Architecture, partition: Sequence[Sequence[str]]) -> Option:
        """Evaluate one partition of the data sites into clusters.

        A partial partition (one candidate group of the grouping search) judges only the hot
        rows its groups own, and has a throughput only when it holds the clients' site.
        """
        # Sites within a group, and groups, in declaration order.
        groups = tuple(
            sorted(
                (tuple(s for s in self.data_sites if s in g) for g in partition),
                key=lambda g: self.data_sites.index(g[0]),
            )
        )
        bare = Option(architecture, groups, tuple(self.cluster(g) for g in groups))
        hot_rows = tuple(
            self._hot_row(bare, row)
            for row in self.topology.workload.hot_rows
            if any(self._owner(row) in g for g in groups)
        )
        return Option(
            architecture,
            groups,
            bare.clusters,
            hot_rows,
            self._async_links(groups),
            self._throughput(bare),
        )

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

    def _async_links(self, groups: Sequence[tuple[str, ...]]) -> tuple[AsyncLink, ...]:
        links = []
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                pairs = [(a, b) for a in groups[i] for b in groups[j]]
                a, b = min(pairs, key=lambda p: self.median_rtt_ms(*p))
                rtt = self.link(a, b).rtt
                rtt_p = {k: float(rtt.quantile(q)) for k, q in (("p50", 0.5), ("p99", 0.99))}
                lag = {k: galera.async_lag_ms(v) for k, v in rtt_p.items()}
                links.append(AsyncLink((i, j), (a, b), rtt_p, lag))
        return tuple(links)

    def _throughput(self, option: Option) -> Throughput | None:
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
        txn = summarise(latency, ("p50", "p95"))
        limited: LimitedBy = "send window" if math.isclose(rate, cap) else "commit latency"
        return Throughput(rate * clients.commits_per_txn, txn, limited)
