"""The write sets' dependency bound (workload.cert_deps_distance, issue 23): applier threads
beyond ``ceil(wsrep_cert_deps_distance)`` add no capacity, in the model, the design's
wsrep_slave_threads, FLOW-CONTROL's remedy and what ``advisor collect`` writes."""

from __future__ import annotations

import dataclasses

import pytest

from advisor.analysis import analyse
from advisor.collect.status import summarise_status
from advisor.collect.writer import evidence_to_yaml
from advisor.config.plan import plan_configuration
from advisor.errors import AdvisorError
from advisor.inputs.loading import parse_topology
from advisor.model import flow_control as fc
from advisor.recommendation import recommend
from tests.test_collect_flow_control import SLOW_NODE, _samples
from tests.test_collect_writer import _evidence
from tests.test_flow_control import SLOW_DR, _topology


def test_useful_threads_are_the_distance_rounded_up_at_least_one():
    assert fc.useful_applier_threads(None) is None
    assert fc.useful_applier_threads(1.0) == 1
    assert fc.useful_applier_threads(2.3) == 3
    assert fc.useful_applier_threads(36.6) == 37


def test_the_design_threads_stop_at_the_dependency_bound():
    # 5000/s x 1 ms x 2 = 10 threads wanted
    assert fc.design_applier_threads(5000, 1.0) == 10
    assert fc.design_applier_threads(5000, 1.0, 6.4) == 7  # ceil(6.4)
    assert fc.design_applier_threads(5000, 1.0, 40.0) == 10  # the bound is above: no change
    # below the floor of 4 too: more than the dependencies allow would only wait
    assert fc.design_applier_threads(600, 1.0, 2.5) == 3
    assert fc.design_applier_threads(None, 1.0, 1.0) == 1


def _with_deps(deps: float) -> str:
    return _topology(SLOW_DR).replace(
        "workload: {commits_per_s: {avg: 300, peak: 600}}",
        f"workload: {{commits_per_s: {{avg: 300, peak: 600}}, cert_deps_distance: {deps}}}",
    )


def _finding(text: str):
    result = recommend(parse_topology(text))
    (finding,) = [f for f in result.findings if f.rule == "FLOW-CONTROL"]
    return finding


def test_a_tight_dependency_bound_lowers_the_slow_sites_capacity_and_drops_the_threads_remedy():
    finding = _finding(_with_deps(2.5))
    # the design sets 3 threads (ceil 2.5), of which 2.5 apply at once on average (the lab,
    # flow-control-applier-threads: a distance of 4.0 let 4 threads' worth, no more) over c's
    # 20 ms: 125/s; paused at least 1 - 125/600
    assert finding.values["applier_threads"] == 3
    assert finding.values["appliers_at_work"] == 2.5
    assert finding.values["capacity_per_s"] == pytest.approx(125.0)
    assert finding.values["pause_share"] == pytest.approx(1 - 125 / 600)
    assert finding.values["cert_deps_distance"] == 2.5
    assert finding.values["threads_needed"] == 3
    assert "(1) no more applier threads: the wsrep_cert_deps_distance of 2.5" in finding.message
    assert "lets about 3 write sets apply at once and the design runs 3 already" in finding.message
    assert "wsrep_slave_threads=" not in finding.values["remedy_short"]  # threads would not help
    # nor would the site as a replica: its workers are held to the same 2.5 (125/s < 600)
    assert (
        finding.values["remedy_short"] == "the writer's durability settings at c, or a faster node"
    )
    assert "(4) c out of the cluster, as an asynchronous replica" in finding.message


