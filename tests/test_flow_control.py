"""The slowest member (issue 23): apply capacity, flow control's cap and pause share, by hand;
and whole topologies where one slow site caps a stretched cluster."""

from __future__ import annotations

import math
import textwrap

import pytest

from advisor.inputs.loading import parse_topology
from advisor.model import flow_control as fc
from advisor.recommendation import recommend


def test_fc_limits_follow_gcs_set_fc_limits():
    # upper = 16 x sqrt(3) + 0.5 = 28.2 -> 28; lower = 28 x 0.5 + 0.5 = 14.5 -> 14
    assert fc.fc_limits(16, 0.5, 3) == (14, 28)
    # 9 members: 16 x 3 + 0.5 -> 48; single primary: no scaling
    assert fc.fc_limits(16, 1.0, 9) == (48, 48)
    assert fc.fc_limits(256, 0.99, 9, single_primary=True) == (253, 256)
    # PXC's 100 over 4 members: 200
    assert fc.fc_limits(100, 1.0, 4) == (200, 200)


def test_apply_capacity_is_threads_over_one_apply_bounded_by_dependencies():
    assert fc.apply_capacity_per_s(4, 20.0) == pytest.approx(200.0)
    assert fc.apply_capacity_per_s(1, 0.5) == pytest.approx(2000.0)
    # only 1.5 write sets can apply at once: 1.5 x 1000 / 20
    assert fc.apply_capacity_per_s(4, 20.0, parallel_limit=1.5) == pytest.approx(75.0)
    # a dependency bound above the threads changes nothing; below 1 still leaves one
    assert fc.apply_capacity_per_s(4, 20.0, parallel_limit=64) == pytest.approx(200.0)
    assert fc.apply_capacity_per_s(4, 20.0, parallel_limit=0.2) == pytest.approx(50.0)
    assert math.isinf(fc.apply_capacity_per_s(4, 0.0))


def test_design_threads_mirror_the_configuration_rule():
    assert fc.design_applier_threads(None, 1.0) == fc.MIN_APPLIERS == 4
    assert fc.design_applier_threads(600, 1.0) == 4  # 1.2 busy, doubled 2.4 -> the floor
    assert fc.design_applier_threads(600, 20.0) == 24  # 12 busy, doubled
    assert fc.design_applier_threads(5000, 1.0) == 10


def test_the_cap_and_the_pause_share():
    assert fc.capped_commits_per_s(600.0, 200.0) == 200.0
    assert fc.capped_commits_per_s(150.0, 200.0) == 150.0
    assert fc.pause_share(600.0, 200.0) == pytest.approx(2.0 / 3.0)
    assert fc.pause_share(150.0, 200.0) == 0.0
    assert fc.pause_share(0.0, 200.0) == 0.0


def test_closed_loop_latency_at_the_capped_rate():
    # 32 clients, one commit each, at 200/s: each transaction 160 ms (Little's law)
    assert fc.closed_loop_txn_ms(32, 1, 200.0) == pytest.approx(160.0)
    assert fc.closed_loop_txn_ms(32, 2, 200.0) == pytest.approx(320.0)
    assert math.isinf(fc.closed_loop_txn_ms(32, 1, 0.0))


def _topology(c_site: str, clients: bool = False) -> str:
    rows = "" if not clients else ", clients: {concurrency: 32, baseline_txn_latency_ms: 5}"
    return textwrap.dedent(
        f"""\
        name: slow-dr
        requirements: {{commit_latency_ms: {{p99: 50}}}}
        sites:
          - {{name: a, nodes: 3}}
          - {{name: b, nodes: 3}}
          - {c_site}
        links:
          - {{sites: [a, b], measurements: [{{method: icmp, samples_ms: [2, 2.1]}}]}}
          - {{sites: [a, c], measurements: [{{method: icmp, samples_ms: [2, 2.1]}}]}}
          - {{sites: [b, c], measurements: [{{method: icmp, samples_ms: [2, 2.1]}}]}}
        workload: {{commits_per_s: {{avg: 300, peak: 600}}{rows}}}
        """
    )


SLOW_DR = "{name: c, nodes: 3, writes: false, local_commit_ms: 20}"


