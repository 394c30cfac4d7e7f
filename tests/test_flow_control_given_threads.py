"""The appliers a cluster runs today (galera.applier_threads, issue 23): the flow-control cap
counts them, no more working than the write sets' dependencies allow, and the generated
configuration keeps them. Numbers by hand."""

from __future__ import annotations

import textwrap

import pytest

from advisor.analysis import analyse
from advisor.config import plan_configuration
from advisor.inputs.loading import parse_topology


def topology(threads: int | None, deps: float | None = None) -> str:
    """Three one-node sites 2 ms apart; c applies each write set in 4 ms; 1,000 commits/s."""
    galera = f"galera: {{applier_threads: {threads}}}\n" if threads is not None else ""
    extra = f"\n  cert_deps_distance: {deps}" if deps is not None else ""
    return (
        textwrap.dedent(
            """
        name: given-threads
        sites:
          - {name: a}
          - {name: b}
          - {name: c, local_commit_ms: 4}
        links:
          - {sites: [a, b], measurements: [{method: icmp, samples_ms: [2, 2.1]}]}
          - {sites: [a, c], measurements: [{method: icmp, samples_ms: [2, 2.1]}]}
          - {sites: [b, c], measurements: [{method: icmp, samples_ms: [2, 2.1]}]}
        workload:
          commits_per_s: {peak: 1000}"""
        )
        + extra
        + "\n"
        + galera
    )


def single(text: str):
    analysis = analyse(parse_topology(text))
    (cluster,) = analysis.option("single_cluster").clusters
    return analysis, cluster


def test_one_given_applier_caps_the_cluster_at_one_apply_at_a_time():
    # c applies with 1 thread at 4 ms each: 250 write sets/s, below the 1,000/s peak.
    analysis, cluster = single(topology(1))
    assert cluster.apply_site == "c"
    assert cluster.applier_threads == 1
    assert cluster.apply_capacity_per_s == pytest.approx(250.0)
    fired = [f for f in analysis.findings if f.rule == "FLOW-CONTROL"]
    assert fired and fired[0].option == "single_cluster" and fired[0].severity == "blocker"


def test_eight_given_appliers_carry_the_peak():
    # 8 / 4 ms = 2,000/s, above the peak: no flow control.
    analysis, cluster = single(topology(8))
    assert cluster.apply_capacity_per_s == pytest.approx(2000.0)
    assert not [f for f in analysis.findings if f.rule == "FLOW-CONTROL"]


def test_the_dependencies_bound_the_given_threads():
    # 16 given, but write sets depend on the one 3.2 seqnos back on average: 3.2 apply at once
    # (the lab: 4 threads and more applied as many as a distance of 4.0 lets), 3.2 / 4 ms =
    # 800/s.
    _, cluster = single(topology(16, deps=3.2))
    assert cluster.applier_threads == 16
    assert cluster.apply_capacity_per_s == pytest.approx(800.0)


def test_the_configuration_keeps_the_given_threads_and_says_so():
    analysis, _ = single(topology(16, deps=3.2))
    plan = plan_configuration(analysis, analysis.option("single_cluster"))
    (setting,) = [s for s in plan.clusters[0].server if s.name == "wsrep_slave_threads"]
    assert setting.value == 16
    assert "kept as given in topology.yaml (galera.applier_threads)" in setting.reason
    assert "about 3.2 of them work at once (wsrep_cert_deps_distance 3.2)" in setting.reason


def test_without_the_input_the_design_sizes_them():
    # 2 x 1,000/s x a's 1 ms local commit = 2, at least MIN_APPLIERS; c's 4 ms caps it below
    # the peak only if the design's threads are too few: 4 / 4 ms = 1,000/s is the peak.
    _, given = single(topology(4))
    _, designed = single(topology(None))
    assert designed.applier_threads == given.applier_threads == 4
