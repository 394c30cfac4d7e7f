"""Closed-loop throughput: the workload's clients simulated through the EVS send path of the
cluster that holds their site (:func:`advisor.model.pipeline.closed_loop`)."""

from __future__ import annotations

__all__ = ["closed_loop_throughput"]

import numpy as np

from advisor.engine.draws import Sampling
from advisor.engine.metrics import ClusterEval, LimitedBy, Throughput, summarise
from advisor.inputs.topology import Clients
from advisor.model import pipeline

# A limit binds when it stretches the mean commit (or adds lock waits) by more than this
# share of a lone commit: below it, the run is as fast as its commit latency allows.
_BINDING_SHARE = 0.1
# A CPU limit holds the clients when its member spends its budget in most periods: the rate
# is then what the budget lets through. The lab's n3 (lab-runs.yaml,
# held-out-slow-member-rtt20) was throttled in 0.2 of the periods where the cluster committed
# as fast as with equal nodes, and in 0.85 to 0.98 where the limit held it.
_HELD_BY_QUOTA = 0.5


def closed_loop_throughput(
    cluster: ClusterEval,
    site: str,
    clients: Clients,
    plan: Sampling,
    lan_commit_p50_ms: float,
) -> Throughput:
    """The clients at ``site`` (a writing site of ``cluster``), each commit one drawn path,
    reply and write-set size at the cluster's writer; think time is the transaction without
    its LAN commits (``lan_commit_p50_ms`` each [ms]), plus, at a site other than the
    writer's, each commit's round trip to the writer (the median of what it adds)."""
    writer = cluster.writer_site
    assert writer is not None
    per_txn = clients.commits_per_txn
    routed_ms = float(np.median(cluster.commit_ms[site] - cluster.commit_ms[writer]))
    think_ms = max(clients.baseline_txn_latency_ms - per_txn * lan_commit_p50_ms, 0.0)
    think_ms += per_txn * routed_ms
    rows = clients.row_writes
    run = pipeline.closed_loop(
        clients.concurrency,
        think_ms,
        per_txn,
        cluster.path_ms[writer],
        cluster.first_reply_draws_ms[writer],
        plan.fragments,
        user_window=plan.user_window,
        send_window=plan.send_window,
        writesets_per_message=plan.writesets_per_message,
        local_commit_ms=cluster.local_commit_ms,
        row_writes=None if rows is None else rows.spec(),
        slow_member=cluster.slow_member,
        cpu_quota=cluster.cpu_quota,
    )
    # The window binds when commits wait for it; row locks when transactions wait longer
    # for rows than commits for the window.
    lone_ms = float(np.mean(cluster.commit_ms[writer]))
    commit_ms = float(np.mean(run.commit_ms))
    lock_wait_ms = 0.0
    if rows is not None:  # what the transactions took beyond thinking and committing
        lock_wait_ms = float(np.mean(run.txn_ms)) - think_ms - per_txn * commit_ms
    limited: LimitedBy = "commit latency"
    if max(commit_ms - lone_ms, lock_wait_ms) > _BINDING_SHARE * lone_ms:
        limited = "send window" if commit_ms - lone_ms >= lock_wait_ms else "row locks"
    if run.paused_share > _BINDING_SHARE:  # the slow member's pauses hold the clients
        limited = "flow control"
    if run.throttled_share > _HELD_BY_QUOTA:  # the throttled member's stalls hold them
        limited = "CPU limit"
    txn = summarise(run.txn_ms, ("p50", "p95"))
    return Throughput(run.commits_per_s, txn, limited, run.paused_share, run.throttled_share)
