"""Disaster-recovery regions (issue 22, part 4): ``writes: false`` sites run read_only and sit
in ProxySQL's reader hostgroups only; a design with a disaster-recovery cluster gets the
runbook for losing the primary region, with the RPO of the JSON.

The design is tests/data/designs/dr-region: three availability zones at Frankfurt that take
the writes, one Galera cluster across them, and a cluster at Dublin (``writes: false``) fed by
an asynchronous channel. The generated ProxySQL SQL runs against ProxySQL's admin schema in
SQLite (tests/data/proxysql_admin_schema.sql, as tests/integration does); the read_only the
generated configuration sets is applied to a real MariaDB Galera node where this machine has
one (skipped otherwise).
"""

from __future__ import annotations

import math
import re
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest

from advisor.analysis import Analysis, analyse
from advisor.config.plan import ConfigPlan, Setting, plan_configuration
from advisor.documents.filters import ms
from advisor.documents.render import render_documents
from advisor.inputs.loading import parse_topology
from advisor.recommendation import build_recommendation

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
DR = DATA / "designs" / "dr-region" / "topology.yaml"
DR_HOSTS = {"dublin-dr-db1", "dublin-dr-db2"}
PRIMARY_HOSTS = {"fra-az1-db1", "fra-az2-db1", "fra-az3-db1"}
REGIONAL = "## Runbook: losing the primary region"


def settings(items: list[Setting]) -> dict[str, object]:
    return {s.name: s.value for s in items}


def cnf(text: str) -> dict[str, str]:
    """The ``name = value`` lines of a generated option file."""
    found = {}
    for line in text.splitlines():
        match = re.match(r"^([a-z_]+)\s*=\s*(.*)$", line)
        if match:
            found[match.group(1)] = match.group(2).strip().strip('"')
    return found


def sql_statements(text: str) -> list[str]:
    """Statements of SQL text, ``--`` comment lines dropped, split on ``;`` at line end."""
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in re.split(r";\s*$", body, flags=re.M) if s.strip()]


def admin_db(*scripts: str) -> sqlite3.Connection:
    """ProxySQL's admin schema in SQLite with ``scripts`` applied (admin commands skipped)."""
    db = sqlite3.connect(":memory:")
    db.executescript((DATA / "proxysql_admin_schema.sql").read_text())
    for script in scripts:
        for statement in sql_statements(script):
            if not re.match(r"(LOAD|SAVE)\b", statement):
                db.execute(statement)
    return db


def section(design: str, title: str) -> str:
    start = design.index(title)
    end = design.find("\n## ", start + len(title))
    return design[start : end if end > 0 else len(design)]


def sql_block(text: str, label: str) -> str:
    """The fenced SQL block whose first line is ``-- <label>``, unindented."""
    match = re.search(r"```sql\n(\s*)-- " + re.escape(label) + r"\n(.*?)\n\s*```", text, re.S)
    assert match, f"no SQL block '{label}'"
    return textwrap.dedent(match.group(1) + "-- x\n" + match.group(2))


@pytest.fixture(scope="module")
def dr_analysis() -> Analysis:
    return analyse(DR)


@pytest.fixture(scope="module")
def dr_plan(dr_analysis: Analysis) -> ConfigPlan:
    return plan_configuration(dr_analysis)


@pytest.fixture(scope="module")
def dr_files(dr_analysis: Analysis) -> dict[str, str]:
    return render_documents(dr_analysis, ["md"])


def _topology(flavor: str = "mariadb", extra: str = "") -> Analysis:
    text = DR.read_text().replace("flavor: mariadb", f"flavor: {flavor}") + extra
    return analyse(parse_topology(text))


# -- read_only in the configuration -----------------------------------------------------------


