"""Apply what ``advisor doc`` generated to real servers on loopback.

The generated files name placeholder hosts (``paris-1-db2``) on the standard ports; a test on
one machine must put every server on 127.0.0.1 with ports of its own, in a temporary
directory. This module makes exactly those changes and no others, and records each one
(:attr:`Server.changes`) so a failing test shows what it ran.

What the test rewrites, and why:

- ``wsrep_cluster_address``: the placeholder hosts become ``127.0.0.1:<port>`` of the servers
  the test started for that cluster (placeholders do not resolve; one address, one port each).
- ``wsrep_provider_options``: ``base_port``, ``gmcast.listen_addr`` and ``ist.recv_addr`` are
  set to the server's loopback ports (added, or replaced when the file sets them); every other
  option is kept as generated.
- placement keys (``datadir``, ``socket``, ``port``, ``bind_address``, ``pid_file``,
  ``log_error``, ``tmpdir``, ``wsrep_node_address``, ``wsrep_node_name``,
  ``wsrep_sst_receive_address``): replaced when the file sets them, added when it does not
  (``wsrep_node_name`` is the placeholder host the server plays, so donor lists still match).
- the directory of TLS files (``/etc/mysql/ssl``) becomes the folder the generated
  make-certificates.sh wrote, in the configuration (``ssl_*``, ``socket.ssl_*``), garbd.conf
  and the SQL alike (the test cannot write /etc).
- make-certificates.sh: its ``HOSTS`` list of placeholder names becomes ``127.0.0.1``, the
  address every server has here, so the certificates name what the replicas connect to (the
  generated channels verify the source's certificate against MASTER_HOST).
- ``<...password>`` placeholders become a test secret.
- in the asynchronous SQL, ``MASTER_HOST`` and ``MASTER_PORT`` become the loopback address and
  port of the server playing that host.
- garbd.conf: ``GALERA_NODES`` as ``wsrep_cluster_address``, loopback listen options appended
  to ``GALERA_OPTIONS``, and ``LOG_FILE`` / ``WORK_DIR`` added.

Added only when the file does not set them, to start fast on a small machine:
``innodb_buffer_pool_size = 64M`` and ``innodb_log_file_size = 16M``.

``gcache.size`` above :data:`GCACHE_CAP` (1G) is lowered to it: Galera allocates the whole ring
buffer at start (posix_fallocate, galerautils gu_fdesc.cpp), and the examples' 9G per node would
need 27 GB free on the CI disk. A generated size at or below the cap is applied as generated
(tests/data/designs/per-site-mariadb gives workload.dataset_bytes, so its gcache is capped by
the dataset and booted as is). Everything else is applied as generated.

Each server plays one placeholder host: the one the asynchronous SQL names at its site, else
the site's first; its own file ``config/nodes/<host>.cnf`` is applied after the site's.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymysql
from galera_cluster import (
    _INSTALL_DB_NAMES,
    _SERVER_NAMES,
    ServerFiles,
    _free_ports,
    _server_user,
    _socket_accepts,
    _which,
)

SECRET = "Test-secret-42"
GARBD = Path("/usr/bin/garbd")
GARB_SERVICE_SCRIPT = Path("/usr/bin/garb-systemd")  # Debian's galera-arbitrator-4
START_TIMEOUT_S = 90.0
LOOPBACK_PROVIDER_OPTIONS = ("base_port", "gmcast.listen_addr", "ist.recv_addr")
GCACHE_CAP = "1G"
PLACEMENT_KEYS = (
    "datadir",
    "socket",
    "port",
    "bind_address",
    "pid_file",
    "log_error",
    "tmpdir",
    "wsrep_node_address",
    "wsrep_node_name",
    "wsrep_sst_receive_address",
)
SPEED_DEFAULTS = {"innodb_buffer_pool_size": "64M", "innodb_log_file_size": "16M"}
_SETTING = re.compile(r"^(\s*)([A-Za-z][\w.-]*)(\s*=\s*)(.*?)\s*$")


class ServerFailed(RuntimeError):
    """A server the test started did not reach the state the generated file promises."""


# -- reading generated files ------------------------------------------------------------------


def key(name: str) -> str:
    """MariaDB option names: ``-`` and ``_`` are the same, case does not matter."""
    return name.strip().lower().replace("-", "_")


def unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def cnf_settings(text: str, section: str = "mysqld") -> dict[str, str]:
    """``key -> value`` of one section of an option file (comments skipped)."""
    found: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            current = stripped[1:-1].strip()
            continue
        if current != section or not stripped or stripped.startswith(("#", ";")):
            continue
        match = _SETTING.match(line)
        if match:
            found[key(match.group(2))] = unquote(match.group(4))
    return found


def provider_options(value: str) -> dict[str, str]:
    """``wsrep_provider_options`` (or garbd's ``GALERA_OPTIONS``) as ``name -> value``."""
    options = {}
    for part in unquote(value).split(";"):
        if part.strip():
            name, _, option_value = part.partition("=")
            options[name.strip()] = option_value.strip()
    return options


def file_site(text: str) -> str:
    """The site a Galera file is for, from its header (``... at site paris-1:``)."""
    match = re.search(r"^# Galera settings for the nodes of cluster \S+ at site (\S+):", text, re.M)
    if not match:
        raise AssertionError("no '# Galera settings for ... at site X:' header")
    return match.group(1)


def file_hosts(text: str, site: str) -> list[str]:
    """The placeholder hosts of ``site`` the file names (``paris-1-db1`` ...)."""
    names = re.findall(rf"\b{re.escape(site)}-db\d+\b", text)
    return list(dict.fromkeys(names))


def shell_assignments(text: str) -> dict[str, str]:
    """``NAME="value"`` lines of a shell-sourced file such as garbd.conf."""
    found = {}
    for line in text.splitlines():
        match = re.match(r"^([A-Z_]+)=(.*)$", line.strip())
        if match:
            found[match.group(1)] = unquote(match.group(2))
    return found


# -- servers ---------------------------------------------------------------------------------


@dataclass
class Server(ServerFiles):
    """One mariadbd started from one generated Galera file, playing one placeholder host."""

    host: str
    cluster: str
    site: str
    generated: Path
    base_dir: Path
    port: int
    galera_port: int
    ist_port: int
    sst_port: int
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    changes: list[str] = field(default_factory=list)
    # What the generated files set, after the loopback rewrites (the values to find).
    settings: dict[str, str] = field(default_factory=dict)

    def query(self, statement: str) -> list[tuple[Any, ...]]:
        with self.root_connection() as conn, conn.cursor() as cur:
            cur.execute(statement)
            return list(cur.fetchall())

    def execute(self, *statements: str) -> None:
        with self.root_connection() as conn, conn.cursor() as cur:
            for statement in statements:
                cur.execute(statement)

    def variable(self, name: str) -> str:
        rows = self.query(f"SHOW GLOBAL VARIABLES LIKE '{name}'")
        return str(rows[0][1]) if rows else ""

    def status(self, name: str) -> str:
        rows = self.query(f"SHOW GLOBAL STATUS LIKE '{name}'")
        return str(rows[0][1]) if rows else ""

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.error_log.read_text(errors="replace")
        except OSError:
            return "(no error log)"
        return "\n".join(text.splitlines()[-lines:])

    def describe(self) -> str:
        return (
            f"{self.host} from {self.generated.name} (port {self.port}, group "
            f"{self.galera_port})\n  changes: "
            + "\n    ".join(self.changes)
            + f"\n--- error log:\n{self.log_tail()}"
        )


def make_servers(root: Path, plays: Iterable[tuple[str, str, str, Path]]) -> list[Server]:
    """A :class:`Server` per ``(host, cluster, site, generated file)``, ports assigned."""
    plays = list(plays)
    ports = _free_ports(4 * len(plays))
    return [
        Server(host, cluster, site, generated, root / host, *ports[4 * i : 4 * i + 4])
        for i, (host, cluster, site, generated) in enumerate(plays)
    ]


_SECRET_PLACEHOLDER = re.compile(r"<[\w-]*password>")


def rewrite_text(text: str, path_map: dict[str, str]) -> str:
    """TLS directories and ``<...password>`` placeholders, wherever they appear."""
    for old, new in path_map.items():
        text = text.replace(old, new)
    return _SECRET_PLACEHOLDER.sub(SECRET, text)


def loopback_config(server: Server, members: list[Server], path_map: dict[str, str]) -> str:
    """The generated files with only the loopback rewrites, plus what they leave to the host.

    The site's file, then the node's own file (``config/nodes/<host>.cnf``) when there is one.
    """
    node_file = server.generated.parent / "nodes" / f"{server.host}.cnf"
    text = server.generated.read_text()
    if node_file.exists():
        text += "\n" + node_file.read_text()
    placement = {
        "datadir": str(server.datadir),
        "socket": str(server.socket),
        "port": str(server.port),
        "bind_address": "127.0.0.1",
        "pid_file": str(server.base_dir / "mysqld.pid"),
        "log_error": str(server.error_log),
        "tmpdir": str(server.base_dir),
        "wsrep_node_address": f"127.0.0.1:{server.galera_port}",
        "wsrep_node_name": server.host,
        "wsrep_sst_receive_address": f"127.0.0.1:{server.sst_port}",
    }
    loopback_options = {
        "base_port": str(server.galera_port),
        "gmcast.listen_addr": f"tcp://127.0.0.1:{server.galera_port}",
        "ist.recv_addr": f"127.0.0.1:{server.ist_port}",
    }
    seen: set[str] = set()
    lines = []
    for line in text.splitlines():
        match = _SETTING.match(line)
        if not match or line.lstrip().startswith(("#", ";")):
            lines.append(line)
            continue
        indent, name, equals, value = match.groups()
        name_key = key(name)
        seen.add(name_key)
        new = value
        if name_key == "wsrep_cluster_address":
            new = "gcomm://" + ",".join(f"127.0.0.1:{m.galera_port}" for m in members)
        elif name_key == "wsrep_provider_options":
            options = provider_options(rewrite_text(value, path_map)) | loopback_options
            options["gcache.size"] = capped_gcache(options.get("gcache.size", "128M"))
            new = '"' + "; ".join(f"{k}={v}" for k, v in options.items()) + '"'
        elif name_key in placement:
            new = placement[name_key]
        else:
            new = rewrite_text(value, path_map)
        if new != value:
            server.changes.append(f"{name}: {value} -> {new}")
        server.settings[name_key] = unquote(new)
        lines.append(f"{indent}{name}{equals}{new}")
    added = {k: v for k, v in placement.items() if k not in seen}
    added |= {k: v for k, v in SPEED_DEFAULTS.items() if k not in seen}
    if "wsrep_provider_options" not in seen:
        added["wsrep_provider_options"] = (
            '"' + "; ".join(f"{k}={v}" for k, v in loopback_options.items()) + '"'
        )
    server.changes += [f"{k}: added {v}" for k, v in added.items()]
    lines += ["", "# added by the test (see tests/integration/generated_design.py)", "[mysqld]"]
    lines += [f"{k} = {v}" for k, v in added.items()]
    return "\n".join(lines) + "\n"


def _hand_over(root: Path) -> None:
    user = _server_user()
    if user in (None, "root"):
        return
    entry = pwd.getpwnam(user)
    root.chmod(0o755)
    for path in [root, *root.rglob("*")]:
        os.chown(path, entry.pw_uid, entry.pw_gid, follow_symlinks=False)


def install(cluster: list[Server], path_map: dict[str, str], root: Path) -> None:
    """Write each server's configuration; one data directory per cluster, copied."""
    for server in cluster:
        server.base_dir.mkdir(parents=True, exist_ok=True)
        server.config.write_text(loopback_config(server, cluster, path_map))
    _hand_over(root)
    first = cluster[0]
    install_db = _which(_INSTALL_DB_NAMES)
    assert install_db is not None
    user = _server_user()
    result = subprocess.run(
        [
            install_db,
            f"--defaults-file={first.config}",
            *([f"--user={user}"] if user else []),
            # Debian's packaged default: root and the server's account log in by their Unix
            # identity, which is how mariabackup's SST reaches the donor without a password.
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
            f"--datadir={first.datadir}",
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        raise ServerFailed(f"mariadb-install-db failed: {result.stderr.decode()[-2000:]}")
    for server in cluster[1:]:
        shutil.copytree(first.datadir, server.datadir, symlinks=True)
    _hand_over(root)


def start(server: Server, *, bootstrap: bool) -> None:
    """Start mariadbd and wait until it is Synced in a Primary component."""
    binary = _which(_SERVER_NAMES)
    assert binary is not None
    command = [binary, f"--defaults-file={server.config}"]
    user = _server_user()
    if user is not None:
        command.append(f"--user={user}")
    if bootstrap:
        command.append("--wsrep-new-cluster")
    server.process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_primary(server)


def wait_primary(server: Server, timeout_s: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    state = "not started"
    while time.monotonic() < deadline:
        assert server.process is not None
        if server.process.poll() is not None:
            raise ServerFailed(f"exited with {server.process.returncode}: {server.describe()}")
        if not _socket_accepts(server.socket):
            time.sleep(0.3)
            continue
        try:
            provider = server.variable("wsrep_provider")
            if provider in ("", "none"):
                raise ServerFailed(
                    f"wsrep_provider={provider or '(unset)'}: the node runs without Galera, "
                    f"accepts writes and replicates nothing: {server.describe()}"
                )
            state = server.status("wsrep_local_state_comment")
            status = server.status("wsrep_cluster_status")
            if state == "Synced" and status == "Primary":
                return
            state = f"{state}, {status}"
        except pymysql.err.MySQLError as error:
            state = str(error)
        time.sleep(0.3)
    raise ServerFailed(f"not Synced/Primary after {timeout_s:.0f} s ({state}): {server.describe()}")


def stop(processes: Iterable[subprocess.Popen[bytes] | None], grace_s: float = 20.0) -> None:
    """SIGTERM to each process group, SIGKILL to what is left after the grace period."""
    running = [p for p in processes if p is not None and p.poll() is None]
    for process in running:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for process in running:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
    for process in running:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)


def kill(server: Server) -> None:
    """A site lost: the server dies at once (SIGKILL), no clean shutdown."""
    if server.process is not None and server.process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=10)


# -- garbd -----------------------------------------------------------------------------------


@dataclass
class Garbd:
    conf: Path
    log: Path
    process: subprocess.Popen[bytes] | None = None
    changes: list[str] = field(default_factory=list)


def start_garbd(
    generated: Path, members: list[Server], root: Path, path_map: dict[str, str]
) -> Garbd:
    """garbd as Debian's garb service starts it, reading the generated garbd.conf.

    The service script /usr/bin/garb-systemd sources /etc/default/garb; the test runs a copy
    that sources the rewritten garbd.conf instead, so the command line garbd gets is the one
    the package builds from the file.
    """
    port = _free_ports(1)[0]
    work = root / "garbd"
    work.mkdir(parents=True, exist_ok=True)
    garbd = Garbd(conf=work / "garb", log=work / "garbd.log")
    values = shell_assignments(generated.read_text())
    nodes = ",".join(f"127.0.0.1:{m.galera_port}" for m in members)
    listen = f"gmcast.listen_addr=tcp://127.0.0.1:{port}; base_port={port}"
    lines = []
    for line in generated.read_text().splitlines():
        if line.startswith("GALERA_NODES="):
            line = f'GALERA_NODES="{nodes}"'
        elif line.startswith("GALERA_OPTIONS="):
            options = rewrite_text(values["GALERA_OPTIONS"], path_map)
            line = f'GALERA_OPTIONS="{options}; {listen}"'
        else:
            line = rewrite_text(line, path_map)
        lines.append(line)
    lines += [f'LOG_FILE="{garbd.log}"', f'WORK_DIR="{work}"']
    garbd.changes = [
        f"GALERA_NODES: {values.get('GALERA_NODES')} -> {nodes}",
        f"GALERA_OPTIONS: appended {listen}",
        f"LOG_FILE, WORK_DIR: added under {work}",
    ]
    garbd.conf.write_text("\n".join(lines) + "\n")
    script = work / "garb-systemd"
    service = GARB_SERVICE_SCRIPT.read_text()
    assert "config=/etc/default/garb" in service, "Debian's garb-systemd changed"
    script.write_text(service.replace("config=/etc/default/garb", f"config={garbd.conf}"))
    _hand_over(work)
    garbd.process = subprocess.Popen(
        ["bash", str(script), "start"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    return garbd


# -- SQL files --------------------------------------------------------------------------------


@dataclass
class Step:
    """Statements of a generated SQL file that run on one place (a cluster or a host)."""

    where: str  # "cluster X" or "host H"
    statements: list[str]


def sql_statements(text: str) -> list[str]:
    """Statements of a SQL file, full-line ``--`` comments dropped, split on ``;`` at line end."""
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in re.split(r";\s*$", body, flags=re.M) if s.strip()]


_STEP = re.compile(
    r"^-- \d+\. On (?:any node of cluster (?P<cluster>\S+?)|(?P<host>\S+?), in cluster \S+?)[\s(,:]"
)


def sql_steps(text: str) -> list[Step]:
    """The generated async SQL cut at its ``-- N. On ...`` lines (where each part runs)."""
    steps: list[Step] = []
    chunk: list[str] = []
    where = None
    for line in [*text.splitlines(), "-- 0. On any node of cluster END "]:
        match = _STEP.match(line)
        if match:
            if where is not None:
                steps.append(Step(where, sql_statements("\n".join(chunk))))
            where = (
                f"cluster {match.group('cluster')}"
                if match.group("cluster")
                else f"host {match.group('host')}"
            )
            chunk = []
        elif where is not None and not line.startswith("-- ===="):
            chunk.append(line)
    return steps


def wait_for(check: Any, timeout_s: float, what: str, interval_s: float = 0.3) -> Any:
    """Call ``check()`` until it returns something true; fail with its last value."""
    deadline = time.monotonic() + timeout_s
    value = None
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError(f"{what}: not reached in {timeout_s:.0f} s (last: {value!r})")


# -- a whole design ----------------------------------------------------------------------------

_TLS_KEYS = ("ssl_ca", "ssl_cert", "ssl_key", "ssl_capath")
_TLS_OPTION = re.compile(r"^socket\.ssl_(?:ca|cert|key)$")
_SQL_TLS = re.compile(r"MASTER_SSL_(?:CA|CERT|KEY)\s*=\s*'([^']+)'")


@dataclass
class Deployment:
    """The servers (and garbds) the test started from one generated design folder."""

    design: Path
    root: Path
    servers: list[Server] = field(default_factory=list)
    garbds: list[Garbd] = field(default_factory=list)
    path_map: dict[str, str] = field(default_factory=dict)
    failure: str | None = None  # why starting stopped, if it did
    channels: list[tuple[Server, str]] | None = None  # (replica, channel), once applied

    @property
    def config_dir(self) -> Path:
        return self.design / "config"

    @property
    def tls_dir(self) -> Path:
        return self.root / "tls"

    def galera_files(self) -> list[Path]:
        return sorted(self.config_dir.glob("galera-*.cnf"))

    def async_files(self) -> list[Path]:
        return sorted(self.config_dir.glob("async-replication-*.sql"))

    def clusters(self) -> dict[str, list[Server]]:
        found: dict[str, list[Server]] = {}
        for server in self.servers:
            found.setdefault(server.cluster, []).append(server)
        return found

    def server(self, host: str) -> Server:
        """The server playing ``host``, or the one playing a host of the same site."""
        for server in self.servers:
            if server.host == host:
                return server
        site = host.rsplit("-db", 1)[0]
        for server in self.servers:
            if server.site == site:
                return server
        raise AssertionError(f"no server plays {host} or another node of site {site}")

    def processes(self) -> list[Any]:
        return [*self.servers, *self.garbds]


def tls_paths(config_dir: Path) -> list[str]:
    """Every TLS file path the generated configuration and SQL name."""
    paths = []
    for path in config_dir.glob("galera-*.cnf"):
        settings = cnf_settings(path.read_text())
        paths += [settings[k] for k in _TLS_KEYS if k in settings]
        options = provider_options(settings.get("wsrep_provider_options", ""))
        paths += [v for k, v in options.items() if _TLS_OPTION.match(k)]
    for path in config_dir.glob("garbd*.conf"):
        options = provider_options(shell_assignments(path.read_text()).get("GALERA_OPTIONS", ""))
        paths += [v for k, v in options.items() if _TLS_OPTION.match(k)]
    for path in config_dir.glob("async-replication-*.sql"):
        paths += _SQL_TLS.findall(path.read_text())
    return [p for p in paths if p.startswith("/")]


def plays(config_dir: Path) -> list[tuple[str, str, str, Path]]:
    """Which placeholder host each generated Galera file's server plays.

    The host the asynchronous SQL names at that site (source or replica of a channel) if any,
    so the channels run between the servers they name; the file's first host otherwise.
    """
    named = set()
    for path in config_dir.glob("async-replication-*.sql"):
        text = path.read_text()
        named |= set(re.findall(r"(?:MASTER|SOURCE)_HOST\s*=\s*'([^']+)'", text))
        named |= {
            step.where.split(" ", 1)[1]
            for step in sql_steps(text)
            if step.where.startswith("host ")
        }
    chosen = []
    for path in sorted(config_dir.glob("galera-*.cnf")):
        text = path.read_text()
        site = file_site(text)
        hosts = file_hosts(text, site)
        assert hosts, f"{path.name}: names no host of site {site}"
        host = next((h for h in hosts if h in named), hosts[0])
        cluster = cnf_settings(text)["wsrep_cluster_name"]
        chosen.append((host, cluster, site, path))
    return chosen


def deploy(design: Path, root: Path, deployment: Deployment) -> None:
    """Start a server per Galera file (each cluster bootstrapped by its first) and its garbd.

    ``deployment`` is filled as things start, so the caller can stop whatever started even
    when a later step fails.
    """
    config_dir = design / "config"
    tls = root / "tls"
    tls.mkdir(parents=True, exist_ok=True)
    files = run_certificate_commands(config_dir, tls)
    deployment.path_map = {str(Path(p).parent): str(files) for p in tls_paths(config_dir)}
    deployment.servers = make_servers(root, plays(config_dir))
    _check_room_for_gcache(deployment.servers, root)
    for members in deployment.clusters().values():
        install(members, deployment.path_map, root)
    for members in deployment.clusters().values():
        for position, server in enumerate(members):
            start(server, bootstrap=position == 0)
    for garbd_conf in sorted(config_dir.glob("garbd*.conf")):
        group = shell_assignments(garbd_conf.read_text())["GALERA_GROUP"]
        members = deployment.clusters().get(group, [])
        garbd = start_garbd(garbd_conf, members, root, deployment.path_map)
        deployment.garbds.append(garbd)


_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def size_bytes(value: str) -> int:
    """A Galera size (``128M``, ``9G``, ``1048576``) in bytes."""
    match = re.fullmatch(r"(\d+)([KMGT]?)", value.strip().upper())
    if not match:
        raise ValueError(f"not a size: {value!r}")
    return int(match.group(1)) * _SIZE_UNITS[match.group(2)]


def capped_gcache(value: str) -> str:
    """The generated gcache.size, or :data:`GCACHE_CAP` when it is larger (module docstring)."""
    return value if size_bytes(value) <= size_bytes(GCACHE_CAP) else GCACHE_CAP


def _check_room_for_gcache(servers: list[Server], root: Path) -> None:
    """Galera allocates gcache.size on disk at start (posix_fallocate, galerautils gu_fdesc.cpp):
    say so plainly when the disk cannot hold the generated sizes, instead of a Galera error."""
    needed = 0
    for server in servers:
        text = server.generated.read_text()
        options = provider_options(cnf_settings(text).get("wsrep_provider_options", ""))
        needed += size_bytes(capped_gcache(options.get("gcache.size", "128M")))
    free = shutil.disk_usage(root).free
    if needed > free:
        raise ServerFailed(
            f"the generated gcache.size of {len(servers)} servers needs {needed / 2**30:.1f} GiB "
            f"on {root}, {free / 2**30:.1f} GiB free"
        )


def certificate_scripts(config_dir: Path) -> list[Path]:
    """Generated shell scripts that make the CA and certificates (they call openssl)."""
    return [p for p in sorted(config_dir.glob("*.sh")) if "openssl" in p.read_text()]


def run_certificate_commands(config_dir: Path, tls: Path) -> Path:
    """Run the generated certificate commands for the servers' address; return the files' folder.

    The script's ``HOSTS`` list of placeholder names becomes ``127.0.0.1``, the address every
    server has here, so the certificates name what the replicas connect to, as they name the
    host in production (``MASTER_SSL_VERIFY_SERVER_CERT`` checks it). It runs as documented:
    ``sh make-certificates.sh OUT``.
    """
    scripts = certificate_scripts(config_dir)
    for script in scripts:
        local = tls / f"run-{script.name}"
        local.write_text(
            re.sub(r'^HOSTS=".*"$', 'HOSTS="127.0.0.1"', script.read_text(), flags=re.M)
        )
        result = subprocess.run(
            ["sh", str(local), str(tls)],
            cwd=tls,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if result.returncode != 0:
            raise ServerFailed(f"{script.name} exited {result.returncode}: {result.stderr[-2000:]}")
    return tls / "127.0.0.1" if (tls / "127.0.0.1").is_dir() else tls


# -- the generated shell scripts ---------------------------------------------------------------

_WRAPPER = '''#!{python}
"""The client a generated script calls, on loopback: -h <placeholder host> becomes the socket
of the server playing it, and root logs in (tests/integration/generated_design.py)."""
import json, os, sys

tool, args = sys.argv[1], sys.argv[2:]
sockets = json.load(open({map!r}))
out, it = [], iter(args)
for arg in it:
    if arg == "-h":
        out.append("--socket=" + sockets[next(it)])
    elif arg.startswith("-h") and len(arg) > 2:
        out.append("--socket=" + sockets[arg[2:]])
    else:
        out.append(arg)
os.execvp(tool, [tool, "-uroot", *out])
'''

_FAKE_PROXYSQL = '''#!{python}
"""ProxySQL's admin interface for a generated script: the statements on standard input run on
ProxySQL's admin schema in SQLite ({db}); LOAD / SAVE are ProxySQL's own and do nothing here."""
import re, sqlite3, sys

db = sqlite3.connect({db!r})
for statement in sys.stdin.read().split(";"):
    flat = " ".join(statement.split())
    if flat and not re.match(r"(LOAD|SAVE)\\b", flat, re.I):
        db.execute(flat)
db.commit()
'''


@dataclass
class ScriptEnvironment:
    """What a generated script needs to run against the test's servers."""

    env: dict[str, str]
    proxysql_db: Path


def script_environment(
    deployment: Deployment, hosts: Iterable[str], work: Path
) -> ScriptEnvironment:
    """``CLIENT``, ``BINLOG_CLIENT``, ``DUMP_CLIENT`` that reach the servers playing ``hosts``
    through their sockets, and a ProxySQL admin interface over an SQLite file (the caller fills
    it); nothing else of the script is changed."""
    import json
    import sys

    work.mkdir(parents=True, exist_ok=True)
    sockets = {host: str(deployment.server(host).socket) for host in hosts}
    (work / "sockets.json").write_text(json.dumps(sockets))
    wrapper = work / "client"
    wrapper.write_text(_WRAPPER.format(python=sys.executable, map=str(work / "sockets.json")))
    wrapper.chmod(0o755)
    db = work / "proxysql-admin.sqlite"
    fake = work / "proxysql-admin"
    fake.write_text(_FAKE_PROXYSQL.format(python=sys.executable, db=str(db)))
    fake.chmod(0o755)
    env = {
        **os.environ,
        "CLIENT": f"{wrapper} mariadb",
        "BINLOG_CLIENT": f"{wrapper} mariadb-binlog",
        "DUMP_CLIENT": f"{wrapper} mariadb-dump",
        "PROXYSQL_CLIENT": str(fake),
        "PROXYSQL_ADMINS": "proxysql-1:6032",
        "KEEP_DIR": str(work),
    }
    return ScriptEnvironment(env=env, proxysql_db=db)


def run_script(
    script: Path, environment: ScriptEnvironment, *args: str, timeout_s: float = 180
) -> subprocess.CompletedProcess[str]:
    """``sh <script> [args]`` as the runbook says, in the test's environment."""
    return subprocess.run(
        ["sh", str(script), *args],
        env=environment.env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
        cwd=str(environment.proxysql_db.parent),
    )
