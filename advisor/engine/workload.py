"""What the engine reads of the workload once, for every stage after it: write-set sizes.

Glossary: ``p50_bytes``, ``p99_bytes`` [bytes] are the median and 99th percentile of the
write sets Galera replicates (``wsrep_replicated_bytes / wsrep_replicated`` per commit).
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_WRITESET_BYTES",
    "WritesetSizes",
    "sizes_of",
    "writeset_distribution",
    "writeset_size_draws",
    "writeset_sizes",
]

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from advisor.inputs.topology import Topology
from advisor.model import galera
from advisor.model.rtt import RttDistribution


@dataclass(frozen=True)
class WritesetSizes:
    """The write-set sizes every stage uses [bytes]."""

    p50_bytes: float
    p99_bytes: float
    mean_bytes: float  # what a commit replicates on average: bytes per second, messages


# When the workload does not say: a few rows changed (2 KB), and a tail of 64 KB (the sizes
# of the TCP measurements of benchmarks/calibration/field-data.yaml, case tcp-payload-400km,
# 48 KB and 512 KB, bracket it).
_DEFAULT_PERCENTILES = {"p50": 2048.0, "p99": 65536.0}
# Quantile levels at which a size distribution's mean is taken (midpoints of 1000 equal bins).
_MEAN_LEVELS = (np.arange(1000) + 0.5) / 1000


def writeset_distribution(topology: Topology) -> RttDistribution:
    """The write-set sizes as a distribution [bytes]: the workload's percentiles (or the
    defaults), interpolated as any percentiles are (:meth:`RttDistribution.from_percentiles`)
    but over the logarithm of the size."""
    given = topology.workload.writeset_bytes
    return _log_interpolated(given.given() if given else _DEFAULT_PERCENTILES)


def writeset_size_draws(topology: Topology, draws: int) -> npt.NDArray[np.float64]:
    """Each Monte Carlo draw's write-set size [bytes]: :func:`writeset_distribution` at the
    levels of the size stream (:func:`galera.size_uniforms`), read-only. Kept per (sizes
    given, draws): the same for the screen, the full draws and both estimate ends, and for
    every topology of a fleet with the same write-set sizes."""
    given = topology.workload.writeset_bytes
    return _size_draws(tuple(given.given().items()) if given else None, draws)


@functools.lru_cache(maxsize=16)
def _size_draws(given: tuple[tuple[str, float], ...] | None, draws: int) -> npt.NDArray[np.float64]:
    sizes = _log_interpolated(dict(given) if given is not None else _DEFAULT_PERCENTILES)
    values = np.asarray(sizes.quantile(galera.size_uniforms(draws)), dtype=np.float64)
    values.setflags(write=False)
    return values


def _log_interpolated(percentiles: Mapping[str, float]) -> RttDistribution:
    # Sizes span orders of magnitude: interpolate their logarithm between the given
    # percentiles (log-normal between two knots), not the bytes, which would put 40 % of the
    # write sets of a p50 2 KB / p99 512 KB workload above 100 KB.
    logs = {key: math.log(max(value, 1.0)) for key, value in percentiles.items()}
    return RttDistribution.from_percentiles(logs).map(np.exp)


def writeset_sizes(topology: Topology) -> WritesetSizes:
    """Write-set p50, p99 and mean [bytes], from the percentiles the workload gives."""
    return sizes_of(writeset_distribution(topology))


def sizes_of(dist: RttDistribution) -> WritesetSizes:
    """The p50, p99 and mean of a size distribution [bytes]."""
    return WritesetSizes(  # rounded to a millibyte: exp(log(x)) is not always x
        round(float(dist.quantile(0.5)), 3),
        round(float(dist.quantile(0.99)), 3),
        round(float(np.mean(dist.quantile(_MEAN_LEVELS))), 3),
    )


DEFAULT_WRITESET_BYTES = sizes_of(_log_interpolated(_DEFAULT_PERCENTILES))