def test_dr_nodes_alone_are_read_only_in_the_generated_cnf(
    dr_plan: ConfigPlan, dr_files: dict[str, str]
) -> None:
    assert dr_plan.architecture == "grouped_clusters"
    assert [(c.name, c.read_only) for c in dr_plan.clusters] == [
        ("fra-az1_fra-az2_fra-az3", False),
        ("dublin-dr", True),
    ]
    galera_files = {n: cnf(t) for n, t in dr_files.items() if n.startswith("config/galera-")}
    assert sorted(galera_files) == [
        "config/galera-dublin-dr.cnf",
        "config/galera-fra-az1_fra-az2_fra-az3.fra-az1.cnf",
        "config/galera-fra-az1_fra-az2_fra-az3.fra-az2.cnf",
        "config/galera-fra-az1_fra-az2_fra-az3.fra-az3.cnf",
    ]
    read_only = {n for n, values in galera_files.items() if values.get("read_only") == "ON"}
    assert read_only == {"config/galera-dublin-dr.cnf"}
    # MariaDB has no super_read_only; innodb_read_only would stop the appliers: never set.
    every = "\n".join(t for n, t in dr_files.items() if n.startswith("config/"))
    assert "super_read_only =" not in every
    assert "innodb_read_only =" not in every
    assert "innodb_read_only" in dr_files["config/galera-dublin-dr.cnf"]  # the comment says why


@pytest.mark.parametrize(
    ("flavor", "expected"),
    [
        ("mariadb", {"read_only": "ON"}),
        ("pxc", {"read_only": "ON", "super_read_only": "ON"}),
        ("codership", {"read_only": "ON"}),
    ],
)
def test_read_only_settings_per_flavor(flavor: str, expected: dict[str, str]) -> None:
    plan = plan_configuration(_topology(flavor), "grouped_clusters")
    dr_site = plan.clusters[1].site_plans[0]
    assert {k: v for k, v in settings(dr_site.server).items() if "read_only" in k} == expected
    for site in plan.clusters[0].site_plans:
        assert not any("read_only" in s.name for s in site.server)


def test_inside_a_writing_cluster_read_only_only_while_two_writable_nodes_remain() -> None:
    # single_cluster puts Dublin in the Frankfurt cluster: three writable nodes there.
    plan = plan_configuration(_topology(), "single_cluster")
    (cluster,) = plan.clusters
    by_site = {s.site: s for s in cluster.site_plans}
    assert settings(by_site["dublin-dr"].server)["read_only"] == "ON"
    reason = next(s.reason for s in by_site["dublin-dr"].server if s.name == "read_only")
    assert "one database" in reason and "replication still applies" in reason
    assert not cluster.read_only
    hostgroup = {
        values["hostname"]: values["hostgroup_id"]
        for values in ({c.name: c.value for c in row.columns} for row in plan.proxysql.servers)
    }
    assert {h: hostgroup[h] for h in DR_HOSTS} == dict.fromkeys(DR_HOSTS, 12)  # reader
    assert {h: hostgroup[h] for h in PRIMARY_HOSTS} == dict.fromkeys(PRIMARY_HOSTS, 10)
    # One writable node: once it is lost the cluster keeps quorum through Dublin's nodes,
    # which must then take the writes: no read_only, and the file says why.
    text = textwrap.dedent(
        """
        name: lone
        sites:
          - {name: a, nodes: 1}
          - {name: b, nodes: 2, writes: false}
        links: [{sites: [a, b], measurements: [{method: icmp, samples_ms: [2, 2]}]}]
        """
    )
    lone = plan_configuration(analyse(parse_topology(text)), "single_cluster")
    site_b = lone.clusters[0].site_plans[1]
    assert "read_only" not in settings(site_b.server)
    assert site_b.notes and "1 node(s) at its writing sites" in site_b.notes[0]


# -- ProxySQL: readers only -------------------------------------------------------------------


def test_proxysql_puts_dr_nodes_in_reader_hostgroups_only(dr_files: dict[str, str]) -> None:
    db = admin_db(dr_files["config/proxysql.sql"])
    in_writers = db.execute(
        "SELECT DISTINCT s.hostname FROM mysql_servers s JOIN mysql_galera_hostgroups g "
        "ON s.hostgroup_id IN (g.writer_hostgroup, g.backup_writer_hostgroup)"
    ).fetchall()
    assert {h for (h,) in in_writers} == PRIMARY_HOSTS  # no DR host among writers
    readers = db.execute(
        "SELECT s.hostname, g.comment FROM mysql_servers s JOIN mysql_galera_hostgroups g "
        "ON s.hostgroup_id = g.reader_hostgroup"
    ).fetchall()
    assert set(readers) == {(h, "dublin-dr") for h in DR_HOSTS}
    # The DR cluster keeps its managed hostgroups (the monitor watches the reader hostgroup).
    assert db.execute(
        "SELECT writer_hostgroup, reader_hostgroup, active FROM mysql_galera_hostgroups "
        "WHERE comment = 'dublin-dr'"
    ).fetchall() == [(20, 22, 1)]
    # The applications write to the primary cluster's writer only.
    assert db.execute("SELECT default_hostgroup FROM mysql_users").fetchall() == [(10,)]


