"""Rates and distributions from recorded ``SHOW GLOBAL STATUS`` samples (pure arithmetic).

A sample is the status of one node at one moment. Cumulative counters become per-interval
deltas; an interval in which the server restarted (``Uptime`` went down, or grew much less
than the wall clock) or in which a counter went down (FLUSH STATUS, a provider reload) is
dropped for that counter instead of giving a negative or huge rate. Averages are
time-weighted over the intervals kept; peaks are the largest rate of one interval, so they
depend on the sampling interval (a 10 s interval smooths a 1 s burst).

Variables: Codership docs, Galera Status Variables:
https://galeracluster.com/library/documentation/galera-status-variables.html.
"""

from __future__ import annotations

__all__ = [
    "LatencySummary",
    "Spread",
    "StatusSample",
    "StatusSummary",
    "counter_deltas",
    "numeric_series",
    "parse_repl_latency",
    "repl_latency_summary_ms",
    "summarise_status",
    "weighted_percentile",
]

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]

# Uptime has a 1 s resolution and a sample takes a moment to read: an interval whose Uptime
# grew this much less than the wall clock saw a restart.
_UPTIME_SLACK_S = 1.5
# A counter is an unsigned 64-bit integer on the server (20 digits); a longer value is not one.
_MAX_NUMBER_CHARS = 40
# Intervals shorter than this (two samples in the same instant) carry no rate.
_MIN_INTERVAL_S = 1e-3


@dataclass(frozen=True)
class StatusSample:
    """``SHOW GLOBAL STATUS`` of one node, read ``elapsed_s`` seconds after the run began."""

    elapsed_s: float
    values: Mapping[str, str]


@dataclass(frozen=True)
class Spread:
    """Average and peak of a rate over a run; ``None`` where no interval gave a value."""

    avg: float | None
    peak: float | None


@dataclass(frozen=True)
class LatencySummary:
    """``wsrep_evs_repl_latency`` over a run [ms], and the latency samples behind it."""

    min_ms: float
    avg_ms: float
    max_ms: float
    samples: int


@dataclass(frozen=True)
class StatusSummary:
    """What the status samples of one node say about the cluster's workload."""

    samples: int
    intervals_used: int
    intervals_dropped: int
    restarts: int
    observed_s: float
    commits_per_s: Spread
    local_commits_per_s: Spread
    replicated_bytes_per_s: Spread
    received_bytes_per_s: Spread
    cluster_bytes_per_s: Spread
    writeset_bytes_p50: float | None
    writeset_bytes_p99: float | None
    writeset_bytes_mean: float | None
    local_writeset_bytes_mean: float | None
    flow_control_paused: Spread
    cert_failures_per_s: Spread
    bf_aborts_per_s: Spread
    repl_latency: LatencySummary | None
    cluster_size_min: int | None
    cluster_size_max: int | None
    segment: int | None
    # Flow control seen from this node (issue 23): the FC_STOP messages it sent (it could not
    # keep up) and received (itself included) over the intervals kept [count]; its receive
    # queue, Galera's average since the last FLUSH STATUS as last read [write sets]; and the
    # write sets that could apply in parallel, wsrep_cert_deps_distance as last read
    # [write sets]. None where the server does not report them.
    flow_control_sent: int | None = None
    flow_control_recv: int | None = None
    recv_queue_avg: float | None = None
    cert_deps_distance: float | None = None
    # The rate this node's appliers committed the others' write sets (the cluster's commits
    # as commits_per_s counts them, less its own, wsrep_local_commits) over the intervals in
    # which it sent flow control [1/s]: it had fallen behind then, so its appliers were busy
    # and this is about what they keep up with (:func:`applied_while_sending`). None when
    # it sent none.
    applied_per_s_while_sending: float | None = None


def numeric_series(samples: Sequence[StatusSample], name: str) -> FloatArray:
    """The value of status variable ``name`` in every sample; NaN where absent or not a finite
    number (``abc``, ``1e999``, 5,000 digits)."""
    out = np.full(len(samples), np.nan)
    for index, sample in enumerate(samples):
        text = sample.values.get(name)
        if text is None or len(text) > _MAX_NUMBER_CHARS:
            continue
        with contextlib.suppress(ValueError):
            out[index] = float(text)
    out[~np.isfinite(out)] = np.nan  # "1e999", "inf": not a counter's value
    return out


