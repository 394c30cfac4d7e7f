"""Asynchronous replication between clusters: how far a channel lags behind its source, which
is what a failover across it loses (the recovery point, RPO).

Pure functions, vectorised over round trips, sizes, bandwidths and loads (broadcast together).
A commit on the source cluster is written to its binary log and streamed to the replica of the
other cluster over one long-lived TCP connection (the replica's I/O thread), then applied
there. Its lag, commit on the source to applied on the replica, is the sum of four terms::

    lag = RTT / 2                       one-way delay (a symmetric path)
        + S / B                         serialisation of the write set at the link's bandwidth
        + W_q                           queueing behind earlier write sets, under load
        + apply                         the replica applying it (a local commit)

- The first two come from :func:`advisor.model.tcp.one_way_ms` with a warm window: the
  replication connection stays open and busy, and the configuration plan sizes the socket
  buffers to the bandwidth-delay product, so no slow-start round is paid.
- The queue: the channel is one FIFO server whose service time is a write set's serialisation
  ``s = mean write set / B``; commits arrive as a Poisson stream at the replicated rate, so the
  link is busy a fraction ``rho = replicated bytes per s / B``. The waiting time is taken from
  the M/M/1 queue, ``P(W > t) = rho * exp(-(1 - rho) t / s)`` (Kleinrock, *Queueing Systems*
  vol. 1, Wiley 1975, ch. 3), so its quantile ``q`` is ``s / (1 - rho) * ln(rho / (1 - q))``
  when ``rho > 1 - q`` and 0 below. Exponential service is more variable than a fixed size,
  which makes this an upper bound of the M/D/1 wait at the same mean (the M/G/1 wait grows
  with the variability of service, Pollaczek-Khinchine); with a heavy tail of write-set sizes
  it is an estimate, not a bound. At ``rho >= 1`` the channel cannot keep up and the lag
  grows without bound (infinite).
- Apply: the replica commits each transaction as the source did; the local commit time
  (``workload.local_commit_ms``, 1 ms by default from benchmarks/calibration/lab-galera.yaml).
  It is counted in the recovery point although a transaction already in the replica's relay
  log is applied before promotion: one apply of margin.

A lag at a quantile takes every term at that quantile (RTT p99, write set p99, queue p99): the
sum of the p99s, an upper bound of the p99 of the sum.

Glossary: ``rtt_ms`` round trip [ms]; ``writeset_bytes`` a write set's size [bytes];
``bandwidth_mbps`` the link's rate [Mbit/s, 10^6 bit/s]; ``replicated_bytes_per_s`` the load
the channel carries [bytes/s]; ``apply_ms`` applying one transaction on the replica [ms].
"""

from __future__ import annotations

__all__ = ["LagParts", "lag_parts_ms", "queue_wait_ms", "utilisation"]

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from advisor.model import tcp

FloatArray = npt.NDArray[np.float64]
_BITS_PER_BYTE = 8.0
_MS_PER_S = 1e3


def utilisation(
    replicated_bytes_per_s: npt.ArrayLike, bandwidth_mbps: npt.ArrayLike
) -> FloatArray | float:
    """The fraction of the link's bandwidth the replicated bytes keep busy.

    Parameters
    ----------
    replicated_bytes_per_s : array_like
        Load the channel carries [bytes/s].
    bandwidth_mbps : array_like
        The link's rate [Mbit/s].

    Returns
    -------
    float or ndarray
        Utilisation ``rho`` [fraction]; 1 or more: the link cannot keep up.

    >>> utilisation(4_000_000, 500.0)  # 32 Mbit/s on 500 Mbit/s
    0.064
    """
    load_bps = np.asarray(replicated_bytes_per_s, dtype=float) * _BITS_PER_BYTE
    rate_bps = np.asarray(bandwidth_mbps, dtype=float) * 1e6
    return _scalar_or_array(load_bps / rate_bps)


def queue_wait_ms(
    rho: npt.ArrayLike, service_ms: npt.ArrayLike, quantile: float = 0.5
) -> FloatArray | float:
    """The M/M/1 waiting time at ``quantile`` (module docstring).

    Parameters
    ----------
    rho : array_like
        Utilisation of the link [fraction].
    service_ms : array_like
        Mean service time, a mean write set's serialisation [ms].
    quantile : float, default 0.5
        Level of the waiting time [fraction, in [0, 1)].

    Returns
    -------
    float or ndarray
        Waiting time [ms]; infinite where ``rho >= 1``.

    >>> round(queue_wait_ms(0.8, 0.64, 0.99), 3)  # 0.64 / 0.2 * ln(0.8 / 0.01)
    14.022
    >>> queue_wait_ms(0.3, 1.0, 0.5)  # rho below 1 - q: most commits find the link idle
    0.0
    """
    if not 0.0 <= quantile < 1.0:
        raise ValueError(f"quantile must be within [0, 1), got {quantile!r}")
    r = np.asarray(rho, dtype=float)
    s = np.asarray(service_ms, dtype=float)
    tail = 1.0 - quantile
    with np.errstate(divide="ignore", invalid="ignore"):
        wait = np.where(
            r >= 1.0,
            np.inf,
            np.where(r > tail, s / (1.0 - r) * np.log(np.maximum(r, tail) / tail), 0.0),
        )
    return _scalar_or_array(np.asarray(wait, dtype=float))


