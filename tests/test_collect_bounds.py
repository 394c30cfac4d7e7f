"""Issue 26, collect against a server that misbehaves: bounded time and memory, one line.

Every server here is a loopback socket the test opens (tests/fake_mysql_wire.py), spoken to
by the real pymysql driver through advisor.collect.connection: a handshake trickled a byte at
a time (each byte within the read timeout, so only a budget for the whole reply ends it), a
reply trickled after the login, rows streamed without end, a 5,000-digit option value, an
``Uptime`` of ``abc``, a binlog position that is not a number, a one-column ``SHOW
VARIABLES``, and a password with characters outside Latin-1.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from fake_mysql_wire import FOREVER, STATUS, VARIABLES, WireServer, galera_answers, replaced
from typer.testing import CliRunner

from advisor.cli import app
from advisor.collect.api import CollectedEvidence, collect, time_limit_s
from advisor.collect.connection import MAX_REPLY_ROWS, ConnectionSettings
from advisor.errors import AdvisorError

CONNECT = ["collect", "--user", "u", "--host"]
BRIEF = ["--duration", "1s", "--interval", "0.5s"]
SHORT = {"connect_timeout_s": 1.0, "read_timeout_s": 1.0, "write_timeout_s": 1.0}


def settings_for(server: WireServer, password: str = "secret") -> ConnectionSettings:
    host, port = server.address
    return ConnectionSettings(host=host, port=port, user="u", password=password, **SHORT)


def run_bounded(run: Callable[[], Any], limit_s: float) -> tuple[Any, float]:
    """``run()`` on a thread: (its result or exception, seconds taken); fails past the limit."""
    outcome: list[Any] = []

    def target() -> None:
        try:
            outcome.append(run())
        except BaseException as error:  # handed to the test thread
            outcome.append(error)

    start = time.monotonic()
    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(limit_s)
    assert not worker.is_alive(), f"still running after {limit_s:.0f}s, the stated bound"
    return outcome[0], time.monotonic() - start


def collect_briefly(settings: ConnectionSettings) -> CollectedEvidence:
    return collect(settings, interval_s=0.2, duration_s=0.5)


# -- item 3: time and memory -----------------------------------------------------------------


def test_a_handshake_trickled_a_byte_at_a_time_ends_at_the_connect_budget():
    # Before: each byte came within the 1 s read timeout, so the 94-byte greeting alone took
    # 94 x 0.4 s and the whole run went on for minutes. Now the connect with its login has
    # connect_timeout + read_timeout (2 s) in all.
    with WireServer(galera_answers(), trickle_s=0.4) as server:
        settings = settings_for(server)
        error, _ = run_bounded(lambda: collect_briefly(settings), time_limit_s(settings, 0.5))
        sent = server.sent_bytes
    assert isinstance(error, AdvisorError), error
    host, port = server.address
    assert str(error) == (
        f"lost the connection to u@{host}:{port} while connecting: Lost connection to MySQL "
        "server during query (timed out: no complete reply within 2s)"
    )
    assert sent < 20  # a few bytes of the greeting: cut off at the budget, not at its end


def test_a_reply_trickled_after_the_login_ends_at_the_statement_budget():
    with WireServer(galera_answers(), trickle_s=0.3, trickle_after_login=True) as server:
        settings = settings_for(server)
        error, _ = run_bounded(lambda: collect_briefly(settings), time_limit_s(settings, 0.5))
        statements = list(server.statements)
    assert isinstance(error, AdvisorError), error
    assert "while SHOW GLOBAL VARIABLES" in str(error)
    assert "timed out: no complete reply within 2s" in str(error)
    assert statements[-1] == "SHOW GLOBAL VARIABLES"


def test_rows_without_end_are_refused_at_the_row_bound():
    # Before: the driver buffered every row: 3.8 GB, then a MemoryError traceback.
    with WireServer(galera_answers(variables=FOREVER)) as server:
        # budgets long enough that the row bound, not the time, ends the statement here
        settings = replace(settings_for(server), read_timeout_s=60.0, write_timeout_s=60.0)
        error, _ = run_bounded(lambda: collect_briefly(settings), time_limit_s(settings, 0.5))
        rows = server.sent_rows
    assert isinstance(error, AdvisorError), error
    host, port = server.address
    assert str(error) == (
        f"SHOW GLOBAL VARIABLES on u@{host}:{port} failed: the reply passed 200,000 rows, far "
        "more than this statement returns on a real server; connection closed"
    )
    # what the client read is the bound; the rest sat in socket buffers (a few MB)
    assert MAX_REPLY_ROWS <= rows < MAX_REPLY_ROWS + 1_000_000


def test_a_well_behaved_server_is_collected_through_the_same_connection():
    with WireServer(galera_answers()) as server:
        evidence, _ = run_bounded(lambda: collect_briefly(settings_for(server)), 60)
    assert isinstance(evidence, CollectedEvidence), evidence
    assert evidence.server.provider_options == {
        "evs.send_window": 10,
        "evs.user_send_window": 4,
        "gcs.fc_limit": 100,
    }
    assert evidence.hot_row_source == "performance_schema"
    assert evidence.status.samples >= 2


# -- item 4: malformed answers ---------------------------------------------------------------


def test_a_5000_digit_option_value_is_left_out_with_a_note():
    options = "evs.send_window = " + "9" * 5000 + "; gcs.fc_limit = 100"
    variables = replaced(VARIABLES, wsrep_provider_options=options)
    with WireServer(galera_answers(variables=variables)) as server:
        evidence, _ = run_bounded(lambda: collect_briefly(settings_for(server)), 60)
    assert isinstance(evidence, CollectedEvidence), evidence
    assert evidence.server.provider_options == {"gcs.fc_limit": 100}
    assert (
        "wsrep_provider_options: evs.send_window is not a number advisor can use "
        "(99999999999999999999... (5,000 characters)); left out (the model takes Galera's "
        "default)"
    ) in evidence.notes


def test_an_uptime_of_abc_is_noted_and_the_run_goes_on():
    with WireServer(galera_answers(status=replaced(STATUS, Uptime="abc"))) as server:
        evidence, _ = run_bounded(lambda: collect_briefly(settings_for(server)), 60)
    assert isinstance(evidence, CollectedEvidence), evidence
    assert (
        "the server's Uptime is 'abc', not a number: a restart during the run cannot be told, "
        "so an interval across one is not dropped"
    ) in evidence.notes
    assert evidence.status.restarts == 0


def test_a_binlog_position_that_is_not_a_number_falls_back_to_performance_schema():
    variables = replaced(VARIABLES, log_bin="ON")
    answers = galera_answers(variables=variables, master=[("mysql-bin.000001", "4x")])
    with WireServer(answers) as server:
        evidence, _ = run_bounded(lambda: collect_briefly(settings_for(server)), 60)
    assert isinstance(evidence, CollectedEvidence), evidence
    assert evidence.hot_row_source == "performance_schema"
    assert evidence.notes[0].startswith(
        "hot rows: SHOW MASTER STATUS gave the binlog position '4x', not a whole number; fell "
        "back to performance_schema table counts"
    )


def test_a_one_column_show_variables_is_one_line_and_exit_2():
    one_column = [(name,) for name, _ in VARIABLES]
    with WireServer(galera_answers(variables=one_column)) as server:
        host, port = server.address
        result = CliRunner().invoke(
            app,
            [*CONNECT, host, "--port", str(port), *BRIEF],
        )
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"advisor: SHOW GLOBAL VARIABLES on u@{host}:{port} returned rows of 1 column(s), "
        "where MySQL and MariaDB give a name and a value: not a server advisor can read\n"
    )


def test_a_status_counter_of_5000_digits_or_1e999_is_no_number():
    status = replaced(STATUS, wsrep_cluster_size="9" * 5000, wsrep_gmcast_segment="1e999")
    with WireServer(galera_answers(status=status)) as server:
        evidence, _ = run_bounded(lambda: collect_briefly(settings_for(server)), 60)
    assert isinstance(evidence, CollectedEvidence), evidence
    assert evidence.status.cluster_size_min is None and evidence.status.segment is None


def test_table_counts_that_are_not_numbers_are_skipped():
    tables = [("shop", "orders", "abc"), ("shop", "x"), ("shop", "items", "9" * 5000)]
    with WireServer(galera_answers(tables=tables)) as server:
        evidence, _ = run_bounded(lambda: collect_briefly(settings_for(server)), 60)
    assert isinstance(evidence, CollectedEvidence), evidence
    assert evidence.hot_rows == []


# -- item 5: the password --------------------------------------------------------------------

PASSWORD = "€uro-Straße-пароль"


def test_a_non_latin1_password_is_sent_as_utf8_and_works():
    # Before: pymysql encoded it as Latin-1 and the error quoted the character and its
    # position. The mysql client sends the typed bytes (UTF-8): the server checks those.
    with WireServer(galera_answers(), password=PASSWORD.encode()) as server:
        evidence, _ = run_bounded(lambda: collect_briefly(settings_for(server, PASSWORD)), 60)
    assert isinstance(evidence, CollectedEvidence), evidence


def test_a_refused_password_is_never_shown_not_even_a_character(monkeypatch):
    monkeypatch.setenv("DB_PASSWORD", PASSWORD)
    with WireServer(galera_answers(), password=b"another one") as server:
        host, port = server.address
        result = CliRunner().invoke(
            app,
            [*CONNECT, host, "--port", str(port), "--password-env", "DB_PASSWORD", *BRIEF],
        )
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"advisor: access denied for u@{host}:{port}: check the user and the password "
        "(--password-env VAR or --defaults-file)\n"
    )
    shown = result.stdout + result.stderr
    assert not set("€ßпароль") & set(shown) and "\\u" not in shown and "position" not in shown


@pytest.mark.parametrize("timeout_field", ["connect_timeout_s", "read_timeout_s"])
def test_the_stated_bound_holds_with_other_timeouts(timeout_field):
    # The bound is a sum of the timeouts: a trickling handshake ends at connect + read.
    with WireServer(galera_answers(), trickle_s=0.4) as server:
        host, port = server.address
        values = dict(SHORT, **{timeout_field: 2.0})
        settings = ConnectionSettings(host=host, port=port, user="u", **values)
        error, _ = run_bounded(lambda: collect_briefly(settings), time_limit_s(settings, 0.5))
    assert isinstance(error, AdvisorError)
    assert "timed out: no complete reply within 3s" in str(error)


# -- the stated bound: only one sample runs past the duration ---------------------------------


class SlowNearTheEnd:
    """A sampler whose sample begun just before the end takes past it (a slow server)."""

    def __init__(self, slow_from_s: float, slow_s: float) -> None:
        self.slow_from_s, self.slow_s = slow_from_s, slow_s
        self.started: list[float] = []

    def sample(self, elapsed_s: float) -> None:
        self.started.append(elapsed_s)
        if elapsed_s >= self.slow_from_s:
            time.sleep(self.slow_s)


def test_a_sample_that_runs_past_the_duration_is_the_last():
    # Before: the loop looked at the clock from before the sample, so a slow sample begun
    # before the end was followed by one more, two samples' worth past the duration, which
    # time_limit_s counts once.
    from advisor.collect import api

    sampler = SlowNearTheEnd(slow_from_s=0.35, slow_s=0.4)
    duration, ended_early, _ = api._sample_until_done(
        sampler,  # type: ignore[arg-type]
        interval_s=0.1,
        duration_s=0.5,
        progress=None,
        stop=threading.Event(),
    )
    assert not ended_early
    slow = [t for t in sampler.started if t >= 0.35]
    assert len(slow) == 1 and slow[0] < 0.5  # begun before the end, and nothing after it
    assert duration >= 0.5


def test_a_reconnect_long_after_the_last_statement_gets_a_budget_of_its_own():
    # The binary log reader reconnects its lookup connection with ping(reconnect=True), which
    # calls connect() again: the login must not inherit the spent budget of a statement long
    # past.
    from advisor.collect.connection import connect, query

    with WireServer(galera_answers()) as server:
        connection = connect(settings_for(server))
        query(connection, "SHOW GLOBAL STATUS")
        time.sleep(2.5)  # past that statement's budget (write + read timeout: 2 s)
        connection.close()
        connection.connect()  # what ping(reconnect=True) does (pymysql deprecates the flag)
        rows = query(connection, "SHOW GLOBAL STATUS")
        connection.close()
    assert dict(rows)["Uptime"] == "1000"