def _restarted(elapsed_s: FloatArray, uptime_s: FloatArray) -> NDArray[np.bool_]:
    """Per interval: did the server restart in it? (Uptime unknown counts as no.)"""
    d_uptime = np.diff(uptime_s)
    d_wall = np.diff(elapsed_s)
    with np.errstate(invalid="ignore"):
        return np.asarray((d_uptime < 0) | (d_uptime < d_wall - _UPTIME_SLACK_S), dtype=bool)


def counter_deltas(elapsed_s: ArrayLike, counter: ArrayLike, uptime_s: ArrayLike) -> FloatArray:
    """Increase of a cumulative counter in each interval between consecutive samples.

    Parameters
    ----------
    elapsed_s : array of float, shape (n,)
        When each sample was read [s], increasing.
    counter : array of float, shape (n,) or (n, k)
        The counter's value in each sample [its unit]; NaN where it was missing. With two
        dimensions, each column is one counter (e.g. one table's row changes).
    uptime_s : array of float, shape (n,)
        ``Uptime`` in each sample [s]; NaN where unknown.

    Returns
    -------
    array of float, shape (n - 1,) or (n - 1, k)
        The increase in each interval [counter unit]; NaN where the interval cannot be used:
        the counter went down or is missing, the server restarted, or the interval is empty.

    >>> counter_deltas([0, 10, 20, 30], [100, 150, 20, 70], [500, 510, 4, 14]).tolist()
    [50.0, nan, 50.0]
    """
    t = np.asarray(elapsed_s, dtype=float)
    c = np.asarray(counter, dtype=float)
    u = np.asarray(uptime_s, dtype=float)
    delta = np.diff(c, axis=0)
    interval_bad = _restarted(t, u) | (np.diff(t) < _MIN_INTERVAL_S)
    if delta.ndim == 2:
        interval_bad = interval_bad[:, np.newaxis]
    with np.errstate(invalid="ignore"):
        bad = (delta < 0) | interval_bad
    return np.where(bad | np.isnan(delta), np.nan, delta)


def _spread(deltas: FloatArray, dt_s: FloatArray) -> Spread:
    """Time-weighted average and peak rate of per-interval deltas over durations ``dt_s``."""
    valid = ~np.isnan(deltas)
    if not valid.any():
        return Spread(None, None)
    avg = float(deltas[valid].sum() / dt_s[valid].sum())
    peak = float((deltas[valid] / dt_s[valid]).max())
    return Spread(avg, max(avg, peak))


def weighted_percentile(values: ArrayLike, weights: ArrayLike, q: float) -> float:
    """The ``q``-th percentile of ``values`` where each value counts ``weights`` times.

    The smallest value whose cumulative weight reaches ``q`` % of the total (the inverted
    CDF), so a percentile is always one of the values.

    >>> weighted_percentile([100, 1000], [99, 1], 50), weighted_percentile([100, 1000], [98, 2], 99)
    (100.0, 1000.0)
    """
    v = np.asarray(values, dtype=float)
    w = np.asarray(weights, dtype=float)
    order = np.argsort(v, kind="stable")
    cumulative = np.cumsum(w[order])
    index = np.searchsorted(cumulative, q / 100.0 * cumulative[-1], side="left")
    return float(v[order][min(int(index), v.size - 1)])


def parse_repl_latency(texts: Sequence[str | None]) -> FloatArray:
    """``wsrep_evs_repl_latency`` strings ``min/avg/max/stddev/samples`` [s] as rows.

    Returns an array of shape (n, 5); a row of NaN where the text is missing or malformed.

    >>> parse_repl_latency(["0.001/0.002/0.004/0.001/12", None])[:, 4].tolist()
    [12.0, nan]
    """
    out = np.full((len(texts), 5), np.nan)
    for index, text in enumerate(texts):
        parts = (text or "").split("/")
        if len(parts) == 5:
            with contextlib.suppress(ValueError):
                out[index] = [float(part) for part in parts]
    return out


