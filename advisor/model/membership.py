"""Membership under a WAN's tail: how often a link's silence outlasts Galera's EVS timers.

Members send keepalives every ``evs.keepalive_period`` when idle; a peer silent longer than
``keepalive_period + evs.delay_margin`` goes on the delayed list, one silent for
``evs.suspect_timeout`` is suspected (Codership docs, Galera Parameters:
https://galeracluster.com/library/documentation/galera-parameters.html, and Auto Eviction:
https://galeracluster.com/library/documentation/auto-eviction.html). A message is late
either because the round trip itself is in the measured tail or because losses in a row
cost retransmission timeouts (Linux RTO >= 200 ms + RTT, doubling each time).

Glossary: ``*_s`` durations [s], ``*_ms`` [ms], ``*_per_day`` expected events per day at one
keepalive per period.
"""

from __future__ import annotations

__all__ = ["TailLimits", "TailRisk", "silence_probability", "tail_risk"]

from dataclasses import dataclass

import numpy as np

from advisor.model.rtt import RttDistribution


def silence_probability(
    rtt: RttDistribution, silence_s: float, *, rto_min_ms: float = 200.0
) -> tuple[float, float]:
    """Chance that one message takes longer than ``silence_s`` to arrive.

    Two ways: the RTT itself exceeds it (the measured tail), or losses in a row whose
    retransmission timeouts add up beyond it (Linux RTO >= 200 ms + RTT, doubling each
    time; losses taken as independent, so bursty loss makes this an underestimate).

    Parameters
    ----------
    rtt : RttDistribution
        The link's round trips [ms] and loss [fraction].
    silence_s : float
        The silence [s].
    rto_min_ms : float, default 200.0
        Linux's least retransmission timeout [ms].

    Returns
    -------
    tuple of float
        ``(estimate, bound)`` [fraction]. The bound is the 95 % upper confidence bound of
        the tail for samples (3/n with no exceedance: 1,000 clean samples cannot rule out
        0.3 %); for given percentiles it equals the estimate.
    """
    t_ms = silence_s * 1000.0
    tail = float(rtt.exceedance_probability(t_ms))
    bound = float(rtt.exceedance_upper_bound(t_ms)) if rtt.basis == "samples" else tail
    rto_ms = rto_min_ms + float(rtt.quantile(0.5))
    losses_needed = max(int(np.ceil(np.log2(t_ms / rto_ms + 1.0))), 1) if t_ms > 0 else 1
    by_loss = rtt.loss**losses_needed if rtt.loss > 0 else 0.0
    return min(1.0, max(tail, by_loss)), min(1.0, max(bound, by_loss))


@dataclass(frozen=True)
class TailLimits:
    """What a link may show before its tail threatens membership (RTT-TAIL-INSTABILITY)."""

    max_loss: float  # fraction of messages lost
    max_tail_ratio: float  # p99.9 over the median
    max_delayed_per_day: float  # silences beyond keepalive + delay_margin


@dataclass(frozen=True)
class TailRisk:
    """A link's tail against the EVS timers, and the reasons it breaks the limits."""

    rtt_p50_ms: float
    rtt_top_ms: float  # p99.9 for samples, the maximum otherwise
    loss: float
    delayed_per_day: float
    suspect_per_day: float
    delayed_bound_per_day: float  # 95 % upper bound of delayed_per_day
    reasons: tuple[str, ...]  # empty: within the limits


def tail_risk(
    rtt: RttDistribution,
    keepalive_s: float,
    delay_margin_s: float,
    suspect_s: float,
    limits: TailLimits,
    *,
    tail_ratio: bool | None = None,
) -> TailRisk:
    """How often a link goes silent past the EVS timers, and why that is too often.

    Parameters
    ----------
    rtt : RttDistribution
        The link's round trips [ms] and loss [fraction].
    keepalive_s : float
        ``evs.keepalive_period`` [s].
    delay_margin_s : float
        ``evs.delay_margin`` [s].
    suspect_s : float
        ``evs.suspect_timeout`` [s].
    limits : TailLimits
        What the link may show.
    tail_ratio : bool, optional
        Whether the p99.9 (or max) over the median is checked; default: for samples only.
        True for percentiles a measurement gave up to its max (a sized tcp_rr measurement),
        not a fit's interpolated ones.

    Returns
    -------
    TailRisk
        The figures [ms, fraction, events per day] and the reasons (empty: within limits).
    """
    delayed_s = keepalive_s + delay_margin_s
    p50 = float(rtt.quantile(0.5))
    top = float(rtt.quantile(0.999 if rtt.basis == "samples" else 1.0))
    per_day = 86400 / keepalive_s
    delayed, delayed_bound = silence_probability(rtt, delayed_s)
    suspect, _ = silence_probability(rtt, suspect_s)
    reasons = []
    if rtt.loss > limits.max_loss:
        reasons.append(f"loss {rtt.loss:.2%}")
    # The tail ratio needs a real tail: samples, or percentiles a measurement gave up to its max
    # (``tail_ratio=True``, a sized tcp_rr measurement); not a fit's interpolated percentiles.
    check_ratio = rtt.basis == "samples" if tail_ratio is None else tail_ratio
    if check_ratio and rtt.basis != "point" and p50 > 0 and top / p50 > limits.max_tail_ratio:
        level = "p99.9" if rtt.basis == "samples" else "max"
        reasons.append(f"{level} {top:.1f} ms is {top / p50:.1f}x the median")
    if delayed * per_day > limits.max_delayed_per_day:
        reasons.append(
            f"about {delayed * per_day:.2g} silences a day beyond "
            f"keepalive + delay_margin ({delayed_s:g} s)"
        )
    if float(rtt.quantile(1.0)) >= keepalive_s * 1000:
        reasons.append("round trips beyond evs.keepalive_period")
    return TailRisk(
        p50,
        top,
        rtt.loss,
        delayed * per_day,
        suspect * per_day,
        delayed_bound * per_day,
        tuple(reasons),
    )
