"""advisor.model.membership by hand: how often a link's silence outlasts the EVS timers.

Defaults used below: evs.keepalive_period 1 s, evs.delay_margin 1 s (delayed list beyond
2 s), evs.suspect_timeout 5 s, evs.inactive_timeout 15 s, evs.install_timeout 7.5 s; one
keepalive a second is 86,400 a day; at most one silence a day beyond a timer is tolerated.
"""

from __future__ import annotations

import pytest

from advisor.model.membership import EvsTimers, silence_probability, tail_risk, timers_for
from advisor.model.provider_options import FLAVOR_DEFAULTS
from advisor.model.rtt import RttDistribution

DEFAULTS = EvsTimers.of(FLAVOR_DEFAULTS["mariadb"])


def risk(rtt, limit=1.0):
    return tail_risk(rtt, DEFAULTS, limit)


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


def test_the_timers_are_galeras_defaults():
    assert EvsTimers(1.0, 1.0, 5.0, 15.0, 7.5) == DEFAULTS
    assert DEFAULTS.delayed_s == 2.0


def test_a_clean_link_has_no_reasons_but_keeps_its_bound():
    # 1,000 samples of 10 ms: nothing beyond 2 s, yet the bound is 0.0029913 x 86,400
    # = 258.4 a day: 1,000 samples cannot rule out a silence every few minutes.
    got = risk(RttDistribution.from_samples([10.0] * 1000))
    assert got.reasons == ()
    assert got.delayed_per_day == 0.0
    assert got.delayed_bound_per_day == pytest.approx(258.45, abs=0.01)


@pytest.mark.parametrize(
    "rtt",
    [
        # amsterdam-metro's ams-1-ams-2 sockperf: median 0.5 ms, max 4.5 ms (9x), as percentiles
        RttDistribution.from_percentiles({"p50": 0.5, "p99": 1.2, "max": 4.5}),
        # the same tail as samples: 998 x 0.5 ms, 2 x 4.5 ms (p99.9 is 9x the median)
        RttDistribution.from_samples(samples((998, 0.5), (2, 4.5))),
        # a 14x tail of a sized tcp_rr measurement, 230 ms at most
        RttDistribution.from_percentiles({"p50": 16.0, "p99": 60.0, "max": 230.0}),
    ],
)
def test_a_tail_of_milliseconds_reaches_no_timer_whatever_its_ratio_or_form(rtt):
    # A silence a thousand times shorter than the shortest timer (1 s) is no membership
    # matter; what it does to commits is COMMIT-LATENCY-SLO's.
    assert risk(rtt).reasons == ()
    assert timers_for([rtt], DEFAULTS, 1.0) == DEFAULTS


def test_one_percent_loss_alone_reaches_no_timer():
    # RTO 200 + 10 = 210 ms doubling: ceil(log2(2000 / 210 + 1)) = 4 losses in a row to pass
    # 2 s: 0.01^4 = 1e-8 per keepalive, 0.000864 a day.
    got = risk(RttDistribution.from_samples([10.0] * 1000, loss=0.01))
    assert got.reasons == ()
    assert got.delayed_per_day == pytest.approx(0.000864)
    assert got.loss == 0.01


def test_heavy_loss_reaches_the_delayed_list_by_its_retransmission_timeouts():
    # 10 % loss: 0.1^4 = 1e-4 per keepalive beyond 2 s: 8.64 a day; beyond 5 s it takes
    # ceil(log2(5000 / 210 + 1)) = 5 losses: 1e-5, 0.864 a day, within the limit.
    got = risk(RttDistribution.from_samples([10.0] * 1000, loss=0.1))
    assert got.delayed_per_day == pytest.approx(8.64)
    assert got.suspect_per_day == pytest.approx(0.864)
    assert got.reasons == ("about 8.6 silences a day beyond keepalive_period + delay_margin (2 s)",)


def test_delayed_silences_and_round_trips_beyond_keepalive_are_reasons():
    # One 2.5 s round trip in 1,000: 0.001 x 86,400 = 86.4 silences a day beyond 2 s
    # (limit 1), and the longest round trip passes the 1 s keepalive.
    got = risk(RttDistribution.from_samples(samples((999, 10.0), (1, 2500.0))))
    assert got.delayed_per_day == pytest.approx(86.4)
    assert got.suspect_per_day == 0.0  # nothing beyond 5 s
    assert got.reasons == (
        "round trips up to 2,500 ms reach evs.keepalive_period (1 s)",
        "about 86 silences a day beyond keepalive_period + delay_margin (2 s)",
    )


