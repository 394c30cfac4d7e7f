"""mysqld_exporter against a real three-node MariaDB Galera cluster exposes every metric the
generated alerting rules read (advisor/config/alerts.py).

The cluster is tests/integration/galera_cluster.py's; Debian's prometheus-mysqld-exporter
runs against node 1 on a free loopback port, with a my.cnf of its own account and the
collectors the rules need (``--collect.global_status --collect.slave_status``). Node 1 runs
one asynchronous channel named as paris-frankfurt's design names the channel into its Paris
cluster (``from_frankfurt``), from node 2, filtered to a database nobody writes so that it
applies nothing of its own cluster: that is what makes the exporter show the channel's series
with the labels the rules select.

The second test keeps the reason the lag rules read Seconds_Behind_Master: the exporter's
heartbeat collector reads the design's ``advisor.heartbeat`` table, but the design writes a
row per node, and two rows of one ``server_id`` make the exporter fail the whole scrape.

Without mariadbd and galera-4 the tests skip (``ADVISOR_REQUIRE_GALERA=1`` fails instead),
without the exporter likewise (``ADVISOR_REQUIRE_PROMETHEUS=1``). Cluster and exporters are
always stopped at the end.
"""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from galera_cluster import GaleraCluster, Node, galera_cluster, missing_requirements, require
from prometheus_tools import exporter, require_prometheus

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples/paris-frankfurt/topology.yaml"
EXPORTER_PASSWORD = "exporter-pw-3"
# Replicates nothing: the channel's SQL thread skips every event of other databases.
NOTHING = "advisor_alerts_nothing"
STARTED_WITHIN_S = 20.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _alerts() -> tuple[object, str]:
    """paris-frankfurt's alerts plan and the heartbeat file of its Frankfurt cluster."""
    from advisor.analysis import analyse
    from advisor.config.alerts import alerts_plan
    from advisor.config.plan import plan_configuration
    from advisor.documents.render import render_documents

    analysis = analyse(EXAMPLE)
    plan = plan_configuration(analysis)
    heartbeat = render_documents(analysis, ("md",))["config/heartbeat-frankfurt.sql"]
    return alerts_plan(analysis, plan), heartbeat


@pytest.fixture(scope="module")
def cluster() -> Iterator[GaleraCluster]:
    require(missing_requirements())
    require_prometheus(
        [] if exporter() else ["mysqld_exporter (apt-get install prometheus-mysqld-exporter)"]
    )
    with galera_cluster() as running:
        first, second = running.nodes[0], running.nodes[1]
        running.execute(
            first,
            # mysqld_exporter's README: PROCESS, REPLICATION CLIENT and SELECT; MariaDB 10.5+
            # wants SLAVE MONITOR for SHOW ALL SLAVES STATUS (granted below where it exists).
            f"CREATE USER exporter@'127.0.0.1' IDENTIFIED BY '{EXPORTER_PASSWORD}' "
            "WITH MAX_USER_CONNECTIONS 3",
            "GRANT PROCESS, SELECT ON *.* TO exporter@'127.0.0.1'",
        )
        for privilege in ("SLAVE MONITOR", "REPLICATION CLIENT"):
            with contextlib.suppress(Exception):
                running.execute(first, f"GRANT {privilege} ON *.* TO exporter@'127.0.0.1'")
        running.execute(
            second,
            "CREATE USER repl@'127.0.0.1' IDENTIFIED BY 'repl-pw'",
            "GRANT REPLICATION SLAVE ON *.* TO repl@'127.0.0.1'",
        )
        yield running


def _channel(cluster: GaleraCluster, name: str) -> None:
    """A running channel ``name`` on node 1 from node 2 that applies nothing."""
    first, second = cluster.nodes[0], cluster.nodes[1]
    cluster.execute(
        first,
        f"CHANGE MASTER '{name}' TO MASTER_HOST='127.0.0.1', MASTER_PORT={second.port}, "
        "MASTER_USER='repl', MASTER_PASSWORD='repl-pw', MASTER_USE_GTID=slave_pos",
        f"SET GLOBAL `{name}`.replicate_do_db = '{NOTHING}'",
        f"START SLAVE '{name}'",
    )


