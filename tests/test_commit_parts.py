"""What a commit really costs the application, in the latency the verdict uses (issue 21):
the round trip to ProxySQL's one writer, the retransmissions of lost messages, and the wait
for a hot row's lock. Each through ``recommend()`` as a user calls it, with numbers by hand."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from advisor.analysis import analyse
from advisor.inputs.loading import parse_topology
from advisor.model import galera
from advisor.recommendation import recommend


def topology(rtt_ms: float, *, loss: float = 0.0, slo: str = "", rows: str = "") -> str:
    """Three one-node sites at ``rtt_ms`` from each other (point RTTs), a and b writing."""
    measured = f"{{method: icmp, percentiles_ms: {{p50: {rtt_ms}, p99: {rtt_ms}}}, loss: {loss}}}"
    links = "".join(
        f"  - {{sites: [{x}, {y}], measurements: [{measured}]}}\n"
        for x, y in (("a", "b"), ("a", "c"), ("b", "c"))
    )
    return (
        textwrap.dedent(
            f"""
        name: parts
        requirements: {{survive: node{slo}}}
        sites:
          - {{name: a, nodes: 1}}
          - {{name: b, nodes: 1}}
          - {{name: c, nodes: 1, writes: false}}
        """
        )
        + "links:\n"
        + links
        + textwrap.dedent(
            f"""
        workload:
          writeset_bytes: {{p50: 1000, p99: 1000}}
          hot_rows: [{rows}]
        """
        )
    )


def single_cluster(text: str):
    analysis = analyse(parse_topology(text))
    return analysis, analysis.option("single_cluster")


def test_a_writing_site_away_from_the_single_writer_pays_the_round_trip_to_it():
    # ProxySQL pins one writer per cluster: a (the first writing site). A commit at a is the
    # 1.5 RTT path (30 ms at RTT 20) plus the local commit; at b it is the same commit plus
    # the 20 ms round trip of b's statement to a.
    _, option = single_cluster(topology(20.0))
    (cluster,) = option.clusters
    assert cluster.writer_site == "a"
    at_a, at_b = cluster.commit_percentiles("a"), cluster.commit_percentiles("b")
    assert at_a["p50"] == pytest.approx(30.0 + galera.LOCAL_COMMIT_MS, abs=0.5)
    assert at_b["p50"] == pytest.approx(at_a["p50"] + 20.0, abs=0.01)
    assert option.commit_latency_ms["p50"] == pytest.approx(at_b["p50"])


def test_one_percent_loss_puts_a_retransmission_timeout_in_the_commit_p99():
    # 1 % round-trip loss is 0.5 % one way. The writer a's write set to b and to c each ends
    # in a lone segment (about 1 % of commits wait for an RTO of 200 ms + RTT, as the lab
    # measured), and a client at b adds its statement and the answer, each lone, on link a-b:
    # about 2 % of b's commits wait, so the option's p99 (b's) is past 200 ms.
    result = recommend(parse_topology(topology(2.0, loss=0.01)))
    single = next(o for o in result.options if o.architecture == "single_cluster")
    assert single.commit_latency_ms["p50"] < 10.0
    assert single.commit_latency_ms["p99"] > 200.0
    clean = recommend(parse_topology(topology(2.0)))
    single_clean = next(o for o in clean.options if o.architecture == "single_cluster")
    assert single_clean.commit_latency_ms["p99"] < 10.0


def test_the_share_of_commits_held_by_a_loss_is_one_lone_message_per_link_of_the_writer():
    _, option = single_cluster(topology(2.0, loss=0.01))
    (cluster,) = option.clusters
    q = 1 - np.sqrt(0.99)  # one way
    # At the writer a: the write set's one segment to b and to c is lone, 1 - (1 - q) ** 2 =
    # 1.0 % (the lab, case loss-one-writer: 0.88 % at q = 0.5 %, where counting every
    # message exchanged, 8 of them, said 3.9 %). Link b-c costs a's commits no timeout.
    held_a = np.mean(cluster.commit_ms["a"] > 100.0)
    assert held_a == pytest.approx(1 - (1 - q) ** 2, abs=0.002)
    # At b: the same, plus the statement to a and its answer, two lone messages on a-b.
    held_b = np.mean(cluster.commit_ms["b"] > 100.0)
    assert held_b == pytest.approx(1 - (1 - q) ** 4, abs=0.003)


def test_a_lost_segment_with_others_behind_it_costs_one_round_trip_not_a_timeout():
    # A 100 KB write set is 70 segments of 1448 bytes: 69 of them have another behind them.
    # At 1 % round-trip loss, 1 - (1 - q) ** 69 = 29 % of commits lose one of those and wait
    # one more RTT (20 ms); only the last segment's loss (q per link) waits for an RTO.
    text = topology(20.0, loss=0.01).replace("p50: 1000, p99: 1000", "p50: 102400, p99: 102400")
    clean = topology(20.0).replace("p50: 1000, p99: 1000", "p50: 102400, p99: 102400")
    _, lossy_option = single_cluster(text)
    _, clean_option = single_cluster(clean)
    extra = lossy_option.clusters[0].commit_ms["a"] - clean_option.clusters[0].commit_ms["a"]
    q = 1 - np.sqrt(0.99)
    one_link = 1 - (1 - q) ** 69
    either_link = 1 - (1 - one_link) ** 2
    slowed_by_a_round_trip = np.mean((extra > 15.0) & (extra < 100.0))
    assert slowed_by_a_round_trip == pytest.approx(either_link * (1 - q) ** 2, abs=0.03)
    assert np.mean(extra > 200.0) == pytest.approx(1 - (1 - q) ** 2, abs=0.004)


def test_a_hot_row_at_97_percent_of_its_bound_breaks_a_150_ms_slo():
    # The row's lock is held for one commit at the writer (about 31 ms at RTT 20): its bound is
    # about 32 updates/s. At 97 % of it the mean wait for the lock is, as an M/D/1 queue,
    # 0.97 x 31 / (2 x 0.03), about 0.5 s: far past 150 ms, though every commit alone is fast.
    _, option = single_cluster(topology(20.0))
    hold_ms = float(np.mean(option.clusters[0].commit_ms["a"]))
    rate = round(0.97 * 1000.0 / hold_ms, 2)
    slo = ", commit_latency_ms: {p99: 150}"
    row = f"{{name: counter, updates_per_s: {rate}, writer_sites: [a]}}"
    result = recommend(parse_topology(topology(20.0, slo=slo, rows=row)))
    blocking = [
        f
        for f in result.findings
        if f.rule == "COMMIT-LATENCY-SLO"
        and f.option == "single_cluster"
        and f.subject == "counter"
    ]
    assert blocking and blocking[0].severity == "blocker"
    single = next(o for o in result.options if o.architecture == "single_cluster")
    assert not single.viable
    (hot,) = [r for r in result.hot_rows]
    assert hot.name == "counter"
    _, expected_wait_ms = galera.hot_row_queue_ms(rate, hold_ms)
    analysis = analyse(parse_topology(topology(20.0, slo=slo, rows=row)))
    (row_eval,) = analysis.option("single_cluster").hot_rows
    assert row_eval.lock_wait_ms is not None
    # the simulated queue's median wait is of the M/D/1 mean's order (its mean, exactly)
    assert 0.2 * expected_wait_ms < row_eval.lock_wait_ms["p50"] < 2.0 * expected_wait_ms
    assert row_eval.write_latency_ms is not None and row_eval.write_latency_ms["p99"] > 150.0


def test_a_row_far_below_its_bound_waits_little():
    row = "{name: counter, updates_per_s: 1, writer_sites: [a]}"
    analysis = analyse(parse_topology(topology(20.0, rows=row)))
    (row_eval,) = analysis.option("single_cluster").hot_rows
    # 1 update/s against a 31 ms hold: 3 % of updates find the lock taken, for at most about
    # one commit; the median update waits for nothing.
    assert row_eval.lock_wait_ms is not None and row_eval.lock_wait_ms["p50"] == 0.0
    assert row_eval.lock_wait_ms["p95"] == 0.0
    written = row_eval.write_latency_ms
    assert written is not None and written["p50"] == pytest.approx(row_eval.commit_ms["p50"])
    assert written["p99"] < 2 * row_eval.commit_ms["p99"]
