"""advisor check against a real three-node MariaDB Galera cluster on loopback.

The topology: three rooms, one node each, whose recommended design is one cluster. The
cluster (tests/integration/galera_cluster.py) is started with the design's own node settings
(the configuration plan's wsrep_cluster_name, wsrep_node_name, wsrep_slave_threads and each
site's provider options, gcache and TLS aside), so a healthy cluster is the design and the
check finds no drift; a provider option changed at run time (``SET GLOBAL
wsrep_provider_options``: evs.send_window and gcs.fc_limit) is then found as CHECK-SETTINGS,
naming the value in effect and the design's. The check never writes: the
write counters, the binary log position and the cluster's last committed seqno are the same
before and after it. A wrong password and a missing privilege are one line and exit 2.

Without mariadbd and galera-4 the tests skip; with ``ADVISOR_REQUIRE_GALERA=1`` (CI) they
fail instead. The cluster is torn down at the end of the module, pass or fail.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import galera_cluster as harness
import pytest
from galera_cluster import GaleraCluster, Node, galera_cluster, missing_requirements, require
from typer.testing import CliRunner, Result

from advisor.analysis import analyse
from advisor.cli import app
from advisor.config import plan_configuration
from advisor.config.model import ConfigPlan

pytestmark = pytest.mark.slow

PASSWORD = "check-pw-5"
CHECK_S = "4s"

TOPOLOGY = """\
# Three rooms of one lab, one node each. The loopback stands for rooms a metro apart: the
# round trips are what such rooms measure, above loopback's, so the predictions are not
# broken by a busy CI machine.
version: 1
name: loopback-three
requirements:
  commit_latency_ms: {p99: 50}
  survive: node
sites:
  - {name: room-a, nodes: 1}
  - {name: room-b, nodes: 1}
  - {name: room-c, nodes: 1}
links:
  - sites: [room-a, room-b]
    distance_km: 1
    measurements: [{method: icmp, percentiles_ms: {p50: 0.5, p99: 2.0, max: 4.0}}]
  - sites: [room-a, room-c]
    distance_km: 1
    measurements: [{method: icmp, percentiles_ms: {p50: 0.5, p99: 2.0, max: 4.0}}]
  - sites: [room-b, room-c]
    distance_km: 1
    measurements: [{method: icmp, percentiles_ms: {p50: 0.5, p99: 2.0, max: 4.0}}]
workload:
  commits_per_s: {avg: 20, peak: 100}
  writeset_bytes: {p50: 400, p99: 4000}
galera:
  flavor: mariadb
