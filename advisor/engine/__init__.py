"""The engine layer: evidence per site pair, the evaluation of clusters and options into
metrics (no judgement), and the grouping search.
"""

from typing import TYPE_CHECKING

from advisor._lazy import attach

if TYPE_CHECKING:
    from advisor.engine import evaluator, evidence, failover, grouping, metrics, workload
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
    "evaluator",
    "evidence",
    "failover",
    "gather_links",
    "grouping",
    "metrics",
    "workload",
    "writeset_sizes",
]

__getattr__, __dir__ = attach(
    __name__,
    ["evaluator", "evidence", "failover", "grouping", "metrics", "workload"],
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
