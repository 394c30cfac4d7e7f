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

__all__ = [
    "LONGEST_TIMER_S",
    "EvsTimers",
    "TailRisk",
    "format_seconds",
    "silence_probability",
    "silences_per_day",
    "tail_risk",
    "timers_for",
]

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from advisor.model.rtt import RttDistribution
from advisor.model.tcp import RTO_MIN_MS


def silence_probability(
    rtt: RttDistribution, silence_s: float, *, rto_min_ms: float = RTO_MIN_MS
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
    rto_min_ms : float, default :data:`advisor.model.tcp.RTO_MIN_MS`
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
class EvsTimers:
    """The EVS timers a link's silences are judged against [s] (Galera's names, in seconds)."""

    keepalive_s: float  # evs.keepalive_period
    delay_margin_s: float  # evs.delay_margin: delayed list beyond keepalive + this
    suspect_s: float  # evs.suspect_timeout
    inactive_s: float  # evs.inactive_timeout
    install_s: float  # evs.install_timeout

    @classmethod
    def of(cls, options: Mapping[str, object]) -> EvsTimers:
        """The timers among effective provider options.

        Parameters
        ----------
        options : mapping of str to value
            Effective provider options (:func:`~advisor.model.provider_options.effective_options`),
            durations in seconds [s].

        Returns
        -------
        EvsTimers
            The five timers [s].
        """
        return cls(
            *(
                float(options[key])  # type: ignore[arg-type]
                for key in (
                    "evs.keepalive_period",
                    "evs.delay_margin",
                    "evs.suspect_timeout",
                    "evs.inactive_timeout",
                    "evs.install_timeout",
                )
            )
        )

    @property
    def delayed_s(self) -> float:
        """The silence that puts a peer on the delayed list [s]."""
        return self.keepalive_s + self.delay_margin_s


@dataclass(frozen=True)
class TailRisk:
    """A link's silences against the EVS timers, and the timers they reach."""

    rtt_p50_ms: float
    rtt_top_ms: float  # the longest round trip the distribution holds (max, highest percentile)
    loss: float
    delayed_per_day: float  # silences beyond keepalive_period + delay_margin
    suspect_per_day: float  # beyond suspect_timeout
    inactive_per_day: float  # beyond inactive_timeout
    delayed_bound_per_day: float  # 95 % upper bound of delayed_per_day
    reasons: tuple[str, ...]  # the timers reached; empty: none


def silences_per_day(rtt: RttDistribution, silence_s: float, keepalive_s: float) -> float:
    """Expected silences a day longer than ``silence_s``, at one keepalive per period.

    Parameters
    ----------
    rtt : RttDistribution
        The link's round trips [ms] and loss [fraction].
    silence_s : float
        The silence [s].
    keepalive_s : float
        ``evs.keepalive_period`` [s]: one message per period on an idle link.

    Returns
    -------
    float
        Silences a day [events per day].
    """
    return silence_probability(rtt, silence_s)[0] * 86400.0 / keepalive_s


def tail_risk(rtt: RttDistribution, timers: EvsTimers, max_per_day: float) -> TailRisk:
    """How often a link goes silent past each EVS timer, and which timers it reaches.

    A silence is a round trip in the measured tail (in absolute milliseconds, whatever form
    the distribution was given in: samples, a ping log, percentiles) or losses in a row whose
    retransmission timeouts add up (:func:`silence_probability`). A timer is reached when the
    longest round trip is at least ``evs.keepalive_period`` (Codership's WAN advice: every
    period must exceed the highest RTT), or when silences beyond it come more than
    ``max_per_day`` times a day. A tail of milliseconds reaches none of them: how it slows
    commits is the commit latency's business.

    Parameters
    ----------
    rtt : RttDistribution
        The link's round trips [ms] and loss [fraction].
    timers : EvsTimers
        The EVS timers [s].
    max_per_day : float
        Silences a day beyond a timer that are tolerated [events per day].

    Returns
    -------
    TailRisk
        The figures [ms, fraction, events per day] and the reasons (empty: no timer reached).
    """
    per_day = 86400.0 / timers.keepalive_s
    top = float(rtt.quantile(1.0))
    delayed, delayed_bound = silence_probability(rtt, timers.delayed_s)
    suspect = silences_per_day(rtt, timers.suspect_s, timers.keepalive_s)
    inactive = silences_per_day(rtt, timers.inactive_s, timers.keepalive_s)
    reasons = []
    if top >= timers.keepalive_s * 1000.0:
        reasons.append(
            f"round trips up to {top:,.0f} ms reach evs.keepalive_period "
            f"({format_seconds(timers.keepalive_s)})"
        )
    reached = (
        (
            delayed * per_day,
            f"keepalive_period + delay_margin ({format_seconds(timers.delayed_s)})",
        ),
        (suspect, f"evs.suspect_timeout ({format_seconds(timers.suspect_s)})"),
        (inactive, f"evs.inactive_timeout ({format_seconds(timers.inactive_s)})"),
    )
    for count, timer in reached:
        if count > max_per_day:
            shown = f"{count:,.0f}" if count >= 10 else f"{count:.2g}"
            reasons.append(f"about {shown} silences a day beyond {timer}")
    return TailRisk(
        float(rtt.quantile(0.5)),
        top,
        rtt.loss,
        delayed * per_day,
        suspect,
        inactive,
        delayed_bound * per_day,
        tuple(reasons),
    )


# The longest timer this model advises: Codership's WAN recipe rides out outages of about
# 30 s with inactive_timeout and install_timeout PT1M (KB "WAN Replication"); a link silent
# longer than that more than the tolerated times a day needs fixing, not timers.
LONGEST_TIMER_S = 60.0


def timers_for(
    rtts: Sequence[RttDistribution],
    timers: EvsTimers,
    max_per_day: float,
    *,
    pinned: frozenset[str] = frozenset(),
) -> EvsTimers:
    """The EVS timers that ride out these links' silences, each lengthened only when a
    silence reaches it (or Galera's range checks require it after another one moved).

    ``keepalive_period`` goes to the whole second above the longest round trip when that
    reaches it; ``delay_margin``, ``suspect_timeout`` and ``inactive_timeout`` each to the
    least whole second beyond which silences come at most ``max_per_day`` times a day
    (:func:`silences_per_day`), never beyond :data:`LONGEST_TIMER_S`. Then Galera's range
    checks: keepalive <= suspect / 3, inactive > suspect (doubled when not),
    install within [keepalive, inactive].

    Parameters
    ----------
    rtts : sequence of RttDistribution
        Every distribution measured on the links of one cluster [ms].
    timers : EvsTimers
        The timers in force [s].
    max_per_day : float
        Silences a day beyond a timer that are tolerated [events per day].
    pinned : frozenset of str, optional
        Fields of :class:`EvsTimers` kept as they are (the user's own values); the others
        still follow the range checks against them.

    Returns
    -------
    EvsTimers
        The timers to apply [s]; equal to ``timers`` when no silence reaches any.
    """

    def rate(silence_s: float) -> float:
        return max(
            (silences_per_day(rtt, silence_s, timers.keepalive_s) for rtt in rtts), default=0.0
        )

    def beyond(current_s: float, start_s: float = 0.0) -> float:
        """The least whole second at or above ``current_s`` whose rate is tolerated."""
        if rate(start_s + current_s) <= max_per_day:
            return current_s
        seconds = math.floor(current_s) + 1.0
        while seconds < LONGEST_TIMER_S and rate(start_s + seconds) > max_per_day:
            seconds += 1.0
        return seconds

    def free(name: str, wanted: float) -> float:
        return float(getattr(timers, name)) if name in pinned else wanted

    top_ms = max((float(rtt.quantile(1.0)) for rtt in rtts), default=0.0)
    keepalive = timers.keepalive_s
    if top_ms >= keepalive * 1000.0:
        keepalive = free("keepalive_s", math.floor(top_ms / 1000.0) + 1.0)
    margin = free("delay_margin_s", beyond(timers.delay_margin_s, keepalive))
    suspect = free("suspect_s", max(beyond(timers.suspect_s), 3.0 * keepalive))
    keepalive = min(keepalive, max(suspect / 3.0, timers.keepalive_s))
    inactive = free("inactive_s", beyond(timers.inactive_s))
    if inactive <= suspect:
        inactive = free("inactive_s", 2.0 * suspect)
    install = free("install_s", min(max(timers.install_s, keepalive), inactive))
    return EvsTimers(keepalive, margin, suspect, inactive, install)


def format_seconds(seconds: float) -> str:
    """A timer in the findings' words.

    Parameters
    ----------
    seconds : float
        The timer [s].

    Returns
    -------
    str
        ``2 s``, ``0.5 s``.

    >>> format_seconds(2.0), format_seconds(0.5)
    ('2 s', '0.5 s')
    """
    return f"{seconds:g} s"
