"""A throwaway three-node MariaDB Galera cluster on loopback, for integration tests.

Each node gets its own data directory, socket and four ports (client, group communication,
IST, SST) under one temporary directory. Node 1 bootstraps the cluster with
``--wsrep-new-cluster``; the others join it by state snapshot transfer (rsync where
installed, else mariabackup). :func:`galera_cluster` always tears the cluster down, whether
the body passes, fails or is interrupted: every node's process group is killed (that takes
the SST scripts and rsync daemons with it) and the temporary directory is removed.

Run ``python tests/integration/galera_cluster.py`` to start a cluster by hand; it prints the
ports and waits for Ctrl-C.
"""

from __future__ import annotations

__all__ = [
    "GALERA_LIBRARY",
    "GaleraCluster",
    "Node",
    "ServerFiles",
    "galera_cluster",
    "missing_requirements",
]

import atexit
import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import pymysql  # type: ignore[import-untyped,unused-ignore]
import pytest

Connection: TypeAlias = "pymysql.connections.Connection[Any]"
GALERA_LIBRARY = Path("/usr/lib/galera/libgalera_smm.so")
_SERVER_NAMES = ("mariadbd", "mysqld")
_INSTALL_DB_NAMES = ("mariadb-install-db", "mysql_install_db")
_START_TIMEOUT_S = 90.0
_STOP_TIMEOUT_S = 20.0


def _which(names: tuple[str, ...]) -> str | None:
    search = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin" + os.pathsep + "/usr/bin"
    for name in names:
        found = shutil.which(name, path=search)
        if found:
            return found
    return None


def _server_user() -> str | None:
    """The account mariadbd runs as: ``mysql`` when started by root and it exists.

    Run as root, the joiner's rsync daemon drops to ``nobody`` and cannot write the data
    directory; as ``mysql`` (Debian's package creates it) everything belongs to one account,
    as in a real deployment. Without that account root must be spelled out (``--user=root``).
    """
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("mysql")
    except KeyError:
        return "root"
    return "mysql"


def _sst_method() -> str | None:
    rsync_usable = _server_user() != "root"
    if rsync_usable and _which(("rsync",)):
        return "rsync"
    if _which(("mariabackup", "mariadb-backup")) and _which(("socat",)):
        return "mariabackup"
    return None


def missing_requirements() -> list[str]:
    """What this machine lacks to run the cluster (empty when everything is there)."""
    missing = []
    if _which(_SERVER_NAMES) is None:
        missing.append("mariadbd (apt-get install mariadb-server)")
    if _which(_INSTALL_DB_NAMES) is None:
        missing.append("mariadb-install-db (apt-get install mariadb-server)")
    if not GALERA_LIBRARY.exists():
        missing.append(f"{GALERA_LIBRARY} (apt-get install galera-4)")
    if _sst_method() is None:
        missing.append(
            "rsync, or mariabackup and socat, for state transfer (apt-get install rsync)"
        )
    return missing


def require(missing: list[str]) -> None:
    """Skip the test when something it needs is ``missing``; fail instead under
    ``ADVISOR_REQUIRE_GALERA=1`` (CI), where the packages must be there."""
    if not missing:
        return
    reason = "needs " + "; ".join(missing) + " (run .ci/install-galera)"
    if os.environ.get("ADVISOR_REQUIRE_GALERA") == "1":
        pytest.fail(f"ADVISOR_REQUIRE_GALERA=1 but the Galera cluster {reason}")
    pytest.skip(reason)


def _socket_accepts(path: Path) -> bool:
    """Does a server listen on this Unix socket? (pymysql leaks its socket when it does not.)"""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(2)
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def _free_ports(count: int) -> list[int]:
    """Ports the kernel hands out now; held open together so they are distinct."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


class ServerFiles:
    """Where one mariadbd keeps its files under ``base_dir``, and a root connection over its
    socket; shared by this cluster's nodes and the generated-design servers."""

    base_dir: Path

    @property
    def datadir(self) -> Path:
        return self.base_dir / "data"

    @property
    def socket(self) -> Path:
        return self.base_dir / "mysqld.sock"

    @property
    def config(self) -> Path:
        return self.base_dir / "my.cnf"

    @property
    def error_log(self) -> Path:
        return self.base_dir / "error.log"

    def root_connection(self, connect_timeout: float = 10.0) -> Connection:
        """A connection as root over the node's socket (root has no password here)."""
        return pymysql.connect(
            unix_socket=str(self.socket),
            user="root",
            autocommit=True,
            connect_timeout=connect_timeout,
        )


