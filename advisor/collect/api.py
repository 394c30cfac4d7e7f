"""Watch one node for a while and gather the evidence: the collection loop.

The order of work: connect and check the node is a Galera member (one-line errors
otherwise), read its variables, choose the hot-row source (the binary log, else
``performance_schema``, else none, saying why), then sample ``SHOW GLOBAL STATUS`` every
interval until the duration is up, ``stop`` is set or the user presses Ctrl-C. A lost
connection (a node restarting) leaves a gap and is retried every interval; what was gathered
is summarised either way.
"""

from __future__ import annotations

__all__ = ["DEFAULT_TOP_ROWS", "CollectedEvidence", "WritesetSizes", "collect", "time_limit_s"]

import contextlib
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

import numpy as np
import pymysql  # type: ignore[import-untyped,unused-ignore]

from advisor.collect.binlog import BinlogReader
from advisor.collect.channels import ChannelReading, channel_status_sql, read_channels
from advisor.collect.connection import (
    LOST_CONNECTION_CODES,
    QUIT_WAIT_S,
    Connection,
    ConnectionSettings,
    connect,
    explain_error,
    query,
)
from advisor.collect.hotrows import DEFAULT_WINDOW_S, HotRowRate
from advisor.collect.pstables import TABLE_CHANGES_SQL, table_changes, table_peak_rates
from advisor.collect.server import ServerInfo, server_info
from advisor.collect.status import Spread, StatusSample, StatusSummary, summarise_status
from advisor.errors import AdvisorError

HotRowSource = Literal["binlog", "performance_schema", "none"]
DEFAULT_TOP_ROWS = 10
_STREAM_START_TIMEOUT_S = 15.0
# After the last sample, how long the binlog reader may take to read up to the position the
# server had then (it reads as fast as it parses, which a busy server can outrun).
_CATCH_UP_S = 10.0
_READER_JOIN_TIMEOUT_S = 10.0


# Statements before sampling starts (variables, status, binlog position, the
# performance_schema check) and in one sample (status, table counts).
_SETUP_STATEMENTS = 4
_SAMPLE_STATEMENTS = 2
# With channels: their status and the heartbeat (advisor.collect.channels).
_CHANNEL_STATEMENTS = 2


def time_limit_s(
    settings: ConnectionSettings, duration_s: float, *, channels: bool = False
) -> float:
    """The longest :func:`collect` can take [s], whatever the server does.

    ``duration_s`` plus a grace made of the connection's timeouts: the set-up (a connect,
    the login and four statements, and the binlog stream's start), one last sample begun
    just before the end (a reconnect and two statements), the binlog reader's catch-up and
    join, and the QUIT at the end (at most :data:`~advisor.collect.connection.QUIT_WAIT_S`).
    Each connect and statement is bounded as a whole, not only each read
    (:class:`~advisor.collect.connection.BoundedConnection`), so a server that sends a byte
    every few seconds is held to it too. With the default 10 s timeouts the grace is 216 s;
    a server that never answers ends the run at its first timeout. Reading the ``channels``
    adds two statements to the set-up and to each sample (:data:`_CHANNEL_STATEMENTS`).

    >>> time_limit_s(ConnectionSettings(), 600)
    816.0
    >>> time_limit_s(ConnectionSettings(), 600, channels=True)
    896.0
    """
    extra = _CHANNEL_STATEMENTS if channels else 0
    setup_s = settings.worst_wait_s(_SETUP_STATEMENTS + extra) + _STREAM_START_TIMEOUT_S
    last_sample_s = settings.worst_wait_s(_SAMPLE_STATEMENTS + extra)
    after_s = settings.write_timeout_s + settings.read_timeout_s + _CATCH_UP_S
    end_s = _READER_JOIN_TIMEOUT_S + QUIT_WAIT_S
    return duration_s + setup_s + last_sample_s + after_s + end_s


@dataclass(frozen=True)
class WritesetSizes:
    """Size of one write set [bytes], and where the figures come from."""

    p50_bytes: float
    p99_bytes: float
    source: str


