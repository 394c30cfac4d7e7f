"""advisor check against a scripted server (tests/fake_mysql_wire.py): drift found, or not,
with hand-computed figures; errors as one line and exit 2; a silent server bounded."""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from fake_mysql_wire import WireServer, column, lenenc, packet
from typer.testing import CliRunner

from advisor.check import CheckResult, check, time_limit_s
from advisor.check.drift import option_values_equal
from advisor.cli import app
from advisor.collect.connection import ConnectionSettings
from advisor.errors import AdvisorError

ROOT = Path(__file__).resolve().parent.parent
US_EU = ROOT / "examples" / "us-eu" / "topology.yaml"

# Three rooms a metro apart, one node each: the design is one cluster, room-a its writer.
TOPOLOGY = """\
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
  hot_rows:
    - {name: "hot.t id=1", updates_per_s: 5, writer_sites: [room-a]}
galera:
  flavor: mariadb
"""

# What the design's configuration sets on room-a-db1 (advisor doc's galera-room-a.cnf).
DESIGN_OPTIONS = {
    "gmcast.segment": "0",
    "evs.send_window": "4",
    "evs.user_send_window": "2",
    "gcache.size": "128M",
    "gcs.fc_limit": "256",
    "gcs.fc_factor": "0.99",
    "gcs.fc_single_primary": "YES",
    "evs.suspect_timeout": "PT5S",
    "evs.install_timeout": "PT7.5S",
}


def provider_options(**changes: str) -> str:
    values = {**DESIGN_OPTIONS, **changes}
    return "; ".join(f"{k} = {v}" for k, v in values.items())


def variables(**changes: str) -> list[tuple[str, str]]:
    base = {
        "version": "10.11.6-MariaDB-log",
        "version_comment": "MariaDB Server",
        "wsrep_on": "ON",
        "wsrep_provider": "/usr/lib/galera/libgalera_smm.so",
        "wsrep_provider_options": provider_options(),
        "wsrep_cluster_name": "room-a_room-b_room-c",
        "wsrep_node_name": "room-a-db1",
        "wsrep_slave_threads": "4",
        "read_only": "OFF",
        "log_bin": "OFF",
        "binlog_format": "ROW",
        "log_slave_updates": "ON",
        "performance_schema": "OFF",
    }
    return list({**base, **changes}.items())


def quiet_status(call: int) -> list[tuple[str, str]]:
    """A healthy idle node: three members, nothing paused, nothing failed."""
    return [
        ("Uptime", str(1000 + call)),
        ("wsrep_last_committed", str(100 + 10 * call)),
        ("wsrep_replicated", str(10 * call)),
        ("wsrep_local_commits", str(10 * call)),  # the writer: every commit its own
        ("wsrep_received", "0"),
        ("wsrep_replicated_bytes", str(4000 * call)),
        ("wsrep_received_bytes", "0"),
        ("wsrep_cluster_size", "3"),
        ("wsrep_cluster_status", "Primary"),
        ("wsrep_connected", "ON"),
        ("wsrep_provider_version", "26.4.16(r7dce5149)"),
        ("wsrep_flow_control_paused_ns", "0"),
        ("wsrep_flow_control_sent", "0"),
        ("wsrep_flow_control_recv", "0"),
        ("wsrep_local_cert_failures", "0"),
        ("wsrep_local_bf_aborts", "0"),
        # 1/2/3 ms min/avg/max over 40 messages: within the predicted network part.
        ("wsrep_evs_repl_latency", "0.001/0.002/0.003/0.0005/40"),
    ]


class Named:
    """A result set whose columns have names (SHOW ... SLAVE STATUS is read by name)."""

    def __init__(self, rows: list[dict[str, str | None]]) -> None:
        self.rows = rows


class Refused:
    """An error reply: ``code`` and the server's text."""

    def __init__(self, code: int, text: str) -> None:
        self.code, self.text = code, text


