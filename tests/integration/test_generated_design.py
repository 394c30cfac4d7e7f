"""What ``advisor doc`` generates, applied to real servers: the design runs as written.

``advisor doc`` (through advisor.cli.app) writes the design of every example and of the test
topologies in tests/data/designs. The grouped example paris-frankfurt is then applied to real
processes on loopback (tests/integration/generated_design.py lists exactly what the test
rewrites and why: ports, paths, addresses, placeholder secrets, the certificates' host list;
nothing else):

- each generated Galera file boots a mariadbd (paris-1 and paris-2 form one cluster, joined by
  the generated SST method, with the generated garbd.conf's arbitrator; frankfurt another)
  whose SHOW VARIABLES and wsrep_provider_options show the generated values, in a Primary
  component; garbd joins over TLS in its own segment;
- the two clusters replicate to each other with the generated asynchronous SQL, over TLS
  made by the generated make-certificates.sh, and converge to one GTID position; the
  heartbeat files show each channel's lag in milliseconds;
- the switchover script moves frankfurt's writes to the other cluster and back while an
  application keeps writing them (its router reads ProxySQL's query rules from the admin
  schema the script updates): every acknowledged write reaches both clusters;
- with 200 transactions received but not applied by the taker and 37 more committed after
  the channel's link was cut, frankfurt is killed: the promotion script applies all 200
  before it promotes, the taker takes writes; frankfurt comes back, the fencing file makes it
  refuse writes, and the return script counts and keeps aside exactly the 37, rebuilds
  frankfurt from the taker and re-points both channels.

The generated scripts run as written; their client (``CLIENT``, ``BINLOG_CLIENT``,
``DUMP_CLIENT``) is a wrapper that turns ``-h <placeholder host>`` into the socket of the
server playing it (generated_design.script_environment).

ProxySQL is not packaged for this machine: proxysql.sql and the failover ProxySQL files run
against ProxySQL's admin schema in SQLite (tests/data/proxysql_admin_schema.sql, from
ProxySQL's source) and their variable names and admin commands are checked against ProxySQL's
lists (tests/data/proxysql_variables.txt, proxysql_admin_commands.txt).

The six problems of issue 12 each fail a test here (each checked by putting it back):
wsrep_provider missing (test_each_galera_file_boots_a_node_with_its_values), REQUIRE SSL
without certificates (test_tls_is_configured_wherever_the_sql_requires_it, and the servers
would not start), WAN timeouts without tail evidence
(test_wan_timeouts_only_where_the_tail_evidence_asks,
test_metro_nodes_run_with_galera_default_timeouts), the asynchronous source equal to the
ProxySQL writer (test_async_source_is_never_the_proxysql_writer, with
tests/data/designs/grouped-lone-writer), sysctl lowering a value
(test_os_settings_never_lower_a_tuned_host), no failover path (test_failover_*,
test_runbook_promotion_steps_run_and_the_survivor_takes_writes).

Without mariadbd, galera-4, garbd, mariabackup, socat, openssl or the mariadb client the
server tests skip; with ADVISOR_REQUIRE_GALERA=1 (CI) they fail instead.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from galera_cluster import _exit_on_sigterm, missing_requirements
from generated_design import (
    GARB_SERVICE_SCRIPT,
    GARBD,
    LOOPBACK_PROVIDER_OPTIONS,
    SECRET,
    Deployment,
    ScriptEnvironment,
    Server,
    ServerFailed,
    capped_gcache,
    certificate_scripts,
    cnf_settings,
    deploy,
    file_hosts,
    file_site,
    kill,
    provider_options,
    rewrite_text,
    run_certificate_commands,
    run_script,
    script_environment,
    shell_assignments,
    sql_statements,
    sql_steps,
    start,
    stop,
    tls_paths,
    wait_for,
)
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
# Every example, and the test topologies of tests/data/designs (cases no example has).
TOPOLOGIES = {
    p.parent.name: p
    for folder in (REPO / "examples", DATA / "designs")
    for p in sorted(folder.glob("*/topology.yaml"))
}
EXAMPLES = sorted(TOPOLOGIES)
# Applied to real servers: grouped clusters with a garbd (two sites in one cluster, so a state
# transfer), and per-site clusters; asynchronous channels both ways in each.
APPLIED = ("paris-frankfurt", "per-site-mariadb")
MULTI_CLUSTER = (
    "paris-frankfurt",
    "us-eu",
    "global-counter",
    "grouped-lone-writer",
    "per-site-mariadb",
)
# Galera's defaults (Galera parameters: https://galeracluster.com/library/documentation/
# galera-parameters.html), in seconds: values above them are the WAN recipe.
EVS_DEFAULTS_S = {
    "evs.keepalive_period": 1.0,
    "evs.suspect_timeout": 5.0,
    "evs.inactive_timeout": 15.0,
    "evs.install_timeout": 7.5,
}


# -- generating the designs -------------------------------------------------------------------


@pytest.fixture(scope="module")
def designs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``advisor doc`` of every topology, as the command line runs it."""
    from advisor.cli import app

    out = tmp_path_factory.mktemp("designs")
    found = {}
    for example in EXAMPLES:
        target = out / example
        result = CliRunner().invoke(
            app,
            [
                "doc",
                str(TOPOLOGIES[example]),
                "-o",
                str(target),
                "--format",
                "md",
            ],
        )
        assert result.exit_code == 0, (result.output, result.exception)
        found[example] = target
    return found


def _analysis(example: str) -> object:
    from advisor import analyse

    return analyse(TOPOLOGIES[example])


# -- ProxySQL against its admin schema --------------------------------------------------------