# -- the regional runbook ---------------------------------------------------------------------


def test_regional_runbook_carries_the_rpo_of_the_json(
    dr_analysis: Analysis, dr_plan: ConfigPlan, dr_files: dict[str, str]
) -> None:
    report = build_recommendation(dr_analysis)
    chosen = next(o for o in report.options if o.architecture == report.architecture)
    assert chosen.data_at_risk_s is not None and not chosen.data_at_risk_unbounded
    (regional,) = dr_plan.regional_failovers
    # The one channel into Dublin is the option's one asynchronous link: its p99 lag is the
    # JSON's data at risk, and the runbook's RPO.
    (link,) = dr_plan.async_links
    assert regional.rpo_ms == link.lag_p99_ms
    assert math.isclose(regional.rpo_ms / 1000.0, chosen.data_at_risk_s, abs_tol=1e-6)
    text = section(dr_files["design.md"], REGIONAL)
    rpo_row = next(line for line in text.splitlines() if line.startswith("| Recovery point"))
    assert f"up to {ms(chosen.data_at_risk_s * 1000.0)} of the last commits" in rpo_row
    assert "from_fra-az1_fra-az2_fra-az3" in rpo_row
    rto_row = next(line for line in text.splitlines() if line.startswith("| Recovery time"))
    assert "no number" in rto_row and "a person's" in rto_row
    assert f"{dr_plan.detection_s:.1f} s" in rto_row
    steps = re.findall(r"^\d\. \*\*([^*]+)\*\*", text, re.M)
    assert steps == [
        "Detection.",
        "Decision and fencing.",
        "Drain.",
        "Promotion.",
        "Repoint ProxySQL.",
        "Return",
    ]
    # The drain waits for what the relay log received and stops with a message on a timeout.
    assert "Gtid_IO_Pos" in text and "MASTER_GTID_WAIT('$received', 600)" in text
    assert "timed out after 600 s" in text and "exit 1" in text
    assert "SET GLOBAL read_only = OFF;" in text  # the promotion


def test_regional_runbook_proxysql_moves_the_writes_and_back(dr_files: dict[str, str]) -> None:
    design = section(dr_files["design.md"], REGIONAL)
    proxysql = dr_files["config/proxysql.sql"]
    fence = sql_block(design, "ProxySQL admin: fence the primary region")
    repoint = sql_block(design, "ProxySQL admin: move the writes to the disaster-recovery cluster")
    back = sql_block(design, "ProxySQL admin: the writes go back to the primary region")
    db = admin_db(proxysql, fence, repoint)
    status = dict(db.execute("SELECT hostname, status FROM mysql_servers").fetchall())
    assert {h: status[h] for h in PRIMARY_HOSTS} == dict.fromkeys(PRIMARY_HOSTS, "OFFLINE_HARD")
    assert {h: status[h] for h in DR_HOSTS} == dict.fromkeys(DR_HOSTS, "ONLINE")
    assert db.execute(
        "SELECT writer_hostgroup, active FROM mysql_galera_hostgroups ORDER BY 1"
    ).fetchall() == [(10, 0), (20, 1)]
    assert db.execute("SELECT default_hostgroup FROM mysql_users").fetchall() == [(20,)]
    db = admin_db(proxysql, fence, repoint, back)
    assert db.execute("SELECT default_hostgroup FROM mysql_users").fetchall() == [(10,)]
    assert db.execute("SELECT DISTINCT status FROM mysql_servers").fetchall() == [("ONLINE",)]
    assert db.execute("SELECT MIN(active) FROM mysql_galera_hostgroups").fetchall() == [(1,)]


