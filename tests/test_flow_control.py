"""The slowest member (issue 23): apply capacity, flow control's cap and pause share, by hand;
and whole topologies where one slow site caps a stretched cluster."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

from advisor.inputs.loading import parse_topology
from advisor.model import flow_control as fc
from advisor.model import pipeline
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


def test_the_pause_share_at_an_offered_rate():
    assert fc.pause_share(600.0, 200.0) == pytest.approx(2.0 / 3.0)
    assert fc.pause_share(150.0, 200.0) == 0.0
    assert fc.pause_share(0.0, 200.0) == 0.0


def test_the_apply_queue_sends_stop_and_cont_as_gcs_does():
    # one applier, FC_STOP above 2 waiting, FC_CONT at 1 or fewer (gcs.cpp)
    queue = fc.ApplyQueue(fc.SlowMember(appliers=1, apply_ms=1.0, lower=1, upper=2))
    assert queue.deliver() == (True, False)  # the idle applier takes it at once
    assert queue.deliver() == (False, False)  # 1 waiting
    assert queue.deliver() == (False, False)  # 2: not above the upper limit
    assert queue.deliver() == (False, True)  # 3 > 2: FC_STOP
    assert queue.deliver() == (False, False)  # 4: its STOP is outstanding, no second one
    assert not queue.paused  # until the STOP is delivered
    assert queue.delivered(stop=True) is True
    assert queue.applied() == (True, False)  # 3 waiting
    assert queue.applied() == (True, False)  # 2
    assert queue.applied() == (True, True)  # 1 <= lower: FC_CONT
    assert queue.applied() == (True, False)  # 0: the CONT is sent once
    assert queue.applied() == (False, False)  # the applier goes idle
    assert queue.delivered(stop=False) is False


def test_no_stop_while_another_members_stop_is_in_force():
    queue = fc.ApplyQueue(fc.SlowMember(appliers=1, apply_ms=1.0, lower=0, upper=0))
    assert queue.delivered(stop=True)  # another member's STOP (stop_count 1)
    assert queue.deliver() == (True, False)
    assert queue.deliver() == (False, False)  # 1 waiting > 0, but the cluster is paused


def test_a_slow_member_of_fractional_appliers_keeps_its_capacity():
    # 2.3 write sets apply at once (cert_deps_distance): 2 appliers of 2 ms each, 1000/s
    member = fc.SlowMember.of(1000.0, 2.3, (28, 28))
    assert (member.appliers, member.lower, member.upper) == (2, 28, 28)
    assert member.apply_ms == pytest.approx(2.0)
    assert member.capacity_per_s == pytest.approx(1000.0)
    # 2.5 rounds up to 3 appliers of 3 ms; below 1, one applier
    assert fc.SlowMember.of(1000.0, 2.5, (28, 28)).appliers == 3
    assert fc.SlowMember.of(1000.0, 0.4, (28, 28)).appliers == 1


def _loop(slow_member=None, clients=16):
    # 2 ms paths, 1 ms to the nearest member, 4 ms of SQL, 0.5 ms of local commit
    return pipeline.closed_loop(
        clients, 4.0, 1, [2.0], [1.0], [1], user_window=2, send_window=4,
        writesets_per_message=19, local_commit_ms=0.5, slow_member=slow_member,
    )  # fmt: skip


def test_a_member_that_keeps_up_changes_nothing_in_the_closed_loop():
    free = _loop()
    member = fc.SlowMember.of(3.0 * free.commits_per_s, 4, (28, 28))
    run = _loop(member)
    assert run.paused_share == 0.0
    assert run.commits_per_s == free.commits_per_s
    assert np.array_equal(run.txn_ms, free.txn_ms)


def test_a_slow_member_holds_the_closed_loop_to_its_capacity_by_pausing_it():
    free = _loop()  # 16 clients at about 2,400/s
    member = fc.SlowMember.of(free.commits_per_s / 2.0, 1, (28, 28))
    run = _loop(member)
    assert run.commits_per_s == pytest.approx(member.capacity_per_s, rel=0.02)
    # paused at least what the offered rate leaves (1 - 1/2): while it runs, the clients
    # that piled up during the pause commit faster than the free loop
    assert 0.5 <= run.paused_share < 0.8
    # the transactions wait out the pauses: Little's law at the capped rate
    assert float(np.mean(run.txn_ms)) == pytest.approx(16_000.0 / run.commits_per_s, rel=0.03)
    for q in (50, 95):
        assert np.percentile(run.txn_ms, q) > np.percentile(free.txn_ms, q)


def test_beyond_the_simulated_clients_the_slow_member_caps_the_asymptotic_bound():
    clients = pipeline.MAX_SIMULATED_CLIENTS + 1
    free = _loop(clients=clients)
    run = _loop(fc.SlowMember.of(free.commits_per_s / 4.0, 4, (28, 28)), clients=clients)
    assert run.commits_per_s == pytest.approx(free.commits_per_s / 4.0)
    assert run.paused_share == pytest.approx(0.75)
    assert np.allclose(run.txn_ms, 4.0 * free.txn_ms)


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
    # the design's flow control (256, 0.99, single primary: not scaled by the 9 members)
    assert finding.values["fc_upper"] == 256
    assert finding.values["lag_ms"] == pytest.approx(1280.0)  # 256 write sets at 200/s
    assert "(256 queued write sets, gcs.fc_single_primary: not scaled" in finding.message
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
    assert single.throughput.commits_per_s == pytest.approx(200.0, rel=0.02)
    # 32 clients at 200/s: 160 ms a transaction on average (Little's law)
    assert 100.0 < single.throughput.txn_latency_ms["p50"] < 200.0
    # paused at least what the clients' free rate leaves: 1 - 200 / offered
    plain = recommend(parse_topology(_topology("{name: c, nodes: 3}", clients=True)))
    free = next(o for o in plain.options if o.architecture == "single_cluster").throughput
    assert free is not None and free.flow_control_paused_share == 0.0
    floor = 1.0 - 200.0 / free.commits_per_s
    assert floor <= single.throughput.flow_control_paused_share < 1.0


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
    predicted = min(drain["n1_tps"], capacity)  # the cap: what n3 applies, when n1 offers more
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
    assert run["flow_control_paused"] < 0.01


def test_a_slow_members_stop_and_cont_arrive_in_the_order_sent(monkeypatch):
    # commit paths of 2, 30 and 5 ms in turn: a CONT drawn a short path must not overtake
    # the STOP before it (EVS delivers one sender's messages in order), which would leave
    # more CONTs than STOPs in force (before the fix: 109 times in this run)
    overtaken = []
    delivered = fc.ApplyQueue.delivered

    def watched(queue, stop):
        paused = delivered(queue, stop)
        overtaken.extend([1] if queue.stops_in_force < 0 else [])
        return paused

    monkeypatch.setattr(fc.ApplyQueue, "delivered", watched)
    member = fc.SlowMember.of(3000.0, 1, (4, 4))
    run = pipeline.closed_loop(
        16, 1.0, 1, [2.0, 30.0, 5.0], [1.0], [1], user_window=2, send_window=4,
        writesets_per_message=19, local_commit_ms=0.5, slow_member=member,
    )  # fmt: skip
    assert overtaken == []
    assert 0.0 < run.paused_share < 1.0


def test_equal_sites_with_one_applier_cap_a_peak_their_threads_cannot_carry():
    # MariaDB's old default: one applier at the workload's 1 ms a write set applies 1,000/s,
    # below a peak of 1,500/s, on every node but the writer, however fast the nodes are
    text = _topology("{name: c, nodes: 3}").replace("peak: 600", "peak: 1500")
    one = text + "galera: {applier_threads: 1}\n"
    result = recommend(parse_topology(one))
    (finding,) = [
        f for f in result.findings if f.rule == "FLOW-CONTROL" and f.option == "single_cluster"
    ]
    assert finding.values["applier_threads"] == 1
    assert finding.values["capacity_per_s"] == pytest.approx(1000.0)
    assert finding.values["pause_share"] == pytest.approx(1.0 / 3.0)
    # the design's threads carry twice the peak (4 at 1 ms: 4,000/s): nothing to say
    designed = recommend(parse_topology(text))
    assert not [f for f in designed.findings if f.rule == "FLOW-CONTROL"]


def test_what_would_change_gives_the_slow_sites_apply_cost_that_carries_the_peak():
    result = recommend(parse_topology(_topology(SLOW_DR)))
    (lever,) = [w for w in result.what_would_change if w.quantity == "local_commit_ms:c"]
    # the design's 4 appliers carry 600/s when one apply takes 4 x 1000 / 600 = 6.67 ms
    assert lever.option == "single_cluster"
    assert lever.value == pytest.approx(6.67)
    assert lever.current == pytest.approx(20.0)
    assert lever.unit == "ms"
    assert "at most 6.67 ms with 4 appliers at work (now 20 ms" in lever.message
    # FLOW-CONTROL is single_cluster's only blocker: the figure alone makes it viable, so it
    # comes before single_cluster's other levers
    single = [w for w in result.what_would_change if w.option == "single_cluster"]
    assert single[0] is lever
    # and it does: the site at that cost carries the peak, no FLOW-CONTROL left
    flipped = recommend(parse_topology(_topology(SLOW_DR.replace("20}", "6.6}"))))
    assert not [f for f in flipped.findings if f.rule == "FLOW-CONTROL"]


WRITING_SLOW = "{name: c, nodes: 3, local_commit_ms: 20}"


def test_a_slow_writer_site_is_told_to_apply_faster_not_to_copy_its_own_settings():
    # per_site_clusters: c's own cluster, c its writer; its other nodes apply at 20 ms, with
    # the 4 threads given: 200/s against the peak of 600/s
    given = _topology(WRITING_SLOW) + "galera: {applier_threads: 4}\n"
    result = recommend(parse_topology(given))
    (own,) = [
        f for f in result.findings if f.rule == "FLOW-CONTROL" and f.option == "per_site_clusters"
    ]
    assert own.subject == "c"
    assert "as on c" not in own.message  # no faster node's settings to copy
    assert "(2) a cheaper apply at c, whose nodes spend no longer on a write set than" in (
        own.message
    )
    assert "innodb_flush_log_at_trx_commit=2 and sync_binlog=0" in own.message
    assert "with every member at c, a power loss there can lose it" in own.message
    assert "(4)" not in own.message and "asynchronous replica" not in own.message
    # 24 threads (600/s x 20 ms x 2) carry the peak, no dependency bound given
    assert own.values["remedy_short"] == (
        "wsrep_slave_threads=24 on c, a cheaper apply at c (faster disks or nodes, or lighter "
        "durability)"
    )
    # in the cluster of every site, c is no writer's site: the remedies are as before
    (spanning,) = [
        f for f in result.findings if f.rule == "FLOW-CONTROL" and f.option == "single_cluster"
    ]
    assert (
        "sync_binlog as on a)" in spanning.message
        and "(4) c out of the cluster" in spanning.message
    )


def test_equal_sites_capped_by_their_threads_are_all_named_and_told_to_apply_faster():
    given = _topology("{name: c, nodes: 3}") + "galera: {applier_threads: 1}\n"
    text = given.replace("peak: 600", "peak: 1500")
    result = recommend(parse_topology(text))
    (finding,) = [
        f for f in result.findings if f.rule == "FLOW-CONTROL" and f.option == "single_cluster"
    ]
    # one applier at 1 ms: 1,000/s at a (the writer's other nodes), b and c alike
    assert finding.values["capped_sites"] == "a, b, c"
    assert "below the peak of 1500 commits/s (as are the nodes at b, c)" in finding.message
    # raising the threads at a alone would leave b and c to pause the cluster
    assert "more applier threads on every site (a, b, c): wsrep_slave_threads=4" in finding.message
    # no node is faster to copy, and no site is slower than the others to take out
    assert "as on a)" not in finding.message and "(4)" not in finding.message
    assert finding.values["remedy_short"] == (
        "wsrep_slave_threads=4 on every site (a, b, c), a cheaper apply at every site (a, b, c) "
        "(faster disks or nodes, or lighter durability)"
    )


def test_two_slow_sites_are_both_named_and_the_slowest_decides_the_numbers():
    text = textwrap.dedent(
        """\
        name: two-slow
        sites:
          - {name: a, nodes: 3}
          - {name: b, nodes: 3, local_commit_ms: 10}
          - {name: c, nodes: 3, writes: false, local_commit_ms: 20}
        links:
          - {sites: [a, b], measurements: [{method: icmp, samples_ms: [2, 2.1]}]}
          - {sites: [a, c], measurements: [{method: icmp, samples_ms: [2, 2.1]}]}
          - {sites: [b, c], measurements: [{method: icmp, samples_ms: [2, 2.1]}]}
        workload: {commits_per_s: {avg: 300, peak: 600}}
        """
    )
    result = recommend(parse_topology(text))
    (finding,) = [
        f for f in result.findings if f.rule == "FLOW-CONTROL" and f.option == "single_cluster"
    ]
    # the design's 4 threads: b at 10 ms takes in 400/s, c at 20 ms 200/s, both below 600/s
    assert finding.subject == "c" and finding.values["capped_sites"] == "b, c"
    assert finding.values["capacity_per_s"] == pytest.approx(200.0)
    assert "(as are the nodes at b)" in finding.message
    # both slower than the writer: a's settings to copy, both out as replicas; threads sized
    # for the slowest (600/s x 20 ms x 2 = 24) carry both
    assert "more applier threads on b, c: wsrep_slave_threads=24" in finding.message
    assert "sync_binlog as on a)" in finding.message
    assert "(4) b, c out of the cluster" in finding.message
    # what would change names the slowest site's figure, and the other that must keep up
    (lever,) = [w for w in result.what_would_change if w.quantity == "local_commit_ms:c"]
    assert lever.value == pytest.approx(6.67)  # 4 x 1000 / 600
    assert lever.message.endswith("; so must b, also below the peak.")


def test_flow_control_pinned_in_topology_yaml_is_what_the_model_and_the_config_use():
    pinned = _topology(SLOW_DR) + 'galera: {provider_options: {"gcs.fc_limit": 16}}\n'
    result = recommend(parse_topology(pinned))
    (finding,) = [
        f for f in result.findings if f.rule == "FLOW-CONTROL" and f.option == "single_cluster"
    ]
    # 16 kept; the design's single primary still set, so not scaled by the members: 16
    assert finding.values["fc_upper"] == 16
    assert finding.values["lag_ms"] == pytest.approx(80.0)  # 16 write sets at 200/s
    both = 'galera: {provider_options: {"gcs.fc_limit": 16, "gcs.fc_single_primary": false}}\n'
    scaled = recommend(parse_topology(_topology(SLOW_DR) + both))
    (finding,) = [
        f for f in scaled.findings if f.rule == "FLOW-CONTROL" and f.option == "single_cluster"
    ]
    assert finding.values["fc_upper"] == 48  # 16 x sqrt(9) + 0.5
    assert "(48 queued write sets in a cluster of 9 members)" in finding.message


def test_the_design_flow_control_leaves_out_what_topology_yaml_pins():
    assert fc.design_flow_control({}) == {
        "gcs.fc_limit": 256,
        "gcs.fc_factor": 0.99,
        "gcs.fc_single_primary": True,
    }
    # the name before Galera 4.10 pins the same setting
    assert fc.design_flow_control({"gcs.fc_master_slave": False}) == {
        "gcs.fc_limit": 256,
        "gcs.fc_factor": 0.99,
    }
