"""Asynchronous replication between clusters: one channel between every two clusters, over
their nearest site pair, with its lag from the link's RTT, bandwidth, the write-set sizes,
the replicated load, and the replica's appliers (:func:`advisor.model.replication.lag_parts_ms`).

A replica applies each transaction through its own Galera cluster: one apply is a full commit
there, at the replica's site (:meth:`Clusters.lone_commit`, its local work included).
The workers applying in parallel are the user's (``replication.applier_threads``) or the
design's: the fewest, from the flavour's default, whose p99 wait for a free worker is no
longer than a p99 apply
(:func:`advisor.model.replication.applier_threads_needed`); the configuration sets that number.
No more of them apply at once than the write sets' dependencies allow
(``workload.cert_deps_distance``, :func:`advisor.model.flow_control.useful_applier_threads`):
a transaction waits for the ones it depends on, whichever replication applies it.
"""

from __future__ import annotations

__all__ = ["ChannelLoad", "channel", "channel_load", "channels"]

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from advisor.engine.clusters import Clusters
from advisor.engine.evidence import LinkEvidence
from advisor.engine.metrics import AsyncLink, FloatArray
from advisor.engine.workload import WritesetSizes
from advisor.inputs.topology import HotRow, Topology
from advisor.model import flow_control, replication


@dataclass(frozen=True)
class ChannelLoad:
    """What every channel of one topology carries."""

    p50_bytes: float  # the median write set [bytes]
    p99_bytes: float  # the 99th percentile write set [bytes]
    load_bytes_per_s: float  # the replicated load [bytes/s]
    mean_bytes: float  # the mean write set [bytes]
    commits_per_s: float  # transactions at the peak [1/s]
    least_threads: int  # the appliers the flavour runs by default [threads]
    given_threads: int | None  # the appliers the user runs (replication.applier_threads)
    # Each hot row's owner site, name and required updates [1/s]: they apply in order on a
    # replica.
    row_rates: tuple[tuple[str, str, float], ...] = ()
    # The write sets' dependency distance (workload.cert_deps_distance): no more appliers
    # work at once on average [write sets]; None: not known, no bound.
    cert_deps_distance: float | None = None


def channel_load(
    topology: Topology, sizes: WritesetSizes, owner: Callable[[HotRow], str]
) -> ChannelLoad:
    """The load of every channel: the workload's peak replicated bytes, else peak commits x
    the mean write set (as BANDWIDTH estimates it), and the peak commits, else the bytes over
    the mean write set; all of it on every channel, since the workload does not say how the
    writes split between clusters."""
    mean = sizes.mean_bytes
    workload = topology.workload
    commits = workload.commits_per_s.design_value if workload.commits_per_s else None
    if workload.replicated_bytes_per_s is not None:
        load = workload.replicated_bytes_per_s.design_value
        mean = load / commits if commits else mean
        commits = commits if commits is not None else (load / mean if mean > 0 else 0.0)
    else:
        load = (commits or 0.0) * mean
    p99 = max(sizes.p50_bytes, sizes.p99_bytes)
    return ChannelLoad(
        sizes.p50_bytes,
        p99,
        load,
        mean,
        commits or 0.0,
        replication.default_applier_threads(topology.galera.flavor),
        topology.replication.applier_threads,
        tuple((owner(row), row.name, row.updates_per_s) for row in workload.hot_rows),
        workload.cert_deps_distance,
    )


def channels(
    groups: Sequence[tuple[str, ...]],
    link: Callable[[str, str], LinkEvidence],
    load: ChannelLoad,
    receiving: Clusters,
) -> tuple[AsyncLink, ...]:
    """One channel between every two of ``groups`` (clusters by index)."""
    return tuple(
        channel((i, j), groups[i], groups[j], link, load, receiving)
        for i in range(len(groups))
        for j in range(i + 1, len(groups))
    )


