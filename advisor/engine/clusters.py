"""One Galera cluster of some of the sites, evaluated: its commit latency at every writer
site, quorum under failures (with a garbd placed where that fixes it) and its send-window
limit. Plain data out (:class:`~advisor.engine.metrics.ClusterEval`), no judgement.
"""

from __future__ import annotations

__all__ = ["Clusters"]

import math
from collections.abc import Mapping, Sequence

import numpy as np

from advisor.engine.draws import LinkDraws, site_local_commit_ms
from advisor.engine.memo import ClusterKey, Memo
from advisor.engine.metrics import (
    REPORTED,
    REPORTED_PERCENTS,
    ClusterEval,
    FloatArray,
    Percentiles,
    safe_period_ms,
    summarise,
    writer_messages_per_s,
)
from advisor.inputs.topology import Site, Topology
from advisor.model import flow_control, galera, pipeline, quorum, tcp
from advisor.model.cpu_quota import CpuQuota


class Clusters:
    """The clusters of one topology's sites at one sampling of draws."""

    def __init__(self, topology: Topology, pairs: LinkDraws, memo: Memo) -> None:
        self.topology = topology
        self.pairs = pairs
        self.sampling = pairs.sampling
        self._memo = memo
        self._sites = {s.name: s for s in topology.sites}
        self.data_sites = [s.name for s in topology.sites if s.nodes > 0]
        self.writing = [s.name for s in topology.sites if s.writes and s.nodes > 0]
        self.arbitrator_sites = [s.name for s in topology.sites if s.arbitrator]
        # One gmcast.segment per site unless the user pins one segment for every node.
        self._segments = "gmcast.segment" not in topology.galera.provider_options
        # Each site's local work of one commit or apply [ms]: its own, else the workload's.
        self._local_ms = {s.name: site_local_commit_ms(topology, s) for s in topology.sites}

    def cluster(self, sites: Sequence[str]) -> ClusterEval:
        """The cluster of ``sites`` (those holding data, in declaration order), evaluated once
        per analysis for its links and draws."""
        key = self.key(sites)
        kept = self._memo.clusters.get(key)
        if kept is None:
            kept = self._memo.clusters.setdefault(key, self._evaluate(key[0]))
        return kept

    def key(self, sites: Sequence[str]) -> ClusterKey:
        """What the cluster of ``sites`` depends on within one analysis: its data sites, the
        number of draws, and the links among them and the arbitrator sites (by identity)."""
        ordered = tuple(s for s in self.data_sites if s in sites)
        reach = set(ordered) | set(self.arbitrator_sites)
        links = tuple(link for pair, link in self.pairs.links.items() if pair <= reach)
        return (ordered, self.sampling.draws, links)

    def lan_commit_ms(self, site: str) -> Percentiles:
        """Commit percentiles of a cluster inside ``site`` alone: the LAN part of any commit
        there (the local commit time alone where the site does not write)."""
        single = self.cluster([site])
        if site in single.commit_by_site_ms:
            return single.commit_percentiles(site)
        return dict.fromkeys(REPORTED, self._local_ms[site])

    def in_step_commit(self, cluster: ClusterEval, writers: tuple[str, ...]) -> Percentiles:
        """A row's commit at the writer site of the highest p50, clients at every site of
        ``writers`` in step (:func:`galera.in_step_commit_draws`), pipelined as every
        commit is."""
        paths = self._paths(cluster.sites, cluster.arbitrator, writers, in_step=True)
        members = self._members(cluster.sites, cluster.arbitrator)
        commits = (
            self._pipelined(paths[w], _first_reply(self.pairs, members, w), w) for w in writers
        )
        return max((summarise(c) for c in commits), key=lambda p: p["p50"])

    def lone_commit(self, sites: Sequence[str], site: str) -> tuple[float, float, float]:
        """A commit from a node at ``site`` in the cluster of ``sites``, with no ProxySQL
        route: its median, p99 and mean [ms], what an asynchronous replica there pays to
        apply one transaction. The cluster's own commits where ``site`` holds its writer
        (their percentiles as the cluster reports them)."""
        cluster = self.cluster(sites)
        if site == cluster.writer_site:
            shown = cluster.commit_by_site_ms[site]
            return shown["p50"], shown["p99"], float(np.mean(cluster.commit_ms[site]))
        members = self._members(cluster.sites, cluster.arbitrator)
        path = self._paths(cluster.sites, cluster.arbitrator, (site,), in_step=False)[site]
        draws = self._pipelined(path, _first_reply(self.pairs, members, site), site)
        draws = draws + self._losses(members, site)
        p50, p99 = np.percentile(draws, (REPORTED_PERCENTS["p50"], REPORTED_PERCENTS["p99"]))
        return float(p50), float(p99), float(np.mean(draws))

    def _evaluate(self, sites: tuple[str, ...]) -> ClusterEval:
        writers = tuple(s for s in sites if s in self.writing)
        arbitrator = None
        site_failures, node_failures = self._failures(sites, None, writers)
        paths, replies, commit = self._commits(sites, None, writers)
        cost = 0.0
        unfixable = False
        weights: dict[str, int] = {}
        if site_failures or node_failures:
            fix = self._best_arbitrator(sites, writers, commit)
            if fix is not None:
                arbitrator, (paths, replies, commit), cost = fix
                site_failures, node_failures = self._failures(sites, arbitrator, writers)
            else:
                unfixable = True
                primary = self.writer_site(writers) or sites[0]
                weights = _primary_weight([self._sites[s] for s in sites], primary)
                if weights:
                    site_failures, node_failures = self._failures(sites, None, writers, weights)
        members = self._members(sites, arbitrator, weights)
        writer = self.writer_site(writers)
        commits = self.topology.workload.commits_per_s
        messages_per_s = writer_messages_per_s(self.sampling.user_window, paths, writer)
        quota_site, quota = _tightest_quota([self._sites[s] for s in sites], messages_per_s)
        if commits is not None and quota_site is not None and quota is not None:
            stall = _stall_draws(
                quota_site, quota, commits.design_value, messages_per_s, self.sampling.draws
            )
            commit = {site: draws + stall for site, draws in commit.items()}
        by_site = {site: summarise(draws) for site, draws in commit.items()}
        local_ms = self._local_ms[writer] if writer else self.sampling.local_commit_ms
        deps = self.topology.workload.cert_deps_distance
        given = self.topology.galera.applier_threads
        threads = given or flow_control.design_applier_threads(
            None if commits is None else commits.design_value, local_ms, deps
        )
        capacities = _apply_capacities(
            [self._sites[s] for s in sites], writer, self._local_ms, threads, deps
        )
        slow = _slowest_applier(capacities, self._local_ms, threads)
        fc_members = _fc_members(
            [self._sites[s] for s in sites], arbitrator, self.topology.galera.flavor
        )
        slow_member = None
        if slow[0] is not None:
            limit, factor, single = self.sampling.fc_options
            limits = flow_control.fc_limits(limit, factor, fc_members, single)
            at_work = flow_control.appliers_at_work(threads, deps)
            slow_member = flow_control.SlowMember.of(slow[3], at_work, limits)
        period_ms = safe_period_ms(by_site[writer] if writer else {}, local_ms)
        names = list(members)
        return ClusterEval(
            sites=sites,
            arbitrator=arbitrator,
            writers=writers,
            commit_ms=commit,
            commit_by_site_ms=by_site,
            site_failures=tuple(site_failures),
            node_failures=tuple(node_failures),
            links=tuple(self.pairs.link(a, b) for i, a in enumerate(names) for b in names[i + 1 :]),
            send_window=self.sampling.send_window,
            user_window=self.sampling.user_window,
            fragment_bytes=self.sampling.fragment_bytes,
            writesets_per_message=self.sampling.writesets_per_message,
            local_commit_ms=local_ms,
            window_limit_commits_per_s=pipeline.window_limit_commits_per_s(
                self.sampling.send_window, period_ms, self.sampling.writesets_per_message
            ),
            arbitrator_cost_ms=cost,
            unfixable_by_arbitrator=unfixable,
            weights=weights,
            path_ms=paths,
            first_reply_draws_ms=replies,
            writer_site=writer,
            apply_site=slow[0],
            apply_ms=slow[1],
            applier_threads=slow[2],
            apply_capacity_per_s=slow[3],
            apply_capacities_per_s=capacities,
            slow_member=slow_member,
            fc_members=fc_members,
            fc_single_primary=self.sampling.fc_options[2],
            quota_site=quota_site,
            cpu_quota=quota,
        )

    def writer_site(self, writers: Sequence[str]) -> str | None:
        """The site of the cluster's one writer (ProxySQL's ``max_writers`` 1): the writing
        site that owns most hot rows, else the first (config/plan.py pins it there)."""
        if not writers:
            return None
        owners = [
            (row.writer_sites or self.writing or self.data_sites)[0]
            for row in self.topology.workload.hot_rows
        ]
        return max(writers, key=lambda s: (owners.count(s), -writers.index(s)))

    def _members(
        self,
        sites: tuple[str, ...],
        arbitrator: str | None,
        raised: Mapping[str, int] | None = None,
    ) -> dict[str, list[int]]:
        """Each member site's ``pc.weight`` per voting member (garbd: 1); ``raised``: the
        design's weights where it raises them."""
        raised = raised or {}
        weights = {s: [raised.get(s, self._sites[s].weight)] * self._sites[s].nodes for s in sites}
        if arbitrator is not None:
            weights.setdefault(arbitrator, []).append(1)
        return weights

    def _failures(
        self,
        sites: tuple[str, ...],
        arbitrator: str | None,
        writers: tuple[str, ...],
        raised: Mapping[str, int] | None = None,
    ) -> tuple[list[quorum.Failure], list[quorum.Failure]]:
        members = self._members(sites, arbitrator, raised)
        weights = {s: float(sum(w)) for s, w in members.items()}
        survive_site = self.topology.requirements.survive == "site"
        site_failures = quorum.site_failures(weights, set(writers)) if survive_site else []
        return site_failures, quorum.node_loss_failures(members)

    def _commits(
        self, sites: tuple[str, ...], arbitrator: str | None, writers: tuple[str, ...]
    ) -> _Commits:
        """The writer site's network path and first reply, and the commit
        seen at each writer site, draw by draw [ms].

        ProxySQL sends every statement to the cluster's one writer (:meth:`writer_site`), so
        a commit runs there: its rounds through the send windows and the retransmissions of
        losses on the cluster's links; a client at another writing site adds the round trip
        to the writer (its statement crosses that link and the answer comes back).
        """
        members = self._members(sites, arbitrator)
        writer = self.writer_site(writers)
        if writer is None:
            return {}, {}, {}
        replies = {writer: _first_reply(self.pairs, members, writer)}
        paths = self._paths(sites, arbitrator, (writer,), in_step=False)
        own = self._pipelined(paths[writer], replies[writer], writer)
        own += self._losses(members, writer)
        commits = {
            w: own
            if w == writer
            else own + _statement_hop(self.pairs, self.sampling.draws, w, writer)
            for w in writers
        }
        return paths, replies, commits

    def _losses(self, members: dict[str, list[int]], writer: str) -> FloatArray:
        """What losses on the writer's links add to each draw's commit [ms]: the write set's
        last segment to each member is lone (:func:`galera.retransmission_delay_draws`,
        which counts one such message per link of the writer, as measured), its earlier
        segments are resent after one round trip (:func:`galera.fast_retransmit_delay_draws`).
        Losses between two other members are recovered without a timeout (the same lab)."""
        plan = self.sampling
        delay = np.zeros(plan.draws)
        segments = np.ceil(plan.burst_draw_bytes / tcp.MSS_BYTES)
        for peer in members:
            if peer == writer:
                continue
            link = self.pairs.link(writer, peer)
            if link.rtt.loss <= 0.0:
                continue
            key = "|".join(sorted((writer, peer)))
            rtt_ms = self.pairs(writer, peer)[0]
            lone = galera.stream_uniforms(key, 1, plan.draws)
            followed = galera.stream_uniforms(key, 3, plan.draws)
            delay += galera.retransmission_delay_draws(link.rtt.loss, 1.0, rtt_ms, lone)
            delay += galera.fast_retransmit_delay_draws(
                link.rtt.loss, segments - 1.0, rtt_ms, followed
            )
        return delay

    def _paths(
        self,
        sites: tuple[str, ...],
        arbitrator: str | None,
        writers: Sequence[str],
        *,
        in_step: bool,
    ) -> dict[str, FloatArray]:
        """The commit path's network wait at each writer [ms], of lone writers or of writers
        in step; one gmcast.segment per site unless the user pins one, each site's relay hop
        its LAN median."""
        members = {s: len(w) for s, w in self._members(sites, arbitrator).items()}
        spec = galera.Cluster(members, segments=self._segments and len(members) > 1)
        relay_ms = {s: self.pairs.relay_ms(s) for s in spec.sites}
        draws = galera.in_step_commit_draws if in_step else galera.commit_latency_draws
        return draws(spec, writers, self.pairs, relay_ms=relay_ms)

    def _pipelined(self, path_ms: FloatArray, first_reply_ms: FloatArray, site: str) -> FloatArray:
        """A commit at ``site`` of each draw's write set [ms]: that site's local work, then its
        rounds through the send windows over that draw's path
        (:func:`pipeline.pipeline_commit_ms`). The one place where the local commit is added
        to a commit."""
        plan = self.sampling
        return self._local_ms[site] + pipeline.pipeline_commit_ms(
            plan.fragments, plan.user_window, plan.send_window, path_ms, first_reply_ms
        )

    def _best_arbitrator(
        self, sites: tuple[str, ...], writers: tuple[str, ...], commit: dict[str, FloatArray]
    ) -> tuple[str, _Commits, float] | None:
        """The garbd site that makes quorum hold at the least cost to the worst commit
        median, if any: (site, the commits with it, the cost [ms])."""
        without_ms: float | None = None  # once a candidate holds quorum
        best: tuple[str, _Commits, float] | None = None
        for candidate in self.arbitrator_sites:
            if any(self._failures(sites, candidate, writers)):
                continue
            if without_ms is None:
                without_ms = max((float(np.median(d)) for d in commit.values()), default=0.0)
            with_garbd = self._commits(sites, candidate, writers)
            worst_ms = max((float(np.median(d)) for d in with_garbd[2].values()), default=0.0)
            if best is None or worst_ms - without_ms < best[2]:
                best = (candidate, with_garbd, worst_ms - without_ms)
        return best


