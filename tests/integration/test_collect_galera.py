"""advisor collect against a real three-node MariaDB Galera cluster on loopback.

The cluster (tests/integration/galera_cluster.py) runs nodes 1 and 2 with the binary log
and node 3 without it but with performance_schema, so one run checks both hot-row sources.
Two writers, one on node 1 and one on node 2, each update the hot row ``hot.t id=1`` 20
times a second and one of 50 other rows after each, so the hot row changes 40 times a second
and the cluster commits about 80 transactions a second. collect watches node 1 (through the
command line, ``--into`` a topology file) and node 3 (through the API) at the same time.

Without mariadbd and galera-4 the tests skip; with ``ADVISOR_REQUIRE_GALERA=1`` (CI) they
fail instead. The cluster is torn down at the end of the module, pass or fail.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pymysql
import pytest
import yaml
from galera_cluster import GaleraCluster, Node, galera_cluster, missing_requirements, require
from typer.testing import CliRunner

from advisor.collect import ConnectionSettings, collect
from advisor.collect.api import CollectedEvidence
from advisor.errors import AdvisorError

pytestmark = pytest.mark.slow

HOT_UPDATES_PER_S_PER_WRITER = 20.0
COLD_ROWS = 50
COLLECT_S = 20.0
INTERVAL_S = 2.0
ADVISOR_PASSWORD = "advisor-pw-7"

SITES = """\
# Two rooms of one lab. This comment and the sites must survive --into.
name: loopback-lab
sites:
  - name: room-a   # nodes 1 and 2
    nodes: 2
  - name: room-b
    nodes: 1
links:
  - sites: [room-a, room-b]
    distance_km: 1
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[GaleraCluster]:
    missing = missing_requirements()
    require(missing)
    with galera_cluster(
        log_bin=(True, True, False), performance_schema=(False, False, True)
    ) as running:
        first = running.nodes[0]
        running.execute(
            first,
            f"CREATE USER advisor@'127.0.0.1' IDENTIFIED BY '{ADVISOR_PASSWORD}'",
            # SELECT: primary keys in information_schema and performance_schema counts;
            # REPLICATION SLAVE: the binlog stream. Nothing that writes.
            "GRANT SELECT, REPLICATION SLAVE ON *.* TO advisor@'127.0.0.1'",
            "CREATE USER monitor@'127.0.0.1' IDENTIFIED BY 'monitor-pw'",
            "CREATE USER writer@'127.0.0.1' IDENTIFIED BY 'writer-pw'",
            "CREATE DATABASE hot",
            "GRANT ALL ON hot.* TO writer@'127.0.0.1'",
            "CREATE TABLE hot.t (id INT PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0, "
            "pad VARCHAR(255) NOT NULL DEFAULT '')",
            "INSERT INTO hot.t (id) VALUES "
            + ",".join(f"({row})" for row in range(1, COLD_ROWS + 2)),
        )
        # SHOW MASTER STATUS needs BINLOG MONITOR on MariaDB >= 10.5, REPLICATION CLIENT before.
        for privilege in ("BINLOG MONITOR", "REPLICATION CLIENT"):
            try:
                running.execute(
                    first,
                    f"GRANT {privilege} ON *.* TO advisor@'127.0.0.1'",
                    f"GRANT {privilege} ON *.* TO monitor@'127.0.0.1'",
                )
                break
            except pymysql.err.MySQLError:
                continue
        yield running


@dataclass
class Writer:
    """Updates the hot row, then a cold one, at a fixed pace until stopped."""

    node: Node
    stop: threading.Event
    hot_commits: list[float] = field(default_factory=list)
    cold_commits: list[float] = field(default_factory=list)
    conflicts: int = 0
    error: BaseException | None = None

    def run(self) -> None:
        try:
            connection = pymysql.connect(
                host="127.0.0.1",
                port=self.node.port,
                user="writer",
                password="writer-pw",
                autocommit=True,
            )
            rng = random.Random(self.node.index)
            start = time.monotonic()
            with connection, connection.cursor() as cursor:
                for tick in range(1_000_000):
                    if self.stop.is_set():
                        return
                    self._update(cursor, 1, self.hot_commits)
                    self._update(cursor, rng.randint(2, COLD_ROWS + 1), self.cold_commits)
                    wake = start + (tick + 1) / HOT_UPDATES_PER_S_PER_WRITER
                    time.sleep(max(0.0, wake - time.monotonic()))
        except BaseException as error:  # surfaced by the test, never lost in the thread
            self.error = error

    def _update(self, cursor: pymysql.cursors.Cursor, row: int, done: list[float]) -> None:
        try:
            cursor.execute(
                "UPDATE hot.t SET n = n + 1, pad = REPEAT('x', 200) WHERE id = %s", (row,)
            )
            done.append(time.monotonic())
        except pymysql.err.OperationalError as error:
            if error.args[0] != 1213:  # a certification conflict is expected now and then
                raise
            self.conflicts += 1


def _rate(times: list[float], start: float, end: float) -> float:
    return sum(start <= t <= end for t in times) / (end - start)


