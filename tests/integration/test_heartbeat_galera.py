"""The generated heartbeat on a real three-node MariaDB Galera cluster (loopback,
tests/integration/galera_cluster.py): run on every node as its header says, each node runs its
own event and writes its own row, and losing a node does not stop the heartbeat.

What the design replaced, observed here with MariaDB 10.11.19 (advisor/config/failover.py):
one event created on one node reached the others as SLAVESIDE_DISABLED and ran only there, so
killing that node stopped every row while the other two stayed a Primary cluster. The test
keeps that observation as its control (``test_an_event_that_arrives_by_galera_never_runs``).

Without mariadbd and galera-4 the tests skip; with ``ADVISOR_REQUIRE_GALERA=1`` (CI) they fail
instead.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from galera_cluster import GaleraCluster, Node, galera_cluster, missing_requirements, require
from generated_design import kill, wait_for

REPO = Path(__file__).resolve().parents[2]
EVICTED_WITHIN_S = 40.0  # Galera's evs.inactive_timeout (15 s default) with room for a slow host


def _heartbeat_file() -> str:
    """The heartbeat file advisor generates for paris-frankfurt's cluster frankfurt."""
    from advisor.analysis import analyse
    from advisor.documents.render import render_documents

    files = render_documents(analyse(REPO / "examples/paris-frankfurt/topology.yaml"), ("md",))
    return files["config/heartbeat-frankfurt.sql"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[GaleraCluster]:
    missing = missing_requirements()
    if shutil.which("mariadb") is None:
        missing.append("the mariadb client (mariadb-client)")
    require(missing)
    with galera_cluster() as running:
        for node in running.nodes:
            running.execute(node, "SET GLOBAL event_scheduler = ON")  # as galera-*.cnf sets
        yield running


def _query(node: Node, statement: str) -> list[tuple[object, ...]]:
    with node.root_connection() as conn, conn.cursor() as cur:
        cur.execute(statement)
        return list(cur.fetchall())


def _run(node: Node, text: str) -> None:
    result = subprocess.run(
        ["mariadb", f"--socket={node.socket}", "-uroot"],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def _events(node: Node) -> list[tuple[object, ...]]:
    return _query(
        node,
        "SELECT EVENT_NAME, STATUS FROM information_schema.EVENTS WHERE EVENT_SCHEMA = 'advisor'",
    )


def _newest_age_ms(node: Node) -> float:
    rows = _query(
        node, "SELECT TIMESTAMPDIFF(MICROSECOND, MAX(ts), NOW(6)) / 1000 FROM advisor.heartbeat"
    )
    return float(rows[0][0])  # type: ignore[arg-type]


def test_an_event_that_arrives_by_galera_never_runs(cluster: GaleraCluster) -> None:
    """The control: an event created normally on node 1 is SLAVESIDE_DISABLED elsewhere."""
    first, others = cluster.nodes[0], cluster.nodes[1:]
    cluster.execute(
        first,
        "CREATE DATABASE IF NOT EXISTS control",
        "CREATE EVENT control.beat ON SCHEDULE EVERY 1 SECOND DO DO 1",
    )
    assert _query(
        first, "SELECT STATUS FROM information_schema.EVENTS WHERE EVENT_SCHEMA = 'control'"
    ) == [("ENABLED",)]
    for node in others:
        wait_for(
            lambda n=node: (
                _query(
                    n, "SELECT STATUS FROM information_schema.EVENTS WHERE EVENT_SCHEMA = 'control'"
                )
                == [("SLAVESIDE_DISABLED",)]
            ),
            20,
            f"node{node.index} holds the replicated event, disabled",
        )
    cluster.execute(first, "DROP DATABASE control")


def test_heartbeat_on_every_node_survives_the_loss_of_one(cluster: GaleraCluster) -> None:
    text = _heartbeat_file()
    assert "Run on EVERY node" in text
    for node in cluster.nodes:
        _run(node, text)
    names = {f"node{n.index}" for n in cluster.nodes}
    for node in cluster.nodes:
        assert [status for _, status in _events(node)] == ["ENABLED"], (node.index, _events(node))
        wait_for(
            lambda n=node: (
                names
                <= {
                    str(r[0])
                    for r in _query(
                        n,
                        "SELECT node FROM advisor.heartbeat WHERE ts > NOW(6) - INTERVAL 1 SECOND",
                    )
                }
            ),
            20,
            f"node{node.index} sees a recent row from every node",
        )
    # Idempotent: run again, still one enabled event per node.
    _run(cluster.nodes[0], text)
    assert [status for _, status in _events(cluster.nodes[0])] == ["ENABLED"]
    # The node whose event the old design ran is lost: the others' rows keep coming once
    # Galera has evicted it (while it decides, the cluster takes no commits at all).
    kill(cluster.nodes[0])  # type: ignore[arg-type]
    survivor = cluster.nodes[1]
    wait_for(
        lambda: _query(survivor, "SHOW STATUS LIKE 'wsrep_cluster_size'")[0][1] == "2",
        EVICTED_WITHIN_S,
        "Galera evicts node1",
        interval_s=0.5,
    )
    # Rows written after the eviction: with node1's event alone the newest would now be older
    # than this wait (the old design's reading: a dead channel).
    wait_s = 2.0
    time.sleep(wait_s)
    age = _newest_age_ms(survivor)
    print(f"newest heartbeat on node2, {wait_s:.0f} s after node1 was evicted: {age} ms old")
    assert 0 <= age < 1000, age
    writers = {
        str(r[0])
        for r in _query(
            survivor, "SELECT node FROM advisor.heartbeat WHERE ts > NOW(6) - INTERVAL 1 SECOND"
        )
    }
    assert writers == {"node2", "node3"}, writers