@dataclass
class Node(ServerFiles):
    """One mariadbd of the cluster."""

    index: int
    base_dir: Path
    port: int
    galera_port: int
    ist_port: int
    sst_port: int
    log_bin: bool = True
    performance_schema: bool = False
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.error_log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no error log)"


class GaleraCluster:
    """Three (or ``size``) MariaDB Galera nodes on 127.0.0.1 under ``root_dir``."""

    def __init__(
        self,
        root_dir: Path,
        size: int = 3,
        *,
        log_bin: tuple[bool, ...] | None = None,
        performance_schema: tuple[bool, ...] | None = None,
    ) -> None:
        self.root_dir = root_dir
        self.sst_method = _sst_method() or "rsync"
        ports = _free_ports(4 * size)
        self.nodes = [
            Node(
                index=i + 1,
                base_dir=root_dir / f"node{i + 1}",
                port=ports[4 * i],
                galera_port=ports[4 * i + 1],
                ist_port=ports[4 * i + 2],
                sst_port=ports[4 * i + 3],
                log_bin=True if log_bin is None else log_bin[i],
                performance_schema=False if performance_schema is None else performance_schema[i],
            )
            for i in range(size)
        ]

    # -- configuration ---------------------------------------------------------------------

    def _write_config(self, node: Node) -> None:
        members = ",".join(f"127.0.0.1:{n.galera_port}" for n in self.nodes)
        provider_options = "; ".join(
            [
                f"base_port={node.galera_port}",
                f"gmcast.listen_addr=tcp://127.0.0.1:{node.galera_port}",
                f"ist.recv_addr=127.0.0.1:{node.ist_port}",
                "gcache.size=64M",
                "evs.stats_report_period=PT10S",
            ]
        )
        lines = [
            "[mysqld]",
            f"datadir={node.datadir}",
            f"socket={node.socket}",
            f"port={node.port}",
            "bind-address=127.0.0.1",
            f"pid-file={node.base_dir / 'mysqld.pid'}",
            f"log-error={node.error_log}",
            f"tmpdir={node.base_dir}",
            f"server_id={node.index}",
            "skip-name-resolve",
            "innodb_buffer_pool_size=64M",
            "innodb_log_file_size=16M",
            # A test cluster: durability is not under test, speed of start-up is.
            "innodb_flush_log_at_trx_commit=2",
            "innodb_autoinc_lock_mode=2",
            "default_storage_engine=InnoDB",
            "binlog_format=ROW",
            f"performance_schema={'ON' if node.performance_schema else 'OFF'}",
            "wsrep_on=ON",
            f"wsrep_provider={GALERA_LIBRARY}",
            "wsrep_cluster_name=advisor-integration",
            f"wsrep_cluster_address=gcomm://{members}",
            f"wsrep_node_address=127.0.0.1:{node.galera_port}",
            f"wsrep_node_name=node{node.index}",
            f'wsrep_provider_options="{provider_options}"',
            f"wsrep_sst_method={self.sst_method}",
            f"wsrep_sst_receive_address=127.0.0.1:{node.sst_port}",
            "wsrep_sst_auth=root:",
        ]
        if node.log_bin:
            # log_slave_updates: write sets applied from the other nodes reach this binlog too.
            lines += ["log_bin=mysql-bin", "log_slave_updates=ON", "sync_binlog=0"]
        node.base_dir.mkdir(parents=True, exist_ok=True)
        node.config.write_text("\n".join(lines) + "\n")

    def _install(self) -> None:
        """Initialise node 1's data directory once and copy it to the others (they get SST)."""
        install_db = _which(_INSTALL_DB_NAMES)
        assert install_db is not None
        for node in self.nodes:
            self._write_config(node)
        self._hand_over()
        first = self.nodes[0]
        result = subprocess.run(
            [
                install_db,
                f"--defaults-file={first.config}",
                *([f"--user={_server_user()}"] if _server_user() else []),
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                f"--datadir={first.datadir}",
            ],
            capture_output=True,
            timeout=120,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"mariadb-install-db failed: {result.stderr.decode()[-2000:]}")
        for node in self.nodes[1:]:
            shutil.copytree(first.datadir, node.datadir, symlinks=True)
        self._hand_over()

    def _hand_over(self) -> None:
        """Give the whole tree to the account the server runs as (when that is not us)."""
        user = _server_user()
        if user in (None, "root"):
            return
        entry = pwd.getpwnam(user)
        self.root_dir.chmod(0o755)  # mkdtemp made it 0700: the server must traverse it
        for path in [self.root_dir, *self.root_dir.rglob("*")]:
            os.chown(path, entry.pw_uid, entry.pw_gid, follow_symlinks=False)

    # -- processes --------------------------------------------------------------------------

    def _start_node(self, node: Node, *, bootstrap: bool) -> None:
        server = _which(_SERVER_NAMES)
        assert server is not None
        command = [server, f"--defaults-file={node.config}"]
        user = _server_user()
        if user is not None:
            command.append(f"--user={user}")
        if bootstrap:
            command.append("--wsrep-new-cluster")
        # Its own session: teardown kills the whole group, SST scripts and rsync included.
        node.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._wait_synced(node)

    def _wait_synced(self, node: Node) -> None:
        deadline = time.monotonic() + _START_TIMEOUT_S
        state = "not started"
        while time.monotonic() < deadline:
            assert node.process is not None
            if node.process.poll() is not None:
                raise RuntimeError(
                    f"node{node.index} exited with {node.process.returncode}\n{self._logs()}"
                )
            if not _socket_accepts(node.socket):
                time.sleep(0.3)
                continue
            try:
                with node.root_connection(connect_timeout=2) as conn, conn.cursor() as cur:
                    cur.execute("SHOW GLOBAL STATUS LIKE 'wsrep_local_state_comment'")
                    row = cur.fetchone()
                    state = str(row[1]) if row else "no wsrep"
                    if state == "Synced":
                        return
            except pymysql.err.MySQLError as error:
                state = str(error)
            time.sleep(0.3)
        raise RuntimeError(
            f"node{node.index} not Synced after {_START_TIMEOUT_S:.0f}s ({state})\n{self._logs()}"
        )

    def _logs(self) -> str:
        """The end of every node's error log, for a failure message."""
        return "\n".join(
            f"--- node{n.index} {n.error_log}:\n{n.log_tail()}"
            for n in self.nodes
            if n.error_log.exists()
        )

    def start(self) -> None:
        """Install, bootstrap node 1, join the others one after the other."""
        self._install()
        for position, node in enumerate(self.nodes):
            self._start_node(node, bootstrap=position == 0)

    def stop(self) -> None:
        """Stop every node: SIGTERM to its process group, SIGKILL after a grace period."""
        running = [n for n in self.nodes if n.process is not None and n.process.poll() is None]
        for node in running:
            assert node.process is not None
            with contextlib.suppress(ProcessLookupError):
                os.killpg(node.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + _STOP_TIMEOUT_S
        for node in running:
            assert node.process is not None
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        for node in self.nodes:
            if node.process is None:
                continue
            # Whatever is left of the group (the server, an SST script, an rsync daemon).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(node.process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(timeout=5)

    def execute(self, node: Node, *statements: str) -> None:
        """Run statements as root on ``node``."""
        with node.root_connection() as conn, conn.cursor() as cur:
            for statement in statements:
                cur.execute(statement)


@contextlib.contextmanager
def galera_cluster(
    size: int = 3,
    *,
    log_bin: tuple[bool, ...] | None = None,
    performance_schema: tuple[bool, ...] | None = None,
) -> Iterator[GaleraCluster]:
    """Start a cluster, yield it, and always tear it down (processes killed, files removed)."""
    root_dir = Path(tempfile.mkdtemp(prefix="advisor-galera-"))
    cluster = GaleraCluster(root_dir, size, log_bin=log_bin, performance_schema=performance_schema)

    def teardown() -> None:
        try:
            cluster.stop()
        finally:
            shutil.rmtree(root_dir, ignore_errors=True)

    # SIGTERM (a CI timeout, kill) would end Python without unwinding this frame and leave
    # the servers running in their own sessions: turn it into SystemExit so `finally` runs.
    # atexit covers an exit that skips this frame otherwise; teardown twice is harmless.
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    atexit.register(teardown)
    try:
        cluster.start()
        yield cluster
    finally:
        teardown()
        atexit.unregister(teardown)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _main() -> None:
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with `&`
    with galera_cluster() as cluster:
        for node in cluster.nodes:
            print(f"node{node.index}: port {node.port} socket {node.socket}")
        print("Ctrl-C to stop")
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(1)


if __name__ == "__main__":
    _main()
