"""collect reads each node's flow-control counters (issue 23): which node sends the pauses,
its receive queue and the parallelism its appliers could use, into what it writes."""

from __future__ import annotations

import dataclasses

from advisor.collect.status import StatusSample, summarise_status
from advisor.collect.writer import evidence_to_yaml
from tests.test_collect_writer import _evidence


def _samples(columns: dict[str, list[object]]) -> list[StatusSample]:
    n = len(next(iter(columns.values())))
    return [
        StatusSample(10.0 * i, {k: str(v[i]) for k, v in columns.items() if v[i] is not None})
        for i in range(n)
    ]


SLOW_NODE = {
    "Uptime": [100, 110, 120, 130],
    "wsrep_replicated": [0, 0, 0, 0],
    "wsrep_received": [0, 1000, 2000, 3000],
    # 12 then 30 pauses sent, then FLUSH STATUS (the counter drops): that interval is dropped
    "wsrep_flow_control_sent": [5, 17, 47, 2],
    "wsrep_flow_control_recv": [5, 17, 47, 2],
    "wsrep_flow_control_paused_ns": [0, 6e9, 13e9, 20e9],
    "wsrep_local_recv_queue_avg": ["10.5", "20.25", "25.0", "24.5"],
    "wsrep_cert_deps_distance": ["40.1", "38.2", "37.9", "36.6"],
}


def test_the_counters_of_a_node_that_sends_flow_control():
    s = summarise_status(_samples(SLOW_NODE))
    assert s.flow_control_sent == 42  # 12 + 30; the flushed interval left out
    assert s.flow_control_recv == 42
    assert s.recv_queue_avg == 24.5  # Galera's own average, as last read
    assert s.cert_deps_distance == 36.6
    assert s.flow_control_paused.avg == 2 / 3  # 20 s paused in 30 s


def test_a_server_without_them_reports_none():
    s = summarise_status(_samples({"Uptime": [1, 11], "wsrep_received": [0, 5]}))
    assert (s.flow_control_sent, s.flow_control_recv, s.recv_queue_avg) == (None, None, None)
    assert s.cert_deps_distance is None


def test_the_written_sections_say_which_node_sends_flow_control():
    evidence = _evidence()
    slow = dataclasses.replace(evidence, status=summarise_status(_samples(SLOW_NODE)))
    text = " ".join(line.strip("# ") for line in evidence_to_yaml(slow).splitlines())
    assert "this node sent 42 flow-control pauses (wsrep_flow_control_sent)" in text
    assert "received 42 (wsrep_flow_control_recv)" in text
    assert "its receive queue averaged 24.5 write sets" in text
    assert "about 36.6 write sets could apply in parallel" in text
    assert "wsrep_flow_control_sent" not in evidence_to_yaml(evidence)


def test_a_node_that_sends_most_pauses_gets_its_apply_cost_for_its_site():
    # 1,000 write sets in each of the two intervals in which it sent pauses (12 and 30), 20 s
    s = summarise_status(_samples(SLOW_NODE))
    assert s.applied_per_s_while_sending == 100.0
    evidence = dataclasses.replace(_evidence(), status=s, variables={"wsrep_slave_threads": "4"})
    text = " ".join(line.strip("# ") for line in evidence_to_yaml(evidence).splitlines())
    # 4 appliers (within the distance of 36.6) over 100/s: 40 ms an apply at most
    assert "This node sent 42 of the 42 flow-control pauses" in text
    assert "its appliers committed 100 write sets/s of the other nodes with 4 appliers" in text
    assert "so one apply costs it" in text
    assert "at most about 40 ms" in text
    one = dataclasses.replace(evidence, variables={"wsrep_slave_threads": "1"})
    assert "with 1 applier, so" in " ".join(
        line.strip("# ") for line in evidence_to_yaml(one).splitlines()
    )
    assert "give that site local_commit_ms: 40 (sites[].local_commit_ms)" in text


def test_the_dependencies_bound_the_appliers_at_work_in_the_estimate():
    deps = dict(SLOW_NODE, wsrep_cert_deps_distance=["2.5", "2.5", "2.5", "2.5"])
    evidence = dataclasses.replace(
        _evidence(),
        status=summarise_status(_samples(deps)),
        variables={"wsrep_applier_threads": "8"},  # PXC 8.0.26+'s name
    )
    text = " ".join(line.strip("# ") for line in evidence_to_yaml(evidence).splitlines())
    assert "with 8 appliers, 2.5 of them at work as wsrep_cert_deps_distance allows" in text
    assert "local_commit_ms: 25 (sites[].local_commit_ms)" in text


def test_no_estimate_from_a_node_that_sent_few_of_the_pauses_or_none():
    others = dict(SLOW_NODE, wsrep_flow_control_recv=[5, 60, 150, 2])  # 42 of 145 its own
    quiet = dict(SLOW_NODE, wsrep_flow_control_sent=[5, 5, 5, 5])
    for columns in (others, quiet):
        evidence = dataclasses.replace(
            _evidence(),
            status=summarise_status(_samples(columns)),
            variables={"wsrep_slave_threads": "4"},
        )
        assert "one apply costs it" not in evidence_to_yaml(evidence)
    assert summarise_status(_samples(quiet)).applied_per_s_while_sending is None


def test_a_writer_that_sends_pauses_counts_only_what_its_appliers_applied():
    # 300 of each interval's 1,000 commits were its own: its appliers applied 70/s
    writer = dict(SLOW_NODE, wsrep_local_commits=[0, 300, 600, 900])
    s = summarise_status(_samples(writer))
    assert s.applied_per_s_while_sending == 70.0