@dataclass(frozen=True)
class CollectedEvidence:
    """Everything ``advisor collect`` learnt from one node, ready to write as topology.yaml."""

    target: str
    started_at: datetime
    interval_s: float
    requested_duration_s: float
    duration_s: float
    ended_early: bool
    server: ServerInfo
    status: StatusSummary
    writeset: WritesetSizes | None
    hot_rows: list[HotRowRate]
    hot_row_source: HotRowSource
    hot_row_window_s: float
    hot_row_events: int
    binlog_transactions: int
    # Write transactions of the whole cluster per second from the binary log, and how they
    # were counted (:func:`_commit_rate`); None: the status counters' (status.commits_per_s).
    commits_per_s: Spread | None = None
    commits_source: str = ""
    notes: list[str] = field(default_factory=list)
    samples: list[StatusSample] = field(default_factory=list, repr=False)
    # SHOW GLOBAL VARIABLES as read at the start (what `advisor check` compares with the
    # design: wsrep_slave_threads, read_only, the whole wsrep_provider_options).
    variables: dict[str, str] = field(default_factory=dict, repr=False)
    # With collect(channels=True): the replication channels and heartbeat, one per sample.
    channels: list[ChannelReading] = field(default_factory=list, repr=False)


class _Malformed(AdvisorError):
    """The server's reply has a shape no MySQL or MariaDB server gives: not a gap to retry."""


def _pairs(connection: Connection, sql: str, where: str) -> dict[str, str]:
    """``name -> value`` from a ``SHOW ... VARIABLES/STATUS`` reply: two columns a row."""
    pairs = {}
    for row in query(connection, sql):
        if len(row) < 2:
            raise _Malformed(
                f"{sql} on {where} returned rows of {len(row)} column(s), where MySQL and "
                "MariaDB give a name and a value: not a server advisor can read"
            )
        name, value = row[0], row[1]
        pairs[str(name)] = "" if value is None else str(value)
    return pairs


def _number(text: str) -> float:
    """A status value as a finite number; NaN for anything else (``abc``, 5,000 digits)."""
    if len(text) > _MAX_NUMBER_CHARS:
        return float("nan")
    try:
        value = float(text)
    except ValueError:
        return float("nan")
    return value if math.isfinite(value) else float("nan")


# A counter is an unsigned 64-bit integer on the server: 20 digits; a longer value is not one.
_MAX_NUMBER_CHARS = 40
# The largest binlog position there can be: positions are unsigned 64-bit in the replication
# protocol (a binlog file itself stops near max_binlog_size, at most 1 GB).
_MAX_BINLOG_POSITION = 2**64 - 1


def _read(
    settings: ConnectionSettings, doing: str, action: Callable[[], dict[str, str]]
) -> dict[str, str]:
    try:
        return action()
    except pymysql.err.MySQLError as error:
        raise explain_error(error, settings, doing) from None


def _binlog_position(
    connection: Connection, settings: ConnectionSettings
) -> tuple[str, int] | None:
    """The current binlog file and position, or None when binary logging is off.

    Raises :class:`_Malformed` when the server's reply is not a file and a position.
    """
    try:
        rows = query(connection, "SHOW MASTER STATUS")
    except pymysql.err.MySQLError as error:
        raise explain_error(error, settings, "SHOW MASTER STATUS (binlog position)") from None
    if not rows:
        return None
    row = rows[0]
    position = str(row[1]).strip() if len(row) >= 2 else ""
    if not (position.isdecimal() and len(position) <= 20) or int(position) > _MAX_BINLOG_POSITION:
        shown = position[:40] + ("..." if len(position) > 40 else "")
        raise _Malformed(
            f"SHOW MASTER STATUS gave the binlog position {shown!r}, not a whole number"
        )
    return str(row[0]), int(position)


def _start_binlog(
    settings: ConnectionSettings, position: tuple[str, int], stop: threading.Event
) -> BinlogReader:
    reader = BinlogReader(settings, position[0], position[1], stop)
    reader.start()
    if not reader.ready.wait(_STREAM_START_TIMEOUT_S):
        stop.set()
        raise AdvisorError(
            f"the binary log stream of {settings.describe()} did not start "
            f"within {_STREAM_START_TIMEOUT_S:.0f}s"
        )
    if reader.error is not None:
        raise reader.error
    return reader


