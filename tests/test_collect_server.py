"""What runs on the node (flavour, versions, provider options), membership checks, connections."""

from __future__ import annotations

from pathlib import Path

import pymysql
import pytest

from advisor.collect.connection import (
    ConnectionSettings,
    explain_error,
    query,
    read_defaults_file,
)
from advisor.collect.server import (
    MODEL_OPTIONS,
    detect_flavor,
    galera_version,
    parse_provider_options,
    server_info,
)
from advisor.errors import AdvisorError
from advisor.model.provider_options import check_option

# wsrep_provider_options of MariaDB 10.11 + Debian's galera-4 26.4.23 (the integration cluster).
PROVIDER_OPTIONS = (
    "base_dir = /tmp/advisor-galera-sk7vbey1/node1/data/; base_host = 127.0.0.1; "
    "base_port = 53765; cert.log_conflicts = no; cert.optimistic_pa = yes; debug = no; "
    "evs.auto_evict = 0; evs.causal_keepalive_period = PT1S; evs.debug_log_mask = 0x1; "
    "evs.delay_margin = PT1S; evs.delayed_keep_period = PT30S; "
    "evs.inactive_check_period = PT0.5S; evs.inactive_timeout = PT15S; evs.info_log_mask = 0; "
    "evs.install_timeout = PT7.5S; evs.join_retrans_period = PT1S; evs.keepalive_period = PT1S; "
    "evs.max_install_timeouts = 3; evs.send_window = 4; evs.stats_report_period = PT10S; "
    "evs.suspect_timeout = PT5S; evs.use_aggregate = true; evs.user_send_window = 2; "
    "evs.version = 1; evs.view_forget_timeout = P1D; gcache.size = 64M; gcomm.thread_prio = ; "
    "gcs.fc_debug = 0; gcs.fc_factor = 1.0; gcs.fc_limit = 16; gcs.fc_master_slave = no; "
    "gcs.fc_single_primary = no; gcs.max_packet_size = 64500; gcs.max_throttle = 0.25; "
    "gmcast.listen_addr = tcp://127.0.0.1:53765; gmcast.mcast_addr = ; gmcast.peer_timeout = PT3S; "
    "gmcast.segment = 0; pc.weight = 1; socket.recv_buf_size = auto; socket.send_buf_size = auto; "
)
VARIABLES = {
    "version": "10.11.19-MariaDB-0+deb12u1-log",
    "version_comment": "Debian 12",
    "wsrep_on": "ON",
    "wsrep_provider": "/usr/lib/galera/libgalera_smm.so",
    "wsrep_provider_options": PROVIDER_OPTIONS,
    "wsrep_cluster_name": "advisor-integration",
    "wsrep_node_name": "node1",
    "log_bin": "ON",
    "binlog_format": "ROW",
    "log_slave_updates": "ON",
    "performance_schema": "OFF",
}
STATUS = {
    "wsrep_provider_version": "4.23(rXXXX)",
    "wsrep_cluster_status": "Primary",
    "wsrep_connected": "ON",
}


def test_server_info_from_a_mariadb_galera_node() -> None:
    info = server_info(VARIABLES, STATUS, "u@h:3306")
    assert info.flavor == "mariadb"
    assert info.galera_version == "26.4.23"
    assert info.galera_version_reported == "4.23(rXXXX)"
    assert (info.log_bin, info.binlog_format, info.log_slave_updates) == (True, "ROW", True)
    assert info.performance_schema is False
    assert info.provider_options["evs.send_window"] == 4
    assert info.provider_options["gcs.fc_factor"] == 1.0
    assert info.provider_options["evs.suspect_timeout"] == "PT5S"
    assert info.provider_options["gmcast.segment"] == 0
    assert "gcache.size" not in info.provider_options
    assert "base_dir" not in info.provider_options


def test_every_collected_option_is_accepted_by_the_topology_checks() -> None:
    options = parse_provider_options(PROVIDER_OPTIONS)
    assert set(options) == set(MODEL_OPTIONS)
    for key, value in options.items():
        check_option(key, value)


@pytest.mark.parametrize(
    ("variables", "status", "message"),
    [
        (
            {"version": "8.0.36"},
            {},
            "u@h:3306 is not a Galera node: it has no wsrep variables (expected MariaDB Galera, "
            "Percona XtraDB Cluster or MySQL-wsrep)",
        ),
        (
            {**VARIABLES, "wsrep_on": "OFF"},
            STATUS,
            "u@h:3306 is not a Galera member: wsrep_on is OFF",
        ),
        (
            {**VARIABLES, "wsrep_provider": "none"},
            STATUS,
            "u@h:3306 is not a Galera member: wsrep_provider is none",
        ),
        (
            VARIABLES,
            {**STATUS, "wsrep_cluster_status": "Disconnected", "wsrep_connected": "OFF"},
            "u@h:3306 is not connected to a Galera cluster (wsrep_cluster_status Disconnected, "
            "wsrep_connected OFF)",
        ),
    ],
)
def test_not_a_galera_member(
    variables: dict[str, str], status: dict[str, str], message: str
) -> None:
    with pytest.raises(AdvisorError) as caught:
        server_info(variables, status, "u@h:3306")
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("version", "comment", "flavor"),
    [
        (
            "8.0.36-28.1",
            "Percona XtraDB Cluster (GPL), Release rel28, Revision bfb687f, WSREP version 26.1.4.3",
            "pxc",
        ),
        ("5.7.44-31.65", "Percona XtraDB Cluster binary (GPL) 5.7.44-31.65, wsrep_31.65", "pxc"),
        ("10.6.16-MariaDB-log", "MariaDB Server", "mariadb"),
        ("10.11.19-MariaDB-0+deb12u1-log", "Debian 12", "mariadb"),
        ("8.0.35", "MySQL Community Server - (GPL), wsrep_26.1.4.3", "codership"),
    ],
)
def test_flavor_detection(version: str, comment: str, flavor: str) -> None:
    assert detect_flavor(version, comment) == flavor


