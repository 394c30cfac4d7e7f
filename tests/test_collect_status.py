"""Status arithmetic on recorded SHOW GLOBAL STATUS samples, checked against hand computation."""

from __future__ import annotations

import numpy as np
import pytest

from advisor.collect.status import (
    StatusSample,
    counter_deltas,
    parse_repl_latency,
    repl_latency_summary_ms,
    summarise_status,
    weighted_percentile,
)


def _samples(columns: dict[str, list[object]], every_s: float = 10.0) -> list[StatusSample]:
    """Samples every ``every_s`` seconds; a None value leaves the variable out of that sample."""
    count = len(next(iter(columns.values())))
    return [
        StatusSample(i * every_s, {k: str(v[i]) for k, v in columns.items() if v[i] is not None})
        for i in range(count)
    ]


# Five samples 10 s apart, as SHOW GLOBAL STATUS prints them (strings). By hand:
#   write sets (replicated + received) per interval: 300, 600, 300, 200;
#   commits: those less this node's certification failures (0, 10, 0, 20): 300, 590, 300, 180
#   -> 30, 59, 30, 18 /s; average 1370 / 40 s = 34.25 /s, peak 59 /s.
#   bytes (replicated + received) per interval: 300000, 600000, 300000, 250000;
#   per write set 1000, 1000, 1000, 1250 with weights 300, 600, 300, 200:
#   p50 = 1000 (600 of 1400 below 1000 is < 50 %, 1200 reaches it), p99 = 1250.
#   flow control paused: 0, 5, 0, 2 s of 10 -> avg 7/40 = 0.175, peak 0.5.
#   certification failures: 0, 10, 0, 20 -> avg 0.75 /s, peak 2 /s.
RECORDED = {
    "Uptime": [1000, 1010, 1020, 1030, 1040],
    "wsrep_replicated": [500, 700, 1100, 1300, 1400],
    "wsrep_received": [1000, 1100, 1300, 1400, 1500],
    "wsrep_replicated_bytes": [
        10**6,
        10**6 + 100000,
        10**6 + 300000,
        10**6 + 400000,
        10**6 + 450000,
    ],
    "wsrep_received_bytes": [0, 200000, 600000, 800000, 1000000],
    "wsrep_local_commits": [400, 600, 1000, 1200, 1300],
    "wsrep_flow_control_paused_ns": [0, 0, 5 * 10**9, 5 * 10**9, 7 * 10**9],
    "wsrep_local_cert_failures": [0, 0, 10, 10, 30],
    "wsrep_local_bf_aborts": [5, 5, 5, 5, 5],
    "wsrep_cluster_size": [3, 3, 2, 3, 3],
    "wsrep_gmcast_segment": [1, 1, 1, 1, 1],
    "wsrep_evs_repl_latency": [
        "0.001/0.002/0.004/0.001/10",
        "0.0005/0.0025/0.006/0.001/30",
        "0.003/0.003/0.003/0/1",  # evs.stats_report_period passed: a new period
        "0.002/0.004/0.008/0.002/20",
        "0/0/0/0/0",  # and another, still empty
    ],
}


def test_commit_rate_average_is_time_weighted_and_peak_is_the_busiest_interval() -> None:
    summary = summarise_status(_samples(RECORDED))
    assert summary.commits_per_s.avg == pytest.approx(34.25)
    assert summary.commits_per_s.peak == pytest.approx(59.0)
    assert summary.local_commits_per_s.avg == pytest.approx(900 / 40)
    assert summary.intervals_used == 4
    assert summary.intervals_dropped == 0
    assert summary.restarts == 0


def test_commits_count_ordered_write_sets_less_certification_failures() -> None:
    # Issue 14: replicated + received read 101/s for 80/s written. Per interval, by hand:
    # seqnos 85, 82 (write sets ordered, failed ones included); replicated + received 90, 95
    # (retried autocommits twice, commit cuts); this node's failures 3, 1 -> 82, 81 commits.
    recorded = {
        "Uptime": [100, 101, 102],
        "wsrep_last_committed": [1000, 1085, 1167],
        "wsrep_replicated": [0, 45, 90],
        "wsrep_received": [0, 45, 95],
        "wsrep_local_cert_failures": [7, 10, 11],
    }
    summary = summarise_status(_samples(recorded, every_s=1.0))
    assert summary.commits_per_s.avg == pytest.approx(81.5)
    assert summary.commits_per_s.peak == pytest.approx(82.0)


def test_bytes_per_second_peaks_per_direction_and_for_the_whole_cluster() -> None:
    summary = summarise_status(_samples(RECORDED))
    assert summary.replicated_bytes_per_s.peak == pytest.approx(20000.0)
    assert summary.received_bytes_per_s.peak == pytest.approx(40000.0)
    assert summary.cluster_bytes_per_s.peak == pytest.approx(60000.0)
    assert summary.cluster_bytes_per_s.avg == pytest.approx(1450000 / 40)


def test_writeset_size_distribution_weights_each_interval_by_its_write_sets() -> None:
    summary = summarise_status(_samples(RECORDED))
    assert summary.writeset_bytes_p50 == 1000.0
    assert summary.writeset_bytes_p99 == 1250.0
    assert summary.writeset_bytes_mean == pytest.approx(1450000 / 1400)
    assert summary.local_writeset_bytes_mean == pytest.approx(450000 / 900)


def test_flow_control_paused_fraction_from_the_nanosecond_counter() -> None:
    summary = summarise_status(_samples(RECORDED))
    assert summary.flow_control_paused.avg == pytest.approx(0.175)
    assert summary.flow_control_paused.peak == pytest.approx(0.5)


