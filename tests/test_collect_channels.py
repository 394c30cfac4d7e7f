"""collect's channel hook (advisor check's): replication channels and the design's heartbeat,
read by column name, read-only, against a scripted server."""

from __future__ import annotations

import pytest
from test_check import Named, Refused, ScriptedServer, quiet_status, settings_for, variables

from advisor.collect import collect
from advisor.collect.channels import HEARTBEAT_SQL
from advisor.collect.connection import connect, query_named


def mariadb_channel(io: str = "Yes", sql: str = "Yes", behind: str | None = "1") -> Named:
    return Named(
        [
            {
                "Connection_name": "from_paris",
                "Slave_IO_Running": io,
                "Slave_SQL_Running": sql,
                "Seconds_Behind_Master": behind,
                "Last_IO_Error": "",
                "Last_SQL_Error": "",
            }
        ]
    )


def test_channels_and_heartbeat_are_read_with_every_sample() -> None:
    answers = {
        "SHOW GLOBAL VARIABLES": variables(),
        "SHOW ALL SLAVES STATUS": mariadb_channel(),
        "SELECT server_id": [("1", "25.5"), ("3", "7")],
    }
    with ScriptedServer(quiet_status, answers) as server:
        evidence = collect(settings_for(server), interval_s=0.5, duration_s=1.0, channels=True)
    # Once at the set-up (a missing privilege stops there), then with each of the 3 samples.
    assert server.statements.count("SHOW ALL SLAVES STATUS") == 4
    assert server.statements.count(HEARTBEAT_SQL) == 4
    assert len(evidence.channels) == 3
    reading = evidence.channels[-1]
    assert [c.name for c in reading.channels] == ["from_paris"]
    assert reading.channels[0].running and reading.channels[0].seconds_behind == 1.0
    assert reading.heartbeat_lag_ms == {1: 25.5, 3: 7.0}
    assert evidence.variables["wsrep_slave_threads"] == "4"
    assert all(s.startswith(("SHOW", "SELECT", "SET NAMES")) for s in server.statements)


def test_without_the_hook_no_channel_statement_is_sent() -> None:
    with ScriptedServer(quiet_status, {"SHOW GLOBAL VARIABLES": variables()}) as server:
        evidence = collect(settings_for(server), interval_s=0.5, duration_s=0.5)
    assert not [s for s in server.statements if "SLAVE" in s or "heartbeat" in s]
    assert evidence.channels == []


def test_a_missing_heartbeat_is_said_not_fatal() -> None:
    answers = {
        "SHOW GLOBAL VARIABLES": variables(),
        "SHOW ALL SLAVES STATUS": mariadb_channel(sql="No", behind=None),
        "SELECT server_id": Refused(1146, "Table 'advisor.heartbeat' doesn't exist"),
    }
    with ScriptedServer(quiet_status, answers) as server:
        evidence = collect(settings_for(server), interval_s=0.5, duration_s=0.5, channels=True)
    reading = evidence.channels[-1]
    assert reading.heartbeat_lag_ms == {}
    assert reading.heartbeat_error is not None and "doesn't exist" in reading.heartbeat_error
    assert not reading.channels[0].running and reading.channels[0].seconds_behind is None


def test_older_mysql_is_asked_show_slave_status() -> None:
    rows = dict(variables())
    rows |= {"version": "8.0.20", "version_comment": "MySQL Community Server - (GPL), wsrep_26"}
    answers = {
        "SHOW GLOBAL VARIABLES": list(rows.items()),
        "SHOW REPLICA STATUS": Refused(1064, "You have an error in your SQL syntax"),
        "SHOW SLAVE STATUS": Named(
            [{"Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes", "Seconds_Behind_Master": "0"}]
        ),
        "SELECT server_id": [],
    }
    with ScriptedServer(quiet_status, answers) as server:
        evidence = collect(settings_for(server), interval_s=0.5, duration_s=0.5, channels=True)
    assert "SHOW SLAVE STATUS" in server.statements
    assert [c.name for c in evidence.channels[-1].channels] == [""]  # the default channel


def test_query_named_refuses_a_write_before_sending() -> None:
    with ScriptedServer(quiet_status, {"SHOW GLOBAL VARIABLES": variables()}) as server:
        connection = connect(settings_for(server))
        try:
            with pytest.raises(ValueError, match="SHOW and SELECT statements only"):
                query_named(connection, "STOP SLAVE")
            assert query_named(connection, "SHOW ALL SLAVES STATUS") == []
        finally:
            connection.close()
        assert "STOP SLAVE" not in server.statements
