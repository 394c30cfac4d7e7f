"""Issue 14, collect: no hang on a silent server, clear errors for a malformed my.cnf.

The servers here are loopback sockets the test opens itself: one that accepts and never
speaks, one that logs the client in (MySQL protocol 10, any password) and then never answers.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from advisor.collect.api import collect, time_limit_s
from advisor.collect.connection import ConnectionSettings, read_defaults_file
from advisor.errors import AdvisorError

SHORT = {"connect_timeout_s": 1.0, "read_timeout_s": 1.0, "write_timeout_s": 1.0}


def _packet(sequence: int, payload: bytes) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes([sequence]) + payload


def _greeting() -> bytes:
    capabilities = 0x1 | 0x200 | 0x2000 | 0x8000 | 0x80000  # protocol 41, secure, plugin auth
    salt = b"abcdefgh" + b"ijklmnopqrst"
    return (
        b"\x0a5.5.5-10.11.0-MariaDB\x00"
        + struct.pack("<I", 1)
        + salt[:8]
        + b"\x00"
        + struct.pack("<H", capabilities & 0xFFFF)
        + b"\x21"
        + struct.pack("<H", 2)
        + struct.pack("<H", capabilities >> 16)
        + bytes([21])
        + b"\x00" * 10
        + salt[8:]
        + b"\x00mysql_native_password\x00"
    )


def _serve(listener: socket.socket, login: bool, stop: threading.Event) -> None:
    held = []  # kept open until the test ends: the client must time out, not see a close
    while not stop.is_set():
        try:
            client, _ = listener.accept()
        except TimeoutError:
            continue
        except OSError:
            break
        held.append(client)
        if login:
            client.sendall(_packet(0, _greeting()))
            client.recv(65536)  # the login, any password
            client.sendall(_packet(2, b"\x00\x00\x00\x02\x00\x00\x00"))  # OK; then silence
    for client in held:
        client.close()


@pytest.fixture(params=["silent", "stalls-after-login"])
def stalled_server(request) -> Iterator[tuple[str, int]]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()
    login = request.param == "stalls-after-login"
    thread = threading.Thread(target=_serve, args=(listener, login, stop), daemon=True)
    thread.start()
    yield listener.getsockname()
    stop.set()
    thread.join(5)
    listener.close()


def test_collect_against_a_server_that_never_answers_stops_with_one_line(stalled_server):
    host, port = stalled_server
    settings = ConnectionSettings(host=host, port=port, user="u", password="secret", **SHORT)
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            collect(settings, interval_s=1, duration_s=2)
        except BaseException as error:  # handed to the test thread
            outcome.append(error)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(time_limit_s(settings, 2))  # without read timeouts it waited forever
    assert not worker.is_alive(), "collect still waiting on a silent server"
    assert len(outcome) == 1 and isinstance(outcome[0], AdvisorError), outcome
    message = str(outcome[0])
    assert message.startswith(f"lost the connection to u@{host}:{port} while connecting")
    assert "timed out" in message and "secret" not in message and "\n" not in message


def test_the_stated_limit_is_the_timeouts_and_the_duration():
    settings = ConnectionSettings(**SHORT)
    # set-up 1 + 1 + 4 x 2 + 15, last sample 1 + 1 + 2 x 2, catch-up 1 + 1 + 10, join 10,
    # the QUIT at the end 1
    assert time_limit_s(settings, 60) == 60 + 25 + 6 + 12 + 10 + 1


@pytest.mark.parametrize("field", ["connect_timeout_s", "read_timeout_s", "write_timeout_s"])
@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf")])
def test_timeouts_must_be_positive_and_finite(field, value):
    with pytest.raises(AdvisorError, match=f"{field} must be in"):
        ConnectionSettings(**{field: value})


# -- a malformed my.cnf gives a clear one-line error ----------------------------------------


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"\xff\xfe[\x00c\x00", "defaults file is UTF-16 text"),
        (b"[client]\nuser=\xc3\x28\n", "defaults file is not UTF-8 text (byte 0xc3 at offset 14)"),
        (b"[client]\nuser=a\x00\n", "defaults file holds binary data"),
        (b"[client]\nport=99999999\n", "client.port: expected a port number from 1 to 65535"),
        (b"[client]\nport=-1\n", "client.port: expected a port number from 1 to 65535"),
        (b"[client]\nuser=a\n  b\n", "client.user: a value holds a newline"),
        (b"user=a\n", "not a my.cnf options file: File contains no section headers."),
        (b"[mysqld]\nport=1\n", "no [client] group"),
    ],
)
def test_a_malformed_defaults_file_is_one_line(tmp_path: Path, content: bytes, says: str):
    path = tmp_path / "my.cnf"
    path.write_bytes(content)
    with pytest.raises(AdvisorError) as caught:
        read_defaults_file(path, ConnectionSettings())
    assert str(caught.value).startswith(f"{path}")
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_device_as_defaults_file_is_refused_without_reading_it():
    with pytest.raises(AdvisorError, match="is not a regular file"):
        read_defaults_file(Path("/dev/zero"), ConnectionSettings())