def test_a_slow_dr_site_below_the_peak_rules_the_single_cluster_out_and_stays_a_replica():
    result = recommend(parse_topology(_topology(SLOW_DR)))
    single = next(o for o in result.options if o.architecture == "single_cluster")
    assert not single.viable and "FLOW-CONTROL" in single.blockers
    (finding,) = [f for f in result.findings if f.rule == "FLOW-CONTROL"]
    assert finding.subject == "c" and finding.severity == "blocker"
    # 4 design threads (600/s x 1 ms x 2 -> the floor of 4) over 20 ms: 200/s; 1 - 200/600
    assert finding.values["capacity_per_s"] == pytest.approx(200.0)
    assert finding.values["applier_threads"] == 4
    assert finding.values["pause_share"] == pytest.approx(2 / 3, abs=1e-6)
    assert finding.values["fc_upper"] == 48  # 9 members: 16 x 3 + 0.5
    assert finding.values["lag_ms"] == pytest.approx(240.0)  # 48 write sets at 200/s
    assert finding.values["threads_needed"] == 24
    assert finding.values["max_apply_ms"] == pytest.approx(1000 * 4 / 600, abs=1e-4)
    assert "wsrep_slave_threads=24" in finding.message and "asynchronous replica" in finding.message
    # the slow site as an asynchronous replica of its own cluster: viable, no finding there
    assert result.architecture != "single_cluster"
    chosen = next(o for o in result.options if o.architecture == result.architecture)
    assert chosen.viable
    assert not [
        f for f in result.findings if f.rule == "FLOW-CONTROL" and f.option != "single_cluster"
    ]


def test_the_clients_are_held_to_the_slow_sites_capacity():
    result = recommend(parse_topology(_topology(SLOW_DR, clients=True)))
    single = next(o for o in result.options if o.architecture == "single_cluster")
    assert single.throughput is not None
    assert single.throughput.limited_by == "flow control"
    assert single.throughput.commits_per_s == pytest.approx(200.0)
    # 32 clients at 200/s: 160 ms a transaction on average (Little's law)
    assert 100.0 < single.throughput.txn_latency_ms["p50"] < 200.0


def test_a_site_as_fast_as_the_writer_changes_nothing():
    plain = recommend(parse_topology(_topology("{name: c, nodes: 3}", clients=True)))
    given = recommend(parse_topology(_topology("{name: c, nodes: 3, local_commit_ms: 1.0}", True)))
    assert plain.model_dump() == given.model_dump()
    assert not [f for f in plain.findings if f.rule == "FLOW-CONTROL"]


def test_a_slow_site_that_keeps_up_with_the_peak_is_quiet():
    # 4 threads / 6 ms = 667/s >= 600/s
    result = recommend(parse_topology(_topology("{name: c, nodes: 3, local_commit_ms: 6}")))
    assert not [f for f in result.findings if f.rule == "FLOW-CONTROL"]


def _lab_case() -> dict:
    import yaml

    from benchmarks.cases import CALIBRATION

    cases = yaml.safe_load((CALIBRATION / "lab-runs.yaml").read_text())["cases"]
    return next(c for c in cases if c["id"] == "flow-control-slow-node")


def _lab_rows(n3: str, rtt_ms: float = 2.0, threads: int = 16) -> tuple[dict, dict]:
    rows = [
        r
        for r in _lab_case()["measured"]
        if r["n3"] == n3 and r["threads"] == threads and r.get("rtt_ms", 2.0) == rtt_ms
    ]
    run = next(r for r in rows if not r.get("drain"))
    drain = next(r for r in rows if r.get("drain"))
    return run, drain


@pytest.mark.parametrize("estimate", ["mean", "median"])
def test_the_cap_matches_the_lab_node_slow_to_apply_within_the_lab_tolerance(estimate):
    # n3 flushing its redo log at every commit, one applier: the cluster's rate under flow
    # control against n3's own apply rate measured desynced (the model's capacity)
    run, drain = _lab_rows("flush_log_at_trx_commit=1, 1 applier")
    capacity = drain["apply_per_s"][estimate]
    predicted = fc.capped_commits_per_s(drain["n1_tps"], capacity)
    assert abs(predicted / run["tps"] - 1.0) <= 0.20  # the lab tolerance (benchmarks/cases.py)
    assert run["flow_control_sent"]["n3"] > 0.9 * sum(run["flow_control_sent"].values())


def test_the_pause_share_is_a_floor_in_the_lab_closed_loop():
    run, drain = _lab_rows("flush_log_at_trx_commit=1, 1 applier")
    for capacity in drain["apply_per_s"]["mean"], drain["apply_per_s"]["median"]:
        modelled = fc.pause_share(drain["n1_tps"], capacity)
        assert 0.0 < modelled < run["flow_control_paused"]  # 0.09 to 0.20 against 0.30


def test_below_the_slow_nodes_capacity_the_lab_shows_no_flow_control():
    # RTT 20 ms: the send windows hold 64 clients at 752 to 772/s, n3 applies about 800/s
    run, drain = _lab_rows("flush_log_at_trx_commit=1, 1 applier", rtt_ms=20.0, threads=64)
    capacity = drain["apply_per_s"]["mean"]
    assert fc.pause_share(run["tps"], capacity) == 0.0
    assert fc.capped_commits_per_s(run["tps"], capacity) == run["tps"]
    assert run["flow_control_paused"] < 0.01
