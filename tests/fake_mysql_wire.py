"""A MySQL server on a loopback socket that says what a test scripts, byte by byte if asked.

Enough of the client/server protocol (protocol 41, text result sets with EOF packets, the
``mysql_native_password`` login) for pymysql and ``advisor collect``: a greeting, the login
(checked against ``password`` when one is set), OK to ``SET ...``, and a result set for each
``SHOW``/``SELECT`` in ``answers`` (a list of rows, or ``FOREVER``: rows without end). With
``trickle_s`` every byte it sends waits that long first. It counts what it sent, so a test
can say how much the client read before it gave up.
"""

from __future__ import annotations

import contextlib
import hashlib
import socket
import struct
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

FOREVER = "forever"
_SEND_WAIT_S = 120.0
_SALT = b"abcdefgh" + b"ijklmnopqrst"
Answer = Sequence[Sequence[str | None]] | str


def packet(sequence: int, payload: bytes) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes([sequence % 256]) + payload


def lenenc(value: str | bytes | None) -> bytes:
    if value is None:
        return b"\xfb"
    data = value.encode() if isinstance(value, str) else value
    n = len(data)
    if n < 251:
        return bytes([n]) + data
    if n < 1 << 16:
        return b"\xfc" + struct.pack("<H", n) + data
    if n < 1 << 24:
        return b"\xfd" + struct.pack("<I", n)[:3] + data
    return b"\xfe" + struct.pack("<Q", n) + data


def greeting() -> bytes:
    capabilities = 0x1 | 0x200 | 0x2000 | 0x8000 | 0x80000  # protocol 41, secure, plugin auth
    return (
        b"\x0a5.5.5-10.11.0-MariaDB\x00"
        + struct.pack("<I", 1)
        + _SALT[:8]
        + b"\x00"
        + struct.pack("<H", capabilities & 0xFFFF)
        + b"\x21"
        + struct.pack("<H", 2)
        + struct.pack("<H", capabilities >> 16)
        + bytes([21])
        + b"\x00" * 10
        + _SALT[8:]
        + b"\x00mysql_native_password\x00"
    )


def native_scramble(password: bytes) -> bytes:
    """What a client sends for ``password`` (MySQL's mysql_native_password)."""
    stage1 = hashlib.sha1(password).digest()
    stage2 = hashlib.sha1(stage1).digest()
    mixed = hashlib.sha1(_SALT + stage2).digest()
    return bytes(a ^ b for a, b in zip(stage1, mixed, strict=True))


OK = b"\x00\x00\x00\x02\x00\x00\x00"
EOF_PACKET = b"\xfe\x00\x00\x02\x00"


def column(name: str) -> bytes:
    return (
        lenenc("def")
        + lenenc("")
        + lenenc("")
        + lenenc("")
        + lenenc(name)
        + lenenc(name)
        + b"\x0c"
        + struct.pack("<H", 45)
        + struct.pack("<I", 1024)
        + b"\xfd"
        + struct.pack("<H", 0)
        + b"\x00"
        + b"\x00\x00"
    )


