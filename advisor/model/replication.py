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
- Apply: the replica commits each transaction as the source did, through its own Galera
  cluster: one full commit there (the engine passes the receiving cluster's commit at the
  replica's site, its local work included). It is counted in the recovery point although a
  transaction already in the replica's relay log is applied before promotion (the promote
  file waits for it): one apply of margin.
- The appliers' queue: the replica applies with ``applier_threads`` workers (MariaDB
  ``slave_parallel_threads``, 0 meaning the SQL thread alone; MySQL and PXC
  ``replica_parallel_workers``), each one commit at a time, so the channel applies at most
  ``applier_threads / mean apply`` transactions a second (:func:`apply_capacity_per_s`).
  Commits arrive at the source's rate; the applier's busy share is ``commits_per_s / capacity``
  and its wait is the M/M/1 queue of one server ``applier_threads`` times faster
  (:func:`queue_wait_ms` with the mean apply over the threads). The M/M/c queue of the real
  workers waits with the same exponential decay but a smaller probability (Erlang's C is at
  most the utilisation; Kleinrock vol. 1, sec. 3.5), so this is its upper bound. At a busy
  share of 1 or more the backlog grows as long as the peak lasts: the lag is infinite. That
  assumes independent transactions. The updates of one row apply in order on any number of
  threads (MariaDB's optimistic appliers roll back and retry a conflict; MySQL's WRITESET
  dependencies keep them in sequence), each a full commit in the receiving cluster: Callaghan's
  law on the replica. They reach the replica spaced by the source's own commits of that row,
  so below one applier's capacity (``serial_commits_per_s`` times one apply under 1) they add
  no wait; at or above it they fall behind without bound.

A lag at a quantile takes every term at that quantile (RTT p99, write set p99, queue p99): the
sum of the p99s, an upper bound of the p99 of the sum.

Glossary: ``rtt_ms`` round trip [ms]; ``writeset_bytes`` a write set's size [bytes];
``bandwidth_mbps`` the link's rate [Mbit/s, 10^6 bit/s]; ``replicated_bytes_per_s`` the load
the channel carries [bytes/s]; ``apply_ms`` applying one transaction on the replica [ms].
"""

from __future__ import annotations

__all__ = [
    "MOST_APPLIER_THREADS",
    "LagParts",
    "applier_threads_needed",
    "apply_capacity_per_s",
    "default_applier_threads",
    "lag_parts_ms",
    "queue_wait_ms",
    "utilisation",
]

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from advisor.model import tcp

FloatArray = npt.NDArray[np.float64]
_BITS_PER_BYTE = 8.0
_MS_PER_S = 1e3

# The most appliers a design sets on one replica (estimated): past a few dozen, parallel apply
# is bound by the dependencies between transactions (what the source committed together, rows
# written in order), not by the thread count (MariaDB docs, Parallel Replication:
# https://mariadb.com/kb/en/parallel-replication/; MySQL manual, replica_parallel_workers:
# https://dev.mysql.com/doc/refman/8.0/en/replication-options-replica.html).
MOST_APPLIER_THREADS = 64
# MySQL 8.0.27 made 4 workers the default (replica_parallel_workers, with
# replica_preserve_commit_order ON); before it, and on MariaDB (slave_parallel_threads 0),
# the SQL thread applies alone.
_MYSQL_PARALLEL_DEFAULT = 4


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
    rho: npt.ArrayLike, service_ms: npt.ArrayLike, quantile: npt.ArrayLike = 0.5
) -> FloatArray | float:
    """The M/M/1 waiting time at ``quantile`` (module docstring).

    Parameters
    ----------
    rho : array_like
        Utilisation of the link [fraction].
    service_ms : array_like
        Mean service time, a mean write set's serialisation [ms].
    quantile : array_like, default 0.5
        Level of the waiting time [fraction, in [0, 1)]; broadcast with the others.

    Returns
    -------
    float or ndarray
        Waiting time [ms]; infinite where ``rho >= 1``.

    >>> round(queue_wait_ms(0.8, 0.64, 0.99), 3)  # 0.64 / 0.2 * ln(0.8 / 0.01)
    14.022
    >>> queue_wait_ms(0.3, 1.0, 0.5)  # rho below 1 - q: most commits find the link idle
    0.0
    """
    level = np.asarray(quantile, dtype=float)
    if not ((level >= 0.0) & (level < 1.0)).all():
        raise ValueError(f"quantile must be within [0, 1), got {quantile!r}")
    r = np.asarray(rho, dtype=float)
    s = np.asarray(service_ms, dtype=float)
    tail = 1.0 - level
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
    apply_queue_ms : float or ndarray
        Waiting for a free applier on the replica [ms]; infinite when the appliers cannot
        keep up.
    apply_utilisation : float or ndarray
        The appliers' busy share at the arrival rate [fraction]; 1 or more: unbounded lag.
    """

    one_way_ms: FloatArray | float
    serialisation_ms: FloatArray | float
    queue_ms: FloatArray | float
    apply_ms: FloatArray | float
    utilisation: FloatArray | float
    apply_queue_ms: FloatArray | float = 0.0
    apply_utilisation: FloatArray | float = 0.0

    @property
    def total_ms(self) -> FloatArray | float:
        """The lag: the sum of the terms [ms]."""
        total = (
            np.asarray(self.one_way_ms)
            + np.asarray(self.serialisation_ms)
            + np.asarray(self.queue_ms)
            + np.asarray(self.apply_queue_ms)
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
    quantile: npt.ArrayLike = 0.5,
    commits_per_s: npt.ArrayLike = 0.0,
    applier_threads: npt.ArrayLike = 1,
    mean_apply_ms: npt.ArrayLike | None = None,
    serial_commits_per_s: npt.ArrayLike = 0.0,
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
    quantile : array_like, default 0.5
        Level of the queues' waiting times [fraction, in [0, 1)]; broadcast with the
        round trips and sizes (one call for several levels).
    commits_per_s : array_like, default 0.0
        Transactions the channel carries [1/s]; 0 leaves out the appliers' queue.
    applier_threads : array_like, default 1
        Workers applying in parallel on the replica [threads].
    mean_apply_ms : array_like, optional
        The mean apply, which sets the appliers' capacity [ms]; default ``apply_ms``.
    serial_commits_per_s : array_like, default 0.0
        Transactions that apply one after another whatever the threads, the updates of the
        hottest row [1/s]; past one applier's capacity the lag is unbounded (module
        docstring).

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
    apply_mean = apply if mean_apply_ms is None else np.asarray(mean_apply_ms, dtype=float)
    threads = np.asarray(applier_threads, dtype=float)
    busy = np.asarray(commits_per_s, dtype=float) / apply_capacity_per_s(threads, apply_mean)
    in_order = np.asarray(serial_commits_per_s, dtype=float) / apply_capacity_per_s(1, apply_mean)
    # A hot row's updates reach the replica spaced by the source's own commits of that row,
    # so below one applier's capacity they do not queue behind each other; at or above it,
    # they fall behind without bound.
    behind = np.where(in_order >= 1.0, np.inf, 0.0)
    wait = np.maximum(queue_wait_ms(busy, apply_mean / threads, quantile), behind)
    return LagParts(
        one_way_ms=_scalar_or_array(one_way),
        serialisation_ms=_scalar_or_array(shipped - one_way),
        queue_ms=queue_wait_ms(rho, service_ms, quantile),
        apply_ms=_scalar_or_array(np.asarray(apply, dtype=float)),
        utilisation=_scalar_or_array(rho),
        apply_queue_ms=_scalar_or_array(np.asarray(wait, dtype=float)),
        apply_utilisation=_scalar_or_array(np.maximum(busy, in_order)),
    )