def repl_latency_summary_ms(rows: ArrayLike) -> LatencySummary | None:
    """Combine ``wsrep_evs_repl_latency`` readings into min/avg/max over the run [ms].

    Galera accumulates these figures over one ``evs.stats_report_period`` (PT1M) and then
    starts again from zero, so consecutive readings of one period repeat and grow. A period
    ends where the sample count drops, the minimum rises or the maximum falls; the last
    reading of each period stands for it. Over the periods: the least minimum, the greatest
    maximum, and the average weighted by each period's sample count. Latency inside a
    period's unread tail (after the last reading before the reset) is not seen.

    Parameters
    ----------
    rows : array of float, shape (n, 5)
        Readings from :func:`parse_repl_latency` [s, except the count].
    """
    r = np.asarray(rows, dtype=float)
    r = r[~np.isnan(r).any(axis=1)]
    if r.shape[0] == 0:
        return None
    lo, _mean, hi, count = r[:, 0], r[:, 1], r[:, 2], r[:, 4]
    new_period_next = (count[1:] < count[:-1]) | (lo[1:] > lo[:-1]) | (hi[1:] < hi[:-1])
    last_of_period = np.flatnonzero(np.append(new_period_next, True))
    periods = r[last_of_period]
    periods = periods[periods[:, 4] > 0]
    if periods.shape[0] == 0:
        return None
    samples = periods[:, 4]
    return LatencySummary(
        min_ms=float(periods[:, 0].min() * 1e3),
        avg_ms=float((periods[:, 1] * samples).sum() / samples.sum() * 1e3),
        max_ms=float(periods[:, 2].max() * 1e3),
        samples=int(samples.sum()),
    )


def _committed(ordered: FloatArray, writesets: FloatArray, failed: FloatArray) -> FloatArray:
    """Write transactions committed per interval: ordered (or replicated plus received)
    write sets less this node's certification failures (a missing counter counts 0)."""
    base = ordered if ordered.size and (~np.isnan(ordered)).any() else writesets
    return np.maximum(base - np.nan_to_num(failed), 0.0)


def _last_int(series: FloatArray) -> int | None:
    known = series[~np.isnan(series)]
    return int(known[-1]) if known.size else None


