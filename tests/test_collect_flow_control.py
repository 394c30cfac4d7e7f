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
