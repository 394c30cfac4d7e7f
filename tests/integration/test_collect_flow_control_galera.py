"""advisor collect on a real three-node MariaDB Galera cluster with one node slow (issue 23):
each node's evidence carries its flow-control counters, and they name the node that sends
the pauses.

Node 3 is made the slow member the way a DBA's mistake would: one applier
(``wsrep_slave_threads=1``) and a flow-control limit of 1 (``gcs.fc_limit=1``: it pauses the
cluster once more than int(1 x sqrt(3) + 0.5) = 2 write sets wait in its receive queue;
gcs/src/gcs.cpp ``_set_fc_limits``), while the others keep the default 16 (28 queued). Four
clients on node 1 update 1,000 rows as fast as they can. Tried on this machine (2026-11-27,
loopback, 8 clients for 10 s): node 3 sent 3,985 of the 3,995 pauses, node 2 10, node 1
none, and every node reported about 8 % of the time paused. collect watches every node through
the API and node 3 once more through the command line (``--into`` a topology file), at once.

Without mariadbd and galera-4 the tests skip; with ``ADVISOR_REQUIRE_GALERA=1`` (CI) they
fail instead. The cluster is torn down at the end of the module, pass or fail.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest
import yaml
from galera_cluster import GaleraCluster, Node, galera_cluster, missing_requirements, require
from typer.testing import CliRunner

from advisor.collect import ConnectionSettings, collect
from advisor.collect.api import CollectedEvidence
from advisor.inputs.loading import load_topology

pytestmark = pytest.mark.slow

ROWS = 1000
CLIENTS = 4
COLLECT_S = 8.0
INTERVAL_S = 1.0
PASSWORD = "advisor-fc-pw"

SITES = """\
name: slow-node-lab
sites:
  - {name: room-a, nodes: 2}
  - {name: room-b, nodes: 1}
links:
  - {sites: [room-a, room-b], distance_km: 1}
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[GaleraCluster]:
    require(missing_requirements())
    with galera_cluster() as running:
        first = running.nodes[0]
        running.execute(
            first,
            f"CREATE USER advisor@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'",
            "GRANT SELECT, REPLICATION SLAVE ON *.* TO advisor@'127.0.0.1'",
            "CREATE DATABASE fc",
            "CREATE TABLE fc.t (id INT PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0, "
            "pad VARCHAR(255) NOT NULL DEFAULT '')",
            f"INSERT INTO fc.t (id) SELECT seq FROM fc.seq_1_to_{ROWS}",
        )
        # SHOW MASTER STATUS needs BINLOG MONITOR on MariaDB >= 10.5, REPLICATION CLIENT before.
        for privilege in ("BINLOG MONITOR", "REPLICATION CLIENT"):
            try:
                running.execute(first, f"GRANT {privilege} ON *.* TO advisor@'127.0.0.1'")
                break
            except pymysql.err.MySQLError:
                continue
        yield running


def _settings(node: Node) -> ConnectionSettings:
    return ConnectionSettings(host="127.0.0.1", port=node.port, user="advisor", password=PASSWORD)


def _client(node: Node, stop: threading.Event, errors: list[BaseException]) -> None:
    """One client: updates a row after another, as fast as the cluster lets it commit."""
    try:
        connection = pymysql.connect(
            host="127.0.0.1", port=node.port, user="root", password="", autocommit=True
        )
        with connection, connection.cursor() as cursor:
            row = 0
            while not stop.is_set():
                cursor.execute(
                    "UPDATE fc.t SET n = n + 1, pad = REPEAT('y', 200) WHERE id = %s",
                    (row % ROWS + 1,),
                )
                row += 7
    except BaseException as error:  # surfaced by the test, never lost in the thread
        errors.append(error)