def test_an_unbounded_channel_gives_no_rpo_number() -> None:
    # 2,000,000 bytes/s of replication over 10 Mbit/s: the channel's lag grows as long as
    # the peak lasts (FORMAT.md: data_at_risk_unbounded).
    text = (
        DR.read_text()
        .replace(
            "  - sites: [fra-az1, dublin-dr]\n",
            "  - sites: [fra-az1, dublin-dr]\n    bandwidth_mbps: 10\n",
        )
        .replace(
            "workload:\n", "workload:\n  replicated_bytes_per_s: {avg: 1000000, peak: 2000000}\n"
        )
    )
    analysis = analyse(parse_topology(text))
    report = build_recommendation(analysis)
    grouped = next(o for o in report.options if o.architecture == "grouped_clusters")
    assert grouped.data_at_risk_unbounded and grouped.data_at_risk_s is None
    (regional,) = plan_configuration(analysis, "grouped_clusters").regional_failovers
    assert regional.rpo_ms is None
    assert regional.rpo_note.startswith("unbounded: channel from_")


def test_a_single_failure_onto_a_dr_cluster_lifts_read_only_in_the_promotion() -> None:
    # One primary site: losing it is a single failure, which the model fails over to Dublin.
    text = textwrap.dedent(
        """
        name: one-site
        requirements: {survive: site, commit_latency_ms: {p99: 10}}
        sites:
          - {name: fra, nodes: 3}
          - {name: dub, nodes: 2, writes: false}
        links: [{sites: [fra, dub], measurements: [{method: icmp, samples_ms: [24, 25]}]}]
        workload: {commits_per_s: {avg: 100, peak: 300}}
        galera: {flavor: FLAVOR}
        """
    )
    for flavor, lift in (
        ("mariadb", 'sql "dub-db1" "SET GLOBAL read_only = OFF"'),
        ("pxc", 'sql "dub-db1" "SET GLOBAL super_read_only = OFF; SET GLOBAL read_only = OFF"'),
    ):
        analysis = analyse(parse_topology(text.replace("FLAVOR", flavor)))
        plan = plan_configuration(analysis, "per_site_clusters")
        (failover,) = plan.failovers
        assert (failover.lost, failover.taker, failover.taker_read_only) == ("fra", "dub", True)
        assert failover.taker_hosts == ["dub-db1", "dub-db2"]
        (regional,) = plan.regional_failovers
        assert regional.single_failure_files == [failover.promote_file]
        assert analysis.chosen.architecture == "per_site_clusters"
        files = render_documents(analysis, ["md"])
        # The promotion is a shell script: read_only is lifted on every DR node, the writer
        # first, after the drain and the record (steps 1 to 3), before step 4.
        promote = files[failover.promote_file]
        step4 = promote.index("# 4. The survivor takes writes")
        lifted = promote[promote.index("# 3.") : step4]
        assert lift in lifted, flavor
        assert lifted.index('"dub-db1"') < lifted.index('"dub-db2"')
        assert "read_only = OFF" not in promote[: promote.index("# 3.")]


def test_no_regional_runbook_without_a_dr_cluster() -> None:
    plan = plan_configuration(analyse(REPO / "examples" / "paris-frankfurt" / "topology.yaml"))
    assert plan.regional_failovers == []
    assert not any(c.read_only for c in plan.clusters)


# -- a real read_only node --------------------------------------------------------------------


@pytest.mark.slow
def test_a_read_only_galera_node_refuses_writes_and_still_applies(
    dr_files: dict[str, str],
) -> None:
    """The generated read_only on a real two-node MariaDB Galera cluster (about 10 s): an
    application account's write is refused with ERROR 1290, the peer's DDL and rows still
    arrive, and an account with READ_ONLY ADMIN (root) can still write, as the reason says."""
    sys.path.insert(0, str(REPO / "tests" / "integration"))
    try:
        from galera_cluster import galera_cluster, missing_requirements
    finally:
        sys.path.pop(0)
    if missing_requirements():
        pytest.skip("no local MariaDB Galera: " + ", ".join(missing_requirements()))
    import pymysql

    generated = cnf(dr_files["config/galera-dublin-dr.cnf"])
    assert generated["read_only"] == "ON"
    with galera_cluster(2) as cluster:
        primary, dr = cluster.nodes
        cluster.execute(dr, f"SET GLOBAL read_only = {generated['read_only']}")
        cluster.execute(
            primary,
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY)",
            "INSERT INTO app.t VALUES (1)",
            "CREATE USER app@'%' IDENTIFIED BY 'app'",
            "GRANT ALL ON app.* TO app@'%'",
        )
        root = dr.root_connection()
        with root.cursor() as cur:
            for _ in range(50):
                cur.execute("SELECT COUNT(*) FROM app.t")
                if cur.fetchone() == (1,):
                    break
                root.commit()
                cur.execute("DO SLEEP(0.1)")
            else:
                pytest.fail("the read_only node did not apply its peer's write set")
            cur.execute("SELECT @@read_only")
            assert cur.fetchone() == (1,)
        app = pymysql.connect(host="127.0.0.1", port=dr.port, user="app", password="app")
        with app.cursor() as cur, pytest.raises(pymysql.err.OperationalError) as refused:
            cur.execute("INSERT INTO app.t VALUES (2)")
        assert refused.value.args[0] == 1290
        with root.cursor() as cur:
            cur.execute("INSERT INTO app.t VALUES (3)")  # READ_ONLY ADMIN writes
            root.commit()