# At each writer site: network path draws, first-reply draws, commit draws [ms].
_Commits = tuple[dict[str, FloatArray], dict[str, FloatArray], dict[str, FloatArray]]


def _first_reply(pairs: LinkDraws, members: dict[str, list[int]], writer: str) -> FloatArray:
    """Draws of the round trip to the writer's nearest fellow member [ms] (0: alone)."""
    near = [pairs(writer, s)[0] for s, w in members.items() if s != writer and w]
    if len(members.get(writer, [])) >= 2:  # another node in the writer's own site
        near.append(pairs(writer, writer)[0])
    if not near:
        return np.zeros(pairs.sampling.draws)
    nearest: FloatArray = np.min(near, axis=0).astype(float)
    return nearest


def _slowest_applier(
    capacities: Mapping[str, float], local_ms: Mapping[str, float], threads: int
) -> tuple[str | None, float, int, float]:
    """The member site whose appliers keep up least, and their capacity
    (:func:`flow_control.apply_capacity_per_s`): (site, one apply [ms], the design's applier
    threads, write sets a second); (None, 0, threads, inf) when no node applies.

    Every node but the writer applies every write set with its threads, where the writer's
    clients committed them in parallel: a node as fast as the writer's keeps up only as far
    as its threads carry (``galera.applier_threads: 1`` at 1 ms an apply, 1,000/s). The
    design's threads carry twice the peak (:func:`flow_control.design_applier_threads`), so
    equal sites cap nothing under the design. The lab, with three equal nodes: no flow
    control at 4 clients, paused 2.5 % of the time at 16 on a saturated machine
    (benchmarks/calibration/lab-runs.yaml flow-control-slow-node). A lone node at the
    writer's site runs the commits itself and applies none of them. The threads are the
    design's (advisor/config/galera.py) or the user's (``galera.applier_threads``); no more
    of them work at once than the write sets' dependencies allow
    (``workload.cert_deps_distance``).
    """
    if not capacities:
        return (None, 0.0, threads, math.inf)
    site = min(capacities, key=capacities.__getitem__)  # the first of equals, in site order
    return (site, local_ms[site], threads, capacities[site])


