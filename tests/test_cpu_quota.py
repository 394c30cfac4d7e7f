"""A member held to a CPU quota (issue 23): the budget through the periods by hand, the closed
loop held to what the member keeps up with, and whole topologies with CPU-QUOTA."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from advisor.errors import AdvisorError
from advisor.inputs.loading import parse_topology
from advisor.model import pipeline
from advisor.model.cpu_quota import CpuQuota, Throttle
from advisor.recommendation import recommend


def test_a_quota_grants_its_limit_times_the_period():
    quota = CpuQuota(limit_cores=0.25, cpu_ms_per_writeset=0.5, period_ms=100.0)
    assert quota.budget_ms == pytest.approx(25.0)
    assert quota.writesets_per_period() == pytest.approx(50.0)
    assert quota.capacity_per_s == pytest.approx(500.0)  # 0.25 x 1000 / 0.5


def test_deliveries_spend_the_budget_and_wait_for_the_next_period():
    # 10 ms of CPU a 100 ms period, 1 ms a write set: 10 write sets a period
    throttle = Throttle(CpuQuota(limit_cores=0.1, cpu_ms_per_writeset=1.0))
    assert throttle.admit(5.0, 4) == 5.0  # 6 ms left
    assert throttle.admit(6.0, 6) == 6.0  # spent
    assert throttle.admit(7.0, 1) == 100.0  # throttled until the next period; 9 left
    # in period 1 with 9 ms left, 12 write sets: 9 now, 3 when period 2 begins
    assert throttle.admit(150.0, 12) == 200.0
    assert throttle.left_ms == pytest.approx(7.0)
    assert throttle.admit(450.0, 1) == 450.0  # a fresh period, a fresh budget
    assert throttle.admit(460.0, 9) == 460.0  # the budget spent to the last ms
    assert throttle.admit(470.0, 0) == 500.0  # a fragment's message waits too


def _loop(quota=None, clients=16):
    # 2 ms paths, 1 ms to the nearest member, 4 ms of SQL, 0.5 ms of local commit
    return pipeline.closed_loop(
        clients, 4.0, 1, [2.0], [1.0], [1], user_window=2, send_window=4,
        writesets_per_message=19, local_commit_ms=0.5, cpu_quota=quota,
    )  # fmt: skip


def test_a_throttled_member_holds_the_clients_to_what_it_keeps_up_with():
    free = _loop()  # 16 clients at about 2,400/s
    quota = CpuQuota(limit_cores=0.1, cpu_ms_per_writeset=0.2)  # 500/s
    run = _loop(quota)
    assert run.commits_per_s == pytest.approx(500.0, rel=0.03)
    assert run.paused_share == 0.0  # no flow control: the deliveries wait instead
    # the clients that meet the stall wait out most of the period's 90 ms
    assert np.percentile(run.txn_ms, 95) > 60.0 > np.percentile(free.txn_ms, 95)
    assert float(np.mean(run.txn_ms)) == pytest.approx(16_000.0 / run.commits_per_s, rel=0.03)


def test_a_quota_the_clients_stay_well_below_changes_little():
    free = _loop()
    roomy = CpuQuota(limit_cores=4.0, cpu_ms_per_writeset=0.2)  # 20,000/s
    run = _loop(roomy)
    assert run.commits_per_s == pytest.approx(free.commits_per_s, rel=0.01)


def _topology(c_site: str) -> str:
    return textwrap.dedent(
        f"""\
        name: throttled-dr
        sites:
          - {{name: a, nodes: 3}}
          - {{name: b, nodes: 3}}
          - {c_site}
        links:
          - {{sites: [a, b], measurements: [{{method: icmp, samples_ms: [2, 2.1]}}]}}
          - {{sites: [a, c], measurements: [{{method: icmp, samples_ms: [2, 2.1]}}]}}
          - {{sites: [b, c], measurements: [{{method: icmp, samples_ms: [2, 2.1]}}]}}
        workload: {{commits_per_s: {{avg: 300, peak: 600}}}}
        """
    )


def test_a_cpu_limit_below_the_peak_blocks_every_architecture_and_names_the_site():
    text = _topology(
        "{name: c, nodes: 3, writes: false, cpu_limit_cores: 0.1, cpu_ms_per_writeset: 0.5}"
    )
    result = recommend(parse_topology(text))
    found = [f for f in result.findings if f.rule == "CPU-QUOTA"]
    single = next(f for f in found if f.option == "single_cluster")
    assert single.subject == "c" and single.severity == "blocker"
    # 0.1 CPU x 100 ms = 10 ms a period, 0.5 ms a write set: 20 a period, 200/s
    assert single.values["budget_ms"] == pytest.approx(10.0)
    assert single.values["writesets_per_period"] == pytest.approx(20.0)
    assert single.values["capacity_per_s"] == pytest.approx(200.0)
    assert single.values["stall_ms"] == pytest.approx(90.0)
    assert single.values["needed_cores"] == pytest.approx(0.3)  # 600/s x 0.5 ms
    assert "at least 0.30 CPUs at c" in single.message
    # the node applies every write set in any architecture: none is viable
    assert not any(o.viable for o in result.options)
    assert {f.option for f in found} == {o.architecture for o in result.options}


def test_a_cpu_limit_that_keeps_up_is_quiet_and_changes_nothing():
    plain = recommend(parse_topology(_topology("{name: c, nodes: 3}")))
    roomy = "{name: c, nodes: 3, cpu_limit_cores: 2, cpu_ms_per_writeset: 0.5}"
    result = recommend(parse_topology(_topology(roomy)))
    assert not [f for f in result.findings if f.rule == "CPU-QUOTA"]
    assert result.architecture == plain.architecture
    assert result.options[0].commit_latency_ms == plain.options[0].commit_latency_ms


def test_a_cpu_limit_without_its_cost_is_an_input_error(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(_topology("{name: c, nodes: 3, cpu_limit_cores: 0.5}"))
    with pytest.raises(AdvisorError) as raised:
        parse_topology(path.read_text(), source=path)
    message = str(raised.value)
    assert "t.yaml:5:5: sites[2]: " in message and "cpu_ms_per_writeset" in message


def test_the_clients_are_held_by_the_cpu_limit_with_no_flow_control():
    text = _topology("{name: c, nodes: 3, cpu_limit_cores: 0.1, cpu_ms_per_writeset: 0.5}")
    text = text.replace(
        "peak: 600}}", "peak: 600}, clients: {concurrency: 32, baseline_txn_latency_ms: 5}}"
    )
    result = recommend(parse_topology(text))
    single = next(o for o in result.options if o.architecture == "single_cluster")
    assert single.throughput is not None
    assert single.throughput.limited_by == "CPU limit"
    assert single.throughput.commits_per_s == pytest.approx(200.0, rel=0.03)  # 0.1 / 0.5 ms
    assert single.throughput.flow_control_paused_share == 0.0
    # a commit that meets the stall waits out most of the period's 90 ms
    assert single.throughput.txn_latency_ms["p95"] > 90.0


def test_a_cost_far_above_the_budget_is_counted_in_periods_not_looped():
    # 1e-9 CPUs over 100 ms: 1e-7 ms a period; one write set of 1 s of CPU needs 1e10 periods
    throttle = Throttle(CpuQuota(limit_cores=1e-9, cpu_ms_per_writeset=1000.0))
    assert throttle.admit(0.0, 1) == pytest.approx(1e10 * 100.0)


def test_a_message_costs_its_own_cpu_beside_its_write_sets():
    # 0.1 CPU: 100 ms of CPU a second; 0.35 ms a message and 0.05 ms a write set
    quota = CpuQuota(limit_cores=0.1, cpu_ms_per_writeset=0.05, cpu_ms_per_message=0.35)
    assert quota.message_cpu_ms(4) == pytest.approx(0.55)  # 0.35 + 4 x 0.05
    assert quota.capacity_per_s == pytest.approx(250.0)  # one a message: 100 / 0.4
    # at most 100 messages a second: 35 ms for them, 65 ms for 1,300 write sets
    assert quota.capacity_at(100.0) == pytest.approx(1300.0)
    assert quota.capacity_at(1000.0) == pytest.approx(250.0)  # room for one a message
    assert quota.cpu_ms_per_s(600.0, messages_per_s=100.0) == pytest.approx(65.0)


def test_the_throttle_charges_each_message_and_counts_the_periods_it_stops_in():
    # 10 ms a period; 1 ms a message, 0.5 ms a write set
    quota = CpuQuota(limit_cores=0.1, cpu_ms_per_writeset=0.5, cpu_ms_per_message=1.0)
    throttle = Throttle(quota)
    assert throttle.admit(0.0, 4) == 0.0  # 3 ms: 7 left
    assert throttle.admit(1.0, 10) == 1.0  # 6 ms: 1 left
    assert throttle.admit(2.0, 1) == 100.0  # 1.5 ms: stopped in period 0
    assert throttle.left_ms == pytest.approx(9.5)
    assert throttle.admit(350.0, 0) == 350.0  # a fragment's message: 1 ms
    # periods 0 to 3: only period 0 ran out
    assert throttle.throttled_share(0.0, 399.0) == pytest.approx(0.25)
    assert throttle.admit(360.0, 30) == 400.0  # 16 ms: the 9 left now, 7 of period 4's 10
    assert throttle.left_ms == pytest.approx(3.0)
    assert throttle.throttled_share(0.0, 499.0) == pytest.approx(0.4)  # 0 and 3 of 0 to 4


def test_write_sets_that_share_messages_fit_more_in_the_budget():
    quota = CpuQuota(limit_cores=0.1, cpu_ms_per_writeset=0.05, cpu_ms_per_message=0.35)
    # a lone client sends one write set a message: 250/s at most; 16 clients queue and
    # share messages, so the member keeps up with more than a lone client could send
    run = _loop(quota)
    assert run.commits_per_s > 1.5 * quota.capacity_per_s
    assert run.throttled_share > 0.5  # held by the budget in most periods


def test_a_member_that_keeps_up_is_never_throttled():
    roomy = CpuQuota(limit_cores=4.0, cpu_ms_per_writeset=0.05, cpu_ms_per_message=0.35)
    assert _loop(roomy).throttled_share == 0.0


def test_the_writers_messages_can_be_what_a_cpu_limit_cannot_carry():
    limit = "{name: c, nodes: 3, writes: false, cpu_limit_cores: 0.1, cpu_ms_per_writeset: 0.05"

    def findings(site: str) -> list:
        text = _topology(site).replace("{avg: 300, peak: 600}", "{avg: 200, peak: 400}")
        return [f for f in recommend(parse_topology(text)).findings if f.rule == "CPU-QUOTA"]

    assert not findings(limit + "}")  # 400/s x 0.05 ms = 20 of 100 ms of CPU a second
    single = next(
        f for f in findings(limit + ", cpu_ms_per_message: 0.35}") if f.option == "single_cluster"
    )
    # RTT 2 ms: two messages in flight a commit path of about 3.4 ms let about 595/s go, so
    # the peak of 400/s goes one write set a message: 400 x (0.35 + 0.05) = 160 ms a second
    assert single.values["messages_per_s"] == pytest.approx(400.0)
    assert single.values["capacity_per_s"] == pytest.approx(250.0)  # 100 ms / 0.4 ms
    assert single.values["needed_cores"] == pytest.approx(0.16)
    assert "0.35 ms on each of the writer's messages" in single.message


def test_the_recommendation_reports_the_share_of_periods_throttled():
    text = _topology("{name: c, nodes: 3, cpu_limit_cores: 0.1, cpu_ms_per_writeset: 0.5}")
    text = text.replace(
        "peak: 600}}", "peak: 600}, clients: {concurrency: 32, baseline_txn_latency_ms: 5}}"
    )
    held = next(o for o in recommend(parse_topology(text)).options)
    free = next(o for o in recommend(parse_topology(_topology("{name: c, nodes: 3}"))).options)
    assert held.throughput is not None and held.throughput.cpu_throttled_share > 0.9
    assert free.throughput is None or free.throughput.cpu_throttled_share == 0.0


def test_a_negative_message_cost_is_an_input_error(tmp_path):
    path = tmp_path / "t.yaml"
    site = "{name: c, cpu_limit_cores: 0.5, cpu_ms_per_writeset: 0.1, cpu_ms_per_message: -1}"
    path.write_text(_topology(site))
    with pytest.raises(AdvisorError) as raised:
        parse_topology(path.read_text(), source=path)
    assert "t.yaml:5:" in str(raised.value) and "cpu_ms_per_message" in str(raised.value)


def test_the_limit_that_binds_is_the_one_that_binds_at_the_writers_message_rate():
    # RTT 20 ms everywhere; the design's windows let the writer send a few hundred messages a
    # second (ClusterEval.writer_messages_per_s). b spends 0.25 ms on each message and 0.01 on
    # each write set: alone 100 / 0.26 = 385/s, but once the writer's messages run out the
    # write sets share them, and at M messages a second b keeps up with (100 - 0.25 M) / 0.01
    # (3,400/s at 263). c spends 0.2 ms on each write set: 500/s however they travel. At the
    # peak of 600/s c binds, though b alone keeps up with fewer.
    text = textwrap.dedent(
        """\
        name: two-limits
        sites:
          - {name: a, nodes: 3}
          - {name: b, nodes: 3, writes: false, cpu_limit_cores: 0.1, cpu_ms_per_writeset: 0.01,
             cpu_ms_per_message: 0.25}
          - {name: c, nodes: 3, writes: false, cpu_limit_cores: 0.1, cpu_ms_per_writeset: 0.2}
        links:
          - {sites: [a, b], measurements: [{method: icmp, samples_ms: [20, 20.1]}]}
          - {sites: [a, c], measurements: [{method: icmp, samples_ms: [20, 20.1]}]}
          - {sites: [b, c], measurements: [{method: icmp, samples_ms: [20, 20.1]}]}
        workload: {commits_per_s: {avg: 300, peak: 600}}
        """
    )
    found = [f for f in recommend(parse_topology(text)).findings if f.rule == "CPU-QUOTA"]
    single = next(f for f in found if f.option == "single_cluster")
    assert single.values["messages_per_s"] < 350  # the premise: b shares its messages
    assert single.subject == "c"
    assert single.values["capacity_per_s"] == pytest.approx(500.0)


def test_bursts_below_the_capacity_stall_the_write_sets_beyond_a_periods_budget():
    quota = CpuQuota(limit_cores=0.1, cpu_ms_per_writeset=0.5)  # 20 write sets a period
    # A budget of no whole write set: every write set waits, half a period on average
    # (uniform arrivals wait for the period's end).
    starved = CpuQuota(limit_cores=0.001, cpu_ms_per_writeset=0.5).stalls(30.0)
    assert starved.stalled_share == pytest.approx(1.0)
    assert starved.mean_wait_ms == pytest.approx(50.0)
    # 180/s: 18 a period on average. The same by simulation: Poisson periods, uniform
    # arrivals, the 21st and later of a period waiting for its end.
    rng = np.random.default_rng(7)
    counts = rng.poisson(18.0, 200_000)
    late, waited = 0, 0.0
    for n in counts[counts > 20]:
        times = np.sort(rng.uniform(0.0, 100.0, n))[20:]
        late += times.size
        waited += float(np.sum(100.0 - times))
    stalls = quota.stalls(180.0)
    assert stalls.stalled_share == pytest.approx(late / counts.sum(), rel=0.03)
    assert stalls.mean_wait_ms == pytest.approx(waited / late, rel=0.03)
    assert stalls.throttled_share == pytest.approx(np.mean(counts > 20), rel=0.02)
    # Fewer write sets, fewer bursts past the budget.
    assert quota.stalls(100.0).stalled_share < 0.001 < stalls.stalled_share


def test_a_limit_the_peak_stays_under_still_warns_of_its_bursts():
    def found(limit: float, peak: int) -> list:
        site = f"{{name: c, nodes: 3, cpu_limit_cores: {limit}, cpu_ms_per_writeset: 0.5}}"
        text = _topology(site).replace("{avg: 300, peak: 600}", f"{{avg: 100, peak: {peak}}}")
        return [f for f in recommend(parse_topology(text)).findings if f.rule.startswith("CPU")]

    bursts = next(f for f in found(0.1, 180) if f.option == "single_cluster")
    assert bursts.rule == "CPU-QUOTA-BURSTS" and bursts.severity == "warning"
    assert bursts.values["stalled_share"] == pytest.approx(0.05, abs=0.002)
    assert bursts.values["load_share"] == pytest.approx(0.9)
    needed = bursts.values["needed_cores"]
    assert not [f for f in found(needed, 180) if f.option == "single_cluster"]
    # above the capacity it is CPU-QUOTA's blocker alone
    assert {f.rule for f in found(0.1, 600)} == {"CPU-QUOTA"}
    assert not found(0.1, 100)  # 10 a period against 20: under one commit in a thousand


def test_the_commit_latency_tail_carries_the_stalls_of_a_limit_below_the_peak():
    def commit(site: str) -> dict[str, float]:
        text = _topology(site).replace("{avg: 300, peak: 600}", "{avg: 100, peak: 180}")
        option = recommend(parse_topology(text)).options[0]
        assert option.architecture == "single_cluster"
        return option.commit_latency_ms

    plain = commit("{name: c, nodes: 3}")
    held = commit("{name: c, nodes: 3, cpu_limit_cores: 0.1, cpu_ms_per_writeset: 0.5}")
    roomy = commit("{name: c, nodes: 3, cpu_limit_cores: 0.5, cpu_ms_per_writeset: 0.5}")
    # 18 write sets a period against a budget of 20: 5 % of the commits wait for the next
    # period, 11 ms on average (CpuQuota.stalls), so the p99 is a stall and the median not
    assert held["p50"] == pytest.approx(plain["p50"], abs=0.1)
    assert held["p99"] > plain["p99"] + 10.0
    assert roomy == plain  # 100 a period: no period runs out at 18 on average


def test_a_budget_counts_the_kernels_slices():
    # 0.05 CPU x 100 ms = 5 ms: one of the default 5 ms slices; two need 0.1 CPU
    quota = CpuQuota(limit_cores=0.05, cpu_ms_per_writeset=0.2)
    assert quota.slices == pytest.approx(1.0)
    assert quota.two_slices_cores == pytest.approx(0.1)
    # 1 ms slices (sched_cfs_bandwidth_slice_us = 1000) at a 50 ms period: 2.5 slices
    fine = CpuQuota(limit_cores=0.05, cpu_ms_per_writeset=0.2, period_ms=50.0, slice_ms=1.0)
    assert fine.slices == pytest.approx(2.5)
    assert fine.two_slices_cores == pytest.approx(0.04)


def test_a_limit_of_one_slice_warns_once_and_raises_the_advised_limit_to_two():
    # 0.05 CPU: one 5 ms slice a period. 0.5 ms a write set: 10 a period, 100/s, against a
    # peak of 600/s: the write sets alone need 0.3 CPU, above two slices (0.1)
    text = _topology(
        "{name: c, nodes: 3, writes: false, cpu_limit_cores: 0.05, cpu_ms_per_writeset: 0.5}"
    )
    result = recommend(parse_topology(text))
    slices = [f for f in result.findings if f.rule == "CPU-QUOTA-SLICE"]
    assert len(slices) == 1  # a property of the site, not of an option
    (warning,) = slices
    assert (warning.subject, warning.option, warning.severity) == ("c", None, "warning")
    assert warning.values["budget_ms"] == pytest.approx(5.0)
    assert warning.values["slices"] == pytest.approx(1.0)
    assert warning.values["slice_cores"] == pytest.approx(0.1)
    assert "at least 0.10 CPUs (two slices a period)" in warning.message
    blocker = next(f for f in result.findings if f.rule == "CPU-QUOTA")
    assert blocker.values["limit_to_set_cores"] == pytest.approx(0.3)  # the need binds
    assert blocker.values["slice_note"] == ""


def test_a_need_below_two_slices_advises_two_slices_and_says_why():
    # 0.05 CPU, 0.1 ms a write set: 50 a period, 500/s; a peak of 600/s needs 0.06 CPU,
    # still one slice and a fifth: the advised limit is two slices, 0.1 CPU
    text = _topology(
        "{name: c, nodes: 3, writes: false, cpu_limit_cores: 0.05, cpu_ms_per_writeset: 0.1}"
    )
    result = recommend(parse_topology(text))
    blocker = next(f for f in result.findings if f.rule == "CPU-QUOTA")
    assert blocker.values["needed_cores"] == pytest.approx(0.06)
    assert blocker.values["limit_to_set_cores"] == pytest.approx(0.1)
    assert (
        "at least 0.10 CPUs at c for the peak alone (its write sets and messages need 0.06, but "
        "a budget of fewer than two of the kernel's 5 ms slices a period is not all usable"
    ) in blocker.message
    assert "a CPU limit of at least 0.10 CPUs at c" in result.summary


def test_a_limit_of_two_slices_or_a_finer_slice_does_not_warn():
    for site in (
        "{name: c, nodes: 3, writes: false, cpu_limit_cores: 0.1, cpu_ms_per_writeset: 0.1}",
        "{name: c, nodes: 3, writes: false, cpu_limit_cores: 0.05, cpu_ms_per_writeset: 0.1,"
        " cpu_slice_ms: 1}",
    ):
        result = recommend(parse_topology(_topology(site)))
        assert not [f for f in result.findings if f.rule == "CPU-QUOTA-SLICE"], site


def test_bursts_under_two_slices_advise_two_slices():
    # 0.05 CPU, 0.05 ms a write set: 100 a period, 1,000/s; a peak of 950/s stalls 2 % of
    # the commits, which 0.06 CPU would bring under 1 %, still under two slices (0.1 CPU)
    text = _topology(
        "{name: c, nodes: 3, writes: false, cpu_limit_cores: 0.05, cpu_ms_per_writeset: 0.05}"
    ).replace("peak: 600", "peak: 950")
    result = recommend(parse_topology(text))
    bursts = next(f for f in result.findings if f.rule == "CPU-QUOTA-BURSTS")
    assert bursts.values["needed_cores"] == pytest.approx(0.06)
    assert bursts.values["limit_to_set_cores"] == pytest.approx(0.1)
    assert "A limit of about 0.10 CPUs brings the share under 1 % (the stalls alone ask 0.06" in (
        bursts.message
    )


def test_what_would_change_gives_the_cpu_limit_that_carries_the_peak():
    text = _topology(
        "{name: c, nodes: 3, writes: false, cpu_limit_cores: 0.1, cpu_ms_per_writeset: 0.5}"
    )
    result = recommend(parse_topology(text))
    (lever,) = [
        w
        for w in result.what_would_change
        if w.quantity == "cpu_limit_cores:c" and w.option == "single_cluster"
    ]
    # 600/s x 0.5 ms = 0.30 CPUs, the limit CPU-QUOTA advises
    assert lever.value == pytest.approx(0.30)
    assert lever.current == pytest.approx(0.1)
    assert lever.unit == "CPUs"
    assert "at least 0.30 CPUs (now 0.1: CPU-QUOTA)" in lever.message
