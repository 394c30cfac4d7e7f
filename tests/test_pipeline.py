"""Galera's replication pipeline (advisor/model/pipeline.py): fragments, windows, rounds,
batching, and the closed loop of clients, with the arithmetic by hand and the lab's numbers.

The mechanism's sources are in the module docstring (codership/galera gcs_core.cpp,
gcs_act_proto.cpp, asio_protonet.cpp, gmcast.hpp, evs_proto.cpp).
"""

from __future__ import annotations

import numpy as np
import pytest

from advisor.model import pipeline


def test_a_fragment_carries_the_gcomm_mtu_less_the_headers():
    # (1 << 15) - (4 + 16) = 32748 bytes per gcomm message, less gcs's 20-byte header.
    assert pipeline.GCOMM_MTU_BYTES == 32_748
    assert pipeline.fragment_bytes() == 32_728
    # gcs.max_packet_size below the MTU is what binds.
    assert pipeline.fragment_bytes(8_192) == 8_172


@pytest.mark.parametrize(
    ("size_bytes", "fragments"),
    # 0 bytes still one message; 32728 fits one; 32729 needs two; the lab's write sets:
    # 197983 / 32728 = 6.05 -> 7; 788726 / 32728 = 24.1 -> 25; 3103172 / 32728 = 94.8 -> 95.
    [(0, 1), (32_728, 1), (32_729, 2), (197_983, 7), (788_726, 25), (3_103_172, 95)],
)
def test_fragment_count(size_bytes, fragments):
    assert int(pipeline.fragment_count(size_bytes, 32_728)) == fragments


@pytest.mark.parametrize(
    ("fragments", "rounds", "waits_for_reply"),
    # Windows user 2, send 4. 1-2 leave at once; 3-4 at the first reply; 5 one path after 1;
    # 7: 7 - 4 = 3 > 2 -> one path and a reply; 8: 4 > 2; 9: two paths, the 9th alone.
    [(1, 0, False), (2, 0, False), (3, 0, True), (4, 0, True), (5, 1, False), (7, 1, True),
     (8, 1, True), (9, 2, False), (95, 23, True)],
)  # fmt: skip
def test_send_rounds(fragments, rounds, waits_for_reply):
    got_rounds, got_reply = pipeline.send_rounds([fragments], 2, 4)
    assert (int(got_rounds[0]), bool(got_reply[0])) == (rounds, waits_for_reply)


def test_user_window_is_capped_by_the_send_window():
    # Galera refuses user_send_window > send_window at start-up; the model caps it: with 8/4
    # the 4 fragments of one round leave at once, the 5th one path later.
    rounds, reply = pipeline.send_rounds([4, 5], 8, 4)
    assert rounds.tolist() == [0, 1] and reply.tolist() == [False, False]


def test_pipeline_commit_matches_the_lab_at_rtt_20():
    # Path 1.5 x 20 = 30 ms, first reply 20 ms, default windows 4/2 (MariaDB):
    # 7 fragments: 2 paths + a reply = 80 ms; with the lab's local cost of a 198 KB write set
    # (lab-runs.yaml large-writeset-local-rtt0: 11.17 ms) 91.2 ms against 89.95 and 100.9
    # measured; 97 fragments (3.16 MB): 25 paths = 750 ms, + 148.9 local = 899 against 884.
    got = pipeline.pipeline_commit_ms([7, 97], 2, 4, 30.0, 20.0)
    assert got.tolist() == [80.0, 750.0]


def test_wide_windows_send_a_large_write_set_in_one_round():
    # 97 fragments under windows 512/256: all leave at once, one path.
    assert pipeline.pipeline_commit_ms([97], 256, 512, 30.0, 20.0).tolist() == [30.0]


def test_burst_is_a_window_of_fragments_at_most():
    assert pipeline.burst_bytes([1_000, 200_000], 32_728, 4).tolist() == [1_000.0, 130_912.0]


@pytest.mark.parametrize(
    ("size_bytes", "per_message"),
    # 32728 // 1650 = 19 small write sets aggregate into one message; 32728 // 32728 = 1;
    # 100,000 bytes span ceil(100000 / 32728) = 4 messages: 1/4 write set per message.
    [(1_650, 19.0), (32_728, 1.0), (100_000, 0.25)],
)
def test_writesets_per_message(size_bytes, per_message):
    assert pipeline.writesets_per_message(size_bytes, 32_728) == per_message


def test_window_limit_counts_aggregated_write_sets():
    # send_window 4 per 30 ms path, 19 write sets per message: 4 / 0.030 x 19 = 2533.3/s;
    # the lab's 16 threads reached 303.8 tps, above the 133.3/s one per message would allow.
    assert pipeline.window_limit_commits_per_s(4, 30.0, 19.0) == pytest.approx(2533.33, abs=0.01)
    assert pipeline.window_limit_commits_per_s(4, 30.0, 1.0) < 303.8