def _choose_source(
    connection: Connection, settings: ConnectionSettings, info: ServerInfo, notes: list[str]
) -> tuple[HotRowSource, tuple[str, int] | None]:
    why_not_binlog = None
    position = None
    if not info.log_bin:
        why_not_binlog = "binary logging is off (log_bin=OFF)"
    elif info.binlog_format != "ROW":
        why_not_binlog = f"binlog_format is {info.binlog_format}, not ROW"
    else:
        try:
            position = _binlog_position(connection, settings)
        except _Malformed as error:
            why_not_binlog = str(error)
        else:
            if position is None:
                why_not_binlog = "SHOW MASTER STATUS returned no binlog position"
    if why_not_binlog is None:
        if not info.log_slave_updates:
            notes.append(
                "log_slave_updates is OFF: the binary log holds only the writes made "
                "on this node, so hot-row rates count this node's share only"
            )
        return "binlog", position
    if info.performance_schema:
        try:
            query(connection, TABLE_CHANGES_SQL)
        except pymysql.err.MySQLError as error:
            doing = "reading performance_schema.table_io_waits_summary_by_table"
            raise explain_error(error, settings, doing) from None
        notes.append(
            f"hot rows: {why_not_binlog}; fell back to performance_schema table "
            "counts, which cannot tell rows apart (a table's rate bounds its hottest row)"
        )
        return "performance_schema", None
    notes.append(
        f"hot rows: {why_not_binlog} and performance_schema is OFF; no hot rows "
        "collected (add workload.hot_rows by hand, or enable either)"
    )
    return "none", None


def _writeset_sizes(
    status: StatusSummary, reader: BinlogReader | None, info: ServerInfo
) -> WritesetSizes | None:
    """Write-set sizes: binlog transactions scaled to what Galera replicated, else status.

    The binary log gives every transaction's size, so its percentiles see single large
    transactions that per-interval means would average away; its bytes differ from a write
    set's (no certification keys, binlog event headers), so they are scaled by the ratio of
    the mean write set (from the status counters) to the mean binlog transaction.
    """
    sizes = np.frombuffer(reader.transaction_bytes, dtype=np.int64) if reader else np.zeros(0)
    status_mean = (
        status.writeset_bytes_mean if info.log_slave_updates else status.local_writeset_bytes_mean
    )
    if sizes.size and status_mean:
        scale = status_mean / float(sizes.mean())
        p50, p99 = np.percentile(sizes, [50, 99], method="inverted_cdf") * scale
        return WritesetSizes(
            float(p50),
            float(p99),
            f"{sizes.size} binlog transactions, scaled by {scale:.2f} to the "
            "mean write set of wsrep_replicated_bytes/wsrep_replicated",
        )
    if status.writeset_bytes_p50 is not None and status.writeset_bytes_p99 is not None:
        return WritesetSizes(
            status.writeset_bytes_p50,
            status.writeset_bytes_p99,
            "per-interval (wsrep_replicated_bytes + wsrep_received_bytes) / "
            "(wsrep_replicated + wsrep_received)",
        )
    return None


def _let_reader_catch_up(
    reader: BinlogReader, sampler: _Sampler, settings: ConnectionSettings, notes: list[str]
) -> bool:
    """Wait a little for the reader to reach the binlog end as of now; say if it did not.
    Whether it did (False when the end is unknown)."""
    if sampler.connection is None:
        return False
    try:
        end = _binlog_position(sampler.connection, settings)
    except AdvisorError:  # the connection lost, or a malformed position: the end is unknown
        return False
    if end is None:
        return False
    deadline = time.monotonic() + _CATCH_UP_S
    while not reader.reached(end) and reader.is_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    if not reader.reached(end):
        notes.append(
            f"the binary log reader had reached {reader.log_file}:{reader.log_pos} "
            f"of {end[0]}:{end[1]} when the run ended; hot-row counts miss the rest"
        )
        return False
    return True