def apply_capacity_per_s(
    applier_threads: npt.ArrayLike, mean_apply_ms: npt.ArrayLike
) -> FloatArray | float:
    """The most transactions a replica applies in a second: each worker one at a time.

    Parameters
    ----------
    applier_threads : array_like
        Workers applying in parallel [threads].
    mean_apply_ms : array_like
        One transaction's apply on the replica, a commit in its cluster [ms].

    Returns
    -------
    float or ndarray
        Capacity [transactions/s].

    >>> round(apply_capacity_per_s(1, 1.3), 1)  # the SQL thread alone at 1.3 ms a commit
    769.2
    """
    threads = np.asarray(applier_threads, dtype=float)
    return _scalar_or_array(threads * _MS_PER_S / np.asarray(mean_apply_ms, dtype=float))


def default_applier_threads(flavor: str) -> int:
    """The appliers a replica runs when nobody sets them.

    Parameters
    ----------
    flavor : str
        ``mariadb``, ``pxc`` or ``codership`` (MySQL with Galera).

    Returns
    -------
    int
        Threads [threads]: 1 on MariaDB (``slave_parallel_threads`` 0, the SQL thread
        alone), 4 on MySQL and PXC (``replica_parallel_workers``, the default from 8.0.27,
        which every Galera 4 release of PXC and of Codership's MySQL follows).

    >>> default_applier_threads("mariadb"), default_applier_threads("pxc")
    (1, 4)
    """
    return 1 if flavor == "mariadb" else _MYSQL_PARALLEL_DEFAULT


def applier_threads_needed(
    commits_per_s: float, mean_apply_ms: float, budget_ms: float, least: int, most: int
) -> int | None:
    """The fewest appliers, from ``least`` to ``most``, whose queue waits at most
    ``budget_ms`` at p99 (:func:`queue_wait_ms` at 0.99): the design's parallel-replication
    threads. The engine's budget is one p99 apply: waiting for an applier at most doubles
    the apply part of the lag.

    Parameters
    ----------
    commits_per_s : float
        Transactions the channel carries at the peak [1/s].
    mean_apply_ms : float
        One transaction's apply on the replica [ms].
    budget_ms : float
        The longest p99 wait for an applier the design accepts [ms].
    least : int
        The fewest threads to consider, the flavour's default or the user's [threads].
    most : int
        The most threads to consider [threads].

    Returns
    -------
    int or None
        Threads [threads]; None when even ``most`` leave a longer wait.

    >>> applier_threads_needed(5000.0, 1.3, 1.76, 1, 64)  # 6.5 busy threads at the peak
    10
    >>> applier_threads_needed(20.0, 1.3, 1.76, 1, 64)  # 3 % busy: the SQL thread alone
    1
    >>> applier_threads_needed(5000.0, 1.3, 1.76, 1, 6) is None  # 6 threads cannot keep up
    True
    """
    threads = np.arange(least, most + 1, dtype=float)
    if threads.size == 0:
        return None
    busy = commits_per_s * mean_apply_ms / _MS_PER_S / threads
    wait = np.asarray(queue_wait_ms(busy, mean_apply_ms / threads, 0.99), dtype=float)
    fits = np.flatnonzero(wait <= budget_ms)
    return int(threads[fits[0]]) if fits.size else None


def _scalar_or_array(values: FloatArray) -> FloatArray | float:
    return float(values) if values.ndim == 0 else values