@pytest.mark.parametrize(
    ("rate", "path_ms", "per_message", "floor", "expected"),
    [
        (4000.0, 7.0, 1.0, 16, 32),  # 4000 x 0.007 = 28 messages in flight -> 32
        (6400.0, 10.0, 1.0, 16, 64),  # 64 exactly: no rounding up
        (4000.0, 7.0, 19.0, 16, 16),  # 28 / 19 = 1.5 messages -> 2, below the floor of 16
        (1000.0, 10.0, 0.25, 4, 64),  # 10 commits x 4 messages each = 40 -> 64
        (10.0, 10.0, 1.0, 1, 1),  # 0.1 in flight -> at least one message
    ],
)
def test_send_window_for_rounds_up_to_a_power_of_two(rate, path_ms, per_message, floor, expected):
    assert pipeline.send_window_for(rate, path_ms, per_message, floor) == expected


def test_send_window_for_carries_the_rate_it_was_asked_for():
    window = pipeline.send_window_for(4000.0, 7.0, 1.0, 1)
    assert pipeline.window_limit_commits_per_s(window, 7.0, 1.0) >= 4000.0
    assert pipeline.window_limit_commits_per_s(window // 2, 7.0, 1.0) < 4000.0


def test_rtt_at_bytes_is_linear_between_anchors_and_never_below_the_small_rtt():
    # Anchors 2,000 B -> 10.5 ms and 66,000 B -> 12.5 ms: 2 ms per 64,000 B.
    got = pipeline.rtt_at_bytes([0, 34_000, 130_000], 2_000, 10.5, 66_000, 12.5, 10.45)
    assert got.tolist() == pytest.approx([10.45, 11.5, 14.5])


# -- the closed loop -----------------------------------------------------------------------


def _loop(clients, rtt_ms, fragments=1, **kw):
    args = {"user_window": 2, "send_window": 4, "writesets_per_message": 19.0}
    args.update(kw)
    return pipeline.closed_loop(
        clients, 2.7, 1, [1.5 * rtt_ms], [rtt_ms], [fragments], local_commit_ms=1.0, **args
    )


def test_one_client_commits_in_one_path_plus_local_work():
    run = _loop(1, 20.0)
    assert np.median(run.commit_ms) == pytest.approx(31.0)


def test_one_client_with_a_large_write_set_takes_the_pipeline_rounds():
    # 7 fragments: 80 ms of pipeline + 1 ms local, as pipeline_commit_ms says.
    run = _loop(1, 20.0, fragments=7)
    assert np.median(run.commit_ms) == pytest.approx(81.0)


def test_four_clients_wait_for_the_user_window_as_the_lab_shows():
    # lab-galera.yaml sysbench-one-node-rtt20-rtt30: 96.7 tps at RTT 20 and 65.9 at RTT 30
    # with 4 threads (about 2 RTT per transaction, more than a lone commit's 1.5): the third
    # and fourth write sets find two messages in flight and queue for the next arrival.
    at_20, at_30 = _loop(4, 20.0), _loop(4, 30.0)
    assert at_20.commits_per_s == pytest.approx(96.7, rel=0.05)
    assert at_30.commits_per_s == pytest.approx(65.9, rel=0.05)
    assert np.mean(at_20.commit_ms) > 31.0 * 1.05  # they waited beyond a lone commit


def test_batching_lets_many_clients_share_a_window_slot():
    # 16 clients at RTT 20 ms: far above the 4 / 30 ms = 133/s one write set per message allows.
    batched = _loop(16, 20.0)
    one_per_message = _loop(16, 20.0, writesets_per_message=1.0)
    assert batched.commits_per_s > 250.0
    assert one_per_message.commits_per_s == pytest.approx(4 / 0.030, rel=0.05)


def test_wider_windows_remove_the_wait():
    wide = _loop(4, 20.0, user_window=256, send_window=512)
    assert np.median(wide.commit_ms) == pytest.approx(31.0)


def test_the_closed_loop_is_deterministic():
    assert _loop(4, 20.0).commits_per_s == _loop(4, 20.0).commits_per_s


def test_huge_write_sets_take_the_asymptotic_bounds_not_minutes_of_events():
    # A 1.5 GB write set is 48,000 fragments: 8,000 commits of it would be 384 M events (the
    # property test hung on it). Each write set fills the window alone: the send window's
    # messages per commit carry 4 / 48,000 write sets per 31 ms (path and local work).
    fragments = 48_000
    run = _loop(800, 20.0, fragments=fragments, writesets_per_message=1 / fragments)
    assert run.commits_per_s == pytest.approx(4 / 0.031 / fragments, rel=1e-9)