class _Sampler:
    """Reads status (and table counts) each interval, reconnecting after a lost connection."""

    def __init__(
        self,
        settings: ConnectionSettings,
        connection: Connection,
        tables: bool,
        notes: list[str],
        channels_flavor: str | None = None,
    ) -> None:
        self.settings = settings
        self.channels_flavor = channels_flavor
        self.channel_readings: list[ChannelReading] = []
        self.connection: Connection | None = connection
        self.tables = tables
        self.notes = notes
        self.samples: list[StatusSample] = []
        self.table_snapshots: list[dict[str, float]] = []
        self.table_times: list[float] = []
        self.table_uptimes: list[float] = []
        self.gaps = 0
        self.uptime_noted = False

    def sample(self, elapsed_s: float) -> None:
        doing = "SHOW GLOBAL STATUS"
        try:
            if self.connection is None:
                self.connection = connect(self.settings)
            status = _pairs(self.connection, "SHOW GLOBAL STATUS", self.settings.describe())
            self.samples.append(StatusSample(elapsed_s, status))
            self._check_uptime(status.get("Uptime"))
            if self.tables:
                tables = table_changes(query(self.connection, TABLE_CHANGES_SQL))
                self.table_snapshots.append(tables)
                self.table_times.append(elapsed_s)
                self.table_uptimes.append(_number(status.get("Uptime", "")))
            if self.channels_flavor is not None:
                doing = channel_status_sql(self.channels_flavor)
                self.channel_readings.append(
                    read_channels(self.connection, self.channels_flavor, elapsed_s)
                )
        except _Malformed:
            raise
        except (pymysql.err.MySQLError, AdvisorError) as error:
            code = error.args[0] if isinstance(error, pymysql.err.MySQLError) else None
            if isinstance(error, pymysql.err.MySQLError) and code not in LOST_CONNECTION_CODES:
                raise explain_error(error, self.settings, doing) from None
            self.gaps += 1
            if self.gaps == 1:
                self.notes.append(
                    f"lost the connection at {elapsed_s:.0f}s into the run; "
                    "retried every interval (intervals across the gap are dropped)"
                )
            if self.connection is not None:
                with contextlib.suppress(Exception):
                    self.connection.close()
            self.connection = None

    def _check_uptime(self, uptime: str | None) -> None:
        """Say once that restarts cannot be told when Uptime is missing or not a number."""
        if self.uptime_noted or (uptime is not None and not math.isnan(_number(uptime))):
            return
        self.uptime_noted = True
        shown = "missing" if uptime is None else f"{uptime[:40]!r}, not a number"
        self.notes.append(
            f"the server's Uptime is {shown}: a restart during the run cannot be told, so an "
            "interval across one is not dropped"
        )

    def close(self) -> None:
        if self.connection is not None:
            with contextlib.suppress(Exception):
                self.connection.close()


def _sample_until_done(
    sampler: _Sampler,
    interval_s: float,
    duration_s: float,
    progress: Callable[[float], None] | None,
    stop: threading.Event,
) -> tuple[float, bool, bool]:
    """Sample every ``interval_s`` on a fixed schedule (no drift) until the duration is up,
    ``stop`` is set (one last sample then) or Ctrl-C. Returns (seconds run, ended early,
    interrupted by Ctrl-C)."""
    start = time.monotonic()
    ended_early = interrupted = False
    tick = 0
    try:
        while True:
            elapsed = time.monotonic() - start
            sampler.sample(elapsed)
            if progress is not None:
                progress(min(1.0, elapsed / duration_s))
            # The clock after the sample: one that ran past the end (a slow server) is the
            # last, so that only one sample ever runs past the duration (time_limit_s).
            if time.monotonic() - start >= duration_s:
                break
            tick += 1
            wake = min(tick * interval_s, duration_s)
            if stop.wait(max(0.0, wake - (time.monotonic() - start))):
                ended_early = True
                sampler.sample(time.monotonic() - start)
                break
    except KeyboardInterrupt:
        ended_early = interrupted = True
    duration = time.monotonic() - start
    if progress is not None:
        progress(min(1.0, duration / duration_s))
    return duration, ended_early, interrupted