def channel(
    clusters: tuple[int, int],
    source: Sequence[str],
    target: Sequence[str],
    link: Callable[[str, str], LinkEvidence],
    load: ChannelLoad,
    receiving: Clusters,
    *,
    target_is_cluster: bool = True,
) -> AsyncLink:
    """The channel between clusters ``source`` and ``target`` over their nearest pair (the
    lowest RTT p50): its RTT and lag percentiles [ms], the p99 lag's terms [ms], the share
    of the link's bandwidth the replicated bytes use, and the replica's appliers. Computed
    each time it is asked for: the commits it reads are the memo's, and a cache of channels
    bought nothing measurable (about 0 % of a fleet's CPU) while its key once mixed a partial
    option's one-way channel with a full option's two-way one.

    Each direction whose source cluster writes carries that cluster's commits to a replica at
    the other end, applied there as a commit in its cluster, and the updates of the hottest
    row its source owns in order; the channel reports the direction that lags most.
    ``target_is_cluster=False``: the sites a partial option leaves out, not yet a cluster;
    only the way into them counts, the replica applying as in a cluster of its own site."""
    pairs = [(a, b) for a in source for b in target]
    a, b = min(pairs, key=lambda p: link(*p).rtt_p50_ms)
    over = link(a, b)
    into_target = tuple(target) if target_is_cluster else (b,)
    ways = [(tuple(source), into_target, b)]
    if target_is_cluster:
        ways.append((tuple(target), tuple(source), a))
    carrying = [w for w in ways if set(w[0]) & set(receiving.writing)] or ways[:1]
    return max(
        (
            _channel(
                clusters,
                (a, b),
                over,
                load,
                replica_site,
                receiving.lone_commit(replica_cluster, replica_site),
                max(
                    ((rate, name) for site, name, rate in load.row_rates if site in writers),
                    default=(0.0, ""),
                ),
            )
            for writers, replica_cluster, replica_site in carrying
        ),
        key=lambda c: (c.lag_ms["p99"], c.apply_utilisation),
    )


def _channel(
    clusters: tuple[int, int],
    sites: tuple[str, str],
    over: LinkEvidence,
    load: ChannelLoad,
    apply_site: str,
    apply: tuple[float, float, float],
    hottest: tuple[float, str],
) -> AsyncLink:
    rtt_ms = {"p50": over.rtt_p50_ms, "p99": float(over.rtt.quantile(0.99))}
    apply_ms = {"p50": apply[0], "p99": apply[1]}
    mean_apply_ms = apply[2]

    def lag(threads: float) -> replication.LagParts:
        """The lag's terms at p50 and p99 at once (arrays of two) [ms]."""
        return replication.lag_parts_ms(
            np.array([rtt_ms["p50"], rtt_ms["p99"]]),
            np.array([load.p50_bytes, load.p99_bytes]),
            float(over.effective_bandwidth_mbps),
            np.array([apply_ms["p50"], apply_ms["p99"]]),
            replicated_bytes_per_s=load.load_bytes_per_s,
            mean_writeset_bytes=load.mean_bytes,
            quantile=np.array([0.5, 0.99]),
            commits_per_s=load.commits_per_s,
            applier_threads=threads,
            mean_apply_ms=mean_apply_ms,
            serial_commits_per_s=hottest[0],
        )

    # Waiting for a free applier may take at most a p99 apply: it at most doubles the apply.
    # Threads beyond the dependencies' bound wait for the transactions they depend on.
    budget_ms = apply_ms["p99"]
    useful = flow_control.useful_applier_threads(load.cert_deps_distance)
    most = min(replication.MOST_APPLIER_THREADS, useful or replication.MOST_APPLIER_THREADS)
    needed = replication.applier_threads_needed(
        load.commits_per_s, mean_apply_ms, budget_ms, min(load.least_threads, most), most
    )
    threads = load.given_threads or needed or most
    parts = lag(flow_control.appliers_at_work(threads, load.cert_deps_distance))
    total = np.asarray(parts.total_ms)

    def at_p99(term: FloatArray | float) -> float:
        return float(np.broadcast_to(term, (2,))[1])

    return AsyncLink(
        clusters,
        sites,
        rtt_ms,
        {"p50": float(total[0]), "p99": float(total[1])},
        {
            "one_way": at_p99(parts.one_way_ms),
            "serialisation": at_p99(parts.serialisation_ms),
            "queue": at_p99(parts.queue_ms),
            "apply_queue": at_p99(parts.apply_queue_ms),
            "apply": at_p99(parts.apply_ms),
        },
        at_p99(parts.utilisation),
        commits_per_s=load.commits_per_s,
        apply_ms=mean_apply_ms,
        applier_threads=threads,
        applier_threads_needed=needed,
        apply_utilisation=at_p99(parts.apply_utilisation),
        applier_threads_given=load.given_threads is not None,
        cert_deps_distance=load.cert_deps_distance,
        in_order_per_s=hottest[0],
        in_order_row=hottest[1],
        bandwidth_mbps=float(over.effective_bandwidth_mbps),
        bandwidth_assumed=over.bandwidth_mbps is None,
        apply_site=apply_site,
    )