def test_conflict_rates_cluster_size_and_segment() -> None:
    summary = summarise_status(_samples(RECORDED))
    assert summary.cert_failures_per_s.avg == pytest.approx(0.75)
    assert summary.cert_failures_per_s.peak == pytest.approx(2.0)
    assert (summary.bf_aborts_per_s.avg, summary.bf_aborts_per_s.peak) == (0.0, 0.0)
    assert (summary.cluster_size_min, summary.cluster_size_max) == (2, 3)
    assert summary.segment == 1


def test_repl_latency_combines_the_last_reading_of_each_stats_period() -> None:
    # Periods: readings 0-1 (last: 0.5/2.5/6 ms, 30 samples), readings 2-3 (last: 2/4/8 ms,
    # 20 samples), reading 4 empty. avg = (2.5*30 + 4*20) / 50 = 3.1 ms.
    latency = summarise_status(_samples(RECORDED)).repl_latency
    assert latency is not None
    assert latency.min_ms == pytest.approx(0.5)
    assert latency.max_ms == pytest.approx(8.0)
    assert latency.avg_ms == pytest.approx(3.1)
    assert latency.samples == 50


def test_repl_latency_new_period_detected_when_the_minimum_rises() -> None:
    # Same sample count growth, but the minimum rose: only a reset explains that.
    rows = parse_repl_latency(["0.001/0.001/0.001/0/5", "0.004/0.005/0.006/0.001/9"])
    latency = repl_latency_summary_ms(rows)
    assert latency is not None
    assert latency.samples == 14
    assert latency.min_ms == pytest.approx(1.0)
    assert latency.avg_ms == pytest.approx((1 * 5 + 5 * 9) / 14)


def test_repl_latency_unreadable_or_empty_gives_none() -> None:
    assert repl_latency_summary_ms(parse_repl_latency(["0/0/0/0/0", "garbage", None])) is None
    assert np.isnan(parse_repl_latency(["1/2/x/4/5"])).all()


def test_node_restart_mid_run_drops_the_interval_instead_of_a_negative_rate() -> None:
    # The node restarts between 10 s and 20 s: Uptime and every counter start again.
    restarted = {
        "Uptime": [5000, 5010, 3, 13, 23],
        "wsrep_replicated": [1000, 1200, 5, 205, 405],
        "wsrep_received": [0, 0, 0, 0, 0],
        "wsrep_replicated_bytes": [10**7, 10**7 + 200000, 5000, 205000, 405000],
        "wsrep_received_bytes": [0, 0, 0, 0, 0],
    }
    summary = summarise_status(_samples(restarted))
    assert summary.restarts == 1
    assert summary.intervals_dropped == 1
    assert summary.commits_per_s.avg == pytest.approx(600 / 30)
    assert summary.commits_per_s.peak == pytest.approx(20.0)
    assert summary.replicated_bytes_per_s.peak == pytest.approx(20000.0)


def test_restart_with_counters_that_grew_anyway_gives_no_huge_rate() -> None:
    # Uptime grew 5 s over 10 s of wall clock: the server restarted although no counter
    # went down; the jump to 10**6 must not become a rate.
    samples = _samples(
        {
            "Uptime": [100, 110, 115, 125],
            "wsrep_replicated": [10, 20, 10**6, 10**6 + 10],
            "wsrep_received": [0, 0, 0, 0],
        }
    )
    summary = summarise_status(samples)
    assert summary.restarts == 1
    assert summary.commits_per_s.peak == pytest.approx(1.0)


def test_counter_reset_without_restart_drops_only_that_counter() -> None:
    # FLUSH STATUS-like reset of the cert failure counter; the commit counters are intact.
    deltas = counter_deltas([0, 10, 20], [[7, 100], [9, 150], [1, 200]], [50, 60, 70])
    assert np.isnan(deltas[1, 0])
    assert deltas[:, 1].tolist() == [50.0, 50.0]
    assert deltas[0, 0] == 2.0


def test_a_lost_sample_leaves_a_gap_not_a_zero() -> None:
    samples = _samples(
        {
            "Uptime": [100, 110, None, 130],
            "wsrep_replicated": [0, 100, None, 300],
            "wsrep_received": [0, 0, None, 0],
        }
    )
    summary = summarise_status(samples)
    assert summary.intervals_used == 1
    assert summary.commits_per_s.avg == pytest.approx(10.0)


def test_counter_deltas_doctest_case_and_empty_interval() -> None:
    out = counter_deltas([0, 10, 20, 30], [100, 150, 20, 70], [500, 510, 4, 14])
    assert out[0] == 50.0 and np.isnan(out[1]) and out[2] == 50.0
    same_instant = counter_deltas([5, 5], [1, 2], [1, 1])
    assert np.isnan(same_instant).all()


def test_one_sample_gives_no_rates() -> None:
    summary = summarise_status(_samples({k: v[:1] for k, v in RECORDED.items()}))
    assert summary.samples == 1
    assert summary.commits_per_s.avg is None and summary.commits_per_s.peak is None
    assert summary.writeset_bytes_p50 is None
    assert summary.cluster_size_max == 3


def test_paused_fraction_never_exceeds_one() -> None:
    # Sampling jitter: 10.2 s of pause reported in a 10 s interval.
    samples = _samples({"Uptime": [1, 11], "wsrep_flow_control_paused_ns": [0, 10_200_000_000]})
    assert summarise_status(samples).flow_control_paused.peak == 1.0


def test_weighted_percentile() -> None:
    assert weighted_percentile([100, 1000], [99, 1], 50) == 100.0
    assert weighted_percentile([100, 1000], [98, 2], 99) == 1000.0
    assert weighted_percentile([3, 1, 2], [1, 1, 1], 50) == 2.0
