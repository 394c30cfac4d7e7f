"""``advisor collect``: the workload and galera sections of topology.yaml, from a live node.

Watch one node of a running Galera cluster (MariaDB, Percona XtraDB Cluster, MySQL-wsrep)
for a while, with read-only statements, and write what it saw: commit rates, write-set
sizes and replication volume, the hottest rows, and the provider options that run.

The command is :mod:`advisor.cli.collect`; this package is the library and prints nothing.
The names below are imported on first use, so that the command line's start-up does not
load the MySQL driver and numpy.
"""

from __future__ import annotations

__all__ = [
    "CollectedEvidence",
    "ConnectionSettings",
    "collect",
    "evidence_to_yaml",
    "merge_into",
]

from typing import TYPE_CHECKING

from advisor._lazy import attach

if TYPE_CHECKING:
    from advisor.collect.api import CollectedEvidence, collect
    from advisor.collect.connection import ConnectionSettings
    from advisor.collect.writer import evidence_to_yaml, merge_into

__getattr__, __dir__ = attach(
    __name__,
    attributes={
        "CollectedEvidence": "api",
        "collect": "api",
        "ConnectionSettings": "connection",
        "evidence_to_yaml": "writer",
        "merge_into": "writer",
    },
)