def test_a_bound_above_the_design_gives_the_threads_it_allows():
    finding = _finding(_with_deps(12))
    # 12 at once at c's 20 ms carry the peak (600/s): the replica remains a remedy
    assert finding.values["remedy_short"].endswith("or c as an asynchronous replica")
    # the design's 4 threads (600/s x 1 ms x 2 -> the floor) are within 12: capacity unchanged
    assert finding.values["applier_threads"] == 4
    assert finding.values["capacity_per_s"] == pytest.approx(200.0)
    # 24 wanted at c's 20 ms (600 x 20 / 1000 x 2), 12 allowed: 12 x 1000 / 20 = 600/s
    assert "up to wsrep_slave_threads=12" in finding.message
    assert "about 600 write sets/s against the peak of 600/s" in finding.message
    assert "24 would be sized without that bound" in finding.message
    assert "wsrep_slave_threads=12 on c" in finding.values["remedy_short"]


def test_threads_the_bound_holds_below_the_peak_are_no_short_remedy():
    finding = _finding(_with_deps(8))
    # 8 at once at c's 20 ms: 8 x 1000 / 20 = 400/s, above the design's 4 threads (200/s) but
    # below the peak of 600/s: the ranked remedy says so, and "to make it viable" leaves the
    # threads out, as it leaves out the replica held to the same 400/s
    assert "up to wsrep_slave_threads=8" in finding.message
    assert "about 400 write sets/s against the peak of 600/s" in finding.message
    assert (
        finding.values["remedy_short"] == "the writer's durability settings at c, or a faster node"
    )


def test_a_loose_bound_keeps_the_threads_little_s_law_gives():
    finding = _finding(_with_deps(30))
    assert "wsrep_slave_threads=24" in finding.message
    assert "within the wsrep_cert_deps_distance of 30" in finding.message
    assert finding.values["threads_needed"] == 24


def _appliers(text: str):
    plan = plan_configuration(analyse(parse_topology(text)), "single_cluster")
    (setting,) = [s for s in plan.clusters[0].server if s.name == "wsrep_slave_threads"]
    return setting


def test_the_generated_cnf_caps_the_appliers_with_its_reason():
    capped = _appliers(_with_deps(2.5))
    assert capped.value == 3
    assert "capped at 3: the measured wsrep_cert_deps_distance of 2.5" in capped.reason
    loose = _appliers(_with_deps(12))
    assert loose.value == 4
    assert "within the 12 write sets the measured wsrep_cert_deps_distance" in loose.reason
    plain = _appliers(_topology(SLOW_DR))
    assert plain.value == 4
    assert "more than the status wsrep_cert_deps_distance shows brings nothing" in plain.reason


def test_a_distance_below_one_is_refused_with_its_key():
    with pytest.raises(AdvisorError, match="cert_deps_distance"):
        parse_topology(_with_deps(0.5))


def test_collect_writes_the_distance_into_the_workload_and_it_loads():
    evidence = dataclasses.replace(_evidence(), status=summarise_status(_samples(SLOW_NODE)))
    text = evidence_to_yaml(evidence)
    (line,) = [x for x in text.splitlines() if x.strip().startswith("cert_deps_distance:")]
    assert line.split("#")[0].split(":")[1].strip() == "36.6"
    assert "wsrep_cert_deps_distance as last read" in line
    sites = "name: t\nsites: [{name: a}]\n"
    loaded = parse_topology(sites + text)
    assert loaded.topology.workload.cert_deps_distance == 36.6


def test_collect_leaves_out_a_distance_of_zero():
    idle = dict(SLOW_NODE, wsrep_cert_deps_distance=["0", "0", "0", "0"])
    evidence = dataclasses.replace(_evidence(), status=summarise_status(_samples(idle)))
    text = evidence_to_yaml(evidence)
    assert "wsrep_cert_deps_distance" not in text  # neither the key nor the comment
    assert "this node sent 42 flow-control pauses" in text  # the rest is still said


def _replica_channel(text: str, architecture: str):
    """The option ``architecture`` of ``text`` and one of its channels whose replica is at c."""
    analysis = analyse(parse_topology(text))
    option = next(o for o in analysis.options if o.architecture == architecture)
    links = [x for x in option.async_links if x.apply_site == "c"]
    assert links
    return analysis, links[0]


