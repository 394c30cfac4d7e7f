"""What the engine reads of the workload once, for every stage after it: write-set sizes.

Glossary: ``p50_bytes``, ``p99_bytes`` [bytes] are the median and 99th percentile of the
write sets Galera replicates (``wsrep_replicated_bytes / wsrep_replicated`` per commit).
"""

from __future__ import annotations

__all__ = ["DEFAULT_WRITESET_BYTES", "WritesetSizes", "writeset_sizes"]

from dataclasses import dataclass

from advisor.inputs.topology import Topology
from advisor.model.rtt import RttDistribution


@dataclass(frozen=True)
class WritesetSizes:
    """The write-set sizes every stage uses [bytes]."""

    p50_bytes: float
    p99_bytes: float


# When the workload does not say: a few rows changed (2 KB), and a tail of 64 KB (the sizes
# of the TCP measurements of benchmarks/calibration/field-data.yaml, case tcp-payload-400km,
# 48 KB and 512 KB, bracket it).
DEFAULT_WRITESET_BYTES = WritesetSizes(2048.0, 65536.0)


def writeset_sizes(topology: Topology) -> WritesetSizes:
    """Write-set p50 and p99 [bytes], interpolated from the percentiles the workload gives."""
    given = topology.workload.writeset_bytes
    if given is None:
        return DEFAULT_WRITESET_BYTES
    dist = RttDistribution.from_percentiles(given.given())
    return WritesetSizes(float(dist.quantile(0.5)), float(dist.quantile(0.99)))