@pytest.mark.parametrize(
    ("reported", "version"),
    [
        ("26.4.16(r7dce5149)", "26.4.16"),
        ("4.23(rXXXX)", "26.4.23"),
        ("3.37(rb3ebc06)", "25.3.37"),
        ("25.3.29", "25.3.29"),
        ("", None),
        (None, None),
        ("unknown", None),
    ],
)
def test_galera_version_as_format_spells_it(reported: str | None, version: str | None) -> None:
    assert galera_version(reported) == version


# -- connections ---------------------------------------------------------------------------------

SETTINGS = ConnectionSettings(host="db1", port=3307, user="advisor", password="s3cr3t-pw")


def test_password_is_not_in_repr_or_description() -> None:
    assert "s3cr3t-pw" not in repr(SETTINGS)
    assert SETTINGS.describe() == "advisor@db1:3307"


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (
            pymysql.err.OperationalError(
                2003, "Can't connect to MySQL server on 'db1' ([Errno 111] Connection refused)"
            ),
            "cannot connect to advisor@db1:3307: connection refused (is the server running and "
            "reachable there?)",
        ),
        (
            pymysql.err.OperationalError(
                1045, "Access denied for user 'advisor'@'10.0.0.9' (using password: YES)"
            ),
            "access denied for advisor@db1:3307: check the user and the password "
            "(--password-env VAR or --defaults-file)",
        ),
        (
            pymysql.err.OperationalError(
                1227,
                "Access denied; you need (at least one of) the REPLICATION SLAVE privilege(s) "
                "for this operation",
            ),
            "missing privilege for reading the binary log on advisor@db1:3307: Access denied; you "
            "need (at least one of) the REPLICATION SLAVE privilege(s) for this operation (GRANT "
            "it to advisor, or run as a user that has it)",
        ),
        (
            pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query"),
            "lost the connection to advisor@db1:3307 while reading the binary log: Lost connection "
            "to MySQL server during query",
        ),
    ],
)
def test_errors_are_one_line_and_name_the_fix(error: pymysql.err.MySQLError, message: str) -> None:
    assert str(explain_error(error, SETTINGS, "reading the binary log")) == message


def test_a_server_message_echoing_the_password_is_masked() -> None:
    error = pymysql.err.OperationalError(1064, "near 's3cr3t-pw' at line 1")
    text = str(explain_error(error, SETTINGS, "SHOW GLOBAL STATUS"))
    assert "s3cr3t-pw" not in text
    assert text == "SHOW GLOBAL STATUS on advisor@db1:3307 failed: near '***' at line 1"


def test_query_refuses_anything_but_show_and_select() -> None:
    with pytest.raises(ValueError, match="SHOW and SELECT statements only, not 'UPDATE'"):
        query(None, "UPDATE t SET a = 1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not 'SET'"):
        query(None, "  SET GLOBAL read_only = 1")  # type: ignore[arg-type]


def test_defaults_file_fills_what_the_command_line_left_unset(tmp_path: Path) -> None:
    cnf = tmp_path / "advisor.cnf"
    cnf.write_text(
        '[mysql]\nuser = other\n[client]\nuser = advisor\npassword = "p w;#x"\n'
        "host = db2\nport = 3308\nssl_ca = /etc/ca.pem\n"
    )
    from_file = read_defaults_file(cnf, ConnectionSettings())
    assert (from_file.user, from_file.password, from_file.host, from_file.port) == (
        "advisor",
        "p w;#x",
        "db2",
        3308,
    )
    assert from_file.ssl_ca == Path("/etc/ca.pem")
    explicit = read_defaults_file(cnf, ConnectionSettings(host="db9", port=3310, user="me"))
    assert (explicit.user, explicit.host, explicit.port) == ("me", "db9", 3310)
    assert explicit.password == "p w;#x"


def test_defaults_file_errors(tmp_path: Path) -> None:
    missing = tmp_path / "none.cnf"
    with pytest.raises(AdvisorError, match=r"none.cnf: defaults file not found"):
        read_defaults_file(missing, ConnectionSettings())
    no_client = tmp_path / "mysqld.cnf"
    no_client.write_text("[mysqld]\nport = 3306\n")
    with pytest.raises(AdvisorError) as caught:
        read_defaults_file(no_client, ConnectionSettings())
    assert str(caught.value) == (
        f"{no_client}: no [client] group: expected user=, password= (and host=, port=)"
    )
    bad_port = tmp_path / "port.cnf"
    bad_port.write_text("[client]\nport = many\n")
    with pytest.raises(AdvisorError) as caught:
        read_defaults_file(bad_port, ConnectionSettings())
    assert str(caught.value) == (
        f"{bad_port}: client.port: expected a port number from 1 to 65535, got 'many'"
    )
