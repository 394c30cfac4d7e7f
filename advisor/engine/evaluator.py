"""The evaluation of candidate architectures into metrics (no verdicts, no findings).

An :class:`Evaluator` turns a partition of the data sites into an
:class:`~advisor.engine.metrics.Option`: its clusters (:mod:`advisor.engine.clusters`),
the hot rows each cluster owns, the asynchronous channels between clusters
(:mod:`advisor.engine.channels`), how writes go on after each single failure
(:mod:`advisor.engine.failover`) and the clients' closed-loop throughput
(:mod:`advisor.engine.throughput`). Each site pair's draws (:mod:`advisor.engine.draws`)
and each cluster are computed once per analysis (:class:`~advisor.engine.memo.Memo`), so the
grouping search can try a group in many partitions.
"""

from __future__ import annotations

__all__ = ["Evaluator", "row_lock_wait_draws"]

from collections.abc import Mapping, Sequence

import numpy as np

from advisor.engine import failover
from advisor.engine.channels import channel, channel_load, channels
from advisor.engine.clusters import Clusters
from advisor.engine.draws import LinkDraws, sampling
from advisor.engine.evidence import LinkEvidence
from advisor.engine.memo import Memo
from advisor.engine.metrics import (
    AsyncLink,
    ClusterEval,
    FloatArray,
    HotRowEval,
    Option,
    Percentiles,
    Throughput,
    summarise,
)
from advisor.engine.throughput import closed_loop_throughput
from advisor.engine.workload import WritesetSizes
from advisor.inputs.topology import HotRow, Topology
from advisor.model import flow_control, galera
from advisor.model.provider_options import OptionValue, effective_options
from advisor.vocabulary import Architecture