def test_suspect_and_inactive_silences_count_beyond_their_timers():
    # One 20 s round trip in 1,000: beyond 2, 5 and 15 s alike: 86.4 a day each.
    got = risk(RttDistribution.from_samples(samples((999, 10.0), (1, 20_000.0))))
    assert got.suspect_per_day == pytest.approx(86.4)
    assert got.inactive_per_day == pytest.approx(86.4)
    assert got.reasons[-2:] == (
        "about 86 silences a day beyond evs.suspect_timeout (5 s)",
        "about 86 silences a day beyond evs.inactive_timeout (15 s)",
    )


def test_percentiles_and_samples_of_the_same_tail_get_the_same_reasons():
    # A maximum of 2.5 s with nothing else beyond 2 s: as percentiles p50 10, p99.9 10, max
    # 2,500 the top 0.1 % spreads linearly from 10 to 2,500 ms; above 2 s lies (2500 - 2000)
    # / (2500 - 10) x 0.001 of the probes: 2.008e-4 x 86,400 = 17.3 a day. Both forms reach
    # keepalive and the delayed list.
    given = risk(RttDistribution.from_percentiles({"p50": 10.0, "p99.9": 10.0, "max": 2500.0}))
    sampled = risk(RttDistribution.from_samples(samples((999, 10.0), (1, 2500.0))))
    assert given.delayed_per_day == pytest.approx(17.35, abs=0.01)
    assert [r.split(" silences")[0][:6] for r in given.reasons] == [
        r.split(" silences")[0][:6] for r in sampled.reasons
    ]
    assert len(given.reasons) == 2


def test_other_limits_give_the_same_figures_and_their_own_reasons():
    rtt = RttDistribution.from_samples(samples((999, 10.0), (1, 2500.0)))
    first = risk(rtt)
    other = risk(rtt, limit=1000.0)
    assert other.delayed_per_day == first.delayed_per_day == 86.4  # 1 in 1,000 beyond 2 s
    assert other.reasons == ("round trips up to 2,500 ms reach evs.keepalive_period (1 s)",)


# -- timers_for ------------------------------------------------------------------------------


def test_a_round_trip_of_seconds_lengthens_keepalive_and_what_the_range_checks_need():
    # Longest round trip 2.5 s: keepalive to the whole second above it, 3 s; the delayed list
    # then starts at 3 + 1 = 4 s, beyond every silence: delay_margin stays 1 s. Nothing
    # reaches 5 s, but Galera wants keepalive <= suspect / 3: suspect 9 s. inactive 15 s
    # still exceeds it, install 7.5 s lies within [3, 15]: both kept.
    rtt = RttDistribution.from_samples(samples((999, 10.0), (1, 2500.0)))
    assert timers_for([rtt], DEFAULTS, 1.0) == EvsTimers(3.0, 1.0, 9.0, 15.0, 7.5)


def test_silences_beyond_suspect_lengthen_it_and_inactive_follows():
    # A 7.5 s round trip in 1,000 (86.4 a day beyond 5 s): keepalive to 8 s, above it;
    # suspect beyond the silence would be 8 s, but keepalive <= suspect / 3 wants 24 s;
    # inactive 15 s no longer exceeds it: doubled, 48 s; install into [8, 48]: 8 s.
    rtt = RttDistribution.from_samples(samples((999, 10.0), (1, 7_500.0)))
    assert timers_for([rtt], DEFAULTS, 1.0) == EvsTimers(8.0, 1.0, 24.0, 48.0, 8.0)


def test_loss_bursts_lengthen_only_the_timers_they_reach():
    # 10 % loss: 8.64 silences a day beyond 2 s, 0.864 beyond 5 s. keepalive stays (no round
    # trip reaches 1 s); the delayed list moves to the first whole second where bursts are
    # rare enough: at 1 + 2 = 3 s it takes ceil(log2(3000 / 210 + 1)) = 4 losses, still 8.64
    # a day; at 1 + 3 = 4 s, 5 losses: 0.864. delay_margin 3 s; suspect, inactive kept.
    rtt = RttDistribution.from_samples([10.0] * 1000, loss=0.1)
    assert timers_for([rtt], DEFAULTS, 1.0) == EvsTimers(1.0, 3.0, 5.0, 15.0, 7.5)


def test_pinned_timers_stay_and_the_others_follow_the_range_checks():
    rtt = RttDistribution.from_samples(samples((999, 10.0), (1, 2500.0)))
    got = timers_for([rtt], DEFAULTS, 1.0, pinned=frozenset({"suspect_s"}))
    # suspect pinned at 5 s: keepalive may not pass 5 / 3 s, so it cannot clear the 2.5 s
    # round trip; it stays at the most the pin allows.
    assert got.suspect_s == 5.0
    assert got.keepalive_s == pytest.approx(5.0 / 3.0)
