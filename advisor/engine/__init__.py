"""The engine layer: evidence per site pair, the evaluation of clusters and options into
metrics (no judgement), and the grouping search.

``evidence`` (per site pair), ``workload`` (write-set sizes), ``draws`` (the Monte Carlo
draws of one evaluation), ``clusters``, ``channels``, ``throughput``, ``failover``,
``evaluator`` (options from those parts), ``memo`` (the one cache of an analysis),
``grouping`` (the partition search), ``metrics`` (the plain data they return).
"""

from typing import TYPE_CHECKING

from advisor._lazy import attach

if TYPE_CHECKING:
    from advisor.engine import (
        channels,
        clusters,
        draws,
        evaluator,
        evidence,
        failover,
        grouping,
        memo,
        metrics,
        site_graph,
        throughput,
        workload,
    )
    from advisor.engine.evaluator import Evaluator
    from advisor.engine.evidence import LinkEvidence, gather_links
    from advisor.engine.grouping import best_partition
    from advisor.engine.metrics import AsyncLink, ClusterEval, HotRowEval, Option, Throughput
    from advisor.engine.workload import WritesetSizes, writeset_sizes

__all__ = [
    "AsyncLink",
    "ClusterEval",
    "Evaluator",
    "HotRowEval",
    "LinkEvidence",
    "Option",
    "Throughput",
    "WritesetSizes",
    "best_partition",
    "channels",
    "clusters",
    "draws",
    "evaluator",
    "evidence",
    "failover",
    "gather_links",
    "grouping",
    "memo",
    "metrics",
    "site_graph",
    "throughput",
    "workload",
    "writeset_sizes",
]

__getattr__, __dir__ = attach(
    __name__,
    [
        "channels",
        "clusters",
        "draws",
        "evaluator",
        "evidence",
        "failover",
        "grouping",
        "memo",
        "metrics",
        "site_graph",
        "throughput",
        "workload",
    ],
    {
        "Evaluator": "evaluator",
        "LinkEvidence": "evidence",
        "gather_links": "evidence",
        "best_partition": "grouping",
        "AsyncLink": "metrics",
        "ClusterEval": "metrics",
        "HotRowEval": "metrics",
        "Option": "metrics",
        "Throughput": "metrics",
        "WritesetSizes": "workload",
        "writeset_sizes": "workload",
    },
)