class WireServer:
    """Serves every connection on 127.0.0.1 until :meth:`close`; see the module docstring."""

    def __init__(
        self,
        answers: Mapping[str, Answer],
        *,
        password: bytes | None = None,
        trickle_s: float = 0.0,
        trickle_after_login: bool = False,
    ) -> None:
        self.answers = dict(answers)
        self.password = password
        self.trickle_s = trickle_s
        self.trickle_after_login = trickle_after_login
        self.sent_bytes = 0
        self.sent_rows = 0
        self.statements: list[str] = []
        self.logins: list[bytes] = []
        self._stop = threading.Event()
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(8)
        self._listener.settimeout(0.1)
        host, port = self._listener.getsockname()
        self.address: tuple[str, int] = (str(host), int(port))
        self._clients: list[socket.socket] = []
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def close(self) -> None:
        self._stop.set()
        for client in self._clients:  # wakes a thread blocked on it
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_RDWR)
        for thread in self._threads:
            thread.join(10)
        self._listener.close()
        for client in self._clients:
            client.close()

    def __enter__(self) -> WireServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- serving -------------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            self._clients.append(client)
            thread = threading.Thread(target=self._serve_quietly, args=(client,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve_quietly(self, client: socket.socket) -> None:
        # the client went away or the test ended: what a server sees every day
        with contextlib.suppress(OSError, _Stopped):
            self._serve(client)

    def _send(self, client: socket.socket, data: bytes, slow: bool) -> None:
        # A client busy parsing (on a loaded machine) must not make the server give up; one
        # that went away makes sendall fail at once.
        client.settimeout(_SEND_WAIT_S)
        if not slow or not self.trickle_s:
            client.sendall(data)
            self.sent_bytes += len(data)
            return
        for byte in data:
            if self._stop.wait(self.trickle_s):
                raise _Stopped
            client.sendall(bytes([byte]))
            self.sent_bytes += 1

    def _receive(self, client: socket.socket) -> tuple[int, bytes]:
        client.settimeout(0.2)
        header = self._exactly(client, 4)
        length = header[0] | header[1] << 8 | header[2] << 16
        return header[3], self._exactly(client, length)

    def _exactly(self, client: socket.socket, n: int) -> bytes:
        data = b""
        while len(data) < n:
            try:
                chunk = client.recv(n - len(data))
            except TimeoutError:
                if self._stop.is_set():
                    raise _Stopped from None
                continue
            if not chunk:
                raise _Stopped
            data += chunk
        return data

    def _serve(self, client: socket.socket) -> None:
        self._send(client, packet(0, greeting()), slow=not self.trickle_after_login)
        _, login = self._receive(client)
        self.logins.append(login)
        if self.password is not None and native_scramble(self.password) not in login:
            error = b"\xff" + struct.pack("<H", 1045) + b"#28000" + b"Access denied for user"
            self._send(client, packet(2, error), slow=False)
            return
        self._send(client, packet(2, OK), slow=False)
        while True:
            _, command = self._receive(client)
            if command[:1] == b"\x01":  # COM_QUIT
                return
            sql = command[1:].decode()
            self.statements.append(sql)
            if command[:1] != b"\x03" or not sql.startswith(("SHOW", "SELECT")):
                self._send(client, packet(1, OK), slow=False)
                continue
            self._result(client, self._answer(sql))

    def _answer(self, sql: str) -> Answer:
        for prefix, answer in self.answers.items():
            if sql.startswith(prefix):
                return answer
        return []

    def _result(self, client: socket.socket, answer: Answer) -> None:
        rows: Iterator[Sequence[str | None]] | Sequence[Sequence[str | None]]
        if answer == FOREVER:
            width = 2
            rows = _forever()
        else:
            assert not isinstance(answer, str)
            width = max((len(row) for row in answer), default=2)
            rows = answer
        slow = self.trickle_after_login
        out = [packet(1, bytes([width]))]  # the column count (under 251: one byte)
        sequence = 2
        for index in range(width):
            out.append(packet(sequence, column(f"c{index}")))
            sequence += 1
        out.append(packet(sequence, EOF_PACKET))
        sequence += 1
        self._send(client, b"".join(out), slow)
        batch: list[bytes] = []
        for row in rows:
            batch.append(packet(sequence, b"".join(lenenc(value) for value in row)))
            sequence += 1
            self.sent_rows += 1
            if len(batch) >= 1000:
                self._send(client, b"".join(batch), slow)
                batch = []
                if self._stop.is_set():
                    raise _Stopped
        batch.append(packet(sequence, EOF_PACKET))
        self._send(client, b"".join(batch), slow)


def _forever() -> Iterator[tuple[str, str]]:
    index = 0
    while True:
        index += 1
        yield (f"Status_{index}", str(index))


class _Stopped(Exception):
    """The test is over, or the client hung up."""


# The statements collect sends, and a Galera node's answers (performance_schema on, binary
# log off: no replication stream is needed).
VARIABLES: list[tuple[str, str]] = [
    ("version", "10.11.6-MariaDB-log"),
    ("version_comment", "MariaDB Server"),
    ("wsrep_on", "ON"),
    ("wsrep_provider", "/usr/lib/galera/libgalera_smm.so"),
    (
        "wsrep_provider_options",
        "evs.send_window = 10; evs.user_send_window = 4; gcs.fc_limit = 100",
    ),
    ("log_bin", "OFF"),
    ("binlog_format", "ROW"),
    ("log_slave_updates", "ON"),
    ("performance_schema", "ON"),
]
STATUS: list[tuple[str, str]] = [
    ("Uptime", "1000"),
    ("wsrep_replicated", "10"),
    ("wsrep_received", "20"),
    ("wsrep_replicated_bytes", "5000"),
    ("wsrep_received_bytes", "10000"),
    ("wsrep_cluster_size", "3"),
    ("wsrep_cluster_status", "Primary"),
    ("wsrep_connected", "ON"),
    ("wsrep_provider_version", "26.4.16(r7dce5149)"),
    ("wsrep_gmcast_segment", "1"),
]
TABLES: list[tuple[str, str, str]] = [("shop", "orders", "100")]


def galera_answers(**changes: Any) -> dict[str, Answer]:
    """collect's statements answered as a Galera node would; ``changes`` replace answers
    (``variables=``, ``status=``, ``tables=``, ``master=``)."""
    answers: dict[str, Answer] = {
        "SHOW GLOBAL VARIABLES": changes.get("variables", VARIABLES),
        "SHOW GLOBAL STATUS": changes.get("status", STATUS),
        "SHOW MASTER STATUS": changes.get("master", [("mysql-bin.000001", "4")]),
        "SELECT OBJECT_SCHEMA": changes.get("tables", TABLES),
    }
    return answers


def replaced(rows: list[tuple[str, str]], **values: str) -> list[tuple[str, str]]:
    return [(name, values.get(name, value)) for name, value in rows]