def test_collect_finds_the_hot_row_and_the_rates_the_workload_made(
    cluster: GaleraCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop = threading.Event()
    writers = [Writer(cluster.nodes[0], stop), Writer(cluster.nodes[1], stop)]
    threads = [threading.Thread(target=w.run, daemon=True) for w in writers]
    topology = tmp_path / "topology.yaml"
    topology.write_text(SITES)
    monkeypatch.setenv("ADVISOR_TEST_PASSWORD", ADVISOR_PASSWORD)
    node3: dict[str, CollectedEvidence] = {}

    def watch_node3() -> None:
        settings = ConnectionSettings(
            host="127.0.0.1", port=cluster.nodes[2].port, user="advisor", password=ADVISOR_PASSWORD
        )
        node3["evidence"] = collect(settings, interval_s=INTERVAL_S, duration_s=COLLECT_S)

    for thread in threads:
        thread.start()
    try:
        time.sleep(2.0)  # let the pace settle
        side = threading.Thread(target=watch_node3)
        side.start()
        began = time.monotonic()
        app_result = _run_cli(cluster.nodes[0], topology)
        ended = time.monotonic()
        side.join(60)
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    for writer in writers:
        assert writer.error is None, writer.error
    assert app_result.exit_code == 0, app_result.output
    assert ADVISOR_PASSWORD not in app_result.output + topology.read_text()

    hot_rate = sum(_rate(w.hot_commits, began, ended) for w in writers)
    commit_rate = hot_rate + sum(_rate(w.cold_commits, began, ended) for w in writers)
    assert hot_rate == pytest.approx(2 * HOT_UPDATES_PER_S_PER_WRITER, rel=0.2)  # the pace held

    text = topology.read_text()
    print(text)  # shown when the test fails
    print(
        f"hot row {hot_rate:.1f}/s, commits {commit_rate:.1f}/s, "
        f"conflicts {sum(w.conflicts for w in writers)}"
    )
    assert text.startswith(SITES)  # the user's part, comments included, is untouched
    document = yaml.safe_load(text)
    workload = document["workload"]
    hottest = workload["hot_rows"][0]
    assert hottest["name"] == "hot.t id=1"
    assert hottest["updates_per_s"] == pytest.approx(hot_rate, rel=0.2)
    assert all(
        row["updates_per_s"] < hottest["updates_per_s"] / 5 for row in workload["hot_rows"][1:]
    )
    assert "# binary log: row events per primary key" in text
    assert "changes in the run, from server_id 1, 2\n" in text  # both writers' nodes

    commits = workload["commits_per_s"]
    # The status counters read 100/s for 79.9/s written on a loaded machine (2026-11-22, full
    # suite): wsrep_retry_autocommit retries a hot-row UPDATE that failed certification without
    # telling the client, and the failed write set still takes a seqno that node 1 cannot
    # subtract (wsrep_local_cert_failures is per node). collect now counts the binary log's
    # transactions, exactly what committed (advisor/collect/api.py, _commit_rate; issue 14).
    assert "binary log transactions" in text
    assert commits["avg"] == pytest.approx(commit_rate, rel=0.15)
    assert commits["avg"] <= commits["peak"] <= 2 * commit_rate
    # Each write set holds the 200-byte pad twice (before and after image) plus keys and
    # headers, and the row is small otherwise: between 400 B and 4 kB per write set.
    assert 400 <= workload["writeset_bytes"]["p50"] <= workload["writeset_bytes"]["p99"] <= 4096
    assert 400 * commit_rate <= workload["replicated_bytes_per_s"]["peak"] <= 4096 * 2 * commit_rate

    galera = document["galera"]
    assert galera["flavor"] == "mariadb"
    assert galera["version"].startswith(("25.3.", "26.4."))
    assert galera["provider_options"]["evs.send_window"] == 4
    assert galera["provider_options"]["gmcast.segment"] == 0

    evidence = node3["evidence"]
    assert evidence.hot_row_source == "performance_schema"
    assert evidence.hot_rows[0].name == "hot.t (whole table)"
    # Node 3 takes no writes itself: its appliers make every change, hot and cold alike. Its
    # collect runs in a side thread whose window is not the one the rates were paced over, and
    # the whole-table count is an upper bound on the hottest row: under load it was seen at
    # 101/s for 80/s written (1 run in 5), so it is held to a band, not to +-25 %.
    assert 0.75 * commit_rate <= evidence.hot_rows[0].updates_per_s <= 1.5 * commit_rate
    # Node 3's status counters count the write sets it applied, the silently retried ones
    # included (wsrep_retry_autocommit, above): 100/s for 79.9/s committed was seen in CI
    # (2026-11-22), so they too are held to a band, an upper bound with the retries.
    assert 0.75 * commit_rate <= evidence.status.commits_per_s.avg <= 1.5 * commit_rate
    assert evidence.status.cluster_size_min == evidence.status.cluster_size_max == 3
    assert evidence.status.repl_latency is not None

    _check_recommend_accepts(topology)


def _run_cli(node: Node, topology: Path) -> object:
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


def _check_recommend_accepts(topology: Path) -> None:
    from advisor.inputs.loading import load_topology

    load_topology(topology)
    try:
        from advisor.cli import app
    except ImportError:  # the main command line is not assembled yet: loading is the check
        return
    result = CliRunner().invoke(app, ["recommend", str(topology), "--format", "json"])
    print(result.output)
    assert result.exit_code == 0, result.output
    assert '"hot.t id=1"' in result.output


def test_live_errors_are_one_line_and_name_the_privilege(cluster: GaleraCluster) -> None:
    node = cluster.nodes[0]
    wrong = ConnectionSettings(
        host="127.0.0.1", port=node.port, user="advisor", password="not-the-password"
    )
    with pytest.raises(AdvisorError) as caught:
        collect(wrong, interval_s=1, duration_s=1)
    assert str(caught.value) == (
        f"access denied for advisor@127.0.0.1:{node.port}: check the "
        "user and the password (--password-env VAR or --defaults-file)"
    )
    monitor = ConnectionSettings(
        host="127.0.0.1", port=node.port, user="monitor", password="monitor-pw"
    )
    with pytest.raises(AdvisorError) as caught:
        collect(monitor, interval_s=1, duration_s=1)
    assert "the REPLICATION SLAVE privilege" in str(caught.value)
    assert "\n" not in str(caught.value)