def collect(
    target: ConnectionSettings,
    *,
    interval_s: float = 10,
    duration_s: float = 600,
    progress: Callable[[float], None] | None = None,
    stop: threading.Event | None = None,
    top_rows: int = DEFAULT_TOP_ROWS,
    hot_row_window_s: int = DEFAULT_WINDOW_S,
    channels: bool = False,
) -> CollectedEvidence:
    """Watch the node ``target`` for ``duration_s`` seconds and summarise what it did.

    Parameters
    ----------
    target : ConnectionSettings
        The node to watch; any member of the cluster will do.
    interval_s : float
        Time between two ``SHOW GLOBAL STATUS`` samples [s]; peaks are per interval.
    duration_s : float
        How long to watch [s].
    progress : callable, optional
        Called after each sample with the fraction of the duration done (0 to 1).
    stop : threading.Event, optional
        Set it to end early; Ctrl-C (KeyboardInterrupt) ends early too. Either way the
        evidence gathered so far is returned.
    top_rows : int
        How many hot rows to report.
    hot_row_window_s : int
        Length of the sliding window over which a row's peak rate is taken [s].
    channels : bool
        Also read the node's asynchronous replication channels and the design's heartbeat
        at the start and with every sample (:mod:`advisor.collect.channels`;
        ``CollectedEvidence.channels``); a missing privilege for them stops the set-up.

    Returns within :func:`time_limit_s` whatever the server does: every connect, read and
    write waits at most ``target``'s timeouts.

    Raises
    ------
    AdvisorError
        The node is unreachable, refuses the user, lacks a privilege collect needs (named),
        stops answering during the set-up, or is not a Galera member.
    """
    if not interval_s > 0 or not duration_s > 0:
        raise AdvisorError(
            f"interval and duration must be > 0, got {interval_s:g}s and {duration_s:g}s"
        )
    stop = stop or threading.Event()
    reader_stop = threading.Event()
    notes: list[str] = []
    where = target.describe()
    connection = connect(target)
    reader: BinlogReader | None = None
    sampler: _Sampler | None = None
    caught_up = False
    try:
        variables = _read(
            target,
            "SHOW GLOBAL VARIABLES",
            lambda: _pairs(connection, "SHOW GLOBAL VARIABLES", where),
        )
        first_status = _read(
            target, "SHOW GLOBAL STATUS", lambda: _pairs(connection, "SHOW GLOBAL STATUS", where)
        )
        info = server_info(variables, first_status, where)
        notes += [
            f"wsrep_provider_options: {option} is not a number advisor can use ({value}); "
            "left out (the model takes Galera's default)"
            for option, value in info.ignored_options
        ]
        if channels:  # a missing privilege is said now, not after the whole duration
            sql = channel_status_sql(info.flavor)
            try:
                read_channels(connection, info.flavor, 0.0)
            except pymysql.err.MySQLError as error:
                raise explain_error(error, target, sql) from None
        source, position = _choose_source(connection, target, info, notes)
        if position is not None:
            reader = _start_binlog(target, position, reader_stop)
        started_at = datetime.now(UTC)
        sampler = _Sampler(
            target,
            connection,
            source == "performance_schema",
            notes,
            info.flavor if channels else None,
        )
        duration, ended_early, interrupted = _sample_until_done(
            sampler, interval_s, duration_s, progress, stop
        )
        if reader is not None and not interrupted:
            caught_up = _let_reader_catch_up(reader, sampler, target, notes)
    finally:
        reader_stop.set()
        if reader is not None:
            reader.join(_READER_JOIN_TIMEOUT_S)
        if sampler is not None:
            sampler.close()
        else:
            connection.close()
    return _evidence(
        target,
        info,
        sampler,
        reader,
        source,
        notes,
        started_at=started_at,
        interval_s=interval_s,
        duration_s=duration_s,
        elapsed_s=duration,
        ended_early=ended_early,
        top_rows=top_rows,
        window_s=hot_row_window_s,
        binlog_complete=caught_up,
        variables=variables,
    )


