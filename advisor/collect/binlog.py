"""Row events from the binary log, counted per primary key, on a background thread.

The stream is read with ``mysql-replication``'s :class:`BinLogStreamReader`, which speaks the
replication protocol as a replica would (the server asks for the ``REPLICATION SLAVE``
privilege). It starts at the binlog position current when collection starts, blocks for new
events and gets a heartbeat every second when the node is idle, so the thread notices the
stop flag promptly. Rows are named by their primary key; the key's columns come from
``information_schema`` (binlog row events carry column names only with
``binlog_row_metadata=FULL``, which MariaDB does not log by default), matched by position.
"""

from __future__ import annotations

__all__ = ["BinlogReader", "primary_key_columns"]

import contextlib
import logging
import random
import threading
import time
from array import array
from collections import Counter
from typing import Any

import pymysql  # type: ignore[import-untyped,unused-ignore]
from pymysqlreplication import BinLogStreamReader  # type: ignore[import-untyped,unused-ignore]
from pymysqlreplication.event import (  # type: ignore[import-untyped,unused-ignore]
    FormatDescriptionEvent,
    GtidEvent,
    HeartbeatLogEvent,
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    XidEvent,
)
from pymysqlreplication.row_event import (  # type: ignore[import-untyped,unused-ignore]
    DeleteRowsEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)

from advisor.collect.connection import (
    LOST_CONNECTION_CODES,
    Connection,
    ConnectionSettings,
    connect,
    explain_error,
    query,
)
from advisor.collect.hotrows import RowCounter, row_name, table_name
from advisor.errors import AdvisorError

_SYSTEM_SCHEMAS = ["mysql", "sys", "performance_schema", "information_schema"]
_HEARTBEAT_S = 1.0
_RECONNECT_PAUSE_S = 2.0
# How far a row event's timestamp may lie outside the run and still be taken as when it
# happened [s]: clocks of the cluster's nodes differ by a little, and the stream starts at
# the binlog position of the run's start.
_EVENT_SLACK_S = 60
# Replica server ids live in 1..2**32-1; a random high one will not collide with a real one
# (a second replica with the same id would make the server drop the first).
_SERVER_ID_RANGE = (2**31, 2**32 - 1)


def primary_key_columns(connection: Connection, schema: str, table: str) -> list[tuple[str, int]]:
    """``(column, 0-based position)`` of the table's primary key, in key order; [] if none.

    A table the user may not see in ``information_schema`` (no privilege on it) also gives [].
    """
    rows = query(
        connection,
        "SELECT k.COLUMN_NAME, c.ORDINAL_POSITION FROM information_schema.KEY_COLUMN_USAGE k "
        "JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = k.TABLE_SCHEMA "
        "AND c.TABLE_NAME = k.TABLE_NAME AND c.COLUMN_NAME = k.COLUMN_NAME "
        "WHERE k.CONSTRAINT_NAME = 'PRIMARY' AND k.TABLE_SCHEMA = %s AND k.TABLE_NAME = %s "
        "ORDER BY k.ORDINAL_POSITION",
        (schema, table),
    )
    return [(str(name), int(position) - 1) for name, position in rows]


def _driver_connect(**kwargs: Any) -> Connection:
    """pymysql.connect for the stream reader, with the argument names pymysql wants now.

    The reader asks for its control connection with ``db=``, which pymysql deprecates.
    """
    if "db" in kwargs:
        kwargs["database"] = kwargs.pop("db")
    return pymysql.connect(**kwargs)


