"""advisor.model.membership by hand: how often a link's silence outlasts the EVS timers.

Defaults used below: evs.keepalive_period 1 s, evs.delay_margin 1 s (delayed list beyond
2 s), evs.suspect_timeout 5 s; one keepalive a second is 86,400 a day.
"""

from __future__ import annotations

import pytest

from advisor.model.membership import TailLimits, silence_probability, tail_risk
from advisor.model.rtt import RttDistribution

LIMITS = TailLimits(max_loss=0.001, max_tail_ratio=5.0, max_delayed_per_day=1.0)


def risk(rtt):
    return tail_risk(rtt, keepalive_s=1.0, delay_margin_s=1.0, suspect_s=5.0, limits=LIMITS)


def samples(*runs):
    """``samples((999, 10.0), (1, 2500.0))``: 999 samples of 10 ms and one of 2.5 s."""
    return [value for count, value in runs for _ in range(count)]


# -- silence_probability ---------------------------------------------------------------------


def test_a_round_trip_beyond_the_silence_counts_as_its_share_of_samples():
    # 1 of 1,000 samples above 2,000 ms: 0.001.
    estimate, _ = silence_probability(
        RttDistribution.from_samples(samples((999, 10.0), (1, 2500.0))), 2.0
    )
    assert estimate == pytest.approx(0.001)


def test_clean_samples_still_carry_an_upper_bound_of_about_three_over_n():
    # None of 1,000 above 2 s: estimate 0, bound 1 - 0.05^(1/1000) = 0.0029913 (rule of three).
    estimate, bound = silence_probability(RttDistribution.from_samples([10.0] * 1000), 2.0)
    assert estimate == 0.0
    assert bound == pytest.approx(0.0029913, abs=1e-7)


def test_given_percentiles_have_no_bound_beyond_the_estimate():
    estimate, bound = silence_probability(
        RttDistribution.from_percentiles({"p50": 10.0, "max": 12.0}), 2.0
    )
    assert (estimate, bound) == (0.0, 0.0)


def test_losses_in_a_row_whose_timeouts_add_up_beyond_the_silence():
    # RTO = 200 + p50 10 = 210 ms, doubling: 210 + 420 + 840 = 1,470 ms < 2,000 ms, a fourth
    # loss makes 3,150 ms. ceil(log2(2000 / 210 + 1)) = ceil(3.40) = 4 losses: 0.1^4 = 1e-4.
    rtt = RttDistribution.from_percentiles({"p50": 10.0, "max": 12.0}, loss=0.1)
    estimate, bound = silence_probability(rtt, 2.0)
    assert estimate == pytest.approx(1e-4)
    assert bound == pytest.approx(1e-4)


def test_a_point_round_trip_beyond_the_silence_is_certain():
    assert silence_probability(RttDistribution.point(3000.0), 2.0) == (1.0, 1.0)


# -- tail_risk -------------------------------------------------------------------------------


def test_a_clean_link_has_no_reasons_but_keeps_its_bound():
    # 1,000 samples of 10 ms: nothing beyond 2 s, yet the bound is 0.0029913 x 86,400
    # = 258.4 a day: 1,000 samples cannot rule out a silence every few minutes.
    got = risk(RttDistribution.from_samples([10.0] * 1000))
    assert got.reasons == ()
    assert got.delayed_per_day == 0.0
    assert got.delayed_bound_per_day == pytest.approx(258.45, abs=0.01)


def test_loss_above_the_limit_is_a_reason():
    got = risk(RttDistribution.from_samples([10.0] * 1000, loss=0.01))
    assert got.reasons == ("loss 1.00%",)
    assert got.loss == 0.01


def test_a_tail_ratio_above_the_limit_is_a_reason():
    # 998 x 10 ms, 2 x 80 ms: p99.9 sits at position 0.999 x 999 = 998.0 -> 80 ms,
    # 80 / 10 = 8.0x the median, above 5x.
    got = risk(RttDistribution.from_samples(samples((998, 10.0), (2, 80.0))))
    assert got.rtt_p50_ms == 10.0
    assert got.rtt_top_ms == pytest.approx(80.0)
    assert got.reasons == ("p99.9 80.0 ms is 8.0x the median",)


def test_delayed_silences_and_round_trips_beyond_keepalive_are_reasons():
    # One 2.5 s round trip in 1,000: 0.001 x 86,400 = 86.4 silences a day beyond 2 s
    # (limit 1), and the longest round trip passes the 1 s keepalive. p99.9 = 10 + 0.001 x
    # 2,490 = 12.49 ms is only 1.25x the median: no tail-ratio reason.
    got = risk(RttDistribution.from_samples(samples((999, 10.0), (1, 2500.0))))
    assert got.delayed_per_day == pytest.approx(86.4)
    assert got.suspect_per_day == 0.0  # nothing beyond 5 s
    assert got.reasons == (
        "about 86 silences a day beyond keepalive + delay_margin (2 s)",
        "round trips beyond evs.keepalive_period",
    )


def test_suspect_silences_count_beyond_the_suspect_timeout():
    # One 6 s round trip in 1,000: beyond 5 s as well as beyond 2 s: 86.4 a day each.
    got = risk(RttDistribution.from_samples(samples((999, 10.0), (1, 6000.0))))
    assert got.suspect_per_day == pytest.approx(86.4)
    assert got.delayed_per_day == pytest.approx(86.4)


def test_given_percentiles_reach_keepalive_by_their_maximum_only():
    # max 1,200 ms >= 1,000 ms keepalive; nothing beyond 2 s; percentiles give no tail ratio
    # even though 1,200 / 10 = 120x.
    got = risk(RttDistribution.from_percentiles({"p50": 10.0, "max": 1200.0}))
    assert got.rtt_top_ms == 1200.0
    assert got.reasons == ("round trips beyond evs.keepalive_period",)


def test_other_limits_give_the_same_figures_and_their_own_reasons():
    rtt = RttDistribution.from_samples(samples((999, 10.0), (1, 2500.0)))
    first = risk(rtt)
    lenient = TailLimits(max_loss=0.001, max_tail_ratio=5.0, max_delayed_per_day=1000.0)
    other = tail_risk(rtt, keepalive_s=1.0, delay_margin_s=1.0, suspect_s=5.0, limits=lenient)
    assert other.delayed_per_day == first.delayed_per_day == 86.4  # 1 in 1,000 beyond 2 s
    assert other.reasons == ("round trips beyond evs.keepalive_period",)
    assert first.reasons == (
        "about 86 silences a day beyond keepalive + delay_margin (2 s)",
        "round trips beyond evs.keepalive_period",
    )
