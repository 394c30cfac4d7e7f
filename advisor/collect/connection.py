"""Connecting to one node, read-only, with errors a user can act on.

Every statement goes through :func:`query`, which runs only ``SHOW`` and ``SELECT``: collect
cannot change the server it watches. The password lives only in :class:`ConnectionSettings`
(hidden from ``repr``) and in the driver's handshake; no message built here contains it, nor
a character of it (it is sent as UTF-8 bytes, as the ``mysql`` client sends what is typed,
so no encoder ever complains about one of its characters).

The server is not trusted to behave (issue 26). Each connection is a
:class:`BoundedConnection`: the connect with its login has ``connect_timeout_s +
read_timeout_s`` in all, and each statement ``write_timeout_s + read_timeout_s`` from its
sending to the last byte of its reply, every socket read waiting at most what is left of
that budget (a server that trickles a byte every few seconds, each within the read timeout,
is cut off at the budget's end, as :func:`advisor.collect.api.time_limit_s` counts). A
reply may hold at most :data:`MAX_REPLY_ROWS` rows and :data:`MAX_REPLY_BYTES` bytes
(``SHOW GLOBAL STATUS`` has about a thousand rows, ``performance_schema``'s table summary
one per table): a server that streams rows forever is refused with one line instead of
filling the memory.
"""

from __future__ import annotations

__all__ = [
    "MAX_REPLY_BYTES",
    "MAX_REPLY_ROWS",
    "QUIT_WAIT_S",
    "BoundedConnection",
    "Connection",
    "ConnectionSettings",
    "connect",
    "explain_error",
    "query",
    "query_named",
    "read_defaults_file",
]

import configparser
import errno
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeAlias

import pymysql  # type: ignore[import-untyped,unused-ignore]
import pymysql.cursors  # type: ignore[import-untyped,unused-ignore]

from advisor.errors import AdvisorError, Location

Connection: TypeAlias = "pymysql.connections.Connection[Any]"

