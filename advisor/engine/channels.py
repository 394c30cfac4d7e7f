"""Asynchronous replication between clusters: one channel between every two clusters, over
their nearest site pair, with its lag from the link's RTT, bandwidth, the write-set sizes,
the replicated load and the apply time (:func:`advisor.model.replication.lag_parts_ms`).
"""

from __future__ import annotations

__all__ = ["ChannelLoad", "channel", "channel_load", "channels"]

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from advisor.engine.evidence import LinkEvidence
from advisor.engine.memo import Memo
from advisor.engine.metrics import AsyncLink
from advisor.engine.workload import WritesetSizes
from advisor.inputs.topology import Topology
from advisor.model import replication


@dataclass(frozen=True)
class ChannelLoad:
    """What every channel of one topology carries."""

    p50_bytes: float  # the median write set [bytes]
    p99_bytes: float  # the 99th percentile write set [bytes]
    load_bytes_per_s: float  # the replicated load [bytes/s]
    mean_bytes: float  # the mean write set [bytes]
    local_commit_ms: float  # a replica's apply of one write set [ms]


def channel_load(topology: Topology, sizes: WritesetSizes, local_commit_ms: float) -> ChannelLoad:
    """The load of every channel: the workload's peak replicated bytes, else peak commits x
    the mean write set (as BANDWIDTH estimates it); all of it on every channel, since the
    workload does not say how the writes split between clusters."""
    mean = sizes.mean_bytes
    workload = topology.workload
    commits = workload.commits_per_s.design_value if workload.commits_per_s else None
    if workload.replicated_bytes_per_s is not None:
        load = workload.replicated_bytes_per_s.design_value
        mean = load / commits if commits else mean
    else:
        load = (commits or 0.0) * mean
    p99 = max(sizes.p50_bytes, sizes.p99_bytes)
    return ChannelLoad(sizes.p50_bytes, p99, load, mean, local_commit_ms)


def channels(
    groups: Sequence[tuple[str, ...]],
    link: Callable[[str, str], LinkEvidence],
    load: ChannelLoad,
    memo: Memo,
) -> tuple[AsyncLink, ...]:
    """One channel between every two of ``groups`` (clusters by index)."""
    return tuple(
        channel((i, j), groups[i], groups[j], link, load, memo)
        for i in range(len(groups))
        for j in range(i + 1, len(groups))
    )


def channel(
    clusters: tuple[int, int],
    source: Sequence[str],
    target: Sequence[str],
    link: Callable[[str, str], LinkEvidence],
    load: ChannelLoad,
    memo: Memo,
) -> AsyncLink:
    """The channel between clusters ``source`` and ``target`` over their nearest pair (the
    lowest RTT p50): its RTT and lag percentiles [ms], the p99 lag's terms [ms] and the
    share of the link's bandwidth the replicated bytes use. Once per analysis for a link:
    the grouping search asks for the same channel in many partitions."""
    pairs = [(a, b) for a in source for b in target]
    a, b = min(pairs, key=lambda p: link(*p).rtt_p50_ms)
    over = link(a, b)
    key = (clusters, over)
    if key not in memo.channels:
        memo.channels[key] = _channel(clusters, (a, b), over, load)
    return memo.channels[key]


def _channel(
    clusters: tuple[int, int], sites: tuple[str, str], over: LinkEvidence, load: ChannelLoad
) -> AsyncLink:
    rtt_ms = {"p50": over.rtt_p50_ms, "p99": float(over.rtt.quantile(0.99))}
    parts = {
        key: replication.lag_parts_ms(
            rtt_ms[key],
            size,
            float(over.effective_bandwidth_mbps),
            load.local_commit_ms,
            replicated_bytes_per_s=load.load_bytes_per_s,
            mean_writeset_bytes=load.mean_bytes,
            quantile=q,
        )
        for key, size, q in (("p50", load.p50_bytes, 0.5), ("p99", load.p99_bytes, 0.99))
    }
    p99 = parts["p99"]
    return AsyncLink(
        clusters,
        sites,
        rtt_ms,
        {k: float(v.total_ms) for k, v in parts.items()},
        {
            "one_way": float(p99.one_way_ms),
            "serialisation": float(p99.serialisation_ms),
            "queue": float(p99.queue_ms),
            "apply": float(p99.apply_ms),
        },
        float(p99.utilisation),
    )