def _data_lines(name: str) -> set[str]:
    text = (DATA / name).read_text()
    return {line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"}


def _admin_db() -> sqlite3.Connection:
    """ProxySQL's admin schema in SQLite, global_variables filled with every known name."""
    db = sqlite3.connect(":memory:")
    db.executescript((DATA / "proxysql_admin_schema.sql").read_text())
    db.executemany(
        "INSERT INTO global_variables VALUES (?, '')",
        [(name,) for name in sorted(_data_lines("proxysql_variables.txt"))],
    )
    return db


def _commented_statements(text: str) -> list[str]:
    """Statements written commented out for the operator to adapt (``-- INSERT ...``)."""
    found, current = [], []
    for line in text.splitlines():
        body = line[3:] if line.startswith("-- ") else None
        if body is not None and re.match(r"(INSERT|UPDATE|DELETE|REPLACE)\b", body):
            current = [body]
        elif current and body is not None and body.startswith("  "):
            current.append(body)
        else:
            current = []
        if current and current[-1].rstrip().endswith(";"):
            found.append("\n".join(current).rstrip().rstrip(";"))
            current = []
    return found


def _run_proxysql(db: sqlite3.Connection, statement: str, commands: set[str]) -> None:
    """One statement of proxysql.sql on ProxySQL's admin schema; admin commands checked."""
    flat = " ".join(statement.split())
    if re.match(r"(LOAD|SAVE)\b", flat, re.I):
        assert flat.upper() in commands, f"not a ProxySQL admin command: {flat}"
        return
    names = re.findall(r"variable_name\s*=\s*'([^']*)'", statement)
    known = _data_lines("proxysql_variables.txt")
    assert all(n in known for n in names), f"unknown ProxySQL variable in: {flat}"
    cursor = db.execute(statement)
    if re.match(r"UPDATE global_variables\b", flat, re.I):
        # ProxySQL has every variable row: an UPDATE that matches none names no variable.
        assert cursor.rowcount >= 1, f"matches no ProxySQL variable: {flat}"


@pytest.mark.parametrize("example", EXAMPLES)
def test_proxysql_sql_runs_against_proxysql_admin_schema(
    designs: dict[str, Path], example: str
) -> None:
    text = (designs[example] / "config" / "proxysql.sql").read_text()
    commands = _data_lines("proxysql_admin_commands.txt")
    db = _admin_db()
    active = sql_statements(text)
    assert active, "proxysql.sql has no statement"
    for statement in active:
        try:
            _run_proxysql(db, statement, commands)
        except sqlite3.Error as error:
            pytest.fail(f"ProxySQL's admin schema refuses: {error}\n{statement}")
    # Statements left commented for the operator must run too once uncommented (each alone:
    # they are alternatives, e.g. one mysql_users row per site's ProxySQL).
    for statement in _commented_statements(text):
        db.execute("SAVEPOINT alone")
        try:
            _run_proxysql(db, statement, commands)
        except sqlite3.Error as error:
            pytest.fail(f"ProxySQL's admin schema refuses (commented): {error}\n{statement}")
        finally:
            db.execute("ROLLBACK TO alone")


def test_the_schema_check_catches_a_misspelt_table_column_or_variable() -> None:
    """The check above can fail: each kind of mistake is refused."""
    commands = _data_lines("proxysql_admin_commands.txt")
    db = _admin_db()
    for wrong in (
        "INSERT INTO mysql_server (hostgroup_id, hostname) VALUES (10, 'a')",
        "INSERT INTO mysql_servers (hostgroup_id, host_name) VALUES (10, 'a')",
    ):
        with pytest.raises(sqlite3.OperationalError):
            _run_proxysql(db, wrong, commands)
    with pytest.raises(AssertionError, match="unknown ProxySQL variable"):
        _run_proxysql(
            db,
            "UPDATE global_variables SET variable_value = '1' "
            "WHERE variable_name = 'mysql-monitor_galera_healthcheck_timout'",
            commands,
        )
    with pytest.raises(AssertionError, match="not a ProxySQL admin command"):
        _run_proxysql(db, "LOAD MYSQL SERVER TO RUNTIME", commands)


def _proxysql_writers(text: str) -> dict[int, str]:
    """Writer hostgroup -> the host ProxySQL makes the writer (highest weight, then name)."""
    db = _admin_db()
    for statement in sql_statements(text):
        if not re.match(r"(LOAD|SAVE)\b", statement.strip(), re.I):
            db.execute(statement)
    writers = {}
    for (hostgroup,) in db.execute("SELECT writer_hostgroup FROM mysql_galera_hostgroups"):
        row = db.execute(
            "SELECT hostname FROM mysql_servers WHERE hostgroup_id = ? "
            "ORDER BY weight DESC, hostname LIMIT 1",
            (hostgroup,),
        ).fetchone()
        if row:
            writers[hostgroup] = row[0]
    return writers


@pytest.mark.parametrize("example", MULTI_CLUSTER)
def test_async_source_is_never_the_proxysql_writer(designs: dict[str, Path], example: str) -> None:
    config = designs[example] / "config"
    writers = set(_proxysql_writers((config / "proxysql.sql").read_text()).values())
    assert writers, "proxysql.sql names no writer"
    sources = {
        host
        for path in config.glob("async-replication-*.sql")
        for host in re.findall(r"(?:MASTER|SOURCE)_HOST\s*=\s*'([^']+)'", path.read_text())
    }
    assert sources, "no asynchronous channel"
    assert not sources & writers, (
        f"asynchronous sources {sorted(sources & writers)} are ProxySQL's writers "
        f"{sorted(writers)}: the binlog dump loads the node that takes the writes"
    )


# -- TLS --------------------------------------------------------------------------------------


@pytest.mark.parametrize("example", MULTI_CLUSTER)
def test_tls_is_configured_wherever_the_sql_requires_it(
    designs: dict[str, Path], example: str, tmp_path: Path
) -> None:
    """REQUIRE SSL / MASTER_SSL=1 need server certificates and the commands that make them."""
    config = designs[example] / "config"
    sql = "\n".join(p.read_text() for p in config.glob("async-replication-*.sql"))
    if "REQUIRE SSL" not in sql and not re.search(r"MASTER_SSL\s*=\s*1", sql):
        return
    for path in config.glob("galera-*.cnf"):
        settings = cnf_settings(path.read_text())
        missing = [k for k in ("ssl_cert", "ssl_key", "ssl_ca") if k not in settings]
        assert not missing, f"{path.name}: REQUIRE SSL in the SQL but no {missing} here"
    assert certificate_scripts(config), "REQUIRE SSL but no commands that make certificates"
    named = tls_paths(config)
    files = run_certificate_commands(config, tmp_path)
    path_map = {str(Path(p).parent): str(files) for p in named}
    for path in named:
        local = Path(rewrite_text(path, path_map))
        assert local.is_file(), f"the certificate commands do not make {path}"


# -- WAN timeouts -----------------------------------------------------------------------------


def _seconds(value: str) -> float:
    from advisor.model.provider_options import parse_duration_s

    return float(parse_duration_s(value))


def _raised_timeouts(options: dict[str, str]) -> dict[str, str]:
    return {
        name: value
        for name, value in options.items()
        if name in EVS_DEFAULTS_S and _seconds(value) > EVS_DEFAULTS_S[name]
    }


@functools.cache
def _tail_asks(example: str) -> frozenset[frozenset[str]]:
    """Site pairs whose tail evidence asks for WAN timeouts under the chosen option."""
    analysis = _analysis(example)
    chosen = analysis.chosen.architecture  # type: ignore[attr-defined]
    pairs = set()
    for finding in analysis.findings:  # type: ignore[attr-defined]
        if finding.rule == "RTT-TAIL-INSTABILITY" and finding.option == chosen:
            pairs.add(frozenset(_site_pair(example, finding.subject)))
    return frozenset(pairs)


def _site_pair(example: str, subject: str) -> tuple[str, str]:
    import yaml

    topology = yaml.safe_load(TOPOLOGIES[example].read_text())
    names = [s["name"] for s in topology["sites"]]
    for a in names:
        for b in names:
            if subject == f"{a}-{b}":
                return a, b
    raise AssertionError(f"no site pair is called {subject}")


@pytest.mark.parametrize("example", EXAMPLES)
def test_wan_timeouts_only_where_the_tail_evidence_asks(
    designs: dict[str, Path], example: str
) -> None:
    asks = _tail_asks(example)
    for path in (designs[example] / "config").glob("galera-*.cnf"):
        text = path.read_text()
        raised = _raised_timeouts(
            provider_options(cnf_settings(text).get("wsrep_provider_options", ""))
        )
        if not raised:
            continue
        cluster = cnf_settings(text)["wsrep_cluster_name"]
        sites = [s for s in cluster.split("_") if s]
        pairs = {frozenset((a, b)) for a in sites for b in sites if a < b}
        assert pairs & asks, (
            f"{path.name}: {raised} above Galera's defaults, but no RTT-TAIL-INSTABILITY "
            f"finding asks for them in cluster {cluster}: a silently dead node then stalls "
            "commits for the suspect timeout instead of 5 s"
        )


# -- OS settings ------------------------------------------------------------------------------

# A host tuned higher than any design asks (values an operator may well have set), and
# Linux's defaults (Linux ip-sysctl docs; net.core.*mem_max 212992 on x86_64).
TUNED_HIGH = {
    "net/core/rmem_max": "1073741824",
    "net/core/wmem_max": "1073741824",
    "net/ipv4/tcp_rmem": "8192\t1048576\t1073741824",
    "net/ipv4/tcp_wmem": "8192\t1048576\t1073741824",
    "net/ipv4/tcp_slow_start_after_idle": "0",
}
LINUX_DEFAULTS = {
    "net/core/rmem_max": "212992",
    "net/core/wmem_max": "212992",
    "net/ipv4/tcp_rmem": "4096\t131072\t6291456",
    "net/ipv4/tcp_wmem": "4096\t16384\t4194304",
    "net/ipv4/tcp_slow_start_after_idle": "1",
}
FAKE_SYSCTL = """#!/usr/bin/env python3
# sysctl on a fake /proc/sys (the test's): -n KEY, -w KEY=VALUE, KEY=VALUE, -p FILE, --system
import os, sys
root = os.environ["FAKE_PROC_SYS"]
def path(key): return os.path.join(root, key.strip().replace(".", "/"))
def write(pair):
    key, _, value = pair.partition("=")
    with open(path(key), "w") as f: f.write(" ".join(value.split()) + "\\n")
args = [a for a in sys.argv[1:] if a not in ("-q", "-e")]
if args and args[0] == "-n":
    for key in args[1:]: print(open(path(key)).read().strip())
elif args and args[0] in ("-p", "--load"):
    for line in open(args[1]):
        if line.strip() and line.strip()[0] not in "#;": write(line.strip())
elif args and args[0] == "--system":
    sys.exit("--system would read /etc/sysctl.d: the test applies the file itself")
else:
    for a in args:
        if a != "-w": write(a)
"""


def _fake_proc_sys(root: Path, values: dict[str, str]) -> None:
    for name, value in values.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(value + "\n")


def _read_tree(root: Path) -> dict[str, list[int]]:
    return {
        str(p.relative_to(root)): [int(v) for v in p.read_text().split()]
        for p in root.rglob("*")
        if p.is_file()
    }


def _apply_os_settings(config: Path, proc_sys: Path, bin_dir: Path) -> None:
    """Apply the generated OS settings as documented, on the fake tree.

    A script (``#!``) runs as ``sh SCRIPT CONF`` with the fake sysctl first on PATH and
    /proc/sys in its text pointed at the fake tree; the file it writes (CONF, what the host
    loads at every boot) is then loaded again, as a reboot would. A sysctl.d file is loaded
    as ``sysctl -p`` loads it.
    """
    env = {
        **os.environ,
        "FAKE_PROC_SYS": str(proc_sys),
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
    }
    sysctl = str(bin_dir / "sysctl")
    applied = 0
    for path in sorted(config.iterdir()):
        if not path.is_file() or not re.search(r"net\.(core|ipv4)\.", path.read_text()):
            continue
        text = path.read_text()
        if text.startswith("#!"):
            local = bin_dir / path.name
            local.write_text(text.replace("/proc/sys", str(proc_sys)))
            conf = bin_dir / f"{path.stem}.conf"
            result = subprocess.run(
                ["sh", str(local), str(conf)],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert result.returncode == 0, f"{path.name}: {result.stderr}"
            if conf.exists():
                subprocess.run([sysctl, "-p", str(conf)], env=env, check=True, timeout=60)
            applied += 1
        elif path.suffix == ".conf":
            subprocess.run([sysctl, "-p", str(path)], env=env, check=True, timeout=60)
            applied += 1
    assert applied, "no OS settings among the generated files"


@pytest.mark.parametrize("example", EXAMPLES)
def test_os_settings_never_lower_a_tuned_host(
    designs: dict[str, Path], example: str, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sysctl").write_text(FAKE_SYSCTL)
    (bin_dir / "sysctl").chmod(0o755)
    config = designs[example] / "config"

    high = tmp_path / "high"
    _fake_proc_sys(high, TUNED_HIGH)
    before = _read_tree(high)
    _apply_os_settings(config, high, bin_dir)
    after = _read_tree(high)
    lowered = {
        name: (before[name], after[name])
        for name in before
        if any(b > a for b, a in zip(before[name], after[name], strict=False))
    }
    assert not lowered, f"the OS settings lower a host tuned higher: {lowered} (before, after)"

    default = tmp_path / "default"
    _fake_proc_sys(default, LINUX_DEFAULTS)
    _apply_os_settings(config, default, bin_dir)
    raised = _read_tree(default)
    assert raised["net/core/rmem_max"][0] > 212992, "a default host's buffers are not raised"
    assert raised["net/ipv4/tcp_slow_start_after_idle"] == [0]


# -- failover path ----------------------------------------------------------------------------


def _runbook(design: Path) -> str:
    """The runbook section of design.md (from its heading to the next of that level)."""
    text = (design / "design.md").read_text()
    match = re.search(r"^(#+) [^\n]*[Rr]unbook[^\n]*\n(.*?)(?=^\1 |\Z)", text, re.M | re.S)
    assert match, "design.md has no runbook section"
    return match.group(2)


def _failover_files(config: Path, kind: str) -> list[Path]:
    """``failover-<lost>-to-<taker>.<kind>.sql`` (fence, proxysql, return.proxysql) or
    ``.<kind>.sh`` (promote, return)."""
    found = [
        *config.glob(f"failover-*-to-*.{kind}.sql"),
        *config.glob(f"failover-*-to-*.{kind}.sh"),
    ]
    if kind == "proxysql":  # not the return's .return.proxysql.sql
        return sorted(p for p in found if not p.name.endswith(".return.proxysql.sql"))
    return sorted(found)


def _lost_and_taker(path: Path) -> tuple[str, str]:
    match = re.match(r"failover-(.+)-to-(.+?)\.", path.name)
    assert match, path.name
    return match.group(1), match.group(2)


@pytest.mark.parametrize("example", MULTI_CLUSTER)
def test_failover_runbook_covers_every_step_with_rpo_and_rto(
    designs: dict[str, Path], example: str
) -> None:
    runbook = _runbook(designs[example])
    for step in ("detection", "decision", "promotion", "fencing", "return", "RPO", "RTO"):
        assert step.lower() in runbook.lower(), f"the runbook says nothing of {step}"
    promotions = _failover_files(designs[example] / "config", "promote")
    assert promotions, "no promotion steps (config/failover-*-to-*.promote.sh)"
    for path in promotions:
        assert path.name in runbook, f"the runbook does not name {path.name}"
        for name in (
            path.name.replace(".promote.sh", ".return.sh"),
            "switchover-" + path.name.removeprefix("failover-").replace(".promote.sh", ".sh"),
        ):
            assert (path.parent / name).exists(), f"no {name}"
            assert name in runbook, f"the runbook does not name {name}"


@pytest.mark.parametrize("example", MULTI_CLUSTER)
def test_failover_moves_writes_to_the_taker_in_proxysql(
    designs: dict[str, Path], example: str
) -> None:
    """On ProxySQL's admin schema: after the failover file, nothing is sent to the lost cluster.

    proxysql.sql, then failover-*.proxysql.sql: the lost cluster's servers are OFFLINE_HARD and
    its Galera hostgroups inactive (the fence), and every query rule and user that wrote to
    the lost cluster's writer hostgroup now writes to the taker's. The return file then
    restores what proxysql.sql had.
    """
    config = designs[example] / "config"
    moves = _failover_files(config, "proxysql")
    assert moves, "no ProxySQL failover (config/failover-*-to-*.proxysql.sql)"
    commands = _data_lines("proxysql_admin_commands.txt")
    for move in moves:
        lost, taker = _lost_and_taker(move)
        db = _admin_db()
        for statement in sql_statements((config / "proxysql.sql").read_text()):
            _run_proxysql(db, statement, commands)
        groups = dict(
            db.execute("SELECT comment, writer_hostgroup FROM mysql_galera_hostgroups").fetchall()
        )
        assert lost in groups and taker in groups, (move.name, groups)
        lost_hg, taker_hg = groups[lost], groups[taker]
        before = _routing(db)
        for statement in sql_statements(move.read_text()):
            _run_proxysql(db, statement, commands)
        online = db.execute(
            "SELECT hostname FROM mysql_servers WHERE hostgroup_id BETWEEN ? AND ? "
            "AND status <> 'OFFLINE_HARD'",
            (lost_hg, lost_hg + 3),
        ).fetchall()
        assert not online, f"{move.name}: lost cluster's servers still in use: {online}"
        active = db.execute(
            "SELECT active FROM mysql_galera_hostgroups WHERE writer_hostgroup = ?", (lost_hg,)
        ).fetchone()[0]
        assert active == 0, f"{move.name}: ProxySQL still manages cluster {lost}"
        after = _routing(db)
        for what, hostgroup in before.items():
            expected = taker_hg if hostgroup == lost_hg else hostgroup
            assert after[what] == expected, f"{move.name}: {what} -> {after[what]}"
        for back in sorted(config.glob(move.name.replace(".proxysql.sql", ".return.proxysql.sql"))):
            for statement in sql_statements(back.read_text()):
                _run_proxysql(db, statement, commands)
            assert _routing(db) == before, f"{back.name} does not restore the routing"


def _routing(db: sqlite3.Connection) -> dict[str, int]:
    """Where writes go: each query rule's and each user's hostgroup."""
    rules = db.execute("SELECT rule_id, destination_hostgroup FROM mysql_query_rules")
    users = db.execute("SELECT username, default_hostgroup, comment FROM mysql_users")
    return {
        **{f"rule {rule}": hg for rule, hg in rules.fetchall() if hg is not None},
        **{f"user {name} ({comment})": hg for name, hg, comment in users.fetchall()},
    }


# -- real servers -----------------------------------------------------------------------------


@pytest.fixture(scope="module", params=APPLIED)
def deployment(designs: dict[str, Path], request: pytest.FixtureRequest) -> Iterator[Deployment]:
    """A design started on loopback; torn down at the end, pass or fail."""
    missing = missing_requirements()
    if not GARBD.exists() or not GARB_SERVICE_SCRIPT.exists():
        missing.append(f"{GARBD} (apt-get install galera-arbitrator-4)")
    for tool, package in (
        ("openssl", "openssl"),
        ("mariabackup", "mariadb-backup"),
        ("socat", "socat"),
        ("mariadb", "mariadb-client"),
    ):
        if shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/usr/bin") is None:
            missing.append(f"{tool} (apt-get install {package})")
    if missing:
        reason = "needs " + "; ".join(missing) + " (run .ci/install-galera)"
        if os.environ.get("ADVISOR_REQUIRE_GALERA") == "1":
            pytest.fail(f"ADVISOR_REQUIRE_GALERA=1 but the generated design {reason}")
        pytest.skip(reason)
    root = Path(tempfile.mkdtemp(prefix="advisor-design-"))
    design = designs[request.param]
    running = Deployment(design, root)

    def teardown() -> None:
        stop(p.process for p in running.processes())
        shutil.rmtree(root, ignore_errors=True)

    # As galera_cluster.py does: SIGTERM (a CI timeout) unwinds into teardown, and atexit
    # covers an exit that skips this frame, so no server outlives the test.
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    atexit.register(teardown)
    try:
        try:
            deploy(design, root, running)
        except ServerFailed as error:
            running.failure = str(error)
        yield running
    finally:
        teardown()
        atexit.unregister(teardown)
        signal.signal(signal.SIGTERM, previous)


def _started(deployment: Deployment) -> Deployment:
    if deployment.failure is not None:
        pytest.fail(f"the generated design did not start: {deployment.failure}")
    return deployment


def _same(generated: str, shown: str) -> bool:
    """A generated value and the server's, allowing the server's spelling of it."""
    a, b = generated.strip().strip("'\"").lower(), shown.strip().lower()
    if a == b:
        return True
    truth = {"on": "1", "yes": "1", "true": "1", "off": "0", "no": "0", "false": "0"}
    if truth.get(a, a) == truth.get(b, b):
        return True
    sizes = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    for value in (a, b):
        if value[-1:] in sizes and value[:-1].isdigit():
            scaled = str(int(value[:-1]) * sizes[value[-1]])
            if scaled in (a, b):
                return True
    try:
        return _seconds(a) == _seconds(b)
    except ValueError:  # not durations
        return False


def _check_variables(server: Server) -> list[str]:
    """Differences between the server's variables and the generated files it started from."""
    generated = server.settings
    problems = []
    shown_options = provider_options(server.variable("wsrep_provider_options"))
    for name, value in generated.items():
        if name == "wsrep_provider_options":
            for option, option_value in provider_options(value).items():
                if option in LOOPBACK_PROVIDER_OPTIONS:
                    continue  # the test's own (generated_design.py); the server adds ssl://
                if option == "gcache.size":
                    option_value = capped_gcache(option_value)  # CI's disk (generated_design.py)
                if not _same(option_value, shown_options.get(option, "(absent)")):
                    problems.append(
                        f"{option}: file {option_value}, server {shown_options.get(option)}"
                    )
            continue
        if name == "log_bin":
            if server.variable("log_bin") != "ON" or not server.variable(
                "log_bin_basename"
            ).endswith("/" + value):
                problems.append(
                    f"log_bin: file {value}, server {server.variable('log_bin_basename')}"
                )
            continue
        rows = server.query(f"SHOW GLOBAL VARIABLES LIKE '{name}'")
        if not rows:
            problems.append(f"{name}: not a server variable (file {value})")
        elif not _same(value, str(rows[0][1])):
            problems.append(f"{name}: file {value}, server {rows[0][1]}")
    return problems


@pytest.mark.slow
def test_each_galera_file_boots_a_node_with_its_values(
    designs: dict[str, Path], deployment: Deployment
) -> None:
    started = _started(deployment)
    played = {s.generated.name for s in started.servers}
    assert played == {p.name for p in started.galera_files()}
    for server in started.servers:
        generated = cnf_settings(server.generated.read_text())
        provider = server.variable("wsrep_provider")
        assert provider not in ("", "none"), server.describe()
        assert Path(provider).is_file(), f"{server.host}: wsrep_provider {provider} missing"
        assert server.status("wsrep_cluster_status") == "Primary", server.describe()
        assert server.status("wsrep_ready") == "ON", server.describe()
        options = provider_options(server.variable("wsrep_provider_options"))
        file_options = provider_options(generated.get("wsrep_provider_options", ""))
        # The list, each named by the file and shown by the server.
        assert "gcache.size" in file_options, f"{server.generated.name}: no gcache.size"
        assert _same(capped_gcache(file_options["gcache.size"]), options["gcache.size"])
        if deployment.design.name == "per-site-mariadb":  # dataset-capped: booted as generated
            assert capped_gcache(file_options["gcache.size"]) == file_options["gcache.size"]
        assert "wsrep_sst_method" in generated, f"{server.generated.name}: no SST method"
        assert server.variable("wsrep_sst_method") == generated["wsrep_sst_method"]
        threads = generated.get("wsrep_slave_threads") or generated.get("wsrep_applier_threads")
        assert threads, f"{server.generated.name}: no applier threads"
        assert server.variable("wsrep_slave_threads") == threads
        problems = _check_variables(server)
        assert not problems, f"{server.host}: {problems}\n{server.describe()}"
    # Every cluster's later members joined by a state transfer of the generated method.
    for members in started.clusters().values():
        for joiner in members[1:]:
            method = joiner.settings["wsrep_sst_method"]
            assert f"wsrep_sst_{method} --role 'joiner'" in joiner.error_log.read_text(), (
                f"{joiner.host} did not join by {method}: {joiner.log_tail()}"
            )


@pytest.mark.parametrize("example", EXAMPLES)
def test_state_transfer_across_sites_is_not_rsync(designs: dict[str, Path], example: str) -> None:
    """rsync blocks the donor for the whole copy: not over a WAN (issue 12, item 1)."""
    for path in (designs[example] / "config").glob("galera-*.cnf"):
        settings = cnf_settings(path.read_text())
        members = settings["wsrep_cluster_address"].removeprefix("gcomm://").split(",")
        spans = len({m.split(":")[0].rsplit("-db", 1)[0] for m in members}) > 1
        method = settings.get("wsrep_sst_method")
        assert method, f"{path.name}: no wsrep_sst_method"
        assert not (spans and method == "rsync"), f"{path.name}: rsync across sites"


@pytest.mark.slow
def test_metro_nodes_run_with_galera_default_timeouts(deployment: Deployment) -> None:
    """On the real servers: a cluster whose links no tail finding flags keeps the defaults."""
    started = _started(deployment)
    asks = _tail_asks(started.design.name)
    for server in started.servers:
        sites = server.cluster.split("_")
        if {frozenset((a, b)) for a in sites for b in sites if a < b} & asks:
            continue
        options = provider_options(server.variable("wsrep_provider_options"))
        shown = {k: options[k] for k in EVS_DEFAULTS_S}
        assert not _raised_timeouts(shown), f"{server.host} ({server.cluster}): {shown}"


@pytest.mark.slow
def test_garbd_joins_with_the_generated_conf(deployment: Deployment) -> None:
    """Every garbd.conf of the design (the grouped example has one; per-site has none)."""
    started = _started(deployment)
    confs = sorted(started.config_dir.glob("garbd*.conf"))
    assert len(started.garbds) == len(confs), confs
    for garbd in started.garbds:
        group = shell_assignments(garbd.conf.read_text())["GALERA_GROUP"]
        members = started.clusters()[group]
        wait_for(
            lambda members=members: all(
                s.status("wsrep_cluster_size") == str(len(members) + 1) for s in members
            ),
            60,
            f"{group}: garbd counted in the cluster size",
        )
        assert garbd.process is not None and garbd.process.poll() is None, garbd.log.read_text()
        log = garbd.log.read_text()
        options = provider_options(shell_assignments(garbd.conf.read_text())["GALERA_OPTIONS"])
        # garbd logs "(<its id>, 'tcp|ssl://address')" and views as "<member id>,<segment>".
        own = re.search(r"\((\w{8}-\w{4}), '(\w+)://", log)
        assert own, log[-3000:]
        if any(k.startswith("socket.ssl") for k in options):
            assert own.group(2) == "ssl", f"garbd speaks {own.group(2)}, not TLS"
        segments = set(re.findall(rf"^\s+{own.group(1)},(\d+)$", log, re.M))
        assert segments == {options.get("gmcast.segment", "0")}, (segments, log[-3000:])


def _channel_status(server: Server, channel: str) -> dict[str, str]:
    with server.root_connection() as conn, conn.cursor() as cur:
        cur.execute(f"SHOW SLAVE '{channel}' STATUS")
        row = cur.fetchone()
        names = [d[0] for d in cur.description]
    return {n: str(v) for n, v in zip(names, row, strict=True)} if row else {}


def _apply_async_sql(deployment: Deployment) -> list[tuple[Server, str]]:
    """Run the generated asynchronous SQL where it says, once per deployment; return
    (replica, channel) pairs."""
    if deployment.channels is not None:
        return deployment.channels
    channels: list[tuple[Server, str]] = []
    deployment.channels = channels
    for path in deployment.async_files():
        steps = sql_steps(path.read_text())
        assert steps, f"{path.name}: no '-- N. On ...' steps"
        for step in steps:
            kind, where = step.where.split(" ", 1)
            target = (
                deployment.clusters()[where][0] if kind == "cluster" else deployment.server(where)
            )
            for statement in step.statements:
                source = re.search(r"(?:MASTER|SOURCE)_HOST\s*=\s*'([^']+)'", statement)
                if source:
                    played = deployment.server(source.group(1))
                    statement = statement.replace(source.group(0), "MASTER_HOST = '127.0.0.1'")
                    statement = re.sub(
                        r"MASTER_PORT\s*=\s*\d+", f"MASTER_PORT = {played.port}", statement
                    )
                statement = rewrite_text(statement, deployment.path_map)
                target.execute(statement)
                # The channel is named where it is defined; START ALL SLAVES starts it.
                named = re.match(r"CHANGE MASTER '([^']+)'", statement)
                if named:
                    channels.append((target, named.group(1)))
    return channels


def _gtid_positions(servers: list[Server]) -> dict[str, set[str]]:
    return {s.host: set(filter(None, s.variable("gtid_binlog_pos").split(","))) for s in servers}


def _client(server: Server, path: Path, path_map: dict[str, str]) -> str:
    """Run a generated SQL file with the mariadb client, as its header says; return stdout."""
    client = shutil.which("mariadb") or shutil.which("mysql")
    assert client is not None, "the mariadb client (mariadb-client)"
    result = subprocess.run(
        [client, f"--socket={server.socket}", "-uroot", "--batch"],
        input=rewrite_text(path.read_text(), path_map),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"{path.name} on {server.host}: {result.stderr}"
    return result.stdout


@pytest.mark.slow
def test_clusters_replicate_to_each_other_over_tls_and_converge(deployment: Deployment) -> None:
    started = _started(deployment)
    channels = _apply_async_sql(started)
    sql = "\n".join(p.read_text() for p in started.async_files())
    verifies = re.search(r"MASTER_SSL_VERIFY_SERVER_CERT\s*=\s*1", sql) is not None
    assert len(channels) >= 2, "channels both ways"
    for replica, channel in channels:
        deadline = time.monotonic() + 30
        status = _channel_status(replica, channel)
        while status.get("Slave_IO_Running") != "Yes" and time.monotonic() < deadline:
            time.sleep(0.5)
            status = _channel_status(replica, channel)
        assert status.get("Slave_IO_Running") == "Yes", (
            f"channel {channel} on {replica.host}: {status.get('Last_IO_Error')}"
        )
        assert status["Slave_SQL_Running"] == "Yes", status
        assert status["Master_SSL_Allowed"] == "Yes", status
        if verifies:
            assert status["Master_SSL_Verify_Server_Cert"] == "Yes", status
    for server in {id(r): r for r, _ in channels}.values():
        grants = " ".join(str(r[0]) for r in server.query("SHOW GRANTS FOR 'repl'@'%'"))
        assert "REQUIRE SSL" in grants or "REQUIRE X509" in grants, grants
    # Writes in every cluster, through each cluster's first node (Galera carries them on).
    for index, (cluster, members) in enumerate(sorted(started.clusters().items())):
        schema = f"probe_{index}"
        members[0].execute(
            f"CREATE DATABASE {schema}",
            f"CREATE TABLE {schema}.t (id INT PRIMARY KEY, cluster VARCHAR(64))",
            *(f"INSERT INTO {schema}.t VALUES ({i}, '{cluster}')" for i in range(20)),
        )
    counts = len(started.clusters()) * 20

    def converged() -> dict[str, set[str]] | None:
        positions = _gtid_positions(started.servers)
        rows = [
            sum(
                s.query(f"SELECT COUNT(*) FROM probe_{i}.t")[0][0]
                if s.query(f"SHOW DATABASES LIKE 'probe_{i}'")
                else 0
                for i in range(len(started.clusters()))
            )
            for s in started.servers
        ]
        same = len({frozenset(p) for p in positions.values()}) == 1
        return positions if same and all(r == counts for r in rows) else None

    positions = wait_for(converged, 60, f"one GTID position ({_gtid_positions(started.servers)})")
    domains = {gtid.split("-")[0] for gtid in next(iter(positions.values()))}
    assert len(domains) >= len(started.clusters()), positions  # a domain per cluster


@pytest.mark.slow
def test_heartbeat_shows_each_channels_lag_in_milliseconds(
    designs: dict[str, Path], deployment: Deployment
) -> None:
    """Each heartbeat file runs on every node of its cluster (mariadb client, as its header
    says); each node then runs its own event (one that arrived by replication would be
    SLAVESIDE_DISABLED), and the other cluster receives every node's row: losing one node
    leaves the others' rows coming. The file's own query reads the channel's lag below a
    second (Seconds_Behind_Master could only say 0)."""
    started = _started(deployment)
    config = started.config_dir
    beats = sorted(config.glob("heartbeat-*.sql"))
    clusters = started.clusters()
    assert {p.name.removeprefix("heartbeat-").removesuffix(".sql") for p in beats} == set(
        clusters
    ), [p.name for p in beats]
    for path in beats:
        members = clusters[path.name.removeprefix("heartbeat-").removesuffix(".sql")]
        assert "Run on EVERY node" in path.read_text()
        for member in members:
            _client(member, path, {})
        for member in members:
            events = member.query(
                "SELECT EVENT_NAME, STATUS FROM information_schema.EVENTS "
                "WHERE EVENT_SCHEMA = 'advisor'"
            )
            assert [status for _, status in events] == ["ENABLED"], (member.host, events)
    for path in beats:
        reading = sql_statements(path.read_text())[-1]
        assert reading.lstrip().upper().startswith("SELECT"), reading
        own = path.name.removeprefix("heartbeat-").removesuffix(".sql")
        for name, members in clusters.items():
            if name == own:
                continue
            lags = wait_for(
                lambda m=members[0], q=reading: m.query(q),
                30,
                f"{name} reads the heartbeat of the other clusters",
            )
            assert len(lags) == len(clusters) - 1, lags
            for server_id, lag_ms in lags:
                print(f"{name}: heartbeat of server_id {server_id} is {lag_ms} ms old")
                assert 0 <= float(lag_ms) < 1000, (name, server_id, lag_ms)
            writers = {m.host for m in clusters[own]}
            wait_for(
                lambda m=members[0], w=writers: (
                    w
                    <= {
                        str(r[0])
                        for r in m.query(
                            "SELECT node FROM advisor.heartbeat "
                            "WHERE ts > NOW(6) - INTERVAL 1 SECOND"
                        )
                    }
                ),
                30,
                f"{name} receives a recent row from every node of {own}",
            )


def _seq(position: str, domain: str) -> int:
    """The sequence number of ``domain`` in a GTID position (``1-1-34,2-2-33``), 0 if absent."""
    for gtid in filter(None, position.split(",")):
        gtid_domain, _, seq = gtid.strip().split("-")
        if gtid_domain == domain:
            return int(seq)
    return 0


def _marker_reaches(replica: Server) -> None:
    """Wait for the lost cluster's marker on the taker's replica.

    A channel whose SQL thread had stopped with no error (Slave_SQL_Running=No, both
    Last_*_Error empty) was seen twice in about ten runs on a loaded machine, cause unknown:
    not a partition of the replica's node, whose stop shows error 1047 and which
    wsrep_restart_slave=ON (now in the generated configuration) undoes on rejoin
    (lab-runs.yaml channel-through-a-partition). It is restarted once, loudly (the output
    shows the state and the replica's error log), and the marker must then arrive. A second
    stop, or an error, fails the test.
    """

    def arrived() -> bool:
        return bool(
            replica.query("SHOW DATABASES LIKE 'before_loss'")
            and replica.query("SELECT COUNT(*) FROM before_loss.t")[0][0] == 1
        )

    for attempt in (1, 2):
        try:
            # A channel that lost its connection retries after MASTER_CONNECT_RETRY (60 s by
            # default); seen once on a loaded machine, so the wait covers one retry.
            wait_for(arrived, 90, "the last commit of the lost cluster reaches the taker")
            return
        except AssertionError as missed:
            status = _channels_status(replica)
            silent = "Slave_SQL_Running='No'" in status and all(
                f"{key}=''" in status for key in ("Last_IO_Error", "Last_SQL_Error")
            )
            if attempt == 2 or not silent:
                log = replica.error_log
                tail = log.read_text(errors="replace")[-4000:] if log.exists() else "(no log)"
                raise AssertionError(f"{missed}\n{status}\n--- {log}:\n{tail}") from None
            print(f"WARNING: an SQL thread had stopped with no error; restarted once:\n{status}")
            replica.execute("START ALL SLAVES")


def _channels_status(server: Server) -> str:
    """Each channel's IO/SQL state and last errors, for a failure message."""
    keys = (
        "Connection_name",
        "Slave_IO_Running",
        "Slave_SQL_Running",
        "Last_IO_Error",
        "Last_SQL_Error",
        "Gtid_IO_Pos",
    )
    with server.root_connection() as conn, conn.cursor() as cur:
        cur.execute("SHOW ALL SLAVES STATUS")
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
    return "\n".join(
        ", ".join(f"{k}={row[names.index(k)]!r}" for k in keys if k in names) for row in rows
    )


def _pair(config: Path) -> tuple[Path, str, str]:
    """The first failover of the design: its promotion script, lost and taker clusters."""
    promotions = _failover_files(config, "promote")
    assert promotions, "no promotion steps (config/failover-*-to-*.promote.sh)"
    lost, taker = _lost_and_taker(promotions[0])
    return promotions[0], lost, taker


def _header_host(script: Path) -> str:
    """The host a promotion script runs against, from its header."""
    found = re.search(
        r"^# Run from any shell where the \S+ client reaches (\S+) \(cluster",
        script.read_text(),
        re.M,
    )
    assert found, f"{script.name}: does not say which node it runs against"
    return found.group(1)


def _script_env(started: Deployment, name: str) -> ScriptEnvironment:
    """The generated scripts' environment: every host of the design reaches its server."""
    hosts = set()
    for path in started.config_dir.glob("galera-*.cnf"):
        text = path.read_text()
        hosts |= set(file_hosts(text, file_site(text)))
    return script_environment(started, hosts, started.root / name)


def _proxysql_admin(environment: ScriptEnvironment, config: Path, lost: str) -> sqlite3.Connection:
    """ProxySQL's admin schema with proxysql.sql applied, behind the scripts' PROXYSQL_CLIENT;
    the rows proxysql.sql leaves commented out for the operator to adapt (the query rule and
    the users of ``lost``) added as the operator would."""
    db = _admin_db()
    text = (config / "proxysql.sql").read_text()
    commands = _data_lines("proxysql_admin_commands.txt")
    for statement in sql_statements(text):
        _run_proxysql(db, statement, commands)
    for statement in _commented_statements(text):
        if f"'{lost}')" in statement or f"'owned by {lost}')" in statement:
            _run_proxysql(db, statement, commands)
    db.commit()  # a backup waits for the source's open transaction otherwise
    target = sqlite3.connect(environment.proxysql_db)
    db.backup(target)
    target.close()
    return db


def _channels_running(started: Deployment) -> None:
    """Every channel of the design running, as a test's starting point. A channel whose source
    was restarted by an earlier test may sit in MariaDB's reconnect pause
    (MASTER_CONNECT_RETRY, 60 s by default): after a short wait it is started again, as an
    operator would, since its source is up."""

    def running(replica: Server, channel: str) -> bool:
        status = _channel_status(replica, channel)
        return status.get("Slave_IO_Running") == "Yes" and status.get("Slave_SQL_Running") == "Yes"

    for replica, channel in _apply_async_sql(started):
        deadline = time.monotonic() + 15
        while not running(replica, channel) and time.monotonic() < deadline:
            time.sleep(0.3)
        if not running(replica, channel):
            replica.execute(f"START SLAVE '{channel}'")
        wait_for(
            lambda r=replica, c=channel: running(r, c),
            60,
            f"channel {channel} on {replica.host} runs",
        )


class _Writer(threading.Thread):
    """An application writing lost's rows through "ProxySQL": each insert goes to the cluster
    that the admin schema's query rules route lost's writer hostgroup to; a refused insert
    (read_only) is retried with the same id. Records what each cluster acknowledged."""

    def __init__(self, proxysql_db: Path, rule_ids: list[int], servers: dict[int, Server]):
        super().__init__(daemon=True)
        self.proxysql_db, self.rule_ids, self.servers = proxysql_db, rule_ids, servers
        self.acked: dict[int, int] = {}  # id -> writer hostgroup that acknowledged it
        self.refused = 0
        self.errors: list[str] = []
        self.missing_at_move: set[int] = set()
        self.stop_event = threading.Event()

    def _route(self) -> int:
        with contextlib.closing(sqlite3.connect(self.proxysql_db)) as db:
            marks = ",".join("?" * len(self.rule_ids))
            rows = db.execute(
                "SELECT DISTINCT destination_hostgroup FROM mysql_query_rules "
                f"WHERE rule_id IN ({marks})",
                self.rule_ids,
            ).fetchall()
        assert len(rows) == 1, rows
        return int(rows[0][0])

    def run(self) -> None:
        import pymysql

        connections: dict[int, Any] = {}
        next_id, last = 1, None
        while not self.stop_event.is_set():
            hostgroup = self._route()
            server = self.servers[hostgroup]
            try:
                if hostgroup not in connections:
                    connections[hostgroup] = pymysql.connect(
                        unix_socket=str(server.socket),
                        user="switch_app",
                        password=SECRET,
                        autocommit=True,
                    )
                with connections[hostgroup].cursor() as cur:
                    if last is not None and hostgroup != last:
                        # The writes just moved: the new writer must hold every earlier one.
                        cur.execute("SELECT id FROM switchover.t")
                        have = {row[0] for row in cur.fetchall()}
                        self.missing_at_move |= set(self.acked) - have
                    cur.execute("INSERT INTO switchover.t VALUES (%s, %s)", (next_id, hostgroup))
                self.acked[next_id] = hostgroup
                next_id, last = next_id + 1, hostgroup
            except pymysql.err.MySQLError as error:
                if error.args[0] == 1290:  # ER_OPTION_PREVENTS_STATEMENT: read_only
                    self.refused += 1
                else:
                    self.errors.append(str(error))
                connections.pop(hostgroup, None)
                time.sleep(0.02)
            time.sleep(0.005)
        for conn in connections.values():
            conn.close()


@pytest.mark.slow
def test_switchover_under_load_loses_nothing(deployment: Deployment) -> None:
    """The generated switchover script moves lost's writes to the taker and back while an
    application keeps writing them: every acknowledged write reaches both clusters, and at
    each move the new writer already held every earlier one."""
    started = _started(deployment)
    config = started.config_dir
    _, lost, taker = _pair(config)
    script = config / f"switchover-{lost}-to-{taker}.sh"
    environment = _script_env(started, "switchover")
    db = _proxysql_admin(environment, config, lost)
    groups = dict(
        db.execute("SELECT comment, writer_hostgroup FROM mysql_galera_hostgroups").fetchall()
    )
    rule_ids = [
        r[0]
        for r in db.execute(
            "SELECT rule_id FROM mysql_query_rules WHERE destination_hostgroup = ?", (groups[lost],)
        ).fetchall()
    ]
    assert rule_ids, "no query rule routes the lost cluster's rows"
    _channels_running(started)
    clusters = started.clusters()
    source, target = clusters[lost][0], clusters[taker][0]
    source.execute(
        "CREATE DATABASE IF NOT EXISTS switchover",
        "CREATE TABLE switchover.t (id INT PRIMARY KEY, hostgroup INT NOT NULL)",
        f"CREATE USER IF NOT EXISTS switch_app@localhost IDENTIFIED BY '{SECRET}'",
        "GRANT INSERT, SELECT ON switchover.* TO switch_app@localhost",
    )
    wait_for(
        lambda: (
            target.query("SHOW TABLES FROM switchover LIKE 't'")
            if target.query("SHOW DATABASES LIKE 'switchover'")
            else None
        ),
        30,
        "the table reaches the taker",
    )
    wait_for(
        lambda: target.query("SELECT 1 FROM mysql.user WHERE user = 'switch_app'"),
        30,
        "the account reaches the taker",
    )
    writer = _Writer(
        environment.proxysql_db, rule_ids, {groups[lost]: source, groups[taker]: target}
    )
    writer.start()
    try:
        time.sleep(1.0)
        forward = run_script(script, environment)
        print(forward.stdout, forward.stderr)
        assert forward.returncode == 0, forward.stderr
        assert re.search(r"lag now 0 s", forward.stdout), forward.stdout
        time.sleep(1.0)
        back = run_script(script, environment, "back")
        print(back.stdout, back.stderr)
        assert back.returncode == 0, back.stderr
        time.sleep(1.0)
    finally:
        writer.stop_event.set()
        writer.join(timeout=30)
    assert not writer.errors, writer.errors[:5]
    by_writer = {
        hg: sum(1 for v in writer.acked.values() if v == hg) for hg in (groups[lost], groups[taker])
    }
    print(
        f"acknowledged {len(writer.acked)} writes {by_writer}, "
        f"{writer.refused} refused while read_only"
    )
    assert all(by_writer.values()), f"both clusters took writes: {by_writer}"
    assert not writer.missing_at_move, (
        f"moved before these reached the new writer: {sorted(writer.missing_at_move)[:20]}"
    )
    for server in (source, target):
        wait_for(
            lambda s=server: (
                {r[0] for r in s.query("SELECT id FROM switchover.t")} >= set(writer.acked)
            ),
            60,
            f"{server.host} holds every acknowledged write",
        )
    assert source.variable("read_only") == "OFF", "the lost cluster takes its writes again"


def _disable_heartbeat(server: Server) -> None:
    """Drop this node's own heartbeat event (kept out of replication, as the file made it), so
    that the only transactions of its domain are the test's."""
    events = server.query(
        "SELECT EVENT_NAME FROM information_schema.EVENTS WHERE EVENT_SCHEMA = 'advisor'"
    )
    with server.root_connection() as conn, conn.cursor() as cur:
        cur.execute("SET SESSION sql_log_bin = OFF")
        cur.execute("SET SESSION wsrep_on = OFF")
        for (name,) in events:
            cur.execute(f"DROP EVENT IF EXISTS advisor.`{name}`")


def _local(server: Server, *statements: str) -> None:
    """Statements on this node alone: neither Galera nor the binary log carries them."""
    with server.root_connection() as conn, conn.cursor() as cur:
        cur.execute("SET SESSION sql_log_bin = OFF")
        cur.execute("SET SESSION wsrep_on = OFF")
        for statement in statements:
            cur.execute(statement)


def _cut_link(source: Server, replica: Server, channel: str) -> None:
    """The channel's connection dropped and refused from now on: the replica's IO thread is
    left retrying (Connecting) with what it received, as when the network breaks."""
    _local(source, "ALTER USER repl ACCOUNT LOCK")
    for (thread,) in source.query(
        "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'"
    ):
        source.execute(f"KILL {thread}")
    wait_for(
        lambda: _channel_status(replica, channel).get("Slave_IO_Running") != "Yes",
        30,
        "the channel's connection drops",
    )


def _mend_link(source: Server) -> None:
    _local(source, "ALTER USER repl ACCOUNT UNLOCK")


def _position_stands_still(server: Server, domain: str) -> None:
    """Until the domain's position is the same 1.5 s apart (a heartbeat run lasts 1 s)."""
    last = [-1]

    def still() -> bool:
        now = _domain_seq(server, "gtid_binlog_pos", domain)
        same, last[0] = now == last[0], now
        return same

    wait_for(still, 30, f"{server.host} stops writing domain {domain}", interval_s=1.5)


def _domain_seq(server: Server, variable: str, domain: str) -> int:
    return _seq(server.variable(variable), domain)


BACKLOG = 200  # transactions received by the taker but not applied when the lost cluster dies
NEVER_CROSSED = 37  # transactions the lost cluster commits after its channel to the taker is cut


@pytest.mark.slow
def test_runbook_promotion_applies_the_backlog_and_the_return_keeps_what_never_crossed(
    designs: dict[str, Path], deployment: Deployment
) -> None:
    """A whole cluster is lost with a backlog in the taker's relay log and commits that never
    crossed. The promotion script applies every received transaction before it promotes; the
    survivor takes writes; the fencing file makes the returning node refuse writes; the return
    script counts and keeps aside exactly the commits that never crossed, rebuilds the returning
    cluster from the survivor and re-points both channels."""
    started = _started(deployment)
    config = started.config_dir
    promote, lost, taker = _pair(config)
    clusters = started.clusters()
    replica = started.server(_header_host(promote))
    assert replica.cluster == taker, (replica.host, taker)
    channel = next(c for r, c in _apply_async_sql(started) if r is replica and c.endswith(lost))
    _channels_running(started)
    old = clusters[lost][0]
    domain = old.settings["wsrep_gtid_domain_id"]
    for server in clusters[lost]:
        _disable_heartbeat(server)
    _position_stands_still(old, domain)  # a run of the event already started ends first
    # The lost cluster's last commit that crosses before the backlog (the RPO is about later ones).
    old.execute(
        "CREATE DATABASE IF NOT EXISTS before_loss",
        "CREATE TABLE before_loss.t (id INT PRIMARY KEY)",
        "INSERT INTO before_loss.t VALUES (1)",
        "CREATE TABLE before_loss.backlog (id INT PRIMARY KEY)",
        "CREATE TABLE before_loss.cut (id INT PRIMARY KEY)",
    )
    _marker_reaches(replica)
    wait_for(
        lambda: replica.query("SHOW TABLES FROM before_loss LIKE 'cut'"),
        30,
        "the tables reach the taker",
    )
    # A backlog: the taker receives but does not apply.
    replica.execute(f"STOP SLAVE '{channel}' SQL_THREAD")
    old.execute(*(f"INSERT INTO before_loss.backlog VALUES ({i})" for i in range(BACKLOG)))
    written = _domain_seq(old, "gtid_binlog_pos", domain)
    wait_for(
        lambda: _seq(_channel_status(replica, channel)["Gtid_IO_Pos"], domain) >= written,
        30,
        "the taker receives the backlog",
    )
    assert replica.query("SELECT COUNT(*) FROM before_loss.backlog")[0][0] == 0, "not applied yet"
    # The link is cut (the lost cluster no longer lets the channel in; its IO thread keeps
    # trying, as over a broken network): these commits never cross.
    _cut_link(old, replica, channel)
    old.execute(*(f"INSERT INTO before_loss.cut VALUES ({i})" for i in range(NEVER_CROSSED)))
    for server in clusters[lost]:
        kill(server)
    environment = _script_env(started, "failover")
    # A received transaction the SQL thread cannot apply (its row already there, on this node
    # alone): the promotion stops, promotes nothing and leaves the channel as it was.
    _local(replica, "INSERT INTO before_loss.backlog VALUES (0)")
    short = ScriptEnvironment({**environment.env, "WAIT_TIMEOUT_S": "3"}, environment.proxysql_db)
    stuck = run_script(promote, short)
    print(stuck.stdout, stuck.stderr)
    assert stuck.returncode == 1, stuck.stdout
    assert "NOT PROMOTED (step 1)" in stuck.stderr and "Duplicate entry" in stuck.stderr
    assert _channel_status(replica, channel)["Slave_IO_Running"] != "No", "left as it was"
    assert not replica.query(
        "SELECT 1 FROM information_schema.TABLES WHERE TABLE_NAME = 'failover_log'"
    ), "nothing recorded"
    # The error fixed, the same script runs again and applies every received transaction.
    _local(replica, "DELETE FROM before_loss.backlog WHERE id = 0")
    promoted = run_script(promote, environment)
    print(promoted.stdout, promoted.stderr)
    assert promoted.returncode == 0, promoted.stderr
    applied = re.search(r"applied from the relay log: (\d+) transaction", promoted.stdout)
    assert applied and int(applied.group(1)) == BACKLOG, promoted.stdout
    assert replica.query("SELECT COUNT(*) FROM before_loss.backlog")[0][0] == BACKLOG
    recorded = replica.query(
        "SELECT lost_cluster, taker_cluster, replica_pos FROM advisor.failover_log "
        "ORDER BY id DESC LIMIT 1"
    )[0]
    assert recorded[:2] == (lost, taker)
    assert _seq(str(recorded[2]), domain) == written, (recorded, written)
    # The survivor takes writes, on every node of its cluster.
    writer = clusters[taker][0]
    assert writer.variable("read_only") == "OFF"
    writer.execute(
        "CREATE DATABASE IF NOT EXISTS promoted",
        "CREATE TABLE promoted.t (id INT PRIMARY KEY)",
        "INSERT INTO promoted.t VALUES (1)",
    )
    for member in clusters[taker]:
        wait_for(
            lambda m=member: (
                m.query("SHOW DATABASES LIKE 'promoted'")
                and m.query("SELECT COUNT(*) FROM promoted.t")[0][0] == 1
                and m.query("SELECT COUNT(*) FROM before_loss.backlog")[0][0] == BACKLOG
            ),
            20,
            f"{member.host} sees the backlog and the survivor's write",
        )
    # The lost cluster comes back: the fencing file, first thing, makes it refuse writes.
    fence = _failover_files(config, "fence")[0]
    # A node killed alone leaves safe_to_bootstrap: 0; Codership's recovery procedure sets it
    # on the node with the last commit before bootstrapping (Galera docs, Crash Recovery).
    grastate = old.datadir / "grastate.dat"
    grastate.write_text(
        grastate.read_text().replace("safe_to_bootstrap: 0", "safe_to_bootstrap: 1")
    )
    start(old, bootstrap=True)
    _client(old, fence, started.path_map)
    _mend_link(old)  # the account locked to cut the link (the test's, not the design's)
    assert old.variable("read_only") == "ON"
    assert _domain_seq(old, "gtid_binlog_pos", domain) == written + NEVER_CROSSED
    # The application's account, on this node alone: the test's, not a commit of the scenario.
    _local(
        old,
        f"CREATE USER app@localhost IDENTIFIED BY '{SECRET}'",
        "GRANT ALL ON before_loss.* TO app@localhost",
    )
    import pymysql

    with (
        pymysql.connect(
            unix_socket=str(old.socket), user="app", password=SECRET, autocommit=True
        ) as conn,
        conn.cursor() as cur,
        pytest.raises(pymysql.err.OperationalError) as refused,
    ):
        cur.execute("INSERT INTO before_loss.t VALUES (2)")
    assert refused.value.args[0] == 1290, refused.value  # ER_OPTION_PREVENTS_STATEMENT
    # The return: the commits that never crossed, counted and kept aside, then the rebuild.
    back = _failover_files(config, "return")
    returned = run_script(back[0], environment, timeout_s=240)
    print(returned.stdout, returned.stderr)
    assert returned.returncode == 0, returned.stderr
    counted = re.search(r"(\d+) transaction\(s\) never crossed", returned.stdout)
    assert counted and int(counted.group(1)) == NEVER_CROSSED, returned.stdout
    kept = re.search(r"kept aside: (\S+) \((\d+) transaction", returned.stdout)
    assert kept and int(kept.group(2)) == NEVER_CROSSED, returned.stdout
    dump = Path(kept.group(1)).read_text()
    assert len(re.findall(rf"GTID {domain}-\d+-\d+", dump)) == NEVER_CROSSED
    assert "`cut`" in dump, dump[:2000]  # the table map of the rows that never crossed
    # Rebuilt from the survivor: the backlog and the survivor's write, not what never crossed.
    assert old.query("SELECT COUNT(*) FROM before_loss.backlog")[0][0] == BACKLOG
    assert old.query("SELECT COUNT(*) FROM before_loss.cut")[0][0] == 0
    assert old.query("SELECT COUNT(*) FROM promoted.t")[0][0] == 1
    # Both channels run again: a write on either side reaches the other.
    writer.execute("INSERT INTO promoted.t VALUES (2)")
    wait_for(
        lambda: old.query("SELECT COUNT(*) FROM promoted.t")[0][0] == 2, 30, "taker -> returned"
    )
    old.execute("INSERT INTO before_loss.t VALUES (3)")  # root passes read_only
    wait_for(
        lambda: replica.query("SELECT COUNT(*) FROM before_loss.t WHERE id = 3")[0][0] == 1,
        60,
        "returned -> taker over the re-pointed channel",
    )
