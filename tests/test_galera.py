"""advisor.model.galera by hand: commit paths on tiny clusters, hot rows, windows, lag.

Commit latency is the longest path ``w -> k -> j -> w`` over members k, j (j = k allowed):
the first leg carries the write set (its round trip less the small return half), the other
legs are halves of small round trips. The local commit comes on top, added by the engine
once (``engine.clusters``), with the send windows' rounds (tests/test_pipeline.py).
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest

from advisor.model import galera
from advisor.model.galera import Cluster


def point_draws(rtt_ms, *, lan_ms=0.0, writeset_extra_ms=0.0, draws=4):
    """Constant draws: small RTT per pair (LAN inside a site), write set ``extra`` slower."""

    def pair_draws(a, b):
        small = lan_ms if a == b else rtt_ms[frozenset((a, b))]
        values = np.full(draws, small, dtype=np.float32)
        return values, values + np.float32(writeset_extra_ms)

    return pair_draws


def rtts(**pairs):
    """``ab=10`` -> {frozenset({"a", "b"}): 10}."""
    return {frozenset(name): ms for name, ms in pairs.items()}


def commit(members, writer="a", *, segments=False, **kwargs):
    draws = galera.commit_latency_draws(
        Cluster(members, segments=segments), [writer], point_draws(**kwargs)
    )
    return draws[writer]


# -- commit latency ------------------------------------------------------------------------


def test_two_nodes_commit_in_one_rtt():
    # w -> b: 10 - 10/2 = 5; b -> b: 0; b -> w: 5. Path 10.
    got = commit({"a": 1, "b": 1}, rtt_ms=rtts(ab=10.0))
    assert got == pytest.approx(np.full(4, 10.0))


def test_three_nodes_at_equal_rtt_commit_in_one_and_a_half_rtt():
    # w -> b: 5, b -> c: 5, c -> w: 5 = 15 (1.5 RTT; the lab: 16.36 at 10 ms with about
    # 1 ms of local commit).
    got = commit({"a": 1, "b": 1, "c": 1}, rtt_ms=rtts(ab=10.0, ac=10.0, bc=10.0))
    assert got == pytest.approx(np.full(4, 15.0))


def test_one_far_node_costs_about_one_far_rtt():
    # a-b 2, a-c 100, b-c 100. Longest: a -> b (1) -> c (50) -> a (50) = 101 (the lab:
    # 102.28 with the local commit); a -> c (50) -> b (50) -> a (1) is the same length.
    got = commit({"a": 1, "b": 1, "c": 1}, rtt_ms=rtts(ab=2.0, ac=100.0, bc=100.0))
    assert got == pytest.approx(np.full(4, 101.0))


def test_each_writer_waits_for_its_own_longest_path():
    # a-b 2, a-c 100, b-c 60.
    # Writer a: a -> c (50) -> c (0) -> a (50) = 100.
    # Writer b: b -> a (1) -> c (50) -> b (30) = 81.
    # Writer c: c -> a (50) -> a (0) -> c (50) = 100.
    cluster = Cluster({"a": 1, "b": 1, "c": 1}, segments=False)
    pairs = point_draws(rtt_ms=rtts(ab=2.0, ac=100.0, bc=60.0))
    got = galera.commit_latency_draws(cluster, ["a", "b", "c"], pairs)
    assert {site: float(d[0]) for site, d in got.items()} == pytest.approx(
        {"a": 100.0, "b": 81.0, "c": 100.0}
    )


def test_the_write_set_leg_pays_its_extra_time_once():
    # Two nodes, write set 4 ms slower than a small message: (14 - 5) + 0 + 5 = 14.
    got = commit({"a": 1, "b": 1}, rtt_ms=rtts(ab=10.0), writeset_extra_ms=4.0)
    assert got == pytest.approx(np.full(4, 14.0))


def test_a_lone_node_waits_for_nobody():
    got = galera.commit_latency_draws(Cluster({"a": 1}), ["a"], point_draws(rtt_ms={}))
    assert np.array_equal(got["a"], np.zeros(4))


def test_two_nodes_in_one_site_pay_one_lan_round_trip():
    # LAN 0.4: w -> k 0.2, k -> w 0.2 = 0.4.
    assert commit({"a": 2}, rtt_ms={}, lan_ms=0.4) == pytest.approx(np.full(4, 0.4))


def test_three_nodes_in_one_site_pay_one_and_a_half_lan_round_trips():
    # LAN 0.4: w -> k 0.2, k -> j 0.2, j -> w 0.2 = 0.6.
    assert commit({"a": 3}, rtt_ms={}, lan_ms=0.4) == pytest.approx(np.full(4, 0.6))


def test_sites_without_members_take_no_part():
    # Site c is listed with 0 members: the cluster is the two-node one, 10.
    got = commit({"a": 1, "b": 1, "c": 0}, rtt_ms=rtts(ab=10.0, ac=500.0, bc=500.0))
    assert got == pytest.approx(np.full(4, 10.0))


def test_a_remote_segment_adds_its_relay_hop_on_the_first_leg():
    # Segments on, relay into b given as 0.3 ms: 10 + 0.3 = 10.3; the writer's own
    # site never relays.
    cluster = Cluster({"a": 1, "b": 1}, segments=True)
    got = galera.commit_latency_draws(
        cluster, ["a"], point_draws(rtt_ms=rtts(ab=10.0)), relay_ms={"a": 5.0, "b": 0.3}
    )
    assert got["a"] == pytest.approx(np.full(4, 10.3))


def test_without_segments_the_relay_is_ignored():
    cluster = Cluster({"a": 1, "b": 1}, segments=False)
    got = galera.commit_latency_draws(
        cluster, ["a"], point_draws(rtt_ms=rtts(ab=10.0)), relay_ms={"a": 5.0, "b": 0.3}
    )
    assert got["a"] == pytest.approx(np.full(4, 10.0))


def test_the_default_relay_is_the_remote_sites_lan_median():
    # Remote segment b has 3 nodes, LAN 0.4 everywhere. Writer a (1 node):
    # a -> b: 10 - 5 + relay 0.4 = 5.4; b -> b': 0.2; b' -> a: 5. Path 10.6.
    got = commit({"a": 1, "b": 3}, segments=True, rtt_ms=rtts(ab=10.0), lan_ms=0.4)
    assert got == pytest.approx(np.full(4, 10.6))


@pytest.mark.xfail(
    strict=True,
    reason="a remote segment of one member (a garbd-only site) gets a relay hop too; "
    "GMCast::relay forwards only to *other* nodes of the segment, so there is none",
)
def test_a_remote_segment_of_one_member_adds_no_relay_hop():
    # a (1 node) and b (1 node), segments on, LAN 0.4: b receives the write set itself and
    # has nobody to forward it to, so the path is 10, not 10 + 0.4.
    got = commit({"a": 1, "b": 1}, segments=True, rtt_ms=rtts(ab=10.0), lan_ms=0.4)
    assert got == pytest.approx(np.full(4, 10.0))


def test_links_are_drawn_together_draw_by_draw():
    # Common random numbers: draw i uses link values of draw i on every path.
    # Two nodes with RTT draws 10, 20, 30: paths 10, 20, 30 (not a max of distributions).
    def pair_draws(a, b):
        values = np.array([10.0, 20.0, 30.0], dtype=np.float32)
        return (values, values) if a != b else (np.zeros(3, np.float32),) * 2

    got = galera.commit_latency_draws(Cluster({"a": 1, "b": 1}, segments=False), ["a"], pair_draws)
    assert got["a"] == pytest.approx([10.0, 20.0, 30.0])


def test_draws_beyond_one_block_are_all_computed():
    # 5,000 draws span three blocks of 2,048; draw i has RTT i, so path i.
    ramp = np.arange(5000, dtype=np.float32)

    def pair_draws(a, b):
        return (ramp, ramp) if a != b else (np.zeros(5000, np.float32),) * 2

    got = galera.commit_latency_draws(Cluster({"a": 1, "b": 1}, segments=False), ["a"], pair_draws)
    assert got["a"] == pytest.approx(ramp)


def test_uniforms_are_the_same_for_a_pair_in_either_order():
    first = galera.uniforms("paris", "frankfurt", 100)
    assert np.array_equal(first, galera.uniforms("frankfurt", "paris", 100))
    assert not np.array_equal(first, galera.uniforms("paris", "london", 100))
    assert first.min() >= 0.0 and first.max() < 1.0


# -- hot rows and conflicts ----------------------------------------------------------------


# -- writers in step (one row written at several sites) -------------------------------------


def in_step(members, writers, *, segments=False, **kwargs):
    return galera.in_step_commit_draws(
        Cluster(members, segments=segments), writers, point_draws(**kwargs)
    )


EQUAL_10 = rtts(ab=10.0, ac=10.0, bc=10.0)


def test_writers_in_step_on_every_member_commit_in_one_rtt():
    # Every member sends its own message at once: each has every covering message after 5
    # and reports it; a hears the reports at 10 (1 RTT, not 1.5; the lab's writer with
    # closed-loop peers: p50 22.0 ms at RTT 20, 42.3 at RTT 40, local commit included).
    got = in_step({"a": 1, "b": 1, "c": 1}, ["a", "b", "c"], rtt_ms=EQUAL_10)
    for writer in "abc":
        assert got[writer] == pytest.approx(np.full(4, 10.0))


def test_an_idle_member_keeps_the_lone_path():
    # c writes nothing: its completion leaves when a message reaches it (5), b reports c's
    # seqno at 10 and a hears it at 15: the lone writer's 1.5 RTT.
    got = in_step({"a": 1, "b": 1, "c": 1}, ["a", "b"], rtt_ms=EQUAL_10)
    assert got["a"] == pytest.approx(np.full(4, 15.0))
    assert got["a"] == pytest.approx(commit({"a": 1, "b": 1, "c": 1}, rtt_ms=EQUAL_10))


def test_a_far_writer_in_step_still_costs_its_round_trip():
    # a-b 2, a-c 100, b-c 100, writers a and c: c's own message reaches b at 50, b reports at
    # once and a hears at 51; a's write set reaches c at 50, c reports and a hears at 100;
    # b's completion (at 1) reaches c at 51, so c reports at 51 and a hears at 101: the far
    # node's round trip is physics, in step or not.
    got = in_step({"a": 1, "b": 1, "c": 1}, ["a", "c"], rtt_ms=rtts(ab=2.0, ac=100.0, bc=100.0))
    assert got["a"] == pytest.approx(np.full(4, 101.0))


def test_a_single_writer_site_gets_the_lone_path():
    got = in_step({"a": 1, "b": 1, "c": 1}, ["a"], rtt_ms=EQUAL_10)
    assert got["a"] == pytest.approx(np.full(4, 15.0))


def test_the_write_sets_own_round_trip_bounds_writers_in_step():
    # The write set's round trip is 10 ms longer: its leg a -> b takes 20 - 10/2 = 15, and b
    # reports back in 5: 20 (the peers' own messages, at 5, do not shorten the write set's
    # trip).
    got = in_step(
        {"a": 1, "b": 1, "c": 1}, ["a", "b", "c"], rtt_ms=EQUAL_10, writeset_extra_ms=10.0
    )
    assert got["a"] == pytest.approx(np.full(4, 20.0))


def test_an_idle_member_at_a_writer_site_costs_its_lan_hop():
    # a has two members a1 (the writer) and a2, LAN 1 ms; writers a, b, c in step. a2 has
    # a1's write set at 0.5 and reports its completion at once; it reaches b at 5.5, so b's
    # report leaves at 5.5 and reaches a1 at 10.5 (half a LAN round trip more than with one
    # member at a).
    got = in_step({"a": 2, "b": 1, "c": 1}, ["a", "b", "c"], rtt_ms=EQUAL_10, lan_ms=1.0)
    assert got["a"] == pytest.approx(np.full(4, 10.5))


def test_callaghan_bound_is_one_update_per_commit():
    # 1000 / 20 ms = 50/s; 1000 / 200 ms = 5/s (DOMAIN.md: 200 ms -> 5 a second).
    assert galera.callaghan_bound_per_s([20.0, 200.0]) == pytest.approx([50.0, 5.0])


def test_hot_row_queue_is_m_d_1():
    # rho = 40/s x 10 ms = 0.4; W = rho T / (2 (1 - rho)) = 0.4 x 10 / 1.2 = 3.333 ms.
    rho, wait = galera.hot_row_queue_ms(40.0, 10.0)
    assert rho == pytest.approx(0.4)
    assert wait == pytest.approx(10.0 / 3.0)


def test_hot_row_queue_is_unbounded_at_full_utilisation():
    # 100/s x 10 ms = 1.0
    assert galera.hot_row_queue_ms(100.0, 10.0) == (pytest.approx(1.0), math.inf)


def test_conflict_probability_is_poisson_within_the_window():
    # 50/s elsewhere over a 20 ms window: 1 - exp(-50 x 0.020) = 1 - e^-1 = 0.63212.
    assert galera.conflict_probability(50.0, 20.0) == pytest.approx(0.632121, abs=1e-6)


def test_conflict_rate_sums_each_writers_losses():
    # Rates 30 and 10 over 20 ms windows: each races the other's rate.
    # 30 x (1 - exp(-10 x 0.02)) + 10 x (1 - exp(-30 x 0.02))
    # = 30 x 0.181269 + 10 x 0.451188 = 5.43808 + 4.51188 = 9.94996
    assert galera.conflict_rate_per_s([30.0, 10.0], [20.0, 20.0]) == pytest.approx(9.94996, 1e-5)


def test_a_single_writer_never_conflicts():
    assert galera.conflict_rate_per_s([500.0], [100.0]) == 0.0


# Send windows and the pipeline of fragments: tests/test_pipeline.py.


def test_writers_in_step_match_the_paths_spelt_out_on_random_links():
    # Four one-member sites, random round trips per draw; writers a, b, c in step, d idle.
    # By hand: each member k's covering message leaves at 0 at a writer site other than w,
    # else when the first message covering the seqno reaches it (w's write set, or a
    # writer site's message); w waits for the longest leave(k) + k -> j -> w, and for its
    # write set's own w -> j -> w.
    rng = np.random.default_rng(7)
    names = "abcd"
    draws = 6
    small = {frozenset(p): rng.uniform(2, 80, draws) for p in combinations(names, 2)}
    extra = {key: rng.uniform(0, 20, draws) for key in small}

    def pair_draws(x, y):
        if x == y:
            zero = np.zeros(draws, dtype=np.float32)
            return zero, zero
        key = frozenset((x, y))
        return small[key].astype(np.float32), (small[key] + extra[key]).astype(np.float32)

    writers = ["a", "b", "c"]
    got = galera.in_step_commit_draws(
        Cluster(dict.fromkeys(names, 1), segments=False), writers, pair_draws
    )
    for w in writers:
        for d in range(draws):

            def half(x, y, d=d):
                return 0.0 if x == y else float(pair_draws(x, y)[0][d]) / 2

            def leg(k, w=w, d=d):
                return float(pair_draws(w, k)[1][d]) - half(w, k)

            others = [k for k in names if k != w]
            leave = {
                k: 0.0 if k in writers else min([leg(k)] + [half(p, k) for p in writers if p != w])
                for k in others
            }
            middle = max(leave[k] + half(k, j) + half(j, w) for k in others for j in others)
            own = max(leg(j) + half(j, w) for j in others)
            assert got[w][d] == pytest.approx(max(middle, own), rel=1e-5)