@contextlib.contextmanager
def _exporter(node: Node, tmp_path: Path, *flags: str) -> Iterator[str]:
    """mysqld_exporter against ``node`` on a free loopback port; yields its /metrics URL."""
    binary = exporter()
    assert binary is not None
    my_cnf = tmp_path / "exporter.my.cnf"
    my_cnf.write_text(
        f"[client]\nuser=exporter\npassword={EXPORTER_PASSWORD}\nhost=127.0.0.1\nport={node.port}\n"
    )
    my_cnf.chmod(0o600)
    port = _free_port()
    log = (tmp_path / "exporter.log").open("wb")
    process = subprocess.Popen(
        [binary, f"--config.my-cnf={my_cnf}", f"--web.listen-address=127.0.0.1:{port}", *flags],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        deadline = time.monotonic() + STARTED_WITHIN_S
        while True:
            assert process.poll() is None, (tmp_path / "exporter.log").read_text()
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", port), timeout=1),
            ):
                break
            assert time.monotonic() < deadline, "the exporter did not listen in time"
            time.sleep(0.2)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        log.close()


def _scrape(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=15) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _series(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_the_exporter_exposes_every_metric_the_rules_read(
    cluster: GaleraCluster, tmp_path: Path
) -> None:
    alerts, _ = _alerts()
    group = next(g for g in alerts.groups if g.cluster == "paris-1_paris-2")  # type: ignore[attr-defined]
    channel = next(r.labels["channel"] for r in group.rules if r.labels)
    assert channel == "from_frankfurt"
    _channel(cluster, channel)
    flags = ("--collect.global_status", "--collect.slave_status")
    with _exporter(cluster.nodes[0], tmp_path, *flags) as url:
        # The channel's SQL thread starts within a moment; its lag shows once it runs.
        def scrape_with_channel() -> str:
            status, text = _scrape(url)
            assert status == 200, text[:2000]
            return text

        deadline = time.monotonic() + STARTED_WITHIN_S
        text = scrape_with_channel()
        while "mysql_slave_status_seconds_behind_master{" not in text:
            assert time.monotonic() < deadline, "no Seconds_Behind_Master in time:\n" + text[-3000:]
            time.sleep(0.5)
            text = scrape_with_channel()
    series = _series(text)
    exposed = {re.split(r"[{ ]", line, maxsplit=1)[0] for line in series}
    needed = alerts.metrics  # type: ignore[attr-defined]
    assert needed <= exposed, sorted(needed - exposed)
    # What the rules compare, as the exporter reads it on a healthy cluster of three.
    values = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in series}
    assert values["mysql_up"] == 1
    assert values["mysql_global_status_wsrep_cluster_status"] == 1  # "Primary" read as 1
    assert values["mysql_global_status_wsrep_cluster_size"] == 3
    # The channel's series carry the label the rules select it by (MariaDB: connection_name).
    labelled = [
        line
        for line in series
        if line.startswith("mysql_slave_status_") and f'connection_name="{channel}"' in line
    ]
    names = {line.split("{", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in labelled}
    assert names["mysql_slave_status_slave_io_running"] == 1
    assert names["mysql_slave_status_slave_sql_running"] == 1
    assert names["mysql_slave_status_seconds_behind_master"] == 0


def test_the_exporters_heartbeat_collector_fails_on_the_designs_heartbeat_table(
    cluster: GaleraCluster, tmp_path: Path
) -> None:
    _, heartbeat = _alerts()
    create = re.search(
        r"CREATE TABLE IF NOT EXISTS advisor\.heartbeat \(.*?\) ENGINE=InnoDB", heartbeat, re.S
    )
    assert create is not None
    first = cluster.nodes[0]
    cluster.execute(
        first,
        "CREATE DATABASE IF NOT EXISTS advisor",
        create.group(0),
        "GRANT SELECT ON advisor.* TO exporter@'127.0.0.1'",
        # One node's row, as its event writes it.
        "INSERT INTO advisor.heartbeat (server_id, node, ts) VALUES (1, 'node1', NOW(6))",
    )
    flags = (
        "--collect.heartbeat",
        "--collect.heartbeat.database=advisor",
        "--collect.heartbeat.table=heartbeat",
    )
    # The exporter reads the table's columns: one row per server_id gives its series.
    with _exporter(first, tmp_path, *flags) as url:
        status, text = _scrape(url)
        assert status == 200
        assert 'mysql_heartbeat_stored_timestamp_seconds{server_id="1"}' in text
        # The design's second node of the same cluster writes its own row (advisor/config/
        # failover.py: every node runs its event, so one lost node does not stop it).
        cluster.execute(
            first,
            "INSERT INTO advisor.heartbeat (server_id, node, ts) VALUES (1, 'node2', NOW(6))",
        )
        status, text = _scrape(url)
    assert status == 500
    assert "was collected before with the same name and label values" in text