_READ_ONLY = re.compile(r"^\s*(SHOW|SELECT)\b", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# A my.cnf is a page of options; anything larger is not one (and /dev/zero never ends).
_MAX_DEFAULTS_FILE_BYTES = 1 << 20

# MySQL/MariaDB client and server error numbers (include/mysqld_error.h, errmsg.h).
_ER_DBACCESS_DENIED = 1044
_ER_ACCESS_DENIED = 1045
_ER_TABLEACCESS_DENIED = 1142
_ER_SPECIFIC_ACCESS_DENIED = 1227
_ER_MASTER_FATAL_READING_BINLOG = 1236
_CR_CONNECTION_ERROR = 2002
_CR_CONN_HOST_ERROR = 2003
_CR_UNKNOWN_HOST = 2005
_CR_SERVER_GONE = 2006
_CR_SERVER_LOST = 2013
_CR_SSL_CONNECTION_ERROR = 2026
LOST_CONNECTION_CODES = frozenset(
    {_CR_SERVER_GONE, _CR_SERVER_LOST, _CR_CONN_HOST_ERROR, _CR_CONNECTION_ERROR}
)

# The largest reply collect reads to one statement. A reply is packets: one per row, plus a
# few for the columns; SHOW GLOBAL STATUS has about 1,000 rows (MariaDB 10.11: 650), SHOW
# GLOBAL VARIABLES about 700, performance_schema's table summary one per table it tracks.
MAX_REPLY_ROWS = 200_000
# wsrep_provider_options is the longest value (about 3 KB); 200,000 table rows take ~10 MB.
MAX_REPLY_BYTES = 64 << 20


class ReplyRefused(pymysql.err.OperationalError):  # type: ignore[misc,unused-ignore]
    """The server's reply passed a bound (:data:`MAX_REPLY_ROWS`, :data:`MAX_REPLY_BYTES`)."""


class BoundedConnection(pymysql.connections.Connection):  # type: ignore[misc,unused-ignore]
    """A pymysql connection whose waits and replies are bounded, whatever the server does.

    pymysql's read timeout bounds one ``recv``; a server sending a byte every few seconds
    never trips it. Here every read waits at most what is left of the operation's budget:
    the connect (with the login and the driver's own set-up statements) has
    ``connect_timeout + read_timeout``, each later command ``write_timeout + read_timeout``.
    Past the budget, or past the reply bounds, the socket is closed and an
    ``OperationalError`` says why (:class:`ReplyRefused` for the bounds).
    """

    _advisor_connecting = False

    def connect(self, sock: Any = None) -> None:
        # Also a reconnect (ping(reconnect=True)): the login gets a fresh budget of its own.
        self._advisor_connecting = True
        self._advisor_start(float(self.connect_timeout) + float(self._read_timeout or 0))
        try:
            super().connect(sock)
        finally:
            self._advisor_connecting = False

    def _advisor_start(self, budget_s: float) -> None:
        self._advisor_budget_s = budget_s
        self._advisor_deadline = time.monotonic() + budget_s
        self._advisor_rows = 0
        self._advisor_bytes = 0

    def _execute_command(self, command: int, sql: Any) -> Any:
        if not self._advisor_connecting:
            self._advisor_start(float(self._write_timeout or 0) + float(self._read_timeout or 0))
        return super()._execute_command(command, sql)

    def _read_packet(self, packet_type: Any = pymysql.connections.MysqlPacket) -> Any:
        self._advisor_rows += 1
        if self._advisor_rows > MAX_REPLY_ROWS:
            self._force_close()
            raise ReplyRefused(
                0,
                f"the reply passed {MAX_REPLY_ROWS:,} rows, far more than this statement "
                "returns on a real server; connection closed",
            )
        return super()._read_packet(packet_type)

    def _read_bytes(self, num_bytes: int) -> bytes:
        if self._advisor_bytes + num_bytes > MAX_REPLY_BYTES:
            self._force_close()
            raise ReplyRefused(
                0,
                f"the reply passed {MAX_REPLY_BYTES >> 20} MB, far more than this statement "
                "returns on a real server; connection closed",
            )
        chunks: list[bytes] = []
        missing = num_bytes
        while missing:
            left_s = self._advisor_deadline - time.monotonic()
            if left_s <= 0:
                self._force_close()
                raise pymysql.err.OperationalError(
                    _CR_SERVER_LOST,
                    "Lost connection to MySQL server during query (timed out: no complete "
                    f"reply within {self._advisor_budget_s:g}s)",
                )
            timeout_s = min(float(self._read_timeout or left_s), left_s)
            self._sock.settimeout(timeout_s)
            self._current_timeout = timeout_s
            try:
                data = self._rfile.read1(missing)
            except OSError as error:
                if error.errno == errno.EINTR:
                    continue
                self._force_close()
                why = str(error)
                if isinstance(error, TimeoutError) and timeout_s == left_s:
                    why = f"timed out: no complete reply within {self._advisor_budget_s:g}s"
                raise pymysql.err.OperationalError(
                    _CR_SERVER_LOST, f"Lost connection to MySQL server during query ({why})"
                ) from None
            except BaseException:
                self._force_close()
                raise
            if not data:
                self._force_close()
                raise pymysql.err.OperationalError(
                    _CR_SERVER_LOST, "Lost connection to MySQL server during query"
                )
            chunks.append(data)
            missing -= len(data)
        self._advisor_bytes += num_bytes
        return b"".join(chunks)

    def close(self) -> None:
        # QUIT is one small packet: it waits for room in the send buffer only when the server
        # has stopped reading; then it is not worth more than a moment.
        current_s: float = getattr(self, "_write_timeout", None) or QUIT_WAIT_S
        self._write_timeout = min(current_s, QUIT_WAIT_S)
        super().close()


# The longest the QUIT message at the end may wait for room in the send buffer [s].
QUIT_WAIT_S = 1.0


@dataclass(frozen=True)
class ConnectionSettings:
    """Where and how to connect to one node. ``password`` never appears in ``repr``.

    ``socket`` (a Unix socket path), when set, is used instead of host and port.
    """

    host: str = "127.0.0.1"
    port: int = 3306
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    socket: str | None = None
    ssl_ca: Path | None = None
    ssl_cert: Path | None = None
    ssl_key: Path | None = None
    ssl_verify_identity: bool = False
    # Bounds on every network wait, so that a server that accepts and never answers, or a
    # proxy that stalls after the login, ends collect instead of hanging it (the read
    # timeout also covers the handshake: pymysql reads it with no timeout otherwise). A
    # SHOW GLOBAL STATUS takes milliseconds; the binlog stream gets a heartbeat every second.
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 10.0
    write_timeout_s: float = 10.0

    def __post_init__(self) -> None:
        for name in ("connect_timeout_s", "read_timeout_s", "write_timeout_s"):
            value = getattr(self, name)
            if not 0 < value <= 3600:
                raise AdvisorError(f"{name} must be in (0, 3600] seconds, got {value!r}")
        if not 0 < self.port < 65536:
            raise AdvisorError(f"port must be from 1 to 65535, got {self.port}")

    def worst_wait_s(self, statements: int) -> float:
        """The longest a connect, login and ``statements`` statements can wait [s]."""
        return (
            self.connect_timeout_s
            + self.read_timeout_s
            + statements * (self.write_timeout_s + self.read_timeout_s)
        )

    def describe(self) -> str:
        """``user@host:port`` (or the socket), for messages; never the password."""
        where = self.socket if self.socket else f"{self.host}:{self.port}"
        return f"{self.user}@{where}" if self.user else where

    def pymysql_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :func:`pymysql.connect`."""
        kwargs: dict[str, Any] = {
            "user": self.user or "",
            # Bytes, as the mysql client sends what was typed (UTF-8); pymysql would encode a
            # str as Latin-1 and quote a character it cannot encode, with its position.
            "password": (self.password or "").encode("utf-8", "surrogateescape"),
            "connect_timeout": self.connect_timeout_s,
            "read_timeout": self.read_timeout_s,
            "write_timeout": self.write_timeout_s,
            "charset": "utf8mb4",
            "autocommit": True,
        }
        if self.socket:
            kwargs["unix_socket"] = self.socket
        else:
            kwargs["host"] = self.host
            kwargs["port"] = self.port
        ssl: dict[str, Any] = {}
        for key, path in (("ca", self.ssl_ca), ("cert", self.ssl_cert), ("key", self.ssl_key)):
            if path is not None:
                ssl[key] = str(path)
        if ssl:
            ssl["check_hostname"] = self.ssl_verify_identity
            kwargs["ssl"] = ssl
            kwargs["ssl_verify_cert"] = self.ssl_ca is not None
            kwargs["ssl_verify_identity"] = self.ssl_verify_identity
        return kwargs


def read_defaults_file(path: Path, settings: ConnectionSettings) -> ConnectionSettings:
    """Fill what ``settings`` leaves unset from the ``[client]`` group of a my.cnf file.

    Values given explicitly (not ``None``, host and port not at their defaults) win over the
    file, as with the mysql client's ``--defaults-extra-file``.
    """
    parser = configparser.ConfigParser(
        allow_no_value=True,
        strict=False,
        interpolation=None,
        comment_prefixes=("#", ";"),
        inline_comment_prefixes=None,
    )
    from advisor.inputs.loading import read_text_file

    text = read_text_file(Path(path), _MAX_DEFAULTS_FILE_BYTES, what="defaults file")
    try:
        parser.read_string(text, source=str(path))
    except configparser.Error as error:
        first_line = str(error).splitlines()[0]
        raise AdvisorError(
            f"not a my.cnf options file: {first_line}", Location(str(path))
        ) from None
    if not parser.has_section("client"):
        raise AdvisorError(
            "no [client] group: expected user=, password= (and host=, port=)", Location(str(path))
        )
    group = {key.replace("_", "-"): _unquote(value) for key, value in parser.items("client")}
    changes: dict[str, Any] = {}
    if settings.user is None and group.get("user"):
        changes["user"] = group["user"]
    if settings.password is None and group.get("password") is not None:
        changes["password"] = group["password"]
    if settings.host == ConnectionSettings.host and group.get("host"):
        changes["host"] = group["host"]
    if settings.port == ConnectionSettings.port and group.get("port"):
        port = (group["port"] or "").strip()
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise AdvisorError(
                f"expected a port number from 1 to 65535, got {group['port']!r}",
                Location(str(path), key="client.port"),
            )
        changes["port"] = int(port)
    for key, value in group.items():
        if value is not None and _CONTROL.search(value):  # a continuation line, an escape
            raise AdvisorError(
                "a value holds a newline or another control character (an indented line "
                "continues the value before it in my.cnf)",
                Location(str(path), key=f"client.{key}"),
            )
    if settings.socket is None and group.get("socket"):
        changes["socket"] = group["socket"]
    for key in ("ssl-ca", "ssl-cert", "ssl-key"):
        attribute = key.replace("-", "_")
        if getattr(settings, attribute) is None and group.get(key):
            changes[attribute] = Path(group[key] or "")
    return replace(settings, **changes)


def _unquote(value: str | None) -> str | None:
    if value is not None and len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def explain_error(
    error: pymysql.err.MySQLError, settings: ConnectionSettings, doing: str
) -> AdvisorError:
    """One line saying what failed while ``doing`` and what to do about it.

    The server's own text names the privilege it wanted (``you need (at least one of) the
    REPLICATION SLAVE privilege(s)``); it is kept. The password is never part of it.
    """
    code = error.args[0] if error.args and isinstance(error.args[0], int) else None
    server_text = str(error.args[1]) if len(error.args) > 1 else str(error)
    if settings.password:
        server_text = server_text.replace(settings.password, "***")
    where = settings.describe()
    if code in (_CR_CONN_HOST_ERROR, _CR_CONNECTION_ERROR, _CR_UNKNOWN_HOST):
        reason = "connection refused" if "refused" in server_text.lower() else server_text
        return AdvisorError(
            f"cannot connect to {where}: {reason} (is the server running and reachable there?)"
        )
    if code == _ER_ACCESS_DENIED:
        return AdvisorError(
            f"access denied for {where}: check the user and the password "
            "(--password-env VAR or --defaults-file)"
        )
    if code in (_ER_SPECIFIC_ACCESS_DENIED, _ER_DBACCESS_DENIED, _ER_TABLEACCESS_DENIED):
        return AdvisorError(
            f"missing privilege for {doing} on {where}: {server_text} "
            f"(GRANT it to {settings.user or 'the user'}, "
            "or run as a user that has it)"
        )
    if code == _CR_SSL_CONNECTION_ERROR or "ssl" in server_text.lower():
        return AdvisorError(f"TLS connection to {where} failed: {server_text}")
    if code in (_CR_SERVER_GONE, _CR_SERVER_LOST):
        return AdvisorError(f"lost the connection to {where} while {doing}: {server_text}")
    return AdvisorError(f"{doing} on {where} failed: {server_text}")


def connect(settings: ConnectionSettings) -> Connection:
    """A connection to the node, or :class:`AdvisorError` saying why there is none."""
    try:
        return BoundedConnection(**settings.pymysql_kwargs())
    except pymysql.err.MySQLError as error:
        raise explain_error(error, settings, "connecting") from None
    except UnicodeError:  # never quoted: it could hold a character of the password
        raise AdvisorError(
            f"cannot connect to {settings.describe()}: a setting could not be encoded"
        ) from None
    except (OSError, ValueError) as error:  # e.g. an unreadable --ssl-ca file
        raise AdvisorError(f"cannot connect to {settings.describe()}: {error}") from None


def query(connection: Connection, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of a ``SHOW`` or ``SELECT`` statement; anything else is refused before sending."""
    if not _READ_ONLY.match(sql):
        raise ValueError(f"collect runs SHOW and SELECT statements only, not {sql.split()[0]!r}")
    with connection.cursor(pymysql.cursors.Cursor) as cursor:
        cursor.execute(sql, args or None)
        return list(cursor.fetchall())


def query_named(connection: Connection, sql: str) -> list[dict[str, Any]]:
    """Rows of a ``SHOW`` or ``SELECT`` statement as ``column -> value`` (``SHOW ALL SLAVES
    STATUS`` has some sixty columns, read by name); anything else is refused before sending."""
    if not _READ_ONLY.match(sql):
        raise ValueError(f"collect runs SHOW and SELECT statements only, not {sql.split()[0]!r}")
    with connection.cursor(pymysql.cursors.Cursor) as cursor:
        cursor.execute(sql)
        names = [str(column[0]) for column in cursor.description or ()]
        return [dict(zip(names, row, strict=False)) for row in cursor.fetchall()]