"""
# Server counters of statements that change data, definitions or replication (MariaDB
# SHOW STATUS Com_*); the check's own SHOW statements move only Com_show_*.
WRITE_COUNTERS = re.compile(
    r"^Com_(insert|update|delete|replace|truncate|load|create_|drop_|alter_|rename_|"
    r"change_master|start_slave|stop_slave|purge|flush|reset|grant|revoke|set_option_global)"
)


def _plan(path: Path) -> ConfigPlan:
    analysis = analyse(path)
    assert analysis.chosen.architecture == "single_cluster"
    return plan_configuration(analysis)


class DesignCluster(GaleraCluster):
    """The harness's cluster with the design's node settings added to each my.cnf."""

    plan: ConfigPlan

    def _write_config(self, node: Node) -> None:
        super()._write_config(node)
        cluster = self.plan.clusters[0]
        site = cluster.site_plans[node.index - 1]
        design = [
            f"{s.name}={s.value}"
            for s in site.provider_options
            if not s.name.startswith(("gcache.", "socket.ssl"))  # the harness's own
        ]
        text = node.config.read_text()
        text = re.sub(
            r'wsrep_provider_options="([^"]*)"',
            lambda m: f'wsrep_provider_options="{m.group(1)}; {"; ".join(design)}"',
            text,
        )
        text = text.replace(
            "wsrep_cluster_name=advisor-integration", f"wsrep_cluster_name={cluster.name}"
        )
        text = text.replace(f"wsrep_node_name=node{node.index}", f"wsrep_node_name={site.hosts[0]}")
        threads = next(s.value for s in cluster.server if s.name == "wsrep_slave_threads")
        node.config.write_text(text + f"wsrep_slave_threads={threads}\n")


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("check") / "topology.yaml"
    path.write_text(TOPOLOGY, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def cluster(topology: Path) -> Iterator[GaleraCluster]:
    require(missing_requirements())
    DesignCluster.plan = _plan(topology)
    with mock.patch.object(harness, "GaleraCluster", DesignCluster), galera_cluster() as running:
        first = running.nodes[0]
        running.execute(
            first,
            f"CREATE USER monitor@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'",
            # The binary log is on: collect's hot-row stream needs REPLICATION SLAVE.
            "GRANT SELECT, REPLICATION SLAVE ON *.* TO monitor@'127.0.0.1'",
            "CREATE USER bare@'127.0.0.1' IDENTIFIED BY 'bare-pw'",
        )
        for privilege in ("BINLOG MONITOR", "REPLICATION CLIENT"):  # SHOW MASTER STATUS
            try:
                running.execute(first, f"GRANT {privilege} ON *.* TO monitor@'127.0.0.1'")
                break
            except Exception:
                continue
        yield running


def _status(node: Node) -> dict[str, str]:
    with node.root_connection() as conn, conn.cursor() as cur:
        cur.execute("SHOW GLOBAL STATUS")
        status = {str(k): str(v) for k, v in cur.fetchall()}
        cur.execute("SHOW MASTER STATUS")
        row = cur.fetchone()
    status["binlog_position"] = f"{row[0]}:{row[1]}" if row else "off"
    return status


def _writes(status: dict[str, str]) -> dict[str, str]:
    keep = ("binlog_position", "wsrep_last_committed")
    return {k: v for k, v in status.items() if WRITE_COUNTERS.match(k) or k in keep}


def _drift(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every finding: a healthy cluster shows none."""
    return list(data["findings"])


def _check(
    topology: Path, node: Node, monkeypatch: pytest.MonkeyPatch, *extra: str, user: str = "monitor"
) -> Result:
    monkeypatch.setenv("CHECK_PASSWORD", PASSWORD if user == "monitor" else "bare-pw")
    return CliRunner().invoke(
        app,
        [
            "check",
            str(topology),
            "--host",
            "127.0.0.1",
            "--port",
            str(node.port),
            "--user",
            user,
            "--password-env",
            "CHECK_PASSWORD",
            "--duration",
            CHECK_S,
            "--interval",
            "1s",
            *extra,
        ],
    )


