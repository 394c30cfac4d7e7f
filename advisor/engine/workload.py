"""What the engine reads of the workload once, for every stage after it: write-set sizes.

Glossary: ``p50_bytes``, ``p99_bytes`` [bytes] are the median and 99th percentile of the
write sets Galera replicates (``wsrep_replicated_bytes / wsrep_replicated`` per commit).
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_WRITESET_BYTES",
    "SizeDistribution",
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
from advisor.model.rtt import percentile_knots

FloatArray = npt.NDArray[np.float64]


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


@dataclass(frozen=True)
class SizeDistribution:
    """Write-set sizes as a quantile function, linear between knots.

    Attributes
    ----------
    knot_levels : ndarray
        Ascending levels [fraction], from 0 to 1.
    knot_bytes : ndarray
        The sizes at those levels [bytes].
    """

    knot_levels: FloatArray
    knot_bytes: FloatArray

    def quantile_bytes(self, q: npt.ArrayLike) -> FloatArray:
        """The sizes at levels ``q``.

        Parameters
        ----------
        q : array_like
            Levels [fraction, in [0, 1]].

        Returns
        -------
        ndarray
            Write-set sizes [bytes], one per level.
        """
        levels = np.asarray(q, dtype=np.float64)
        return np.asarray(np.interp(levels, self.knot_levels, self.knot_bytes), dtype=np.float64)


def writeset_distribution(topology: Topology) -> SizeDistribution:
    """The workload's write-set sizes as a distribution.

    The workload's percentiles (or the defaults), interpolated as any percentiles are
    (:func:`advisor.model.rtt.percentile_knots`) but over the logarithm of the size.

    Parameters
    ----------
    topology : Topology
        The topology; its ``workload.writeset_bytes`` percentiles [bytes], if given.

    Returns
    -------
    SizeDistribution
        The sizes [bytes].
    """
    given = topology.workload.writeset_bytes
    return _log_interpolated(given.given() if given else _DEFAULT_PERCENTILES)


def writeset_size_draws(topology: Topology, draws: int) -> FloatArray:
    """Each Monte Carlo draw's write-set size.

    :func:`writeset_distribution` at the levels of the size stream
    (:func:`galera.size_uniforms`). Kept per (sizes given, draws): the same for the screen,
    the full draws and both estimate ends, and for every topology of a fleet with the same
    write-set sizes. Reading 20,000 unsorted levels is most of a small topology's cost
    here: without the cache, a fleet's topologies spent 15 % of their CPU in this function
    (four calls each, 2,000 and 20,000 draws).

    Parameters
    ----------
    topology : Topology
        The topology; its ``workload.writeset_bytes`` percentiles [bytes], if given.
    draws : int
        Number of draws [count].

    Returns
    -------
    ndarray
        One size per draw [bytes], read-only.
    """
    given = topology.workload.writeset_bytes
    return _size_draws(tuple(given.given().items()) if given else None, draws)


@functools.lru_cache(maxsize=16)
def _size_draws(given: tuple[tuple[str, float], ...] | None, draws: int) -> FloatArray:
    sizes = _log_interpolated(dict(given) if given is not None else _DEFAULT_PERCENTILES)
    values = sizes.quantile_bytes(galera.size_uniforms(draws))
    values.setflags(write=False)
    return values


def _log_interpolated(percentiles_bytes: Mapping[str, float]) -> SizeDistribution:
    # Sizes span orders of magnitude: interpolate their logarithm between the given
    # percentiles (linear in probability on the log scale), not the bytes, which would put
    # 40 % of the write sets of a p50 2 KB / p99 512 KB workload above 100 KB. The knots are
    # those of any given percentiles, the quantile function linear in bytes between them.
    logs = {key: math.log(max(value, 1.0)) for key, value in percentiles_bytes.items()}
    _, levels, log_bytes = percentile_knots(logs, unit="log bytes")
    return SizeDistribution(levels, np.exp(log_bytes))


def writeset_sizes(topology: Topology) -> WritesetSizes:
    """Write-set p50, p99 and mean, from the percentiles the workload gives.

    Parameters
    ----------
    topology : Topology
        The topology; its ``workload.writeset_bytes`` percentiles [bytes], if given.

    Returns
    -------
    WritesetSizes
        p50, p99 and mean [bytes].
    """
    return sizes_of(writeset_distribution(topology))


def sizes_of(dist: SizeDistribution) -> WritesetSizes:
    """The p50, p99 and mean of a size distribution.

    Parameters
    ----------
    dist : SizeDistribution
        The sizes [bytes].

    Returns
    -------
    WritesetSizes
        p50, p99 and mean [bytes], rounded to a millibyte (exp(log(x)) is not always x).
    """
    return WritesetSizes(
        round(float(dist.quantile_bytes(0.5)), 3),
        round(float(dist.quantile_bytes(0.99)), 3),
        round(float(np.mean(dist.quantile_bytes(_MEAN_LEVELS))), 3),
    )


DEFAULT_WRITESET_BYTES = sizes_of(_log_interpolated(_DEFAULT_PERCENTILES))