class Evaluator:
    """Evaluates options of one topology over one set of links and draws."""

    def __init__(
        self,
        topology: Topology,
        links: Sequence[LinkEvidence],
        *,
        writeset_bytes: WritesetSizes,
        draws: int = galera.DRAWS,
        memo: Memo | None = None,
    ) -> None:
        """``memo``: the analysis's cache, shared by its evaluators of ``topology`` (the
        screen, the full draws, the ends of the estimates' range); a new one by default."""
        memo = memo or Memo(topology)
        if memo.topology is not topology:
            raise ValueError("a memo serves the evaluators of one topology")
        self.topology = topology
        self.provider_options: Mapping[str, OptionValue] = effective_options(
            topology.galera.flavor, topology.galera.provider_options
        )
        # The model runs the flow control every design sets (one writer per cluster), where
        # topology.yaml does not pin it, as the configuration writes it (config/galera.py).
        modelled = {
            **self.provider_options,
            **flow_control.design_flow_control(topology.galera.provider_options),
        }
        plan = sampling(topology, modelled, writeset_bytes, draws)
        self.pairs = LinkDraws(topology, links, plan, memo)
        self.clusters = Clusters(topology, self.pairs, memo)
        self.data_sites = self.clusters.data_sites
        self.writing = self.clusters.writing
        self._memo = memo
        self._load = channel_load(topology, writeset_bytes, self._owner)
        self._timing = _failover_timing(links, set(self.writing))

    def median_rtt_ms(self, a: str, b: str) -> float:
        """A pair's small-message RTT p50 [ms]."""
        return self.pairs.link(a, b).rtt_p50_ms

    def cluster(self, sites: Sequence[str]) -> ClusterEval:
        """The cluster of ``sites``, evaluated (:meth:`Clusters.cluster`)."""
        return self.clusters.cluster(sites)

    def lan_commit_ms(self, site: str) -> Percentiles:
        """Commit percentiles of a cluster inside ``site`` alone [ms]."""
        return self.clusters.lan_commit_ms(site)

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
        data = self.data_sites
        groups = tuple(
            sorted(
                (tuple(s for s in data if s in g) for g in partition),
                key=lambda g: data.index(g[0]),
            )
        )
        clusters = tuple(self.cluster(g) for g in groups)
        bare = Option(architecture, groups, clusters)
        hot_rows = tuple(
            self._hot_row(bare, row, in_step)
            for row in self.topology.workload.hot_rows
            if any(self._owner(row) in g for g in groups)
        )
        links = channels(groups, self.pairs.link, self._load, self.clusters)
        return Option(
            architecture,
            groups,
            clusters,
            hot_rows,
            links,
            self._throughput(bare),
            self._failover(groups, clusters, links),
        )

    def _failover(
        self,
        groups: tuple[tuple[str, ...], ...],
        clusters: tuple[ClusterEval, ...],
        links: tuple[AsyncLink, ...],
    ) -> failover.FailoverPlan:
        """How each writing cluster goes on after each single failure (engine.failover). A
        partial option (one group of the grouping search) may fail over to the data sites it
        leaves out, over the channel to the nearest of them."""
        inside = {s for g in groups for s in g}
        outside = tuple(s for s in self.data_sites if s not in inside)
        to_outside = tuple(
            channel(
                (i, len(groups)),
                g,
                outside,
                self.pairs.link,
                self._load,
                self.clusters,
                target_is_cluster=False,
            )
            for i, g in enumerate(groups)
            if outside
        )
        return failover.assess(
            clusters,
            links,
            survive_site=self.topology.requirements.survive == "site",
            timing=self._timing,
            outside=to_outside,
            outside_sites=outside,
        )

    def _owner(self, row: HotRow) -> str:
        """The site that owns a row: its first writer site (declaration order by default)."""
        return (row.writer_sites or self.writing or self.data_sites)[0]

    def _hot_row(self, option: Option, row: HotRow, in_step: bool) -> HotRowEval:
        writers = tuple(row.writer_sites or self.writing)
        owner = self._owner(row)
        index = option.cluster_of(owner)
        cluster = option.clusters[index]
        writer = cluster.writer_site
        in_cluster = tuple(w for w in writers if w in cluster.commit_ms)
        commit = cluster.commit_percentiles(writer) if writer else cluster.commit_percentiles()
        stepping = (
            self.clusters.in_step_commit(cluster, in_cluster)
            if in_step and len(in_cluster) > 1
            else None
        )
        spans = any(w not in cluster.sites for w in writers)
        routed = {w: self.median_rtt_ms(w, writer) for w in writers if writer and w != writer}
        # Were the writer sites of one cluster to write on their own members (no one writer
        # per cluster), each site's share of the rate would race the others within about one
        # commit: the writer's, as each member's own path is about as long.
        rates = (
            [row.updates_per_s / len(in_cluster)] * len(in_cluster) if len(in_cluster) > 1 else []
        )
        window_ms = float(np.median(cluster.commit_ms[writer])) if writer and rates else 0.0
        windows = [window_ms] * len(rates)
        conflicts = galera.conflict_rate_per_s(rates, windows) if rates else 0.0
        queued = self._queued_write(cluster, row, routed) if writer else None
        return HotRowEval(
            row,
            writers,
            owner,
            index,
            commit,
            spans,
            routed,
            conflicts,
            stepping,
            *(queued or (None, None)),
        )

    def _queued_write(
        self, cluster: ClusterEval, row: HotRow, routed: Mapping[str, float]
    ) -> tuple[Percentiles, Percentiles] | None:
        """An update of ``row`` at its required rate from its writer site farthest from the
        cluster's writer [ms]: the wait for the row's lock (its updates queue, each holding
        the lock for one drawn commit at the writer: :func:`galera.lock_wait_draws`), plus
        the commit at the writer, plus the round trip to the writer (its median), key by
        key: a sum of percentiles, which no percentile of the sum exceeds. With the wait
        alone. None past Callaghan's bound at the median commit (HOT-ROW-RATE's)."""
        assert cluster.writer_site is not None
        commit = cluster.commit_percentiles(cluster.writer_site)
        if row.updates_per_s * commit["p50"] / 1000.0 >= 1.0:
            return None
        wait = summarise(row_lock_wait_draws(cluster, row.name, row.updates_per_s))
        route_ms = max(routed.values(), default=0.0)
        return {k: round(wait[k] + commit[k] + route_ms, 4) for k in wait}, wait

    def _throughput(self, option: Option) -> Throughput | None:
        """The workload's clients at its first writing site, through their cluster; once
        per analysis for that cluster (the same cluster recurs in many options)."""
        clients = self.topology.workload.clients
        if clients is None or not self.writing:
            return None
        site = self.writing[0]  # the clients sit with the first writing site
        if not any(site in g for g in option.groups):
            return None  # a partial option (one candidate group) without the clients
        cluster = option.clusters[option.cluster_of(site)]
        if cluster.writer_site is None:
            return None
        key = (site, self.clusters.key(cluster.sites))
        if key not in self._memo.throughputs:
            lan_p50_ms = self.lan_commit_ms(site)["p50"]
            plan = self.pairs.sampling
            run = closed_loop_throughput(cluster, site, clients, plan, lan_p50_ms)
            self._memo.throughputs[key] = run
        return self._memo.throughputs[key]


def _failover_timing(links: Sequence[LinkEvidence], writing: set[str]) -> failover.FailoverTiming:
    """Detection with the health-check timeout the generated proxysql.sql sets: it covers
    the highest RTT of a link touching a writing site (ProxySQL sits with the writers)."""
    worst_ms = max(
        (float(link.rtt.quantile(1.0)) for link in links if writing & set(link.sites)),
        default=0.0,
    )
    timeout_ms = failover.healthcheck_timeout_ms(worst_ms)
    return failover.FailoverTiming(detection_s=failover.detection_s(timeout_ms=timeout_ms))


def row_lock_wait_draws(
    cluster: ClusterEval, row: str, rate_per_s: float, shift_ms: float = 0.0
) -> FloatArray:
    """Draws of the wait for hot row ``row``'s lock [ms] at ``rate_per_s``, each update
    holding it for one drawn commit at the cluster's writer, shifted by ``shift_ms`` (the
    sweep moves the commit): the row's own arrival stream (:func:`galera.lock_wait_draws`)."""
    assert cluster.writer_site is not None
    hold_ms = cluster.commit_ms[cluster.writer_site] + shift_ms
    levels = galera.stream_uniforms(row, 2, hold_ms.size)
    return galera.lock_wait_draws(hold_ms, rate_per_s, levels)
