"""The collection loop against a scripted server: sources, early ends, lost connections, CLI."""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest
import yaml
from typer.testing import CliRunner

import advisor.collect.api as api
from advisor.cli import app
from advisor.cli.collect import collect_command, parse_duration_s
from advisor.collect.connection import ConnectionSettings
from advisor.collect.hotrows import RowCounter
from advisor.errors import AdvisorError

VARIABLES = {
    "version": "8.0.36-28.1",
    "version_comment": "Percona XtraDB Cluster (GPL), Release rel28, WSREP version 26.1.4.3",
    "wsrep_on": "ON",
    "wsrep_provider": "/usr/lib/galera4/libgalera_smm.so",
    "wsrep_provider_options": "evs.send_window = 10; evs.user_send_window = 4; gcs.fc_limit = 100; ",
    "log_bin": "OFF",
    "binlog_format": "ROW",
    "log_slave_updates": "ON",
    "performance_schema": "ON",
}


class FakeServer:
    """Answers the statements collect sends, from scripted variables and status."""

    def __init__(
        self, variables: dict[str, str], status: Callable[[int], dict[str, str] | Exception]
    ) -> None:
        self.variables = variables
        self.status = status
        self.status_calls = 0
        self.table_calls = 0
        self.statements: list[str] = []
        self.refuse_connections = 0
        self.master_status: list[tuple[Any, ...]] | Exception = [("mysql-bin.000001", 4)]

    def answer(self, sql: str) -> list[tuple[Any, ...]]:
        self.statements.append(sql)
        if sql == "SHOW GLOBAL VARIABLES":
            return list(self.variables.items())
        if sql == "SHOW GLOBAL STATUS":
            result = self.status(self.status_calls)
            self.status_calls += 1
            if isinstance(result, Exception):
                raise result
            return list(result.items())
        if sql == "SHOW MASTER STATUS":
            if isinstance(self.master_status, Exception):
                raise self.master_status
            return self.master_status
        if "performance_schema" in sql:
            self.table_calls += 1
            return [("hot", "t", 100 * self.table_calls), ("hot", "idle", 5)]
        raise AssertionError(f"unexpected statement {sql!r}")


class FakeCursor:
    def __init__(self, server: FakeServer) -> None:
        self.server = server
        self.rows: list[tuple[Any, ...]] = []

    def __enter__(self) -> FakeCursor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, sql: str, args: object = None) -> None:
        self.rows = self.server.answer(sql)

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows


class FakeConnection:
    def __init__(self, server: FakeServer) -> None:
        self.server = server
        self.closed = False

    def cursor(self, cursor_class: object = None) -> FakeCursor:
        return FakeCursor(self.server)

    def close(self) -> None:
        self.closed = True


def _status(call: int) -> dict[str, str]:
    return {
        "Uptime": str(1000 + call),
        "wsrep_replicated": str(10 * call),
        "wsrep_received": str(20 * call),
        "wsrep_replicated_bytes": str(5000 * call),
        "wsrep_received_bytes": str(10000 * call),
        "wsrep_cluster_size": "3",
        "wsrep_cluster_status": "Primary",
        "wsrep_connected": "ON",
        "wsrep_provider_version": "26.4.16(r7dce5149)",
        "wsrep_gmcast_segment": "2",
    }


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    fake = FakeServer(dict(VARIABLES), _status)
    connections: list[FakeConnection] = []

    def connect(settings: ConnectionSettings) -> FakeConnection:
        if fake.refuse_connections > 0:
            fake.refuse_connections -= 1
            raise AdvisorError(f"cannot connect to {settings.describe()}: connection refused")
        connection = FakeConnection(fake)
        connections.append(connection)
        return connection

    monkeypatch.setattr(api, "connect", connect)
    yield fake
    assert all(connection.closed for connection in connections)
    assert all(sql.startswith(("SHOW", "SELECT")) for sql in fake.statements)


TARGET = ConnectionSettings(host="db1", user="advisor", password="pw-123")