def test_the_slow_site_as_a_replica_is_held_to_the_same_dependencies():
    # c applies a commit of its own cluster in about 20 ms (its local commit); with a
    # distance of 2.5 no more than 2.5 apply at once, as a member and as a replica:
    # about 125/s against the peak of 600
    _, link = _replica_channel(_with_deps(2.5), "per_site_clusters")
    assert link.applier_threads == 3  # the design stops at ceil(2.5)
    assert link.working_threads == 2.5
    assert link.apply_capacity_per_s == pytest.approx(2.5 * 1000.0 / link.apply_ms)
    assert link.apply_capacity_per_s < 130.0 and link.unbounded
    result = recommend(parse_topology(_with_deps(2.5)))
    found = [
        f
        for f in result.findings
        if f.rule == "ASYNC-APPLY-CAPACITY" and f.option == "per_site_clusters"
    ]
    assert found, "the replica at c cannot apply the peak"
    assert all(
        "the write sets' dependencies (workload.cert_deps_distance) let about 2.5 apply at once"
        in f.message
        for f in found
    )


def test_without_the_distance_the_replica_takes_the_workers_it_needs():
    # no bound known: the design sizes the workers to the peak and the replica keeps up
    _, link = _replica_channel(_topology(SLOW_DR), "per_site_clusters")
    assert link.cert_deps_distance is None
    assert link.working_threads == link.applier_threads
    assert link.apply_capacity_per_s > 600.0 and not link.unbounded


def test_given_workers_beyond_the_distance_work_no_faster_and_the_finding_says_so():
    text = _with_deps(2.5) + "replication: {applier_threads: 16}\n"
    _, link = _replica_channel(text, "per_site_clusters")
    assert link.applier_threads == 16 and link.working_threads == 2.5
    result = recommend(parse_topology(text))
    (finding, *_) = [f for f in result.findings if f.rule == "ASYNC-APPLY-CAPACITY"]
    assert "it runs 16, of which the write sets' dependencies" in finding.message
    assert "let about 2.5 work at once" in finding.message


def test_flow_controls_replica_remedy_says_the_replica_lags_under_the_same_bound():
    finding = _finding(_with_deps(2.5))
    assert "as a replica it applies no faster (about 125 write sets/s" in finding.message
    assert "its lag grows while the peak lasts (ASYNC-APPLY-CAPACITY)" in finding.message
    # a bound loose enough for the peak leaves the remedy plain
    assert "applies no faster" not in _finding(_with_deps(30)).message
    assert "applies no faster" not in _finding(_topology(SLOW_DR)).message


def test_the_generated_replica_workers_stop_at_the_distance_and_say_why():
    plan = plan_configuration(analyse(parse_topology(_with_deps(2.5))), "per_site_clusters")
    into_c = [
        ch for link in plan.async_links for ch in link.channels if ch.replica_host.startswith("c")
    ]
    assert into_c
    for channel in into_c:
        (threads,) = [s for s in channel.appliers if s.name == "slave_parallel_threads"]
        # c's one pool serves its channels from a and b: 3 each
        assert threads.value == 3 * len(
            [ch for ch in into_c if ch.replica_host == channel.replica_host]
        )
        assert "3 is as many as the write sets' dependencies let work at once" in threads.reason
        assert "(workload.cert_deps_distance 2.5), too few to keep up" in threads.reason


def test_the_apply_to_reach_counts_the_appliers_at_work_not_the_threads():
    finding = _finding(_with_deps(2.5))
    # 3 threads, 2.5 at work: the peak of 600/s needs one apply within 2.5 x 1000 / 600 ms
    assert finding.values["max_apply_ms"] == pytest.approx(2500 / 600)
    assert "one apply within 4.17 ms at 3 threads" in finding.message