def _apply_capacities(
    sites: Sequence[Site],
    writer: str | None,
    local_ms: Mapping[str, float],
    threads: int,
    deps: float | None,
) -> dict[str, float]:
    """Each member site whose nodes apply the writer's write sets, and the write sets a
    second its appliers apply [1/s], in site order: every node but the writer applies with
    the threads, no more at once than the dependencies allow (:func:`_slowest_applier`)."""
    return {
        site.name: flow_control.apply_capacity_per_s(
            threads, local_ms[site.name], parallel_limit=deps
        )
        for site in sites
        if site.nodes > (1 if site.name == writer else 0)
    }


def _fc_members(sites: Sequence[Site], arbitrator: str | None, flavor: str) -> int:
    """The members the flow-control limits scale with: every data node, and garbd except on
    Percona XtraDB Cluster (PXC-694: https://github.com/percona/percona-xtradb-cluster/pull/408)."""
    garbd = arbitrator is not None and flavor != "pxc"
    return sum(site.nodes for site in sites) + (1 if garbd else 0)


def _tightest_quota(
    sites: Sequence[Site], messages_per_s: float
) -> tuple[str | None, CpuQuota | None]:
    """The data site held to a CPU quota whose nodes keep up with the fewest write sets a
    second, the writer sending at most ``messages_per_s`` [1/s] messages
    (:meth:`CpuQuota.capacity_at`), and its quota; (None, None) when no site gives one. Every
    member receives every write set, the writer's node included. At the writer's message
    rate, not one write set a message: a node that spends most of its CPU on each message
    keeps up with far more write sets once they share messages than one that spends it on
    each write set, though alone it keeps up with fewer."""
    held = [
        (site.name, quota) for site in sites if site.nodes and (quota := site.cpu_quota) is not None
    ]
    if not held:
        return None, None
    return min(held, key=lambda pair: pair[1].capacity_at(messages_per_s))