def summarise_status(samples: Sequence[StatusSample]) -> StatusSummary:
    """Everything :class:`StatusSummary` holds, from the samples of one node.

    Commit rate: the advance of ``wsrep_last_committed`` less ``wsrep_local_cert_failures``.
    Every write set ordered in the cluster takes one global seqno, so the seqno's advance on
    any one node counts the whole cluster's write transactions, which is what
    ``workload.commits_per_s`` means, less those that then failed certification.
    ``wsrep_replicated + wsrep_received`` over-counts: Galera counts a write set as
    replicated before it is certified (galera/src/replicator_smm.cpp, ``replicate()``), so
    an autocommit statement that fails certification and is retried
    (``wsrep_retry_autocommit``) counts twice for one commit, and ``wsrep_received`` counts
    every action delivered to the node, commit cuts included
    (galera/src/gcs_action_source.cpp, ``process()``). On a three-node loopback cluster
    (tests/integration), two writers on one hot row committing 80.2/s read 82.1/s that way
    on the node without writers: 1.4/s certification failures and commit cuts. A node
    cannot see the certification failures of write sets other members sent, which stay in
    the count (each member's own are its ``wsrep_local_cert_failures``). Without
    ``wsrep_last_committed`` the sum is used, less this node's failures. ``Com_commit`` is
    not used: it counts COMMIT statements (read-only ones included, autocommit writes
    missed) and only on this node; ``wsrep_local_commits`` gives this node's share.

    Write-set size: per interval, bytes over write sets (replicated plus received), each
    interval's mean weighted by its number of write sets, so the percentiles are of write
    sets, within the limit that one interval contributes its mean only.
    """
    t = np.array([s.elapsed_s for s in samples], dtype=float)
    uptime = numeric_series(samples, "Uptime")

    def deltas(name: str) -> FloatArray:
        if len(samples) < 2:
            return np.zeros(0)
        return counter_deltas(t, numeric_series(samples, name), uptime)

    dt = np.diff(t) if len(samples) >= 2 else np.zeros(0)
    replicated, received = deltas("wsrep_replicated"), deltas("wsrep_received")
    replicated_b, received_b = deltas("wsrep_replicated_bytes"), deltas("wsrep_received_bytes")
    writesets = replicated + received
    commits = _committed(
        deltas("wsrep_last_committed"), writesets, deltas("wsrep_local_cert_failures")
    )
    cluster_bytes = replicated_b + received_b
    with np.errstate(invalid="ignore", divide="ignore"):
        per_writeset = cluster_bytes / writesets
    sized = ~np.isnan(per_writeset) & (writesets > 0)
    paused = deltas("wsrep_flow_control_paused_ns") / 1e9
    size = numeric_series(samples, "wsrep_cluster_size")
    texts = [s.values.get("wsrep_evs_repl_latency") for s in samples]
    restarts = int(_restarted(t, uptime).sum()) if len(samples) >= 2 else 0

    def mean_size(nbytes: FloatArray, count: FloatArray) -> float | None:
        keep = ~np.isnan(nbytes) & ~np.isnan(count)
        total = float(count[keep].sum())
        return float(nbytes[keep].sum()) / total if total > 0 else None

    return StatusSummary(
        samples=len(samples),
        intervals_used=int((~np.isnan(writesets)).sum()),
        intervals_dropped=int(np.isnan(writesets).sum()),
        restarts=restarts,
        observed_s=float(dt[~np.isnan(writesets)].sum()),
        commits_per_s=_spread(commits, dt),
        local_commits_per_s=_spread(deltas("wsrep_local_commits"), dt),
        replicated_bytes_per_s=_spread(replicated_b, dt),
        received_bytes_per_s=_spread(received_b, dt),
        cluster_bytes_per_s=_spread(cluster_bytes, dt),
        writeset_bytes_p50=(
            weighted_percentile(per_writeset[sized], writesets[sized], 50) if sized.any() else None
        ),
        writeset_bytes_p99=(
            weighted_percentile(per_writeset[sized], writesets[sized], 99) if sized.any() else None
        ),
        writeset_bytes_mean=mean_size(cluster_bytes, writesets),
        local_writeset_bytes_mean=mean_size(replicated_b, replicated),
        flow_control_paused=_clip_fraction(_spread(paused, dt)),
        cert_failures_per_s=_spread(deltas("wsrep_local_cert_failures"), dt),
        bf_aborts_per_s=_spread(deltas("wsrep_local_bf_aborts"), dt),
        repl_latency=repl_latency_summary_ms(parse_repl_latency(texts)),
        cluster_size_min=int(np.nanmin(size)) if (~np.isnan(size)).any() else None,
        cluster_size_max=int(np.nanmax(size)) if (~np.isnan(size)).any() else None,
        segment=_last_int(numeric_series(samples, "wsrep_gmcast_segment")),
        flow_control_sent=_total(deltas("wsrep_flow_control_sent")),
        flow_control_recv=_total(deltas("wsrep_flow_control_recv")),
        recv_queue_avg=_last(numeric_series(samples, "wsrep_local_recv_queue_avg")),
        cert_deps_distance=_last(numeric_series(samples, "wsrep_cert_deps_distance")),
        applied_per_s_while_sending=applied_while_sending(
            commits - np.nan_to_num(deltas("wsrep_local_commits")),
            deltas("wsrep_flow_control_sent"),
            dt,
        ),
    )


def applied_while_sending(
    committed: FloatArray, fc_sent: FloatArray, dt: FloatArray
) -> float | None:
    """What a node committed a second [1/s] over the intervals in which it sent flow control
    (``fc_sent`` above 0): Galera sends FC_STOP once the node's receive queue passes the
    upper limit (gcs/src/gcs.cpp, ``gcs_fc_stop_begin``), so in those intervals it had
    fallen behind and its appliers were busy; the rate it committed then is about the most
    they keep up with (at most: they may have idled for part of an interval). None when it
    sent none, or the counters are missing.

    >>> import numpy as np
    >>> applied_while_sending(np.array([900.0, 2000.0]), np.array([3.0, 0.0]), np.ones(2) * 10)
    90.0
    """
    if committed.size == 0 or fc_sent.size != committed.size:
        return None
    sending = (fc_sent > 0) & ~np.isnan(committed)
    seconds = float(dt[sending].sum())
    return float(committed[sending].sum()) / seconds if seconds > 0 else None


def _total(deltas: FloatArray) -> int | None:
    """A counter's increase over the intervals kept; None where none could be used."""
    kept = deltas[~np.isnan(deltas)]
    return int(kept.sum()) if kept.size else None


def _last(series: FloatArray) -> float | None:
    known = series[~np.isnan(series)]
    return float(known[-1]) if known.size else None


def _clip_fraction(spread: Spread) -> Spread:
    """Paused time per wall time is a fraction; sampling jitter can push it past 1."""

    def clip(value: float | None) -> float | None:
        return None if value is None else min(1.0, max(0.0, value))

    return Spread(clip(spread.avg), clip(spread.peak))