def test_collect_names_the_node_that_sends_flow_control(
    cluster: GaleraCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, _, slow = cluster.nodes
    cluster.execute(
        slow,
        "SET GLOBAL wsrep_slave_threads = 1",
        "SET GLOBAL wsrep_provider_options = 'gcs.fc_limit=1'",
    )
    topology = tmp_path / "topology.yaml"
    topology.write_text(SITES)
    monkeypatch.setenv("ADVISOR_TEST_PASSWORD", PASSWORD)
    evidence: dict[int, CollectedEvidence] = {}

    def watch(node: Node) -> None:
        evidence[node.index] = collect(_settings(node), interval_s=INTERVAL_S, duration_s=COLLECT_S)

    stop = threading.Event()
    errors: list[BaseException] = []
    clients = [
        threading.Thread(target=_client, args=(writer, stop, errors), daemon=True)
        for _ in range(CLIENTS)
    ]
    watchers = [threading.Thread(target=watch, args=(node,)) for node in cluster.nodes]
    for thread in clients:
        thread.start()
    try:
        time.sleep(1.0)  # the clients connected and committing
        for thread in watchers:
            thread.start()
        result = _collect_cli(slow, topology)  # node 3 once more, as a user runs it
        for thread in watchers:
            thread.join(60)
    finally:
        stop.set()
        for thread in clients:
            thread.join(10)
    assert not errors, errors
    assert result.exit_code == 0, result.output
    sent = {i: e.status.flow_control_sent for i, e in evidence.items()}
    print(sent, {i: e.status.flow_control_recv for i, e in evidence.items()})

    # Every node reports its counters: the pauses it sent and received, the time paused.
    assert sorted(evidence) == [1, 2, 3]
    for e in evidence.values():
        assert e.status.flow_control_sent is not None
        assert e.status.flow_control_recv is not None and e.status.flow_control_recv > 0
        assert e.status.flow_control_paused.avg is not None
        assert e.status.flow_control_paused.avg > 0.0
        assert e.status.cert_deps_distance is not None and e.status.cert_deps_distance >= 1.0
    # The slow node sends the pauses: nearly all of them, and the counters name it.
    total = sum(count or 0 for count in sent.values())
    assert (sent[slow.index] or 0) >= 0.8 * total > 0
    assert max(sent, key=lambda index: sent[index] or 0) == slow.index
    assert evidence[slow.index].target.endswith(f":{slow.port}")

    # What the command line wrote for node 3 says so, and carries the dependency bound as
    # the input the recommendation reads (workload.cert_deps_distance).
    text = topology.read_text()
    print(text)  # shown when the test fails
    said = " ".join(line.strip().lstrip("#").strip() for line in text.splitlines())
    written = int(said.split("this node sent ", 1)[1].split(" ", 1)[0])
    assert written > 0 and "flow-control pauses (wsrep_flow_control_sent)" in said
    assert "(wsrep_flow_control_recv)" in said and "(wsrep_flow_control_paused_ns)" in said
    assert yaml.safe_load(text)["workload"]["cert_deps_distance"] >= 1.0
    # It sent most of the pauses, so its counters give one apply's cost (its one applier over
    # what it committed while sending), the input its site's local_commit_ms takes.
    apply_ms = float(said.split("give that site local_commit_ms: ", 1)[1].split(" ", 1)[0])
    assert 0.0 < apply_ms < 1000.0
    assert "with 1 applier" in said
    loaded = load_topology(topology)
    assert loaded.topology.workload.cert_deps_distance is not None


def _collect_cli(node: Node, topology: Path) -> object:
    """``advisor collect`` as the command line runs it: through the application."""
    from advisor.cli import app

    return CliRunner().invoke(
        app,
        [
            "collect",
            "--host",
            "127.0.0.1",
            "--port",
            str(node.port),
            "--user",
            "advisor",
            "--password-env",
            "ADVISOR_TEST_PASSWORD",
            "--interval",
            f"{INTERVAL_S:g}s",
            "--duration",
            f"{COLLECT_S:g}s",
            "--into",
            str(topology),
        ],
    )