def _stall_draws(
    site: str, quota: CpuQuota, peak_per_s: float, messages_per_s: float, draws: int
) -> FloatArray:
    """What a member held to a CPU limit adds to each commit draw at the peak, or at most
    what the limit keeps up with [ms]: a commit that comes once its period's budget is spent
    waits for the next period, and every commit waits for every member
    (:meth:`CpuQuota.stall_draws`; CPU-QUOTA-BURSTS). The same draws for every writer site
    and evaluation: one cluster, one throttled member (stream 5 of ``site``)."""
    rate = min(peak_per_s, quota.capacity_at(messages_per_s))
    rng = galera.stream_rng(site, 5)
    return quota.stall_draws(rate, messages_per_s, rng, draws)


def _primary_weight(sites: Sequence[Site], primary: str) -> dict[str, int]:
    """The ``pc.weight`` that lets the ``primary`` site of a two-site cluster outweigh the
    other, where no garbd breaks their tie and the user gives no weights: the other site's
    loss, or the link's cut, then leaves the primary site running, and only the primary's
    loss stops the cluster (until an operator bootstraps the other,
    :attr:`ClusterEval.bootstrap_sites`). With equal weights either loss stops it. Codership
    docs, Weighted Quorum: https://galeracluster.com/library/documentation/weighted-quorum.html.
    """
    if len(sites) != 2 or any("weight" in site.model_fields_set for site in sites):
        return {}
    (main,) = (site for site in sites if site.name == primary)
    (other,) = (site for site in sites if site.name != primary)
    # More than the other site's weight, so the primary site alone is a majority.
    return {primary: other.nodes * other.weight // main.nodes + 1}


def _statement_hop(pairs: LinkDraws, draws: int, site: str, writer: str) -> FloatArray:
    """A client at ``site`` reaching ProxySQL's writer at ``writer``: the round trip, and an
    RTO when its statement or the answer, each a lone message, is lost [ms]
    (:func:`galera.retransmission_delay_draws`)."""
    rtt_ms = pairs(site, writer)[0].astype(float)
    loss = pairs.link(site, writer).rtt.loss
    if loss <= 0.0:
        return rtt_ms
    levels = galera.stream_uniforms("|".join(sorted((site, writer))), 4, draws)
    return rtt_ms + galera.retransmission_delay_draws(loss, 2.0, rtt_ms, levels)