def test_a_healthy_cluster_shows_no_drift_and_the_check_writes_nothing(
    cluster: GaleraCluster, topology: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = cluster.nodes[0]
    before = _writes(_status(node))
    result = _check(topology, node, monkeypatch, "--format", "json", "--fail-on", "warning")
    after = _writes(_status(node))
    print(result.output)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert _drift(data) == []
    assert data["cluster"] == "room-a_room-b_room-c"
    assert data["site"] == "room-a" and data["node_name"] == "room-a-db1"
    assert data["observed"]["cluster_size_min"] == 3
    assert data["predicted"]["cluster_size"] == 3
    assert PASSWORD not in result.output
    assert before == after


def test_a_provider_option_changed_at_run_time_is_found(
    cluster: GaleraCluster, topology: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = cluster.nodes[1]
    # Both are dynamic on MariaDB 10.11's galera-4 (our lab: SHOW VARIABLES shows them at once).
    cluster.execute(node, "SET GLOBAL wsrep_provider_options='evs.send_window=8; gcs.fc_limit=100'")
    try:
        result = _check(topology, node, monkeypatch, "--format", "json", "--fail-on", "warning")
    finally:
        cluster.execute(
            node, "SET GLOBAL wsrep_provider_options='evs.send_window=4; gcs.fc_limit=256'"
        )
    print(result.output)
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    found = {f["subject"]: f for f in data["findings"]}
    assert [f["id"] for f in data["findings"]] == ["CHECK-SETTINGS", "CHECK-SETTINGS"]
    assert found["evs.send_window"]["observed"] == {"evs.send_window": 8}
    assert found["evs.send_window"]["expected"] == {"evs.send_window": 4}
    assert found["gcs.fc_limit"]["observed"] == {"gcs.fc_limit": 100}
    assert found["gcs.fc_limit"]["expected"] == {"gcs.fc_limit": 256}
    assert data["site"] == "room-b"
    assert "--fail-on warning: CHECK-SETTINGS" in result.stderr


def test_wrong_password_and_missing_privilege_are_one_line(
    cluster: GaleraCluster, topology: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = cluster.nodes[0]
    monkeypatch.setenv("CHECK_PASSWORD", "not-the-password")
    wrong = CliRunner().invoke(
        app,
        [
            "check",
            str(topology),
            "--host",
            "127.0.0.1",
            "--port",
            str(node.port),
            "--user",
            "monitor",
            "--password-env",
            "CHECK_PASSWORD",
            "--duration",
            CHECK_S,
        ],
    )
    assert wrong.exit_code == 2
    assert wrong.stderr.strip() == (
        f"advisor: access denied for monitor@127.0.0.1:{node.port}: check the user and the "
        "password (--password-env VAR or --defaults-file)"
    )
    bare = _check(topology, node, monkeypatch, user="bare")
    assert bare.exit_code == 2
    lines = bare.stderr.strip().splitlines()
    assert len(lines) == 1 and "missing privilege" in lines[0], lines


def _write_at(node: Node, per_s: float, stop: threading.Event, errors: list[BaseException]) -> None:
    """Commit one small UPDATE at ``per_s`` a second on ``node`` until stopped."""
    try:
        with node.root_connection() as conn, conn.cursor() as cur:
            start = time.monotonic()
            for tick in range(10_000_000):
                if stop.is_set():
                    return
                cur.execute("UPDATE work.t SET n = n + 1 WHERE id = %s", (tick % 50 + 1,))
                time.sleep(max(0.0, start + (tick + 1) / per_s - time.monotonic()))
    except BaseException as error:  # surfaced by the test, never lost in the thread
        errors.append(error)


@pytest.mark.parametrize("per_s", [20.0, 250.0])
def test_a_workload_within_and_past_the_topology(
    cluster: GaleraCluster, topology: Path, monkeypatch: pytest.MonkeyPatch, per_s: float
) -> None:
    """20 commits/s, within the topology's peak of 100/s: replication latency is compared
    (loopback's is far below the metro's prediction) and nothing drifts. 250/s: the workload
    moved past the topology's peak and the topology is judged again with it."""
    first = cluster.nodes[0]
    cluster.execute(
        first,
        "CREATE DATABASE IF NOT EXISTS work",
        "CREATE TABLE IF NOT EXISTS work.t (id INT PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0)",
        "INSERT IGNORE INTO work.t (id) VALUES " + ",".join(f"({i})" for i in range(1, 51)),
    )
    stop, errors = threading.Event(), []
    writer = threading.Thread(target=_write_at, args=(first, per_s, stop, errors))
    writer.start()
    try:
        time.sleep(1.0)  # the pace settled before the first sample
        result = _check(topology, first, monkeypatch, "--format", "json", "--duration", "6s")
    finally:
        stop.set()
        writer.join(30)
    assert not errors, errors
    print(result.output)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    observed = data["observed"]
    assert observed["repl_latency_avg_ms"] is not None
    assert observed["repl_latency_avg_ms"] < data["predicted"]["commit_p99_ms"]
    found = {f["id"]: f for f in data["findings"]}
    if per_s < 100:
        assert _drift(data) == []
        assert 0.5 * per_s < observed["commits_per_s_avg"] < 2 * per_s
        return
    moved = found["CHECK-WORKLOAD-MOVED"]
    assert moved["expected"] == {"commits_per_s.peak": 100.0}
    assert moved["observed"]["commits_per_s.peak"] > 100
    assert data["reassessment"]["changed"].keys() == {"commits_per_s.peak"}
    assert data["reassessment"]["architecture"] == "single_cluster"
