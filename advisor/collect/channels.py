"""Asynchronous replication channels of one node, read-only: their threads, their lag, and
the heartbeat the design installs.

A node runs a channel of the design when it is a cluster's replica of another cluster
(``advisor.config.replication``). Its state comes from one statement per flavour: MariaDB's
``SHOW ALL SLAVES STATUS`` (one row per named connection, ``Connection_name``; MariaDB docs,
SHOW REPLICA STATUS: https://mariadb.com/kb/en/show-replica-status/), MySQL 8.0.22 and later
``SHOW REPLICA STATUS`` (``Channel_Name``, ``Replica_IO_Running``, ``Seconds_Behind_Source``;
https://dev.mysql.com/doc/refman/8.0/en/show-replica-status.html), older MySQL ``SHOW SLAVE
STATUS``. Both spellings of the columns are read. ``Seconds_Behind_Master`` counts whole
seconds; the heartbeat (``advisor.heartbeat``, one row per node of every writing cluster,
written every 20 ms: templates/config/heartbeat.sql.j2) gives the lag in milliseconds as the
age of each other cluster's newest row, read with the same ``SELECT`` the generated file
prints.
"""

from __future__ import annotations

__all__ = [
    "HEARTBEAT_SQL",
    "ChannelReading",
    "ChannelStatus",
    "channel_status_sql",
    "parse_channels",
    "read_channels",
]

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pymysql  # type: ignore[import-untyped,unused-ignore]

from advisor.collect.connection import Connection, query, query_named

# The reading the generated heartbeat file prints (templates/config/heartbeat.sql.j2).
HEARTBEAT_SQL = (
    "SELECT server_id, TIMESTAMPDIFF(MICROSECOND, MAX(ts), NOW(6)) / 1000 "
    "FROM advisor.heartbeat WHERE server_id <> @@server_id GROUP BY server_id"
)
# The heartbeat is missing (not installed, or this user may not read it): said, not fatal.
# ER_NO_SUCH_TABLE, ER_BAD_DB_ERROR, ER_TABLEACCESS_DENIED_ERROR, ER_DBACCESS_DENIED_ERROR
# (include/mysqld_error.h).
_HEARTBEAT_UNREADABLE = frozenset({1146, 1049, 1142, 1044})


@dataclass(frozen=True)
class ChannelStatus:
    """One channel as the replica reports it."""

    name: str  # "" for MySQL's and MariaDB's default (unnamed) channel
    io_running: str  # Yes | No | Connecting (as the server spells it)
    sql_running: str
    seconds_behind: float | None  # None: NULL (a thread stopped) or missing
    last_error: str

    @property
    def running(self) -> bool:
        """Both threads run (``Connecting`` is not running: nothing arrives)."""
        return self.io_running.lower() == "yes" and self.sql_running.lower() == "yes"


@dataclass(frozen=True)
class ChannelReading:
    """The channels and the heartbeat of one sample, ``elapsed_s`` into the run."""

    elapsed_s: float
    channels: tuple[ChannelStatus, ...]
    heartbeat_lag_ms: dict[int, float]  # source cluster's server_id -> newest row's age [ms]
    heartbeat_error: str | None = None  # why the heartbeat could not be read


def channel_status_sql(flavor: str) -> str:
    """The statement that lists every channel on a node of ``flavor``."""
    return "SHOW ALL SLAVES STATUS" if flavor == "mariadb" else "SHOW REPLICA STATUS"


def _first(row: dict[str, Any], *names: str) -> Any:
    for name in names:
        if name in row:
            return row[name]
    return None


def _non_negative(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number >= 0 else None


def parse_channels(rows: Sequence[dict[str, Any]]) -> tuple[ChannelStatus, ...]:
    """Channels from the rows of a channel-status statement, columns by name.

    >>> row = {"Connection_name": "from_a", "Slave_IO_Running": "Yes",
    ...   "Slave_SQL_Running": "No", "Seconds_Behind_Master": None, "Last_SQL_Error": "x"}
    >>> channel = parse_channels([row])[0]
    >>> channel.name, channel.running, channel.seconds_behind, channel.last_error
    ('from_a', False, None, 'x')
    """
    out = []
    for row in rows:
        error = " ".join(
            str(value)
            for value in (
                _first(row, "Last_IO_Error", "Last_IO_Error_Message"),
                _first(row, "Last_SQL_Error", "Last_SQL_Error_Message"),
            )
            if value
        )
        out.append(
            ChannelStatus(
                name=str(_first(row, "Connection_name", "Channel_Name", "Channel_name") or ""),
                io_running=str(_first(row, "Slave_IO_Running", "Replica_IO_Running") or "No"),
                sql_running=str(_first(row, "Slave_SQL_Running", "Replica_SQL_Running") or "No"),
                seconds_behind=_non_negative(
                    _first(row, "Seconds_Behind_Master", "Seconds_Behind_Source")
                ),
                last_error=error,
            )
        )
    return tuple(out)


def read_channels(connection: Connection, flavor: str, elapsed_s: float) -> ChannelReading:
    """Every channel of the node and the heartbeat's lag per source cluster.

    A server error other than a missing heartbeat (a missing privilege for the channel
    status: MariaDB's SLAVE MONITOR, MySQL's REPLICATION CLIENT) propagates as the driver's
    error, for the caller to explain.
    """
    sql = channel_status_sql(flavor)
    try:
        rows = query_named(connection, sql)
    except pymysql.err.ProgrammingError as error:
        # MySQL before 8.0.22 knows only the older spelling (ER_PARSE_ERROR 1064).
        if flavor == "mariadb" or not error.args or error.args[0] != 1064:
            raise
        rows = query_named(connection, "SHOW SLAVE STATUS")
    lag: dict[int, float] = {}
    why = None
    try:
        for server_id, age_ms in query(connection, HEARTBEAT_SQL):
            age = _non_negative(age_ms)
            if age is not None and server_id is not None:
                lag[int(server_id)] = age
    except pymysql.err.MySQLError as error:
        code = error.args[0] if error.args else None
        if code not in _HEARTBEAT_UNREADABLE:
            raise
        why = str(error.args[1]) if len(error.args) > 1 else str(error)
    return ChannelReading(elapsed_s, parse_channels(rows), lag, why)