def test_performance_schema_fallback_when_binary_logging_is_off(server: FakeServer) -> None:
    evidence = api.collect(TARGET, interval_s=0.01, duration_s=0.05)
    assert evidence.hot_row_source == "performance_schema"
    assert evidence.server.flavor == "pxc"
    assert evidence.server.galera_version == "26.4.16"
    assert evidence.server.provider_options == {
        "evs.send_window": 10,
        "evs.user_send_window": 4,
        "gcs.fc_limit": 100,
    }
    assert [row.name for row in evidence.hot_rows] == ["hot.t (whole table)"]
    assert evidence.notes[0].startswith(
        "hot rows: binary logging is off (log_bin=OFF); fell "
        "back to performance_schema table counts"
    )
    assert evidence.status.samples == server.status_calls - 1  # one read before the run
    assert evidence.status.segment == 2
    assert evidence.ended_early is False


def test_no_hot_row_source_is_said_not_failed(server: FakeServer) -> None:
    server.variables["performance_schema"] = "OFF"
    evidence = api.collect(TARGET, interval_s=0.01, duration_s=0.03)
    assert evidence.hot_row_source == "none"
    assert evidence.hot_rows == []
    assert evidence.notes == [
        "hot rows: binary logging is off (log_bin=OFF) and performance_schema is OFF; no hot "
        "rows collected (add workload.hot_rows by hand, or enable either)"
    ]


def test_not_a_galera_node_is_one_error_before_any_sampling(server: FakeServer) -> None:
    server.variables.pop("wsrep_on")
    with pytest.raises(AdvisorError) as caught:
        api.collect(TARGET, interval_s=0.01, duration_s=0.03)
    assert str(caught.value).startswith("advisor@db1:3306 is not a Galera node")
    assert server.status_calls == 1


def test_missing_binlog_monitor_privilege_is_named(server: FakeServer) -> None:
    server.variables["log_bin"] = "ON"
    server.master_status = pymysql.err.OperationalError(
        1227,
        "Access denied; you need (at least one of) the SUPER, BINLOG MONITOR privilege(s) "
        "for this operation",
    )
    with pytest.raises(AdvisorError) as caught:
        api.collect(TARGET, interval_s=0.01, duration_s=0.03)
    assert str(caught.value) == (
        "missing privilege for SHOW MASTER STATUS (binlog position) on advisor@db1:3306: Access "
        "denied; you need (at least one of) the SUPER, BINLOG MONITOR privilege(s) for this "
        "operation (GRANT it to advisor, or run as a user that has it)"
    )


def test_stop_event_ends_early_with_what_was_gathered(server: FakeServer) -> None:
    stop = threading.Event()
    seen: list[float] = []

    def progress(done: float) -> None:
        seen.append(done)
        if len(seen) == 3:
            stop.set()

    evidence = api.collect(TARGET, interval_s=0.01, duration_s=60, progress=progress, stop=stop)
    assert evidence.ended_early is True
    assert evidence.status.samples == 4  # three, and one more when the stop is seen
    assert all(0 <= done <= 1 for done in seen)


def test_ctrl_c_ends_early_with_what_was_gathered(server: FakeServer) -> None:
    calls = 0

    def progress(done: float) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise KeyboardInterrupt

    evidence = api.collect(TARGET, interval_s=0.01, duration_s=60, progress=progress)
    assert evidence.ended_early is True
    assert evidence.status.samples == 3


def test_a_lost_connection_leaves_a_gap_and_is_retried(server: FakeServer) -> None:
    lost = pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query")
    server.status = lambda call: lost if call == 3 else _status(call)
    armed = [True]

    def refuse_once(done: float) -> None:
        if armed and server.status_calls == 4:  # just after the lost sample
            armed.clear()
            server.refuse_connections = 1  # the first reconnect fails too

    evidence = api.collect(TARGET, interval_s=0.01, duration_s=0.1, progress=refuse_once)
    assert any(note.startswith("lost the connection at") for note in evidence.notes)
    assert not armed  # the refused reconnect happened
    assert evidence.status.samples >= 4
    assert evidence.status.commits_per_s.peak is not None