def _drain_script(design: str, channel: str) -> str:
    text = section(design, REGIONAL)
    start = text.index(f"channel `{channel}` (from")
    match = re.search(r"```sh\n(.*?)\n\s*```", text[start:], re.S)
    assert match, "no drain script"
    return textwrap.dedent(match.group(1))


@pytest.mark.slow
def test_the_regional_drain_applies_every_received_transaction_and_stops_on_a_timeout(
    dr_plan: ConfigPlan, dr_files: dict[str, str], tmp_path: Path
) -> None:
    """The drain of step 3 as generated, run by bash with the mariadb client against a real
    replica that runs read_only as generated (two single-node MariaDB Galera clusters, about
    15 s): with the channel's applier stopped and 300 received transactions waiting in the
    relay log, the drain applies all of them and reports the source's position; with the
    applier blocked, it stops with its message and exit code 1 at the timeout (600 s cut to
    2 s here); then step 4's promotion lets the application's account write, refused before
    with ERROR 1290."""
    import os
    import subprocess

    import pymysql

    sys.path.insert(0, str(REPO / "tests" / "integration"))
    try:
        from galera_cluster import galera_cluster, missing_requirements
    finally:
        sys.path.pop(0)
    if missing_requirements():
        pytest.skip("no local MariaDB Galera: " + ", ".join(missing_requirements()))
    (channel,) = dr_plan.regional_failovers[0].channels
    script = _drain_script(dr_files["design.md"], channel.name)
    name = channel.name

    with galera_cluster(1, log_bin=(True,)) as primary, galera_cluster(1) as dr:
        (src,), (replica,) = primary.nodes, dr.nodes
        primary.execute(
            src,
            "CREATE USER repl@'127.0.0.1' IDENTIFIED BY 'repl'",
            "GRANT REPLICATION SLAVE ON *.* TO repl@'127.0.0.1'",
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY)",
            "CREATE USER app@'127.0.0.1' IDENTIFIED BY 'app'",
            "GRANT ALL ON app.* TO app@'127.0.0.1'",
        )
        generated = cnf(dr_files["config/galera-dublin-dr.cnf"])
        dr.execute(
            replica,
            f"SET GLOBAL read_only = {generated['read_only']}",  # as the DR node runs
            "SET GLOBAL server_id = 2",  # both test clusters start with server_id 1
            f"CHANGE MASTER '{name}' TO MASTER_HOST='127.0.0.1', MASTER_PORT={src.port}, "
            "MASTER_USER='repl', MASTER_PASSWORD='repl', MASTER_USE_GTID=slave_pos",
            f"START SLAVE '{name}'",
        )

        def one(node: object, query: str) -> object:
            with node.root_connection() as conn, conn.cursor() as cur:  # type: ignore[attr-defined]
                cur.execute(query)
                return cur.fetchone()[0]

        def wait_received() -> str:
            target = one(src, "SELECT @@GLOBAL.gtid_binlog_pos")
            for _ in range(200):
                with replica.root_connection() as conn, conn.cursor() as cur:
                    cur.execute(f"SHOW SLAVE '{name}' STATUS")
                    row = dict(zip([d[0] for d in cur.description], cur.fetchone(), strict=True))
                if row["Gtid_IO_Pos"] == target:
                    return str(target)
                subprocess.run(["sleep", "0.1"], check=True)
            pytest.fail(f"the replica never received {target}")

        # `mariadb` on the replica node, as on the host the runbook names.
        client = tmp_path / "mariadb"
        client.write_text(f'#!/bin/sh\nexec /usr/bin/mariadb --socket={replica.socket} "$@"\n')
        client.chmod(0o755)

        def run_drain(text: str) -> subprocess.CompletedProcess[str]:
            env = {**os.environ, "PATH": f"{tmp_path}:{os.environ.get('PATH', '')}"}
            return subprocess.run(
                ["bash", "-c", text], env=env, capture_output=True, text=True, timeout=60
            )

        # A backlog: the applier stopped while 300 transactions arrive.
        one(replica, f"SELECT MASTER_GTID_WAIT('{one(src, 'SELECT @@gtid_binlog_pos')}', 30)")
        dr.execute(replica, f"STOP SLAVE '{name}' SQL_THREAD")
        primary.execute(src, *(f"INSERT INTO app.t VALUES ({i})" for i in range(300)))
        received = wait_received()
        assert one(replica, "SELECT COUNT(*) FROM app.t") == 0
        done = run_drain(script)
        assert done.returncode == 0, done.stderr
        assert one(replica, "SELECT COUNT(*) FROM app.t") == 300
        assert received in done.stdout  # the applied position it prints is the source's
        assert one(replica, "SELECT @@GLOBAL.gtid_slave_pos") == received

        # The applier blocked by a lock: the drain stops with its message, exit code 1.
        dr.execute(replica, f"START SLAVE '{name}'")
        with replica.root_connection() as holder, holder.cursor() as cur:
            cur.execute("LOCK TABLES app.t WRITE")
            primary.execute(src, "INSERT INTO app.t VALUES (1000)")
            wait_received()
            stopped = run_drain(script.replace(", 600)", ", 2)"))
            cur.execute("UNLOCK TABLES")
        assert stopped.returncode == 1
        assert f"drain of {name} timed out" in stopped.stdout
        assert "do not promote" in stopped.stdout

        # Step 4's promotion: the application's account could not write, now it can.
        def app_insert(value: int) -> None:
            app = pymysql.connect(host="127.0.0.1", port=replica.port, user="app", password="app")
            with app, app.cursor() as cur:
                cur.execute(f"INSERT INTO app.t VALUES ({value})")
                app.commit()

        with pytest.raises(pymysql.err.OperationalError) as refused:
            app_insert(2000)
        assert refused.value.args[0] == 1290
        promotion = section(dr_files["design.md"], REGIONAL).split("4. **Promotion.**")[1]
        lift = re.search(r"`(SET GLOBAL read_only = OFF;)`", promotion)
        assert lift, "no promotion statement"
        dr.execute(replica, lift.group(1).rstrip(";"))
        app_insert(2000)