@dataclass(frozen=True)
class LagParts:
    """The four terms of a channel's lag [ms] (module docstring) and the link's utilisation.

    Attributes
    ----------
    one_way_ms : float or ndarray
        Half the round trip [ms].
    serialisation_ms : float or ndarray
        The write set at the link's rate [ms].
    queue_ms : float or ndarray
        Waiting behind earlier write sets [ms].
    apply_ms : float or ndarray
        Applying the write set on the replica [ms].
    utilisation : float or ndarray
        The link's utilisation ``rho`` [fraction].
    """

    one_way_ms: FloatArray | float
    serialisation_ms: FloatArray | float
    queue_ms: FloatArray | float
    apply_ms: FloatArray | float
    utilisation: FloatArray | float

    @property
    def total_ms(self) -> FloatArray | float:
        """The lag: the sum of the four terms [ms]."""
        total = (
            np.asarray(self.one_way_ms)
            + np.asarray(self.serialisation_ms)
            + np.asarray(self.queue_ms)
            + np.asarray(self.apply_ms)
        )
        return _scalar_or_array(np.asarray(total, dtype=float))


def lag_parts_ms(
    rtt_ms: npt.ArrayLike,
    writeset_bytes: npt.ArrayLike,
    bandwidth_mbps: npt.ArrayLike,
    apply_ms: npt.ArrayLike,
    *,
    replicated_bytes_per_s: npt.ArrayLike = 0.0,
    mean_writeset_bytes: npt.ArrayLike | None = None,
    quantile: float = 0.5,
) -> LagParts:
    """The terms of a channel's lag at ``quantile`` (module docstring); broadcast together.

    Parameters
    ----------
    rtt_ms : array_like
        Round trip at that quantile [ms].
    writeset_bytes : array_like
        Write-set size at that quantile [bytes].
    bandwidth_mbps : array_like
        The link's rate [Mbit/s].
    apply_ms : array_like
        Applying one transaction on the replica [ms].
    replicated_bytes_per_s : array_like, default 0.0
        Load the channel carries [bytes/s]; 0 is an idle link, no queue.
    mean_writeset_bytes : array_like, optional
        Mean write set, which sets the queue's service time [bytes]; default
        ``writeset_bytes``.
    quantile : float, default 0.5
        Level of the queue's waiting time [fraction, in [0, 1)].

    Returns
    -------
    LagParts
        The terms [ms] and the utilisation; floats for scalar inputs, arrays otherwise.

    >>> parts = lag_parts_ms(80.0, 64_000, 100.0, 1.0)
    >>> parts.one_way_ms, round(parts.serialisation_ms, 3), parts.queue_ms, parts.apply_ms
    (40.0, 5.12, 0.0, 1.0)
    >>> parts.total_ms  # 40 + 5.12 + 0 + 1
    46.12
    >>> round(lag_parts_ms(80.0, 64_000, 100.0, 1.0, replicated_bytes_per_s=10_000_000,
    ...     mean_writeset_bytes=8_000, quantile=0.99).total_ms, 3)  # + 0.64 / 0.2 * ln(80)
    60.142
    """
    rtt = np.asarray(rtt_ms, dtype=float)
    size = np.asarray(writeset_bytes, dtype=float)
    rate = np.asarray(bandwidth_mbps, dtype=float)
    one_way = rtt / 2.0
    shipped = np.asarray(tcp.one_way_ms(size, rtt, rate, window="warm"), dtype=float)
    mean = size if mean_writeset_bytes is None else np.asarray(mean_writeset_bytes, dtype=float)
    service_ms = mean * _BITS_PER_BYTE / (rate * 1e6) * _MS_PER_S
    rho = np.asarray(utilisation(replicated_bytes_per_s, rate), dtype=float)
    apply = np.broadcast_to(np.asarray(apply_ms, dtype=float), np.broadcast(rtt, size).shape)
    return LagParts(
        one_way_ms=_scalar_or_array(one_way),
        serialisation_ms=_scalar_or_array(shipped - one_way),
        queue_ms=queue_wait_ms(rho, service_ms, quantile),
        apply_ms=_scalar_or_array(np.asarray(apply, dtype=float)),
        utilisation=_scalar_or_array(rho),
    )


def _scalar_or_array(values: FloatArray) -> FloatArray | float:
    return float(values) if values.ndim == 0 else values