def test_other_errors_while_sampling_are_reported_not_retried(server: FakeServer) -> None:
    denied = pymysql.err.OperationalError(1142, "SELECT command denied to user 'advisor'")
    server.status = lambda call: denied if call == 2 else _status(call)
    with pytest.raises(AdvisorError, match="missing privilege for SHOW GLOBAL STATUS"):
        api.collect(TARGET, interval_s=0.01, duration_s=1)


class FakeReader:
    """Stands in for BinlogReader: already holds the rows and transactions of a run."""

    def __init__(
        self, settings: ConnectionSettings, log_file: str, log_pos: int, stop: threading.Event
    ) -> None:
        assert (log_file, log_pos) == ("mysql-bin.000001", 4)
        self.ready = threading.Event()
        self.ready.set()
        self.error: AdvisorError | None = None
        self.rows = RowCounter()
        for second in range(20):
            self.rows.add("hot.t id=1", 1000 + second, 40)
        self.tables_without_key = {"log.events"}
        self.transaction_bytes = array("q", [100] * 98 + [1000, 2000])
        self.interruptions: list[str] = []

    def start(self) -> None:
        pass

    def reached(self, position: tuple[str, int]) -> bool:
        return True

    def is_alive(self) -> bool:
        return False

    def join(self, timeout: float | None = None) -> None:
        pass


def test_binlog_source_gives_rows_and_scaled_write_set_sizes(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.variables["log_bin"] = "ON"
    monkeypatch.setattr(api, "BinlogReader", FakeReader)
    evidence = api.collect(TARGET, interval_s=0.01, duration_s=0.05)
    assert evidence.hot_row_source == "binlog"
    assert [(r.name, r.updates_per_s) for r in evidence.hot_rows] == [("hot.t id=1", 40.0)]
    # Status: 15000 bytes per 30 write sets = 500 B; binlog mean (9800 + 3000) / 100 = 128 B.
    assert evidence.writeset is not None
    assert evidence.writeset.p50_bytes == pytest.approx(100 * 500 / 128)
    assert evidence.writeset.p99_bytes == pytest.approx(1000 * 500 / 128)
    assert any("log.events" in note for note in evidence.notes)


# -- the command --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("10s", 10.0),
        ("10m", 600.0),
        ("1h", 3600.0),
        ("500ms", 0.5),
        ("1m30s", 90.0),
        ("2.5", 2.5),
        (" 10S ", 10.0),
    ],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration_s(text) == seconds


