"""Issue 26: a row event's timestamp is the server's word; the hot-row peaks must not
allocate a count per second from it to now.

A session may ``SET timestamp = 0`` before writing, and its row events then say 1970; the
peak computation (RowCounter.top) spans every second from the first event to the last, so one
such event asked for about 1.8e9 seconds of counts per candidate row (14 GB). An event whose
second lies outside the run is now counted at the time it was read.
"""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from pymysqlreplication.row_event import WriteRowsEvent

from advisor.collect.binlog import BinlogReader
from advisor.collect.connection import ConnectionSettings


class FakeWriteRows(WriteRowsEvent):  # type: ignore[misc]
    """A row event as the reader sees one, without a packet to parse."""

    rows = None  # a plain attribute in place of the parsing property

    def __init__(self, timestamp: object, key: int) -> None:
        self.schema, self.table = "shop", "stock"
        self.rows = [{"values": {"id": key}}]
        self.timestamp = timestamp
        self.packet = SimpleNamespace(server_id=1)


def row_event(timestamp: object, key: int) -> FakeWriteRows:
    return FakeWriteRows(timestamp, key)


def test_timestamps_outside_the_run_are_taken_as_the_time_read(monkeypatch):
    reader = BinlogReader(ConnectionSettings(), "mysql-bin.000001", 4, threading.Event())
    monkeypatch.setattr(reader, "_key_columns", lambda schema, table: [("id", 0)])
    now = int(time.time())
    for timestamp in (0, 1, 1_000_000_000, 2**62, "x", None, now):
        reader._count_rows(row_event(timestamp, 1))
    seconds = list(reader.rows._seconds)
    assert all(now - 5 <= second <= int(time.time()) for second in seconds), seconds
    (top,) = reader.rows.top(10, 10)
    assert top.name == "shop.stock id=1" and top.total == 7