def _commit_rate(
    status: StatusSummary,
    reader: BinlogReader | None,
    info: ServerInfo,
    elapsed_s: float,
    *,
    complete: bool,
    interval_s: float,
) -> tuple[Spread | None, str]:
    """Write transactions of the whole cluster per second from the binary log, and how they
    were counted; ``(None, "")`` when the binary log cannot say (the status counters do).

    The binary log's transactions when it holds every member's (``log_slave_updates``) and
    was read whole: exactly what committed. The status counters over-count under conflicts:
    an autocommit that fails certification is retried silently (``wsrep_retry_autocommit``)
    and its failed write set still takes a seqno, while ``wsrep_local_cert_failures`` counts
    only this node's own failures (on the loopback cluster under load: 100/s read for 79.9/s
    committed, with 1,607 binlog transactions in 20 s). The peak keeps the status intervals'
    shape, scaled to the binlog's average.
    """
    counted = status.commits_per_s
    usable = (
        reader is not None
        and complete
        and reader.error is None
        and not reader.interruptions
        and info.log_slave_updates
        and elapsed_s > 0
    )
    if not usable or reader is None:
        return None, ""
    avg = len(reader.transaction_bytes) / elapsed_s
    scale = avg / counted.avg if counted.avg else None
    peak = counted.peak * scale if counted.peak is not None and scale is not None else avg
    return Spread(avg, max(avg, peak)), (
        f"{len(reader.transaction_bytes)} binary log transactions in {elapsed_s:.0f}s: write "
        f"transactions of the whole cluster; peak from wsrep_last_committed per "
        f"{interval_s:g}s interval, scaled to them"
    )


def _evidence(
    target: ConnectionSettings,
    info: ServerInfo,
    sampler: _Sampler,
    reader: BinlogReader | None,
    source: HotRowSource,
    notes: list[str],
    *,
    started_at: datetime,
    interval_s: float,
    duration_s: float,
    elapsed_s: float,
    ended_early: bool,
    top_rows: int,
    window_s: int,
    binlog_complete: bool = False,
    variables: dict[str, str] | None = None,
) -> CollectedEvidence:
    status = summarise_status(sampler.samples)
    commits, commits_source = _commit_rate(
        status, reader, info, elapsed_s, complete=binlog_complete, interval_s=interval_s
    )
    if status.restarts:
        notes.append(
            f"the server restarted {status.restarts} time(s) during the run; "
            "the intervals across each restart are dropped"
        )
    hot_rows: list[HotRowRate] = []
    events = 0
    if reader is not None:
        if reader.error is not None:
            notes.append(f"the binary log stream stopped early: {reader.error}")
        if reader.interruptions:
            notes.append(
                f"the binary log stream broke {len(reader.interruptions)} time(s) and "
                f"resumed where it stopped; first: {reader.interruptions[0]}"
            )
        hot_rows = reader.rows.top(top_rows, window_s)
        events = reader.rows.events
        if not events:
            notes.append("the binary log showed no row changes during the run")
        if reader.tables_without_key:
            names = ", ".join(sorted(reader.tables_without_key)[:5])
            notes.append(
                f"rows of tables without a primary key (or not visible to this user) "
                f"are not counted per row: {names}"
            )
    elif source == "performance_schema":
        hot_rows = table_peak_rates(
            sampler.table_times, sampler.table_uptimes, sampler.table_snapshots, top_rows
        )
    if len(sampler.samples) < 2:
        notes.append("fewer than two status samples: no rates (run longer than one interval)")
    return CollectedEvidence(
        target=target.describe(),
        started_at=started_at,
        interval_s=interval_s,
        requested_duration_s=duration_s,
        duration_s=elapsed_s,
        ended_early=ended_early,
        server=info,
        status=status,
        writeset=_writeset_sizes(status, reader, info),
        hot_rows=[row for row in hot_rows if row.updates_per_s > 0],
        hot_row_source=source,
        hot_row_window_s=float(window_s if source == "binlog" else interval_s),
        hot_row_events=events,
        binlog_transactions=len(reader.transaction_bytes) if reader else 0,
        commits_per_s=commits,
        commits_source=commits_source,
        notes=notes,
        samples=sampler.samples,
        variables=dict(variables or {}),
        channels=sampler.channel_readings,
    )