def test_the_read_only_dr_cluster_runs_no_heartbeat(dr_plan: ConfigPlan) -> None:
    # It takes no writes, so it has nothing to measure, and super_read_only (MySQL/PXC) would
    # refuse the event's rows: only the writing clusters run the heartbeat.
    (dr,) = [c for c in dr_plan.clusters if c.read_only]
    assert dr_plan.heartbeat is not None
    beating = {f.cluster for f in dr_plan.heartbeat.files}
    assert dr.name not in beating and beating
    assert not any(h in DR_HOSTS for f in dr_plan.heartbeat.files for h in f.hosts)


def test_returning_or_switching_back_leaves_read_only_by_design_nodes_read_only() -> None:
    # A lost cluster with read-only-by-design nodes (its `writes: false` site): the switchover
    # back, the return script and the runbook make only its other nodes writable again.
    analysis = analyse(REPO / "examples" / "paris-frankfurt" / "topology.yaml")
    plan = plan_configuration(analysis)
    failover = plan.failovers[0]
    assert failover.lost_read_only_hosts == []  # no writes: false site in paris-frankfurt
    kept = failover.lost_hosts[-1]
    mixed = failover.model_copy(update={"lost_read_only_hosts": [kept]})
    from advisor.documents.environment import make_environment, render_template

    env = make_environment(None)
    context = {"plan": plan, "topology": analysis.topology, "f": mixed}
    switchover = render_template(env, "config/switchover.sh.j2", context)
    writable = " ".join(h for h in failover.lost_hosts if h != kept)
    assert f"LOST_WRITABLE_HOSTS='{writable}'" in switchover
    assert "set_read_only OFF $LOST_HOSTS" not in switchover
    reconcile = render_template(env, "config/failover-reconcile.sh.j2", context)
    assert f"but {kept}" in reconcile