@pytest.mark.parametrize("text", ["", "10x", "-5s", "0s", "s", "1m 30s", "10mm", "inf"])
def test_bad_durations_are_one_line_errors(text: str) -> None:
    with pytest.raises(AdvisorError) as caught:
        parse_duration_s(text, "--interval")
    assert str(caught.value) == (
        f"--interval: expected a positive duration such as 10s, 10m, 1h or 500ms, got {text!r}"
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"output": Path("a.yaml"), "into": Path("b.yaml")},
            "give either -o FILE or --into FILE, not both",
        ),
        ({"interval": "1m", "duration": "10s"}, "--interval (1m) must not exceed --duration (10s)"),
        (
            {"password_env": "ADVISOR_TEST_UNSET_VARIABLE"},
            "--password-env: environment variable ADVISOR_TEST_UNSET_VARIABLE is not set",
        ),
        ({"user": None}, "give --user (or user= in the [client] group of --defaults-file)"),
        (
            {"into": Path("/nonexistent/topology.yaml")},
            "--into: no such file '/nonexistent/topology.yaml' (use -o to write a new one)",
        ),
        ({"ssl_ca": Path("/nonexistent/ca.pem")}, "--ssl-ca: no such file '/nonexistent/ca.pem'"),
    ],
)
def test_usage_errors_before_connecting(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(AdvisorError) as caught:
        collect_command(**{"user": "advisor", **arguments})
    assert str(caught.value) == message


def test_refused_connection_without_the_password(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("ADVISOR_TEST_PW", "hunter2-secret")
    with pytest.raises(AdvisorError) as caught:
        collect_command(
            host="127.0.0.1",
            port=port,
            user="advisor",
            password_env="ADVISOR_TEST_PW",
            duration="1s",
            interval="1s",
        )
    assert str(caught.value) == (
        f"cannot connect to advisor@127.0.0.1:{port}: connection "
        "refused (is the server running and reachable there?)"
    )


def test_command_writes_a_file_and_merges_into_one(
    server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ADVISOR_TEST_PW", "hunter2-secret")
    out = tmp_path / "collected.yaml"
    runner = CliRunner()
    common = [
        "--host",
        "db1",
        "--user",
        "advisor",
        "--password-env",
        "ADVISOR_TEST_PW",
        "--interval",
        "10ms",
        "--duration",
        "50ms",
    ]
    result = runner.invoke(app, ["collect", *common, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "hunter2-secret" not in result.output + out.read_text()
    assert yaml.safe_load(out.read_text())["galera"]["flavor"] == "pxc"
    target = tmp_path / "topology.yaml"
    target.write_text("name: t  # mine\nsites:\n  - name: a\n    nodes: 3\n")
    result = runner.invoke(app, ["collect", *common, "--into", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_text().startswith(
        "name: t  # mine\nsites:\n  - name: a\n    nodes: 3\n\nworkload:\n"
    )
    assert f"updated workload and galera in {target}" in result.output


def test_command_prints_to_standard_output_by_default(server: FakeServer) -> None:
    result = CliRunner().invoke(
        app,
        [
            "collect",
            "--host",
            "db1",
            "--user",
            "advisor",
            "--interval",
            "10ms",
            "--duration",
            "30ms",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "\nworkload:\n" in result.output and "\ngalera:\n" in result.output


class LaggingReader(FakeReader):
    """A reader that stopped short of the binlog end."""

    log_file, log_pos = "mysql-bin.000001", 4

    def reached(self, position: tuple[str, int]) -> bool:
        return (self.log_file, self.log_pos) >= position


def test_a_reader_left_behind_is_said(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.variables["log_bin"] = "ON"
    monkeypatch.setattr(api, "BinlogReader", LaggingReader)
    starts = iter([[("mysql-bin.000001", 4)]])

    def answer(
        sql: str, original: Callable[[str], list[tuple[Any, ...]]] = server.answer
    ) -> list[tuple[Any, ...]]:
        if sql == "SHOW MASTER STATUS":
            return next(starts, [("mysql-bin.000002", 900)])
        return original(sql)

    monkeypatch.setattr(server, "answer", answer)
    evidence = api.collect(TARGET, interval_s=0.01, duration_s=0.03)
    assert (
        "the binary log reader had reached mysql-bin.000001:4 of mysql-bin.000002:900 when "
        "the run ended; hot-row counts miss the rest"
    ) in evidence.notes


class _Reader:
    """What _commit_rate reads of a BinlogReader."""

    def __init__(self, transactions: int) -> None:
        self.transaction_bytes = array("q", [500] * transactions)
        self.error: str | None = None
        self.interruptions: list[str] = []


def _info(log_slave_updates: bool) -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(log_slave_updates=log_slave_updates)


def test_the_commit_rate_counts_the_binary_logs_transactions() -> None:
    # Issue 14: under conflicts the status counters read 100/s for 79.9/s committed (silent
    # autocommit retries take seqnos); the binary log holds exactly what committed.
    from advisor.collect.status import Spread, StatusSummary

    status = StatusSummary.__new__(StatusSummary)
    object.__setattr__(status, "commits_per_s", Spread(100.0, 110.0))
    spread, why = api._commit_rate(
        status, _Reader(1600), _info(True), 20.0, complete=True, interval_s=2.0
    )
    assert spread == Spread(80.0, 88.0)  # the peak keeps the intervals' shape, scaled
    assert why.startswith("1600 binary log transactions in 20s")
    # Not when the log holds only this node's writes, or was not read to its end.
    for info, complete in ((_info(False), True), (_info(True), False)):
        assert api._commit_rate(
            status, _Reader(1600), info, 20.0, complete=complete, interval_s=2.0
        ) == (None, "")
