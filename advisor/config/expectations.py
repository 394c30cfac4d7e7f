"""What a DBA expects such a design to answer beyond the settings: how long a full state
transfer of the dataset takes over each WAN link, what causal reads cost, when streaming
replication helps, and how to read one's own writes across an asynchronous link.

- Transfer time: one TCP stream (mariabackup / xtrabackup through socat) gets the link's
  bandwidth when its window covers the bandwidth-delay product, else window / RTT; the
  window is half the largest receive buffer (``tcp_rmem[2]``; Linux advertises about half,
  :func:`advisor.model.tcp.socket_buffer_bytes_for`), 6 MB by Linux default and what the
  plan's sysctl script raises it to. Disk and compression are left out: a lower bound.
- Causal reads: with ``wsrep_sync_wait=1`` a read first waits for the node to apply
  everything committed before it, which takes one round of the cluster's group communication
  (Codership docs, wsrep_sync_wait:
  https://galeracluster.com/library/documentation/mysql-wsrep-options.html#wsrep-sync-wait);
  the model's commit round (commit p50 less the local commit) is that round.
- Streaming replication: Galera 4 replicates a transaction in fragments of
  ``wsrep_trx_fragment_size`` units as it runs (MariaDB docs, Using Streaming Replication:
  https://mariadb.com/kb/en/using-streaming-replication/); worth it for write sets beyond
  what a commit should replicate at once, and each fragment costs a commit round.
- Read-your-writes across an asynchronous link: MariaDB's ``@@last_gtid`` after the write
  and ``MASTER_GTID_WAIT(gtid, timeout)`` on the other cluster (MariaDB docs, GTID:
  https://mariadb.com/kb/en/gtid/); MySQL's ``WAIT_FOR_EXECUTED_GTID_SET``
  (https://dev.mysql.com/doc/refman/8.0/en/gtid-functions.html).
"""

from __future__ import annotations

__all__ = ["STREAMING_ABOVE_BYTES", "expectations_plan", "stream_rate_mbps"]

from typing import TYPE_CHECKING

from advisor.config.model import ExpectationsPlan, PlanContext, TransferTime
from advisor.units import ms_text

if TYPE_CHECKING:
    from advisor.config.model import OsPlan
    from advisor.engine.evidence import LinkEvidence

# Linux default tcp_rmem[2] [bytes] (Linux ip-sysctl docs; advisor.config.os_settings).
_LINUX_RMEM_MAX_BYTES = 6_291_456
_ADVERTISED_FRACTION = 0.5
# Write sets above this size [bytes] are worth streaming: a design threshold, not a vendor's
# number. A 16 MB write set is 512 messages of 32 KB through the send windows, many commit
# rounds (WRITESET-ROUNDS), and a conflict found at certification throws all of it away.
STREAMING_ABOVE_BYTES = 16 * 2**20
# The fragment to advise [bytes]: 1 MB, 32 messages per round trip of a fragment (design).
_FRAGMENT_BYTES = 2**20


def stream_rate_mbps(bandwidth_mbps: float, rtt_ms: float, rmem_max_bytes: float) -> float:
    """What one TCP stream gets [Mbit/s]: the bandwidth, or its window over the RTT.

    >>> stream_rate_mbps(1000.0, 80.0, 6_291_456)  # 3.1 MB per 80 ms round trip
    314.5728
    """
    window_bytes = rmem_max_bytes * _ADVERTISED_FRACTION
    by_window = window_bytes * 8.0 / (rtt_ms / 1000.0) / 1e6 if rtt_ms > 0 else bandwidth_mbps
    return min(bandwidth_mbps, by_window)


def _rmem_max(os_plan: OsPlan) -> float:
    for setting in os_plan.settings:
        if setting.name == "net.ipv4.tcp_rmem":
            return float(str(setting.value).split()[2])
    return float(_LINUX_RMEM_MAX_BYTES)


def _transfer(link: LinkEvidence, purpose: str, dataset: float | None, rmem: float) -> TransferTime:
    rtt = float(link.rtt.quantile(0.99))
    rate = stream_rate_mbps(link.effective_bandwidth_mbps, rtt, rmem)
    seconds = dataset * 8.0 / (rate * 1e6) if dataset else None
    return TransferTime(
        sites=link.sites,
        purpose=purpose,
        bandwidth_mbps=link.effective_bandwidth_mbps,
        rtt_p99_ms=round(rtt, 3),
        rate_mbps=round(rate, 1),
        seconds=None if seconds is None else round(seconds, 1),
    )


def expectations_plan(ctx: PlanContext, os_plan: OsPlan) -> ExpectationsPlan:
    """State-transfer times, causal-read cost, streaming and read-your-writes advice."""
    topology = ctx.analysis.loaded.topology
    dataset = topology.workload.dataset_bytes
    rmem = _rmem_max(os_plan)
    transfers = []
    for i, cluster in enumerate(ctx.option.clusters):
        for link in cluster.links:
            if set(link.sites) <= set(cluster.sites):  # garbd sites hold no data
                transfers.append(
                    _transfer(
                        link, f"SST between the sites of cluster {ctx.labels[i]}", dataset, rmem
                    )
                )
    for a in ctx.option.async_links:
        i, j = a.clusters
        transfers.append(
            _transfer(
                ctx.analysis.link(*a.sites),
                f"seeding a replica of cluster {ctx.labels[i]} in cluster {ctx.labels[j]} "
                "(or back)",
                dataset,
                rmem,
            )
        )
    causal = {
        ctx.labels[i]: round(c.safe_period_ms, 3)
        for i, c in enumerate(ctx.option.clusters)
        if c.commit_ms
    }
    p99 = ctx.analysis.writeset_bytes.p99_bytes
    streaming = p99 > STREAMING_ABOVE_BYTES
    rounds = ", ".join(f"{ms:.1f} ms in cluster {name}" for name, ms in causal.items())
    per_fragment = f" (a fragment of {_FRAGMENT_BYTES:,} bytes costs a commit round: {rounds})"
    note = (
        f"write sets reach {p99:,.0f} bytes at p99, beyond {STREAMING_ABOVE_BYTES:,} bytes: "
        f"stream the large transactions{per_fragment}"
        if streaming
        else f"write sets stay below {STREAMING_ABOVE_BYTES:,} bytes at p99 ({p99:,.0f}): "
        f"no streaming needed; keep it for the rare batch that is larger{per_fragment}"
    )
    return ExpectationsPlan(
        dataset_bytes=dataset,
        transfers=transfers,
        causal_read_ms=causal,
        fragment_bytes=_FRAGMENT_BYTES if streaming else None,
        fragment_note=note,
        read_your_writes=[
            f"{ctx.labels[a.clusters[0]]} and {ctx.labels[a.clusters[1]]}: a commit on one "
            f"side shows on the other after about {ms_text(a.lag_ms['p50'])}, "
            f"{ms_text(a.lag_ms['p99'])} at p99 (modelled)"
            for a in ctx.option.async_links
        ],
    )
