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

import functools
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Protocol, cast

import numpy as np
import numpy.typing as npt

from advisor.engine import failover
from advisor.engine.evidence import LinkEvidence
from advisor.engine.metrics import (
    REPORTED,
    AsyncLink,
    ClusterEval,
    FloatArray,
    HotRowEval,
    LimitedBy,
    Medians,
    Option,
    Percentiles,
    Throughput,
    median,
    safe_period_ms,
    summarise,
    worst,
)
from advisor.engine.value_cache import ValueCache
from advisor.engine.workload import WritesetSizes, writeset_size_draws, writeset_sizes
from advisor.inputs.topology import Clients, HotRow, Topology
from advisor.model import galera, pipeline, quorum, replication, tcp
from advisor.model.provider_options import effective_options
from advisor.model.rtt import RttDistribution, quantiles_at
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
        reuse: Evaluator | None = None,
    ) -> None:
        """``reuse``: an evaluator of the same topology and draws whose links differ from
        ``links`` in a few pairs (the estimates moved to an end of their range): its pair
        draws and clusters that none of those pairs touch are taken as they are. Of one with
        other draws (the full Monte Carlo, for its screen), the values of a link that do not
        depend on the draws (its RTT median, a channel's lag over it) are taken."""
        self.topology = topology
        self.draws = draws
        self.writeset_p50_bytes = writeset_bytes.p50_bytes
        self.writeset_mean_bytes = writeset_bytes.mean_bytes
        self.links = {frozenset(link.sites): link for link in links}
        same = reuse is not None and reuse.topology is topology and reuse.draws == draws
        self._reuse = reuse if same else None
        # The pairs whose evidence differs from the reused evaluator's (by identity).
        self._moved = (
            {key for key, link in self.links.items() if reuse.links.get(key) is not link}
            if reuse is not None and same
            else set()
        )
        same_links = (
            reuse is not None
            and reuse.topology is topology
            and (reuse.writeset_p50_bytes, reuse.writeset_mean_bytes)
            == (self.writeset_p50_bytes, self.writeset_mean_bytes)
        )
        self._link_source = reuse if same_links else None
        # The pairs whose evidence is the link source's (by identity).
        self._unmoved = (
            {key for key, link in self.links.items() if reuse.links.get(key) is link}
            if reuse is not None and same_links
            else set()
        )
        self.options = effective_options(topology.galera.flavor, topology.galera.provider_options)
        self._pipeline_per_draw(writeset_size_draws(topology, draws))
        self.sites = {s.name: s for s in topology.sites}
        self.data_sites = [s.name for s in topology.sites if s.nodes > 0]
        self.writing = [s.name for s in topology.sites if s.writes and s.nodes > 0]
        self.arbitrator_sites = [s.name for s in topology.sites if s.arbitrator]
        self._clusters: dict[frozenset[str], ClusterEval] = {}
        self._draws: dict[frozenset[str], tuple[FloatArray, FloatArray]] = {}
        # (sites, arbitrator, writer) -> one message's path and first-reply draws [ms]
        self._paths: dict[tuple[frozenset[str], str | None, str], tuple[FloatArray, ...]] = {}
        self._medians: dict[frozenset[str], float] = {}
        self._relays: dict[str, float] = {}
        self._throughputs: dict[tuple[frozenset[str], str | None, str], Throughput] = {}
        self._in_step: dict[tuple[frozenset[str], str | None, frozenset[str]], Percentiles] = {}
        self._timing: failover.FailoverTiming | None = None
        given_local = topology.workload.local_commit_ms
        self.local_commit_ms = galera.LOCAL_COMMIT_MS if given_local is None else given_local
        # One gmcast.segment per site unless the user pins one segment for every node.
        self.segments = "gmcast.segment" not in topology.galera.provider_options

    def _pipeline_per_draw(self, sizes_bytes: FloatArray) -> None:
        """Each draw's write-set size (``sizes_bytes``), its fragments and the bytes its
        first leg carries.

        The sizes follow the workload's distribution (its own random stream), so commit
        percentiles are a mixture over write-set sizes; a large write set costs the rounds of
        :mod:`advisor.model.pipeline`. Round trips at each draw's burst are interpolated
        between two sizes (:func:`pipeline.rtt_at_bytes`): the p50 write set's burst and the
        largest burst, both costed by the link's evidence (``LinkEvidence.writeset_rtt``).
        """
        self.user_window = int(self.options["evs.user_send_window"])
        self.send_window = int(self.options["evs.send_window"])
        self.fragment_bytes = pipeline.fragment_bytes(int(self.options["gcs.max_packet_size"]))
        self.writeset_draw_bytes = sizes_bytes
        self._fragments = pipeline.fragment_count(self.writeset_draw_bytes, self.fragment_bytes)
        self.writesets_per_message = pipeline.writesets_per_message(
            self.writeset_mean_bytes, self.fragment_bytes
        )
        self._bursts = pipeline.burst_bytes(
            self.writeset_draw_bytes, self.fragment_bytes, self.send_window
        )
        self._anchor_bytes = (
            float(
                pipeline.burst_bytes(self.writeset_p50_bytes, self.fragment_bytes, self.send_window)
            ),
            float(self._bursts.max()),
        )
        self._bursts_key = _interned_bytes(self._bursts)

    # -- link lookups ----------------------------------------------------------------

    def pair_draws(self, a: str, b: str) -> tuple[FloatArray, FloatArray]:
        """Draws of (small, write-set) round trips between a and b (inside a site if a == b).

        Drawn once per pair and kept: every candidate cluster reuses them.
        """
        key = frozenset((a, b))
        if key not in self._draws and self._reuse is not None and key not in self._moved:
            self._draws[key] = self._reuse.pair_draws(a, b)
        if key not in self._draws:
            self._draws[key] = (
                self._lan_pair(a) if a == b else self._kept_pair(a, b, self.links[key])
            )
        return self._draws[key]

    def _kept_pair(self, a: str, b: str, link: LinkEvidence) -> tuple[FloatArray, FloatArray]:
        """A pair's draws, kept across evaluators (a fleet worker's topologies) where the
        link's round trips follow from plain values (``LinkEvidence.value_key``): the draws
        are those of the two names (common random numbers), the link's values, the anchor
        bursts, each draw's burst and the number of draws, and the key holds them all."""
        value = link.value_key
        if value is None:
            return self._drawn_pair(a, b, link)
        key = (*sorted((a, b)), self.draws, *value, *self._anchor_bytes, self._bursts_key)
        kept = _PAIR_DRAWS if self.draws <= _FEW_DRAWS else _MANY_PAIR_DRAWS
        pair = kept.get(key)
        if pair is None:
            pair = self._drawn_pair(a, b, link)
            for values in pair:
                values.setflags(write=False)
            kept.put(key, pair, sum(values.nbytes for values in pair))
        return pair

    def _lan_pair(self, a: str) -> tuple[FloatArray, FloatArray]:
        """Draws of round trips inside site ``a`` (its LAN quantiles are kept already)."""
        low, high = self._anchor_bytes
        given = tuple(self.sites[a].lan_rtt_ms.given().items())
        drawn = _lan_quantiles(a, self.draws, given, low, high)
        return self._at_bursts(drawn, self._bursts, None)

    def _drawn_pair(self, a: str, b: str, link: LinkEvidence) -> tuple[FloatArray, FloatArray]:
        """Draws of the link between sites a and b, at their common random levels."""
        low, high = self._anchor_bytes
        bursts, order = self._bursts, None
        small, at_low, at_high = link.rtt, *(link.writeset_rtt(s)[0] for s in (low, high))
        dists = (small, at_low, at_high) if high > low else (small, at_low)
        if all(dist.basis == "samples" for dist in dists):
            drawn = quantiles_at(dists, galera.uniforms(a, b, self.draws))
        else:  # read at ascending levels: see _ascending_order
            order = _ascending_order(*sorted((a, b)), self.draws)
            drawn = quantiles_at(dists, galera.uniforms(a, b, self.draws)[order])
            bursts = bursts[order]
        return self._at_bursts(drawn, bursts, order)

    def _at_bursts(
        self, drawn: Sequence[FloatArray], bursts: FloatArray, order: Order | None
    ) -> tuple[FloatArray, FloatArray]:
        """(small, write-set at each draw's burst) from the quantiles ``drawn`` (small, and
        at the anchor bursts), in draw order."""
        low, high = self._anchor_bytes
        # float32, as galera.draw_pair draws them
        small_draws, low_draws = (cast(FloatArray, d.astype(np.float32)) for d in drawn[:2])
        high_draws = drawn[2] if high > low else low_draws
        at_burst = pipeline.rtt_at_bytes(bursts, low, low_draws, high, high_draws, small_draws)
        pair = (small_draws, cast(FloatArray, at_burst.astype(np.float32)))
        return pair if order is None else _to_draw_order(pair, order)

    def _relay_ms(self, site: str) -> float:
        """The relay hop into ``site``'s segment: the median of its LAN draws [ms], as
        :func:`galera.commit_latency_draws` takes it; once per site, not per cluster."""
        if site not in self._relays:
            low, high = self._anchor_bytes
            given = tuple(self.sites[site].lan_rtt_ms.given().items())
            self._relays[site] = _lan_median_ms(site, self.draws, given, low, high)
        return self._relays[site]

    def median_rtt_ms(self, a: str, b: str) -> float:
        """A pair's small-message RTT p50 [ms], cached (the grouping search asks often)."""
        key = frozenset((a, b))
        if key not in self._medians:
            source = self._link_source
            self._medians[key] = (
                source.median_rtt_ms(a, b)
                if source is not None and key in self._unmoved
                else float(self.links[key].rtt.quantile(0.5))
            )
        return self._medians[key]

    def link(self, a: str, b: str) -> LinkEvidence:
        return self.links[frozenset((a, b))]

    def lan_commit_ms(self, site: str) -> Percentiles:
        """Commit percentiles of a cluster inside ``site`` alone: the LAN part of any commit
        there (the local commit time alone where the site does not write)."""
        single = self.cluster([site])
        if site in single.commit_by_site_ms:
            return single.commit_percentiles(site)
        return dict.fromkeys(REPORTED, self.local_commit_ms)

    # -- clusters --------------------------------------------------------------------

    def cluster(self, sites: Sequence[str]) -> ClusterEval:
        key = frozenset(sites)
        reuse = self._reuse
        if key not in self._clusters and reuse is not None and self._reusable(key):
            self._clusters[key] = reuse.cluster(sites)
            kept = frozenset(self._clusters[key].sites)  # as _commit keys its paths
            self._paths.update((k, v) for k, v in reuse._paths.items() if k[0] == kept)
        if key not in self._clusters:
            self._clusters[key] = self._evaluate_cluster(
                tuple(s for s in self.data_sites if s in key)
            )
        return self._clusters[key]

    def _reusable(self, key: frozenset[str]) -> bool:
        """Whether the reused evaluator's cluster of these sites is this one's too: no
        moved pair among its sites and the arbitrator sites its garbd may go to."""
        reach = key | set(self.arbitrator_sites)
        return not any(pair <= reach for pair in self._moved)

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
        members = {s: len(w) for s, w in self._members(sites, arbitrator).items()}
        paths = self._paths_of(galera.commit_latency_draws, members, writers)
        replies = [self._first_reply(members, w) for w in writers]
        for w, reply in zip(writers, replies, strict=True):
            self._paths[(frozenset(sites), arbitrator, w)] = (paths[w], reply)
        if not writers:
            return {}
        # Every writer's commits in one pass: the pipeline is draw by draw (one row each).
        commits = self._pipelined(np.stack([paths[w] for w in writers]), np.stack(replies))
        return dict(zip(writers, commits, strict=True))

    def _first_reply(self, members: dict[str, int], writer: str) -> FloatArray:
        """Draws of the round trip to the writer's nearest fellow member [ms] (0: alone)."""
        peers = [s for s, n in members.items() if s != writer and n > 0]
        near = [self.pair_draws(writer, s)[0] for s in peers]
        if members.get(writer, 0) >= 2:  # another node in the writer's own site
            near.append(self.pair_draws(writer, writer)[0])
        return np.min(near, axis=0).astype(float) if near else np.zeros(self.draws)

    def _pipelined(self, path_ms: FloatArray, first_reply_ms: FloatArray) -> FloatArray:
        """A commit of each draw's write set: its rounds through the send windows over that
        draw's path (:func:`pipeline.pipeline_commit_ms`), plus local work [ms]."""
        wan = path_ms - self.local_commit_ms
        return self.local_commit_ms + pipeline.pipeline_commit_ms(
            self._fragments, self.user_window, self.send_window, wan, first_reply_ms
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
            send_window=self.send_window,
            user_window=self.user_window,
            fragment_bytes=self.fragment_bytes,
            first_reply_ms=Medians(
                {w: self._paths[(frozenset(sites), arbitrator, w)][1] for w in writers}
            ),
            writesets_per_message=self.writesets_per_message,
            local_commit_ms=self.local_commit_ms,
            window_limit_commits_per_s=pipeline.window_limit_commits_per_s(
                self.send_window, period_ms, self.writesets_per_message
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
        worst: float | None = None  # the commit p50 without a garbd, once a garbd is costed
        best: tuple[str, dict[str, FloatArray], float] | None = None
        for candidate in self.arbitrator_sites:
            site_f, node_f = self._failures(sites, candidate, writers)
            if site_f or node_f:
                continue
            if worst is None:
                worst = max((median(d) for d in commit.values()), default=0.0)
            with_garbd = self._commit(sites, candidate, writers)
            cost = max((median(d) for d in with_garbd.values()), default=0.0) - worst
            if best is None or cost < best[2]:
                best = (candidate, with_garbd, cost)
        return best

    # -- options ---------------------------------------------------------------------

    def option(
        self,
        architecture: Architecture,
        partition: Sequence[Sequence[str]],
        *,
        in_step: bool = True,
    ) -> Option:
        """Evaluate one partition of the data sites into clusters.

        A partial partition (one candidate group of the grouping search) judges only the hot
        rows its groups own, and has a throughput only when it holds the clients' site.
        ``in_step=False`` leaves out the commit of writers in step of hot rows written at
        several sites of a cluster (``HotRowEval.in_step_commit_ms`` None): a warning's and
        the report's figure, which the search's judgements by blockers never read.
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
            self._hot_row(bare, row, in_step)
            for row in self.topology.workload.hot_rows
            if any(self._owner(row) in g for g in groups)
        )
        channels = self._async_links(groups)
        return Option(
            architecture,
            groups,
            bare.clusters,
            hot_rows,
            channels,
            self._throughput(bare),
            self._failover(groups, bare.clusters, channels),
        )

    def _failover(
        self,
        groups: tuple[tuple[str, ...], ...],
        clusters: tuple[ClusterEval, ...],
        channels: tuple[AsyncLink, ...],
    ) -> failover.FailoverPlan:
        """How each writing cluster goes on after each single failure (engine.failover). A
        partial option (one group of the grouping search) may fail over to the data sites it
        leaves out, over the channel to the nearest of them."""
        inside = {s for g in groups for s in g}
        outside = tuple(s for s in self.data_sites if s not in inside)
        to_outside = tuple(
            self._channel((i, len(groups)), g, outside) for i, g in enumerate(groups) if outside
        )
        return failover.assess(
            clusters,
            channels,
            survive_site=self.topology.requirements.survive == "site",
            timing=self._failover_timing(),
            outside=to_outside,
            outside_sites=outside,
        )

    def _failover_timing(self) -> failover.FailoverTiming:
        """Detection with the health-check timeout the generated proxysql.sql sets: it covers
        the highest RTT of a link touching a writing site (ProxySQL sits with the writers)."""
        if self._timing is None:
            writing = set(self.writing)
            worst_ms = max(
                (
                    float(link.rtt.quantile(1.0))
                    for link in self.links.values()
                    if writing & set(link.sites)
                ),
                default=0.0,
            )
            timeout_ms = failover.healthcheck_timeout_ms(worst_ms)
            self._timing = failover.FailoverTiming(
                detection_s=failover.detection_s(timeout_ms=timeout_ms)
            )
        return self._timing

    def _owner(self, row: HotRow) -> str:
        """The site that owns a row: its first writer site (declaration order by default)."""
        return (row.writer_sites or self.writing or self.data_sites)[0]

    def _hot_row(self, option: Option, row: HotRow, in_step: bool) -> HotRowEval:
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
        stepping = (
            self._in_step_commit(cluster, tuple(in_cluster))
            if in_step and len(in_cluster) > 1
            else None
        )
        spans = any(w not in cluster.sites for w in writers)
        routed = {w: self.median_rtt_ms(w, owner) for w in writers if w not in cluster.sites}
        # Writers at several sites of one cluster write on several members: each site's
        # share of the rate races the others within one commit latency.
        rates = (
            [row.updates_per_s / len(in_cluster)] * len(in_cluster) if len(in_cluster) > 1 else []
        )
        windows = [median(cluster.commit_ms[w]) for w in in_cluster] if rates else []
        conflicts = galera.conflict_rate_per_s(rates, windows) if rates else 0.0
        return HotRowEval(row, writers, owner, index, commit, spans, routed, conflicts, stepping)

    def _paths_of(
        self, paths: CommitPaths, members: dict[str, int], writers: Sequence[str]
    ) -> dict[str, FloatArray]:
        """One commit path's draws (lone writers or writers in step) for ``writers`` of a
        cluster of ``members`` (site -> voting members), one gmcast.segment per site unless
        the user pins one, each site's relay hop its LAN median."""
        spec = galera.Cluster(members, segments=self.segments and len(members) > 1)
        return paths(
            spec,
            writers,
            self.pair_draws,
            local_commit_ms=self.local_commit_ms,
            relay_ms={s: self._relay_ms(s) for s in spec.sites},
        )

    def _in_step_commit(self, cluster: ClusterEval, writers: tuple[str, ...]) -> Percentiles:
        """A row's commit at the writer site of the highest p50 in one cluster, clients in
        step (:func:`galera.in_step_commit_draws`): the losers of each round retry at once,
        so their write sets cover the winner's seqno. Pipelined as every commit is; once per
        cluster and set of writer sites."""
        key = (frozenset(cluster.sites), cluster.arbitrator, frozenset(writers))
        if key not in self._in_step:
            members = {
                s: len(w) for s, w in self._members(cluster.sites, cluster.arbitrator).items()
            }
            paths = self._paths_of(galera.in_step_commit_draws, members, writers)
            self._in_step[key] = max(
                (
                    summarise(self._pipelined(paths[w], self._paths[(key[0], key[1], w)][1]))
                    for w in writers
                ),
                key=lambda p: p["p50"],
            )
        return dict(self._in_step[key])

    def _async_links(self, groups: Sequence[tuple[str, ...]]) -> tuple[AsyncLink, ...]:
        """One asynchronous channel between every two clusters, over their nearest site pair;
        its lag from the link's RTT, bandwidth, the write-set sizes, the replicated load and
        the apply time (:func:`replication.lag_parts_ms`)."""
        return tuple(
            self._channel((i, j), groups[i], groups[j])
            for i in range(len(groups))
            for j in range(i + 1, len(groups))
        )

    def _channel(
        self, clusters: tuple[int, int], source: Sequence[str], target: Sequence[str]
    ) -> AsyncLink:
        pairs = [(a, b) for a in source for b in target]
        a, b = min(pairs, key=lambda p: self.median_rtt_ms(*p))
        rtt_p, lag, parts, busy = self._channel_lag(a, b)
        return AsyncLink(clusters, (a, b), dict(rtt_p), dict(lag), dict(parts), busy)

    def _channel_lag(self, a: str, b: str) -> ChannelFigures:
        """RTT and lag percentiles of a channel over the pair a-b, the p99 lag's terms and
        the link's utilisation; computed once per pair (the grouping search asks often)."""
        key = (a, b)
        source = self._link_source
        if key not in self._channel_lags and source is not None and frozenset(key) in self._unmoved:
            self._channel_lags[key] = source._channel_lag(a, b)
        if key not in self._channel_lags:
            link = self.link(a, b)
            p99_bytes, load_bytes_per_s, mean_bytes = self._channel_load
            self._channel_lags[key] = _channel_figures(
                float(link.rtt.quantile(0.5)),
                float(link.rtt.quantile(0.99)),
                float(link.effective_bandwidth_mbps),
                float(self.local_commit_ms),
                float(self.writeset_p50_bytes),
                float(p99_bytes),
                float(load_bytes_per_s),
                float(mean_bytes),
            )
        return self._channel_lags[key]

    @cached_property
    def _channel_lags(self) -> dict[tuple[str, str], ChannelFigures]:
        return {}

    @cached_property
    def _channel_load(self) -> tuple[float, float, float]:
        """Write-set p99 [bytes], the replicated load a channel carries [bytes/s] and the
        mean write set [bytes]. The load is the workload's peak replicated bytes, else peak
        commits x the mean write set (as BANDWIDTH estimates it): all of it on every channel,
        since the workload does not say how the writes split between clusters."""
        p50 = self.writeset_p50_bytes
        p99 = max(p50, writeset_sizes(self.topology).p99_bytes)
        mean = self.writeset_mean_bytes
        workload = self.topology.workload
        commits = workload.commits_per_s.design_value if workload.commits_per_s else None
        if workload.replicated_bytes_per_s is not None:
            load = workload.replicated_bytes_per_s.design_value
            mean = load / commits if commits else mean
        else:
            load = (commits or 0.0) * mean
        return p99, load, mean

    def _throughput(self, option: Option) -> Throughput | None:
        """The workload's clients at its first writing site, simulated through the EVS send
        path of their cluster (:func:`pipeline.closed_loop`): think time is the transaction
        without its LAN commits; each commit takes one drawn path, reply and size."""
        clients = self.topology.workload.clients
        if clients is None or not self.writing:
            return None
        site = self.writing[0]  # the clients sit with the first writing site
        if not any(site in g for g in option.groups):
            return None  # a partial option (one candidate group) without the clients
        cluster = option.clusters[option.cluster_of(site)]
        # The same cluster in several options (the grouping search's candidates, the
        # options) runs the same deterministic simulation: run it once per cluster.
        key = (frozenset(cluster.sites), cluster.arbitrator, site)
        if key not in self._throughputs:
            self._throughputs[key] = self._simulate(cluster, site, clients)
        return self._throughputs[key]

    def _simulate(self, cluster: ClusterEval, site: str, clients: Clients) -> Throughput:
        path, reply = self._paths[(frozenset(cluster.sites), cluster.arbitrator, site)]
        per_txn = clients.commits_per_txn
        lan_p50 = self.lan_commit_ms(site)["p50"]
        think_ms = max(clients.baseline_txn_latency_ms - per_txn * lan_p50, 0.0)
        rows = clients.row_writes
        run = pipeline.closed_loop(
            clients.concurrency,
            think_ms,
            per_txn,
            path - self.local_commit_ms,
            reply,
            self._fragments,
            user_window=self.user_window,
            send_window=self.send_window,
            writesets_per_message=self.writesets_per_message,
            local_commit_ms=self.local_commit_ms,
            row_writes=None if rows is None else rows.spec(),
        )
        # The window binds when commits wait for it: their mean beyond a lone commit's by
        # 10 %; row locks when transactions wait longer for rows than commits for the window.
        lone_ms = float(np.mean(cluster.commit_ms[site]))
        commit_ms = float(np.mean(run.commit_ms))
        lock_wait_ms = 0.0
        if rows is not None:  # what the transactions took beyond thinking and committing
            lock_wait_ms = float(np.mean(run.txn_ms)) - think_ms - per_txn * commit_ms
        limited: LimitedBy = "commit latency"
        if max(commit_ms - lone_ms, lock_wait_ms) > 0.1 * lone_ms:
            limited = "send window" if commit_ms - lone_ms >= lock_wait_ms else "row locks"
        txn = summarise(run.txn_ms, ("p50", "p95"))
        return Throughput(run.commits_per_s, txn, limited)


ChannelFigures = tuple[dict[str, float], dict[str, float], dict[str, float], float]


class CommitPaths(Protocol):
    """:func:`galera.commit_latency_draws` or :func:`galera.in_step_commit_draws`."""

    def __call__(
        self,
        cluster: galera.Cluster,
        writers: Sequence[str],
        pair_draws: galera.PairDraws,
        *,
        local_commit_ms: float = ...,
        relay_ms: Mapping[str, float] | None = ...,
    ) -> dict[str, FloatArray]: ...


# Pair draws of estimated links kept across evaluators (Evaluator._kept_pair), 8 bytes a
# draw. In a fleet of 1,000 topologies over 30 cities a worker meets about 1,400 keys of
# the grouping screen's and the estimate ends' 2,000 draws (435 pairs, each at its estimate
# and both ends; 16 kB for about 0.2 ms of work each) and about 470 of the full 20,000
# (160 kB for about 0.7 ms): at most 1,024 entries (16 MB) of the few draws and 256
# (40 MB) of the many.
_FEW_DRAWS = 4_096
_PAIR_DRAWS: ValueCache[tuple[FloatArray, FloatArray]] = ValueCache(1024, 16 * 2**20)
_MANY_PAIR_DRAWS: ValueCache[tuple[FloatArray, FloatArray]] = ValueCache(256, 40 * 2**20)
# The per-draw bursts a pair's draws were made at, as a key: each distinct array's bytes
# once (every evaluator of the same workload and options has equal ones).
_BURSTS: ValueCache[tuple[str, tuple[int, ...], bytes]] = ValueCache(8, 8 * 2**20)


def _interned_bytes(values: FloatArray) -> tuple[str, tuple[int, ...], bytes]:
    """``values`` as a plain key (dtype, shape, bytes), the same object for equal arrays."""
    key = (values.dtype.str, values.shape, values.tobytes())
    kept = _BURSTS.get(key)
    if kept is None:
        _BURSTS.put(key, key, values.nbytes)
        return key
    return kept


@functools.lru_cache(maxsize=4096)
def _channel_figures(
    rtt_p50_ms: float,
    rtt_p99_ms: float,
    bandwidth_mbps: float,
    local_commit_ms: float,
    p50_bytes: float,
    p99_bytes: float,
    load_bytes_per_s: float,
    mean_bytes: float,
) -> ChannelFigures:
    """A channel's RTT and lag percentiles [ms], the p99 lag's terms [ms] and the link's
    utilisation, from its numbers alone (:func:`replication.lag_parts_ms`): kept, as the
    same link at the same load recurs (the screen and the full draws, and in a fleet the
    same pair of sites in many topologies). Read-only: callers copy the maps."""
    rtt_p = {"p50": rtt_p50_ms, "p99": rtt_p99_ms}
    parts = {
        key: replication.lag_parts_ms(
            rtt_p[key],
            size,
            bandwidth_mbps,
            local_commit_ms,
            replicated_bytes_per_s=load_bytes_per_s,
            mean_writeset_bytes=mean_bytes,
            quantile=q,
        )
        for key, size, q in (("p50", p50_bytes, 0.5), ("p99", p99_bytes, 0.99))
    }
    p99 = parts["p99"]
    return (
        rtt_p,
        {k: float(v.total_ms) for k, v in parts.items()},
        {
            "one_way": float(p99.one_way_ms),
            "serialisation": float(p99.serialisation_ms),
            "queue": float(p99.queue_ms),
            "apply": float(p99.apply_ms),
        },
        float(p99.utilisation),
    )


Order = npt.NDArray[np.uint16] | npt.NDArray[np.int32]


def _to_draw_order(
    values: tuple[FloatArray, FloatArray], order: Order
) -> tuple[FloatArray, FloatArray]:
    """Arrays computed at ascending levels, each value put back at its draw."""
    placed = []
    for in_level_order in values:
        in_draw_order = np.empty_like(in_level_order)
        in_draw_order[order] = in_level_order
        placed.append(in_draw_order)
    return placed[0], placed[1]


@functools.lru_cache(maxsize=1024)
def _ascending_order(a: str, b: str, draws: int) -> Order:
    """The order that sorts a pair's random levels (:func:`galera.uniforms`), read-only: what
    :meth:`Evaluator.pair_draws` reads a distribution given by percentiles in (every
    estimated link), value for value.

    quantiles_at sorts the levels before it reads such a distribution (an argsort of 20,000
    levels is about half of a pair's draws); it reads each level on its own, to the value
    ``RttDistribution.quantile`` gives that level wherever it stands, so reading them sorted
    and putting each value back at its draw changes only the order of the work. Whatever
    comes after the quantiles in pair_draws is one draw at a time (the draw's burst taken
    along). The order is kept: the screen and both ends of the estimates' range share it,
    and in a fleet worker every topology naming the pair (site names recur in a fleet).
    2 bytes a draw up to 65,536 draws: 1,024 entries of 20,000 draws hold 41 MB.
    """
    order = _ascending(galera.uniforms(a, b, draws))
    kept: Order = order.astype(np.uint16) if draws <= 2**16 else order.astype(np.int32)
    kept.setflags(write=False)
    return kept


def _ascending(levels: FloatArray) -> npt.NDArray[np.intp]:
    """The order that sorts uniform levels in [0, 1): a radix sort of the 53-bit integers the
    levels are (``k / 2**53``, as numpy draws them) in four stable passes of 16 bits, about
    twice as fast as ``argsort`` on 20,000 levels; argsort on fewer. Any order would give the
    same values (:func:`_ascending_order`); a sorted one makes quantiles_at's own argsort
    cheap."""
    if levels.size < _RADIX_LEVELS:
        return np.argsort(levels)
    integers = (levels * 2.0**53).astype(np.uint64)
    order = np.argsort((integers & np.uint64(0xFFFF)).astype(np.uint16), kind="stable")
    for shift in (16, 32, 48):
        digits = (integers[order] >> np.uint64(shift)).astype(np.uint16)
        order = order[np.argsort(digits, kind="stable")]
    return order


# Levels from which the radix sort beats argsort (measured: 2,000 levels argsort 50 us, the
# radix passes about as much; 20,000: 800 to 1,300 us against about 420 us).
_RADIX_LEVELS = 4_096


@functools.lru_cache(maxsize=128)
def _lan_quantiles(
    site: str, draws: int, given: tuple[tuple[str, float], ...], low: float, high: float
) -> tuple[FloatArray, ...]:
    """A site's LAN round trips (small, and at the anchor sizes when they differ) at its
    own random levels [ms], read-only: the same for every evaluator of these draws and
    anchors (the screen, both estimate ends, and in a fleet worker every topology naming
    the site with this LAN and these write-set sizes), so the sort and reads are paid once.
    At most 16 bytes a draw: 128 entries of 20,000 draws hold at most 41 MB."""
    small, at_low, at_high = _lan_distributions(given, low, high)
    dists = (small, at_low, at_high) if high > low else (small, at_low)
    drawn = quantiles_at(dists, galera.uniforms(site, site, draws))
    # The small and low draws are used as float32 (pair_draws); the high one as float64.
    kept = (*(cast(FloatArray, d.astype(np.float32)) for d in drawn[:2]), *drawn[2:])
    for values in kept:
        values.setflags(write=False)
    return kept


@functools.lru_cache(maxsize=128)
def _lan_median_ms(
    site: str, draws: int, given: tuple[tuple[str, float], ...], low: float, high: float
) -> float:
    """The median of a site's small LAN draws (:func:`_lan_quantiles`, the draws
    ``pair_draws(site, site)`` takes) [ms]: kept with them."""
    return median(_lan_quantiles(site, draws, given, low, high)[0])


@functools.lru_cache(maxsize=256)
def _lan_distributions(
    given: tuple[tuple[str, float], ...], low: float, high: float
) -> tuple[RttDistribution, RttDistribution, RttDistribution]:
    """A LAN's small-message round trips and its round trips at two write-set sizes.

    The same for every evaluator with the same anchors (the grouping screen and both ends
    of the estimates' range) and every site with the same LAN: kept, as distributions are
    immutable (a fleet of topologies with default LANs computes it once per worker).
    """
    small = RttDistribution.from_percentiles(dict(given))

    def at(size: float) -> RttDistribution:
        # Inside a site: 10 Gbit/s, warm window (a LAN cluster's links are busy and short).
        return small.map(
            lambda v: np.asarray(tcp.request_response_ms(size, 128, v, 10_000.0, window="warm"))
        )

    return small, at(low), at(high)