class BinlogReader(threading.Thread):
    """Counts row modifications per primary key from ``log_file``/``log_pos`` until stopped.

    After :meth:`start`, wait on :attr:`ready`: it is set once the server has accepted the
    stream (its first event arrived) or refused it (then :attr:`error` holds why). Read the
    results after :meth:`join`.
    """

    def __init__(
        self, settings: ConnectionSettings, log_file: str, log_pos: int, stop: threading.Event
    ) -> None:
        super().__init__(name="advisor-binlog", daemon=True)
        self.settings = settings
        self.log_file = log_file
        self.log_pos = log_pos
        self.stop_flag = stop
        self.ready = threading.Event()
        self.error: AdvisorError | None = None
        self.rows = RowCounter()
        self.tables: Counter[str] = Counter()
        self.tables_without_key: set[str] = set()
        self.transaction_bytes = array("q")
        self.interruptions: list[str] = []
        self._keys: dict[tuple[str, str], list[tuple[str, int]]] = {}
        self._lookup: Connection | None = None
        self._last_end = 0
        self._transaction_start: int | None = None
        self._started_s = int(time.time())

    def reached(self, position: tuple[str, int]) -> bool:
        """Has the reader read up to ``position`` (binlog file, offset)?"""
        return (self.log_file, self.log_pos) >= position

    # -- the stream ---------------------------------------------------------------------------

    def _stream(self) -> BinLogStreamReader:
        kwargs = self.settings.pymysql_kwargs()
        kwargs.pop("autocommit", None)
        kwargs.pop("charset", None)
        return BinLogStreamReader(
            connection_settings=kwargs,
            server_id=random.randint(*_SERVER_ID_RANGE),
            log_file=self.log_file,
            log_pos=self.log_pos,
            resume_stream=True,
            blocking=True,
            slave_heartbeat=_HEARTBEAT_S,
            only_events=[
                WriteRowsEvent,
                UpdateRowsEvent,
                DeleteRowsEvent,
                MariadbGtidEvent,
                GtidEvent,
                QueryEvent,
                XidEvent,
                RotateEvent,
                FormatDescriptionEvent,
                HeartbeatLogEvent,
            ],
            ignored_schemas=_SYSTEM_SCHEMAS,
            freeze_schema=True,
            enable_logging=False,
            pymysql_wrapper=_driver_connect,
        )

    def run(self) -> None:
        # The library warns on every stream that binlog_row_metadata is not FULL; primary
        # keys are looked up here instead, so that warning would only alarm the user.
        logging.getLogger("pymysqlreplication").setLevel(logging.ERROR)
        try:
            self._lookup = connect(self.settings)
            while not self.stop_flag.is_set():
                try:
                    self._read_until_stopped()
                except pymysql.err.MySQLError as error:
                    if not self.ready.is_set():
                        raise
                    code = error.args[0] if error.args else None
                    if code not in LOST_CONNECTION_CODES:
                        raise
                    self.interruptions.append(
                        str(explain_error(error, self.settings, "reading the binary log"))
                    )
                    self.stop_flag.wait(_RECONNECT_PAUSE_S)
                    with contextlib.suppress(pymysql.err.MySQLError):
                        self._lookup.ping(reconnect=True)
        except pymysql.err.MySQLError as error:
            self.error = explain_error(error, self.settings, "reading the binary log")
        except AdvisorError as error:
            self.error = error
        except Exception as error:  # the library's own exceptions: report, never crash
            self.error = AdvisorError(
                f"reading the binary log of {self.settings.describe()} failed: "
                f"{type(error).__name__}: {error}"
            )
        finally:
            self.ready.set()
            if self._lookup is not None:
                self._lookup.close()

    def _read_until_stopped(self) -> None:
        stream = self._stream()
        try:
            for event in stream:
                self.ready.set()
                self._handle(event)
                self.log_file, self.log_pos = stream.log_file, stream.log_pos
                if self.stop_flag.is_set():
                    return
        finally:
            stream.close()

    # -- events -------------------------------------------------------------------------------

    def _handle(self, event: Any) -> None:
        end = int(getattr(event.packet, "log_pos", 0) or 0)
        if isinstance(event, RotateEvent | FormatDescriptionEvent):
            self._last_end, self._transaction_start = 0, None
            return
        if isinstance(event, HeartbeatLogEvent):
            return
        if isinstance(event, MariadbGtidEvent | GtidEvent):
            # A transaction spans from the end of the event before its GTID to its XID.
            self._transaction_start = self._last_end or None
        elif isinstance(event, XidEvent):
            if self._transaction_start is not None and end > self._transaction_start:
                self.transaction_bytes.append(end - self._transaction_start)
            self._transaction_start = None
        elif isinstance(event, WriteRowsEvent | UpdateRowsEvent | DeleteRowsEvent):
            self._count_rows(event)
        if end:
            self._last_end = end

    def _count_rows(self, event: Any) -> None:
        schema, table = str(event.schema), str(event.table)
        self.tables[table_name(schema, table)] += len(event.rows)
        key = self._key_columns(schema, table)
        if not key:
            self.tables_without_key.add(table_name(schema, table))
            return
        image = "before_values" if isinstance(event, UpdateRowsEvent) else "values"
        second = self._event_second(event)
        origin = int(getattr(event.packet, "server_id", 0) or 0)
        for row in event.rows:
            values = list(row[image].values())
            if all(position < len(values) for _, position in key):
                name = row_name(schema, table, [(c, values[p]) for c, p in key])
                self.rows.add(name, second, origin=origin)

    def _event_second(self, event: Any) -> int:
        """The second a row event happened [unix s]: its timestamp, or the time it was read
        when that is outside the run.

        A row event carries its statement's timestamp, which a session may set to anything
        (``SET timestamp = 0``) and a replayed or delayed event carries from long ago; the
        peak computation spans every second from the first to the last, so one such event
        would ask for a row of counts per second since 1970 (about 14 GB).
        """
        now = int(time.time())
        try:
            second = int(event.timestamp)
        except (TypeError, ValueError, OverflowError):
            return now
        if not self._started_s - _EVENT_SLACK_S <= second <= now + _EVENT_SLACK_S:
            return now
        return second

    def _key_columns(self, schema: str, table: str) -> list[tuple[str, int]]:
        cached = self._keys.get((schema, table))
        if cached is None:
            assert self._lookup is not None
            cached = self._keys[(schema, table)] = primary_key_columns(self._lookup, schema, table)
        return cached