class ScriptedServer(WireServer):
    """WireServer whose status changes from one sample to the next, with named result sets,
    error replies, and a status that can fall silent after ``silent_after`` samples."""

    def __init__(
        self,
        status: Callable[[int], list[tuple[str, str]]],
        answers: Mapping[str, Any],
        *,
        silent_after: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__({}, **kwargs)
        self.status = status
        self.scripted = dict(answers)
        self.status_calls = 0
        self.silent_after = silent_after

    def _answer(self, sql: str) -> Any:
        if sql.startswith("SHOW GLOBAL STATUS"):
            call = self.status_calls
            self.status_calls += 1
            if self.silent_after is not None and call >= self.silent_after:
                self._stop.wait(60)  # says nothing until the test ends
            return self.status(call)
        for prefix, answer in self.scripted.items():
            if sql.startswith(prefix):
                return answer
        return []

    def _result(self, client: Any, answer: Any) -> None:
        if isinstance(answer, Refused):
            error = b"\xff" + struct.pack("<H", answer.code) + b"#42000" + answer.text.encode()
            self._send(client, packet(1, error), slow=False)
            return
        if not isinstance(answer, Named):
            super()._result(client, answer)
            return
        names = list(answer.rows[0]) if answer.rows else ["Channel_Name"]
        out = [packet(1, bytes([len(names)]))]
        sequence = 2
        for name in names:
            out.append(packet(sequence, column(name)))
            sequence += 1
        out.append(packet(sequence, b"\xfe\x00\x00\x02\x00"))
        sequence += 1
        for row in answer.rows:
            out.append(packet(sequence, b"".join(lenenc(row[n]) for n in names)))
            sequence += 1
        out.append(packet(sequence, b"\xfe\x00\x00\x02\x00"))
        self._send(client, b"".join(out), slow=False)


@pytest.fixture
def topology(tmp_path: Path) -> Path:
    path = tmp_path / "topology.yaml"
    path.write_text(TOPOLOGY, encoding="utf-8")
    return path


def settings_for(
    server: WireServer, password: str = "secret", timeout_s: float = 5.0
) -> ConnectionSettings:
    host, port = server.address
    return ConnectionSettings(
        host=host,
        port=port,
        user="monitor",
        password=password,
        connect_timeout_s=timeout_s,
        read_timeout_s=timeout_s,
        write_timeout_s=timeout_s,
    )


def run_check(
    topology: Path | str,
    status: Callable[[int], list[tuple[str, str]]] = quiet_status,
    answers: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> tuple[CheckResult, ScriptedServer]:
    scripted = {"SHOW GLOBAL VARIABLES": variables(), **(answers or {})}
    with ScriptedServer(status, scripted) as server:
        result = check(topology, settings_for(server), 1.0, interval_s=0.5, **kwargs)
    return result, server


def ids(result: CheckResult) -> list[str]:
    return [f.id for f in result.findings]


def test_a_healthy_node_shows_no_drift(topology: Path) -> None:
    result, server = run_check(topology)
    assert result.findings == [], [f.message for f in result.findings]
    assert result.architecture == "single_cluster"
    assert result.cluster == "room-a_room-b_room-c"
    assert result.site == "room-a"
    assert result.predicted["cluster_size"] == 3
    assert result.predicted["wsrep_slave_threads"] == 4
    assert result.observed["repl_latency_avg_ms"] == pytest.approx(2.0)
    # Read-only: every statement sent was a SHOW or a SELECT.
    assert server.statements
    assert all(s.startswith(("SHOW", "SELECT", "SET")) for s in server.statements)
    assert not [s for s in server.statements if s.startswith("SET") and "GLOBAL" in s.upper()]


def test_a_changed_send_window_is_named_with_both_values(topology: Path) -> None:
    answers = {
        "SHOW GLOBAL VARIABLES": variables(
            wsrep_provider_options=provider_options(**{"evs.send_window": "8"})
        )
    }
    result, _ = run_check(topology, answers=answers)
    assert ids(result) == ["CHECK-SETTINGS"]
    finding = result.findings[0]
    assert finding.subject == "evs.send_window"
    assert finding.observed == {"evs.send_window": 8}
    assert finding.expected == {"evs.send_window": 4}
    assert "evs.send_window is 8 on this node; the design sets 4" in finding.message


def test_applier_threads_and_read_only_against_the_design(topology: Path) -> None:
    answers = {"SHOW GLOBAL VARIABLES": variables(wsrep_slave_threads="1", read_only="ON")}
    result, _ = run_check(topology, answers=answers)
    assert sorted(f.subject for f in result.findings) == ["read_only", "wsrep_slave_threads"]
    threads = next(f for f in result.findings if f.subject == "wsrep_slave_threads")
    assert threads.expected == {"wsrep_slave_threads": 4}


def test_slow_replication_pauses_conflicts_and_a_lost_member(topology: Path) -> None:
    def status(call: int) -> list[tuple[str, str]]:
        rows = dict(quiet_status(call))
        rows |= {
            # 10 ms on average: the design predicts a network part of a few ms at p99.
            "wsrep_evs_repl_latency": "0.004/0.010/0.030/0.002/50",
            "wsrep_flow_control_paused_ns": str(250_000_000 * call),  # 0.25 s per 0.5 s
            "wsrep_flow_control_sent": str(call),
            "wsrep_flow_control_recv": str(2 * call),
            "wsrep_local_cert_failures": str(3 * call),
            "wsrep_cluster_size": "3" if call == 0 else "2",
        }
        return list(rows.items())

    result, _ = run_check(topology, status)
    found = {f.id: f for f in result.findings}
    assert set(found) == {
        "CHECK-COMMIT-LATENCY",
        "CHECK-FLOW-CONTROL",
        "CHECK-CERT-FAILURES",
        "CHECK-CLUSTER-SIZE",
    }
    latency = found["CHECK-COMMIT-LATENCY"]
    assert latency.observed["repl_latency_avg_ms"] == pytest.approx(10.0)
    # The writer's predicted commit p99 less the 1 ms of local work the model adds.
    assert latency.expected["network_p99_ms"] == pytest.approx(
        result.predicted["commit_p99_ms"] - 1.0, abs=1e-3
    )
    assert latency.expected["network_p99_ms"] < 10.0
    fc = found["CHECK-FLOW-CONTROL"]
    # 0.25 s paused per 0.5 s sampled: half the run (the clock of a loaded machine: roughly).
    assert fc.observed["paused_share"] == pytest.approx(0.5, abs=0.15)
    assert fc.observed["fc_sent_by_this_node"] >= 2
    assert "this node sent" in fc.message
    assert fc.expected["paused_share"] == 0
    # One writer site for the hot row: the model predicts no conflicts, so any is drift.
    cert = found["CHECK-CERT-FAILURES"]
    assert cert.expected["conflicts_max"] == 0
    assert cert.observed["conflicts"] >= 6
    assert found["CHECK-CLUSTER-SIZE"].observed["cluster_size_min"] == 2


def test_a_workload_past_the_topology_is_judged_again(topology: Path) -> None:
    def status(call: int) -> list[tuple[str, str]]:
        rows = dict(quiet_status(call))
        # 200 commits in each 0.5 s interval: 400/s against the topology's peak of 100/s.
        rows["wsrep_last_committed"] = str(100 + 200 * call)
        return list(rows.items())

    result, _ = run_check(topology, status)
    moved = [f for f in result.findings if f.id == "CHECK-WORKLOAD-MOVED"]
    assert len(moved) == 1
    assert moved[0].expected == {"commits_per_s.peak": 100.0}
    assert float(moved[0].observed["commits_per_s.peak"]) > 200
    assert result.reassessment is not None
    assert result.reassessment.changed.keys() == {"commits_per_s.peak"}
    assert result.reassessment.architecture in (
        "single_cluster",
        "per_site_clusters",
        "grouped_clusters",
    )
    assert "judged again" in moved[0].message


def us_eu_variables() -> list[tuple[str, str]]:
    rows = dict(variables())
    rows |= {
        "version": "8.0.36-28.1",
        "version_comment": "Percona XtraDB Cluster (GPL), Release rel28",
        "wsrep_cluster_name": "dublin",
        "wsrep_node_name": "dublin-db2",
        "wsrep_provider_options": "evs.send_window = 10; evs.user_send_window = 4",
    }
    return list(rows.items())


def replica(io: str = "Yes", sql: str = "Yes", behind: str | None = "0") -> Named:
    return Named(
        [
            {
                "Channel_Name": "from_virginia",
                "Replica_IO_Running": io,
                "Replica_SQL_Running": sql,
                "Seconds_Behind_Source": behind,
                "Last_SQL_Error": "" if sql == "Yes" else "Error 1062: duplicate key",
            }
        ]
    )


def test_a_stopped_channel_is_a_blocker() -> None:
    answers = {
        "SHOW GLOBAL VARIABLES": us_eu_variables(),
        "SHOW REPLICA STATUS": replica(sql="No", behind=None),
        "SELECT server_id": [("1", "12.5")],
    }
    result, server = run_check(US_EU, answers=answers)
    stopped = [f for f in result.findings if f.id == "CHECK-CHANNEL-STOPPED"]
    assert [f.severity for f in stopped] == ["blocker"]
    assert stopped[0].subject == "from_virginia"
    assert "SQL thread No" in stopped[0].message and "duplicate key" in stopped[0].message
    assert result.findings[0].severity == "blocker"  # most severe first
    assert any(s.startswith("SHOW REPLICA STATUS") for s in server.statements)


def test_a_channel_lagging_past_its_data_at_risk() -> None:
    # The heartbeat of virginia (server_id 1) is 90 ms old; the design's channel lags at most
    # 40.5 ms at p99, plus one 20 ms heartbeat interval: 60.5 ms.
    answers = {
        "SHOW GLOBAL VARIABLES": us_eu_variables(),
        "SHOW REPLICA STATUS": replica(),
        "SELECT server_id": [("1", "90.0")],
    }
    result, _ = run_check(US_EU, answers=answers)
    lag = [f for f in result.findings if f.id == "CHECK-CHANNEL-LAG"]
    assert len(lag) == 1
    assert lag[0].observed == {"lag_max_ms": 90.0}
    assert lag[0].expected == {"lag_p99_ms": 60.5}
    assert not [f for f in result.findings if f.id == "CHECK-CHANNEL-STOPPED"]


def test_an_unknown_architecture_is_refused_before_connecting(topology: Path) -> None:
    settings = ConnectionSettings(port=1, user="x", connect_timeout_s=1)
    with pytest.raises(AdvisorError, match="not an option of this topology"):
        check(US_EU, settings, 1.0, architecture="grouped_clusters")


def test_a_wrong_password_is_one_line(topology: Path) -> None:
    with (
        ScriptedServer(
            quiet_status, {"SHOW GLOBAL VARIABLES": variables()}, password=b"right"
        ) as server,
        pytest.raises(AdvisorError, match="access denied") as caught,
    ):
        check(topology, settings_for(server, password="wrong-pw-123"), 1.0)
    assert "wrong-pw-123" not in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_missing_privilege_is_said_before_watching() -> None:
    answers = {
        "SHOW GLOBAL VARIABLES": us_eu_variables(),
        "SHOW REPLICA STATUS": Refused(
            1227, "Access denied; you need (at least one of) the REPLICATION CLIENT privilege(s)"
        ),
    }
    with ScriptedServer(quiet_status, answers) as server:
        started = time.monotonic()
        with pytest.raises(
            AdvisorError, match="missing privilege for SHOW REPLICA STATUS"
        ) as caught:
            check(US_EU, settings_for(server), 30.0)
        assert time.monotonic() - started < 30.0  # refused at the set-up, not after watching
    assert "REPLICATION CLIENT" in str(caught.value)


def test_a_silent_server_ends_the_check_within_its_bound(topology: Path) -> None:
    answers = {"SHOW GLOBAL VARIABLES": variables()}
    with ScriptedServer(quiet_status, answers, silent_after=2) as server:
        settings = settings_for(server, timeout_s=1.0)
        started = time.monotonic()
        result = check(topology, settings, 2.0, interval_s=0.5)
        elapsed = time.monotonic() - started
    # The analysis runs before the watch and reads no server; the watch is bounded.
    assert elapsed < time_limit_s(settings, 2.0)
    assert any("lost the connection" in note for note in result.notes)


def test_option_spellings() -> None:
    assert option_values_equal("PT7.5S", 7.5)
    assert option_values_equal("yes", True)
    assert not option_values_equal("PT5S", "PT3S")


runner = CliRunner()


def test_cli_prints_json_and_fails_on_warning(
    topology: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = {
        "SHOW GLOBAL VARIABLES": variables(
            wsrep_provider_options=provider_options(**{"gcs.fc_limit": "100"})
        )
    }
    with ScriptedServer(quiet_status, answers) as server:
        host, port = server.address
        monkeypatch.setenv("CHECK_PW", "secret-pw-42")
        args = [
            "check",
            str(topology),
            "--host",
            host,
            "--port",
            str(port),
            "--user",
            "monitor",
            "--password-env",
            "CHECK_PW",
            "--duration",
            "1s",
            "--interval",
            "500ms",
            "--format",
            "json",
        ]
        plain = runner.invoke(app, args)
        failing = runner.invoke(app, [*args, "--fail-on", "warning"])
    assert plain.exit_code == 0, plain.output
    data = json.loads(plain.stdout)
    assert [f["id"] for f in data["findings"]] == ["CHECK-SETTINGS"]
    assert data["findings"][0]["observed"] == {"gcs.fc_limit": 100}
    assert failing.exit_code == 1
    assert "--fail-on warning: CHECK-SETTINGS" in failing.stderr
    assert "secret-pw-42" not in plain.output + failing.output


def test_cli_wrong_password_is_one_line_exit_2(
    topology: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedServer(
        quiet_status, {"SHOW GLOBAL VARIABLES": variables()}, password=b"right"
    ) as server:
        host, port = server.address
        monkeypatch.setenv("CHECK_PW", "wrong-pw-99")
        result = runner.invoke(
            app,
            [
                "check",
                str(topology),
                "--host",
                host,
                "--port",
                str(port),
                "--user",
                "monitor",
                "--password-env",
                "CHECK_PW",
                "--duration",
                "1s",
            ],
        )
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("advisor: access denied for monitor@")
    assert "wrong-pw-99" not in result.output


def test_cli_unknown_architecture_exit_2(topology: Path) -> None:
    result = runner.invoke(
        app,
        ["check", str(US_EU), "--user", "u", "--architecture", "grouped_clusters", "--port", "1"],
    )
    assert result.exit_code == 2
    assert "not an option of this topology" in result.stderr


def test_cli_text_output_healthy(topology: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedServer(quiet_status, {"SHOW GLOBAL VARIABLES": variables()}) as server:
        host, port = server.address
        monkeypatch.setenv("CHECK_PW", "secret")
        result = runner.invoke(
            app,
            [
                "check",
                str(topology),
                "--host",
                host,
                "--port",
                str(port),
                "--user",
                "monitor",
                "--password-env",
                "CHECK_PW",
                "--duration",
                "1s",
                "--interval",
                "500ms",
            ],
        )
    assert result.exit_code == 0, result.output
    assert "no drift" in result.stdout
    assert "cluster room-a_room-b_room-c, site room-a, judged as single_cluster" in result.stdout


def test_a_workload_the_design_no_longer_carries_is_a_blocker(tmp_path: Path) -> None:
    # room-c applies each write set in 20 ms: the design's appliers there carry the topology's
    # peak of 100/s but not the 400/s the node shows, so single_cluster meets FLOW-CONTROL.
    path = tmp_path / "topology.yaml"
    path.write_text(
        TOPOLOGY.replace(
            "{name: room-c, nodes: 1}", "{name: room-c, nodes: 1, local_commit_ms: 20}"
        ),
        encoding="utf-8",
    )

    def status(call: int) -> list[tuple[str, str]]:
        rows = dict(quiet_status(call))
        rows["wsrep_last_committed"] = str(100 + 200 * call)  # 200 per 0.5 s
        return list(rows.items())

    result, _ = run_check(path, status)
    moved = next(f for f in result.findings if f.id == "CHECK-WORKLOAD-MOVED")
    assert moved.severity == "blocker"
    assert result.reassessment is not None
    assert not result.reassessment.deployed_viable
    assert "FLOW-CONTROL" in result.reassessment.blockers
    assert result.reassessment.architecture != "single_cluster"
    assert "no longer meets the requirements (FLOW-CONTROL" in moved.message


def test_a_node_that_sends_the_pauses_measures_its_site_and_is_judged_again(
    topology: Path,
) -> None:
    # room-c's node sends every pause. Its 4 appliers commit the writer's 25 write sets in
    # each 0.5 s interval (50/s): 4 x 1000 / 50 = 80 ms an apply, where the design takes the
    # default 1 ms. At 80 ms its appliers carry 50/s, under the topology's peak of 100/s.
    def status(call: int) -> list[tuple[str, str]]:
        rows = dict(quiet_status(call))
        rows |= {
            "wsrep_last_committed": str(100 + 25 * call),
            "wsrep_replicated": "0",
            "wsrep_local_commits": "0",
            "wsrep_received": str(25 * call),
            "wsrep_flow_control_paused_ns": str(400_000_000 * call),  # 0.4 s per 0.5 s
            "wsrep_flow_control_sent": str(3 * call),
            "wsrep_flow_control_recv": str(3 * call),
        }
        return list(rows.items())

    answers = {"SHOW GLOBAL VARIABLES": variables(wsrep_node_name="room-c-db1")}
    result, _ = run_check(topology, status, answers)
    assert result.site == "room-c"
    found = {f.id: f for f in result.findings}
    fc = found["CHECK-FLOW-CONTROL"]
    assert fc.observed["apply_ms"] == pytest.approx(80.0, rel=0.05)
    assert fc.expected["apply_ms"] == 1.0
    assert "where the design takes 1 ms at site room-c (sites[].local_commit_ms)" in fc.message
    moved = found["CHECK-WORKLOAD-MOVED"]
    assert set(moved.expected) == {"sites[room-c].local_commit_ms"}
    assert moved.severity == "blocker"
    assert result.reassessment is not None
    assert "FLOW-CONTROL" in result.reassessment.blockers
    assert "sites[room-c].local_commit_ms 8" in moved.message
    # No option is viable: single_cluster fails the peak, the per-site options room-c's own
    # 80 ms commits against the 50 ms p99. The message says so, not "recommend".
    assert "no option meets them under the new figures (the least bad:" in moved.message


def test_a_node_that_did_not_send_the_pauses_measures_nothing(topology: Path) -> None:
    # The same pauses, sent by another member: this node's commits say nothing of its apply.
    def status(call: int) -> list[tuple[str, str]]:
        rows = dict(quiet_status(call))
        rows |= {
            "wsrep_last_committed": str(100 + 25 * call),
            "wsrep_local_commits": "0",
            "wsrep_flow_control_paused_ns": str(400_000_000 * call),
            "wsrep_flow_control_sent": "0",
            "wsrep_flow_control_recv": str(3 * call),
        }
        return list(rows.items())

    answers = {"SHOW GLOBAL VARIABLES": variables(wsrep_node_name="room-c-db1")}
    result, _ = run_check(topology, status, answers)
    fc = next(f for f in result.findings if f.id == "CHECK-FLOW-CONTROL")
    assert "apply_ms" not in fc.observed
    assert "this node sent none" in fc.message
    assert "CHECK-WORKLOAD-MOVED" not in ids(result)


def test_the_architecture_that_runs_gives_the_predictions() -> None:
    # us-eu recommends per_site_clusters; single_cluster's design raises the send windows
    # (SEND-WINDOW: 280 commits/s at evs.send_window 10 against a peak of 700/s). A node of
    # that single cluster still at 10 drifts from the design that runs.
    answers = {"SHOW GLOBAL VARIABLES": us_eu_variables(), "SHOW REPLICA STATUS": replica()}
    result, _ = run_check(US_EU, answers=answers, architecture="single_cluster")
    assert result.architecture == "single_cluster"
    assert result.cluster == "virginia_dublin"
    windows = {f.subject: f for f in result.findings if f.id == "CHECK-SETTINGS"}
    assert windows["evs.send_window"].observed == {"evs.send_window": 10}
    assert int(windows["evs.send_window"].expected["evs.send_window"] or 0) > 10
    assert any("(wsrep_node_name dublin-db2)" in note for note in result.notes)
