"""The design as shipped: complete per-node configuration, TLS, raise-only sysctl, and the
failover runbook matching the files (hostgroups, channels, hosts, the model's RPO and RTO)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from advisor.analysis import analyse
from advisor.config.galera import PROVIDER_PATHS
from advisor.config.plan import ConfigPlan, Setting, plan_configuration
from advisor.documents.render import render_documents
from advisor.inputs.loading import parse_topology
from advisor.units import ms_text

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.name for p in (REPO / "examples").iterdir() if (p / "topology.yaml").exists())

TWO_SITES = """
name: t
sites: [{name: a, nodes: 3}, {name: b, nodes: 3}]
links:
  - {sites: [a, b], bandwidth_mbps: 1000, measurements: [{method: icmp, samples_ms: [80, 80]}]}
workload:
  commits_per_s: {avg: 100, peak: 400}
  replicated_bytes_per_s: {avg: 2500000, peak: 5000000}
  dataset_bytes: 100000000000
galera: {flavor: FLAVOR}
"""


def settings(items: list[Setting]) -> dict[str, object]:
    return {s.name: s.value for s in items}


def two_sites(flavor: str = "mariadb") -> ConfigPlan:
    return plan_configuration(
        analyse(parse_topology(TWO_SITES.replace("FLAVOR", flavor))), "per_site_clusters"
    )


@pytest.fixture(scope="module")
def documents() -> dict[str, tuple[ConfigPlan, dict[str, str]]]:
    out = {}
    for name in EXAMPLES:
        analysis = analyse(REPO / "examples" / name / "topology.yaml")
        rendered = render_documents(analysis, ("md",))
        out[name] = (plan_configuration(analysis), rendered)
    return out


@pytest.mark.parametrize("flavor", ["mariadb", "pxc", "codership"])
def test_every_galera_file_names_the_provider_of_its_flavour(flavor: str) -> None:
    plan = two_sites(flavor)
    expected = {
        "mariadb": "/usr/lib/galera/libgalera_smm.so",
        "pxc": "/usr/lib/galera4/libgalera_smm.so",
        "codership": "/usr/lib/galera/libgalera_smm.so",
    }[flavor]
    assert PROVIDER_PATHS[flavor] == expected
    for cluster in plan.clusters:
        server = settings(cluster.server)
        assert server["wsrep_provider"] == expected
        assert server["wsrep_sst_method"] == (
            "mariabackup" if flavor == "mariadb" else "xtrabackup-v2"
        )
        threads = "wsrep_slave_threads" if flavor == "mariadb" else "wsrep_applier_threads"
        # 400 commits/s x 1 ms = 0.4 applying at once, doubled: 0.8, so the floor of 4.
        assert server[threads] == 4


def test_rendered_galera_files_set_the_provider(
    documents: dict[str, tuple[ConfigPlan, dict[str, str]]],
) -> None:
    for name, (plan, files) in documents.items():
        for cluster in plan.clusters:
            for site in cluster.site_plans:
                text = files[site.file]
                assert f"wsrep_provider = {PROVIDER_PATHS[plan.flavor]}\n" in text, name


def test_gcache_holds_an_hour_at_the_average_rate_and_says_how_long() -> None:
    cluster = two_sites().clusters[0]
    gcache = next(s for s in cluster.provider_options if s.name == "gcache.size")
    # 2,500,000 bytes/s x 3600 s = 9.0e9 bytes = 8.38 GiB -> 9 GiB; 9 GiB / 2.5e6 / 3600 = 1.07 h,
    # at the 5e6 peak 0.54 h.
    assert gcache.value == "9G"
    assert "about 1.1 h at the average rate and 0.5 h at the peak" in gcache.reason


def test_gcache_never_beyond_the_dataset() -> None:
    text = TWO_SITES.replace("FLAVOR", "mariadb").replace("100000000000", "4000000000")
    plan = plan_configuration(analyse(parse_topology(text)), "per_site_clusters")
    gcache = next(s for s in plan.clusters[0].provider_options if s.name == "gcache.size")
    # An hour is 9e9 bytes, more than the 4e9-byte dataset: a full copy is cheaper beyond it,
    # so 4e9 rounded up to whole GiB: 4 GiB (4.29e9), 0.48 h at the average rate.
    assert gcache.value == "4G"
    assert "capped near the dataset" in gcache.reason and "about 0.5 h" in gcache.reason


def test_tls_files_are_the_ones_the_certificates_script_makes() -> None:
    plan = two_sites()
    certs = plan.certificates
    for cluster in plan.clusters:
        server = settings(cluster.server)
        options = settings(cluster.provider_options)
        assert server["ssl_ca"] == options["socket.ssl_ca"] == certs.ca_cert
        assert server["ssl_cert"] == options["socket.ssl_cert"] == certs.server_cert
        assert server["ssl_key"] == options["socket.ssl_key"] == certs.server_key
    assert {certs.ca_cert, certs.server_cert, certs.server_key} == {
        f"{certs.ssl_dir}/{n}" for n in ("ca-cert.pem", "server-cert.pem", "server-key.pem")
    }
    channel_hosts = {
        h for a in plan.async_links for c in a.channels for h in (c.source_host, c.replica_host)
    }
    assert channel_hosts <= set(certs.hosts)
    pxc = two_sites("pxc")
    assert "socket.ssl_key" not in settings(pxc.clusters[0].provider_options)
    assert settings(pxc.clusters[0].server)["pxc-encrypt-cluster-traffic"] == "ON"


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_certificates_script_makes_verifiable_files_for_names_and_addresses(tmp_path: Path) -> None:
    script = render_documents(analyse(parse_topology(TWO_SITES.replace("FLAVOR", "mariadb"))), ())[
        "config/make-certificates.sh"
    ]
    script = re.sub(r'^HOSTS=".*"$', 'HOSTS="a-db1 127.0.0.1"', script, flags=re.M)
    (tmp_path / "make.sh").write_text(script)
    subprocess.run(["sh", "make.sh", "out"], cwd=tmp_path, check=True, capture_output=True)
    for host, san in (("a-db1", "DNS:a-db1"), ("127.0.0.1", "IP Address:127.0.0.1")):
        folder = tmp_path / "out" / host
        assert sorted(p.name for p in folder.iterdir()) == [
            "ca-cert.pem",
            "server-cert.pem",
            "server-key.pem",
        ]
        verify = subprocess.run(
            ["openssl", "verify", "-CAfile", "ca-cert.pem", "server-cert.pem"],
            cwd=folder,
            capture_output=True,
            text=True,
            check=True,
        )
        assert verify.stdout.strip() == "server-cert.pem: OK"
        text = subprocess.run(
            ["openssl", "x509", "-in", "server-cert.pem", "-noout", "-ext", "subjectAltName"],
            cwd=folder,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert san in text


def test_require_ssl_only_with_certificates(
    documents: dict[str, tuple[ConfigPlan, dict[str, str]]],
) -> None:
    for name, (plan, files) in documents.items():
        for link in plan.async_links:
            text = files[link.file]
            assert "REQUIRE SSL" in text
            assert f"_SSL_CA = '{plan.certificates.ca_cert}'" in text, name
        for cluster in plan.clusters:
            assert {"ssl_ca", "ssl_cert", "ssl_key"} <= set(settings(cluster.server)), name


def test_channel_nodes_are_never_the_proxysql_writer(
    documents: dict[str, tuple[ConfigPlan, dict[str, str]]],
) -> None:
    for name, (plan, _) in documents.items():
        writers = {c.name: c.writer_host for c in plan.clusters}
        weights = {}
        for row in plan.proxysql.servers:
            values = settings(row.columns)
            weights[values["hostname"]] = values["weight"]
        for link in plan.async_links:
            for channel in link.channels:
                assert channel.source_host != writers[channel.source_cluster], name
                assert channel.replica_host != writers[channel.replica_cluster], name
                for host in (channel.source_host, channel.replica_host):
                    assert weights[host] == min(weights.values()), (name, host)


def test_wan_timeouts_only_where_a_tail_finding_asks(
    documents: dict[str, tuple[ConfigPlan, dict[str, str]]],
) -> None:
    asked = 0
    for name, (plan, _) in documents.items():
        analysis = analyse(REPO / "examples" / name / "topology.yaml")
        tails = {
            f.subject
            for f in analysis.findings
            if f.rule == "RTT-TAIL-INSTABILITY" and f.option == plan.architecture
        }
        for cluster in plan.clusters:
            inside = {f"{a}-{b}" for a in cluster.sites for b in cluster.sites if a != b} & tails
            options = settings(cluster.provider_options)
            assert ("evs.suspect_timeout" in options) == bool(inside), (name, cluster.name)
            asked += bool(inside)
    # amsterdam-metro's ams-1-ams-2 tail (max 4.5 ms, 9x its median) reaches no timer, nor
    # does any example's: a dead node still stalls commits for PT5S, not PT30S.
    assert asked == 0


def test_sysctl_script_raises_and_never_lowers(tmp_path: Path) -> None:
    files = render_documents(analyse(parse_topology(TWO_SITES.replace("FLAVOR", "mariadb"))), ())
    (tmp_path / "sysctl-advisor.sh").write_text(files["config/sysctl-advisor.sh"])
    fake = tmp_path / "bin"
    fake.mkdir()
    # A host tuned higher for rmem_max and tcp_rmem's middle value, lower elsewhere.
    (fake / "sysctl").write_text(
        textwrap.dedent(
            """\
            #!/bin/sh
            case "$2" in
              net.core.rmem_max) echo 99000000 ;;
              net.ipv4.tcp_rmem) printf '4096\\t999999\\t1000\\n' ;;
              *) exit 1 ;;
            esac
            """
        )
    )
    (fake / "sysctl").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    subprocess.run(
        ["sh", "sysctl-advisor.sh", str(tmp_path / "out.conf"), "--no-load"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
    )
    written = dict(
        line.split(" = ")
        for line in (tmp_path / "out.conf").read_text().splitlines()
        if " = " in line
    )
    # 1000 Mbit/s x 80 ms = 10 MB in flight; half a buffer advertised: 20,000,000 bytes.
    assert written["net.core.rmem_max"] == "99000000"  # kept: higher than needed
    assert written["net.core.wmem_max"] == "20000000"  # raised from nothing known
    assert written["net.ipv4.tcp_rmem"] == "4096 999999 20000000"  # element by element
    assert written["net.ipv4.tcp_slow_start_after_idle"] == "0"


def test_state_transfer_time_over_the_wan() -> None:
    plan = two_sites()
    assert plan.expectations is not None
    (transfer,) = plan.expectations.transfers
    # The sysctl raises tcp_rmem to 20 MB: a 10 MB window covers 1 Gbit/s x 80 ms, so the
    # stream gets the bandwidth: 100 GB x 8 / 1e9 bit/s = 800 s.
    assert (transfer.rate_mbps, transfer.seconds) == (1000.0, 800.0)


def test_failover_files_match_the_model_and_the_shipped_configuration(
    documents: dict[str, tuple[ConfigPlan, dict[str, str]]],
) -> None:
    seen = 0
    for name, (plan, files) in documents.items():
        analysis = analyse(REPO / "examples" / name / "topology.yaml")
        model = analysis.chosen.failover
        assert model is not None
        timeout_ms = float(
            settings(plan.proxysql.variables)["mysql-monitor_galera_healthcheck_timeout"]
        )
        design = files["design.md"]
        for f in plan.failovers:
            seen += 1
            survivals = [s for s in model.failovers if plan.clusters[s.cluster].name == f.lost]
            assert f.rpo_ms == pytest.approx(max(s.rpo_ms for s in survivals), abs=1e-3)
            # Detection: 3 checks 5 s apart plus one timeout; promotion 60 s; the drain.
            rto = (3 * 5000 + timeout_ms) / 1000 + 60 + f.rpo_ms / 1000
            assert f.rto_s == pytest.approx(rto, abs=0.05)
            # The model's own RTO (recommend's failover_rto_s) is the runbook's, to 0.1 s.
            assert max(s.rto_s for s in survivals) == pytest.approx(f.rto_s, abs=0.051)
            lost = next(c for c in plan.clusters if c.name == f.lost)
            taker = next(c for c in plan.clusters if c.name == f.taker)
            assert f.lost_hostgroups == lost.hostgroups and f.taker_hostgroups == taker.hostgroups
            proxysql = files[plan.proxysql.file]
            assert (
                f"VALUES ({lost.hostgroups['writer']}, {lost.hostgroups['backup_writer']}"
                in proxysql
            )
            channel = next(
                c
                for a in plan.async_links
                for c in a.channels
                if (c.name, c.replica_host) == (f.channel, f.replica_host)
            )
            assert (channel.source_cluster, channel.replica_cluster) == (f.lost, f.taker)
            assert channel.replica_host == f.replica_host
            promote = files[f.promote_file]
            stop = "STOP SLAVE" if plan.flavor == "mariadb" else "STOP REPLICA"
            assert stop in promote and f"CHANNEL='{f.channel}'" in promote
            assert f'REPLICA_HOST="${{REPLICA_HOST:-{f.replica_host}}}"' in promote
            moved = files[f.proxysql_file]
            to, old = taker.hostgroups["writer"], lost.hostgroups["writer"]
            expected = f"SET destination_hostgroup = {to}\n WHERE destination_hostgroup = {old};"
            assert expected in moved
            assert "OFFLINE_HARD" in moved
            assert "read_only = ON" in files[f.fence_file]
            # The runbook names the same files, hosts, hostgroups and numbers.
            for text in (
                f"`sh {f.promote_file}` (against {f.replica_host}",
                f.proxysql_file,
                f.fence_file,
                f"`sh {f.reconcile_file}`",
                f.return_file,
                f"sh {f.switchover_file}`",
                f"modelled recovery point of up to {ms_text(f.rpo_ms)}",
                f"hostgroup {lost.hostgroups['writer']} for the offline hostgroup "
                f"{lost.hostgroups['offline']}",
                f"about {f.rto_s:.0f} s",
            ):
                assert text in design, (name, text)
    assert seen >= 3  # paris-frankfurt, us-eu (two ways), global-counter


def test_heartbeat_per_linked_cluster_named_after_its_server_id(
    documents: dict[str, tuple[ConfigPlan, dict[str, str]]],
) -> None:
    plan, files = documents["us-eu"]
    assert plan.heartbeat is not None
    beats = {b.cluster: b for b in plan.heartbeat.files}
    for cluster in plan.clusters:
        beat = beats[cluster.name]
        assert settings(cluster.server)["server_id"] == beat.server_id
        text = files[beat.file]
        # Run on every node of the cluster, each node's own event kept out of replication
        # (a replicated event is SLAVESIDE_DISABLED where it arrives: lab, module docstring).
        hosts = [h for s in cluster.site_plans for h in s.hosts]
        assert beat.hosts == hosts
        assert f"Run on EVERY node of cluster {cluster.name} ({', '.join(hosts)})" in text
        local = text.index("SET SESSION wsrep_on = OFF;")
        assert text.index("SET SESSION sql_log_bin = OFF;") < local
        drop = text.index(f"DROP EVENT IF EXISTS advisor.heartbeat_{beat.server_id};")
        create = text.index(f"CREATE EVENT advisor.heartbeat_{beat.server_id}\n")
        assert local < drop < create < text.index("SET SESSION wsrep_on = ON;")
        # The table is created before, replicated: every node's rows land in it.
        assert text.index("CREATE TABLE IF NOT EXISTS advisor.heartbeat") < local
        # The reading takes the newest row of each cluster, whichever node wrote it.
        assert "MAX(ts)" in text and "GROUP BY server_id" in text
        # 49 writes 20 ms apart fit in the event's one-second period.
        assert "WHILE n < 49 DO" in text and "DO SLEEP(0.02);" in text


# -- the generated scripts, run against a scripted client -------------------------------------

_FAKE_CLIENT = r'''#!PYTHON
"""A stand-in for the mariadb / mysql client: logs each call, answers from ANSWERS (first match
of a pattern in the statement wins; a list is consumed one answer per call)."""
import json, re, sys
from pathlib import Path

state = Path(sys.argv[1])
args = sys.argv[2:]
statement = args[args.index("-e") + 1] if "-e" in args else sys.stdin.read()
host = args[args.index("-h") + 1] if "-h" in args else ""
answers = json.loads((state / "answers.json").read_text())
with (state / "log").open("a") as log:
    log.write(json.dumps([host, statement]) + "\n")
for pattern, answer in answers:
    if re.search(pattern, statement):
        if isinstance(answer, list):
            seen = state / "used.json"
            used = json.loads(seen.read_text()) if seen.exists() else {}
            n = used.get(pattern, 0)
            used[pattern] = n + 1
            (state / "used.json").write_text(json.dumps(used))
            answer = answer[min(n, len(answer) - 1)]
        if answer:
            print(answer)
        break
'''


def _run_generated(
    tmp_path: Path, text: str, answers: list[tuple[str, object]], *args: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], list[tuple[str, str]]]:
    """Run a generated script with CLIENT (and the other tools) answering from ``answers``."""
    import json
    import sys

    script = tmp_path / "script.sh"
    script.write_text(text)
    (tmp_path / "answers.json").write_text(json.dumps(answers))
    fake = tmp_path / "client"
    fake.write_text(_FAKE_CLIENT.replace("PYTHON", sys.executable))
    fake.chmod(0o755)
    tool = f"{fake} {tmp_path}"
    result = subprocess.run(
        ["sh", str(script), *args],
        env={
            **os.environ,
            "CLIENT": tool,
            "BINLOG_CLIENT": tool,
            "DUMP_CLIENT": tool,
            "PROXYSQL_CLIENT": tool,
            "PROXYSQL_ADMINS": "proxy-1:6032",
            "KEEP_DIR": str(tmp_path),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    log = tmp_path / "log"
    calls = (
        [tuple(json.loads(line)) for line in log.read_text().splitlines()] if log.exists() else []
    )
    return result, calls  # type: ignore[return-value]


def _scripts(flavor: str) -> tuple[ConfigPlan, dict[str, str]]:
    plan = two_sites(flavor)
    analysis = analyse(parse_topology(TWO_SITES.replace("FLAVOR", flavor)))
    files = render_documents(analysis, ("md",))
    # The design of TWO_SITES: per-site clusters a and b, each failing over to the other.
    return plan, files


def _index(calls: list[tuple[str, str]], pattern: str) -> int:
    for n, (_, statement) in enumerate(calls):
        if re.search(pattern, statement):
            return n
    raise AssertionError(f"no call matches {pattern!r}: {[c[1][:60] for c in calls]}")


def test_mariadb_promotion_applies_what_was_received_then_stops(tmp_path: Path) -> None:
    plan, files = _scripts("mariadb")
    f = plan.failovers[0]
    # Received up to 2-2-40 of the lost domain (and this cluster's own echo, domain own),
    # applied up to 2-2-30 when the IO thread stops; the wait brings it to 40.
    own, lost = f.taker_domain_id, f.lost_domain_id
    answers = [
        (r"SHOW SLAVE .* STATUS", f"     Gtid_IO_Pos: {own}-{own}-5,{lost}-{lost}-40"),
        (r"MASTER_GTID_WAIT", "0"),
        (r"@@GLOBAL.gtid_slave_pos\s*$", [f"{lost}-{lost}-30", f"{lost}-{lost}-40"]),
    ]
    result, calls = _run_generated(tmp_path, files[f.promote_file], answers)
    assert result.returncode == 0, result.stderr
    assert f"applied from the relay log: 10 transaction(s) of cluster {f.lost}" in result.stdout
    start = _index(calls, rf"^START SLAVE '{f.channel}' SQL_THREAD$")
    io_stop = _index(calls, rf"^STOP SLAVE '{f.channel}' IO_THREAD$")
    waits = [
        n
        for n, (_, s) in enumerate(calls)
        if s == f"SELECT MASTER_GTID_WAIT('{lost}-{lost}-40', {f.drain_timeout_s})"
    ]
    full_stop = _index(calls, rf"^STOP SLAVE '{f.channel}'$")
    record = _index(calls, r"INSERT INTO advisor.failover_log")
    # Applied with the IO thread untouched, then once more after it stopped: the two threads
    # are never both stopped while something received is not applied.
    assert len(waits) == 2
    assert start < waits[0] < io_stop < waits[1] < full_stop < record
    assert all(host == f.replica_host for host, _ in calls)
    assert "SLEEP" not in files[f.promote_file]


@pytest.mark.parametrize("flavor", ["mariadb", "pxc"])
def test_promotion_stops_without_promoting_when_the_wait_runs_out(
    tmp_path: Path, flavor: str
) -> None:
    plan, files = _scripts(flavor)
    f = plan.failovers[0]
    d = f.lost_domain_id
    if flavor == "mariadb":
        answers: list[tuple[str, object]] = [
            (
                r"SHOW SLAVE .* STATUS",
                f"     Gtid_IO_Pos: {d}-{d}-40\n     Last_SQL_Error: Duplicate key",
            ),
            (r"MASTER_GTID_WAIT", "-1"),
            (r"gtid_slave_pos", "2-2-31"),
        ]
    else:
        uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
        answers = [
            (r"RECEIVED_TRANSACTION_SET", f"{uuid}:1-40"),
            (r"GTID_SUBTRACT", f"{uuid}:32-40"),
            (r"WAIT_FOR_EXECUTED_GTID_SET", "1"),
            (r"SHOW REPLICA STATUS", "     Last_SQL_Error: Duplicate key"),
            (r"gtid_executed", f"{uuid}:1-31"),
        ]
    result, calls = _run_generated(tmp_path, files[f.promote_file], answers, WAIT_TIMEOUT_S="7")
    assert result.returncode == 1
    assert "NOT PROMOTED (step 1): after 7 s" in result.stderr and "Duplicate key" in result.stderr
    if flavor != "mariadb":
        assert "(9 transaction(s)" in result.stderr  # 32-40 still to apply
        wait = _index(calls, rf"WAIT_FOR_EXECUTED_GTID_SET\('{uuid}:1-40', 7\)")
        assert _index(calls, r"performance_schema.replication_connection_status") < wait
    else:
        assert "Never stop both threads" in result.stderr
    assert "NOT PROMOTED (step 1)" in result.stderr
    stopped = [s for _, s in calls if re.match(r"STOP (SLAVE|REPLICA)", s)]
    assert stopped == [], stopped  # the channel is left as it was, its IO thread too
    assert not any("failover_log" in s for _, s in calls)


@pytest.mark.parametrize("flavor", ["mariadb", "pxc"])
def test_return_keeps_aside_exactly_what_never_crossed_before_rebuilding(
    tmp_path: Path, flavor: str
) -> None:
    plan, files = _scripts(flavor)
    f = plan.failovers[0]
    d = f.lost_domain_id
    uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    if flavor == "mariadb":
        recorded, own = f"1-1-9,{d}-{d}-40", f"1-1-9,{d}-{d}-77"
        gtid_lines = "\n".join(
            f"#251127 server id 2 end_log_pos 1 GTID {d}-{d}-{n} trans" for n in range(41, 78)
        )
        answers: list[tuple[str, object]] = [
            (r"@@GLOBAL.read_only", "1"),
            (r"wsrep_cluster_status", "Primary"),
            (r"failover_log", f"pos:{recorded}"),
            (r"SHOW BINARY LOGS", "mariadb-bin.000001\t1234"),
            (r"gtid_binlog_pos", own),
        ]
    else:
        answers = [
            (r"super_read_only", "1"),
            (r"wsrep_cluster_status", "Primary"),
            (r"failover_log", f"pos:{uuid}:1-40"),
            (r"SHOW BINARY LOGS", "binlog.000001\t1234"),
            (r"GTID_SUBTRACT", f"{uuid}:41-77"),
            (r"gtid_executed", f"{uuid}:1-77"),
        ]
        gtid_lines = "\n".join(
            f"SET @@SESSION.GTID_NEXT= '{uuid}:{n}'/*!*/;" for n in range(41, 78)
        )
    # The binlog tool is the fake client too: it "prints" the transactions (the -e-less call
    # reads standard input, so it is told apart by its options).
    answers.insert(0, (r"^$", gtid_lines))
    result, calls = _run_generated(tmp_path, files[f.reconcile_file], answers, "keep")
    assert result.returncode == 0, result.stderr
    assert "37 transaction(s) never crossed" in result.stdout
    assert re.search(r"kept aside: \S+lost-\S+\.sql \(37 transaction", result.stdout)
    assert not any("STOP ALL SLAVES" in s or "DROP DATABASE" in s for _, s in calls)
    # One transaction missing from the file: nothing is rebuilt, even without "keep".
    short = "\n".join(gtid_lines.splitlines()[1:])
    answers[0] = (r"^$", short)
    (tmp_path / "log").unlink()
    result, calls = _run_generated(tmp_path, files[f.reconcile_file], answers)
    assert result.returncode == 1
    assert "holds 36 transaction(s), not 37: nothing rebuilt" in result.stderr
    assert not any(re.search(r"STOP ALL|DROP DATABASE|gtid_slave_pos =", s) for _, s in calls)


def test_switchover_that_times_out_gives_the_writes_back_and_moves_nothing(
    tmp_path: Path,
) -> None:
    plan, files = _scripts("mariadb")
    f = plan.failovers[0]
    d = f.lost_domain_id
    answers: list[tuple[str, object]] = [
        (r"SHOW SLAVE", "     Slave_IO_Running: Yes\n     Slave_SQL_Running: Yes"),
        (r"gtid_binlog_pos", f"{d}-{d}-120"),
        (r"MASTER_GTID_WAIT", "-1"),
    ]
    result, calls = _run_generated(tmp_path, files[f.switchover_file], answers)
    assert result.returncode == 1
    assert "switchover abandoned" in result.stderr
    ro_on = [h for h, s in calls if s == "SET GLOBAL read_only = ON"]
    ro_off = [h for h, s in calls if s == "SET GLOBAL read_only = OFF"]
    assert ro_on == f.lost_hosts and ro_off == f.lost_hosts
    assert _index(calls, rf"MASTER_GTID_WAIT\('{d}-{d}-120', ") > _index(calls, "read_only = ON")
    assert not any("mysql_query_rules" in s for _, s in calls), "ProxySQL untouched"


def test_switchover_moves_proxysql_only_after_the_taker_applied_everything(
    tmp_path: Path,
) -> None:
    plan, files = _scripts("mariadb")
    f = plan.failovers[0]
    d = f.lost_domain_id
    answers: list[tuple[str, object]] = [
        (
            r"SHOW SLAVE",
            "     Slave_IO_Running: Yes\n     Slave_SQL_Running: Yes\n"
            "     Seconds_Behind_Master: 0",
        ),
        (r"gtid_binlog_pos", f"{d}-{d}-120"),
        (r"MASTER_GTID_WAIT", "0"),
    ]
    result, calls = _run_generated(tmp_path, files[f.switchover_file], answers)
    assert result.returncode == 0, result.stderr
    assert "lag now 0 s" in result.stdout
    wait = _index(calls, rf"MASTER_GTID_WAIT\('{d}-{d}-120', {f.drain_timeout_s}\)")
    moved = _index(calls, rf"SET destination_hostgroup = {f.taker_hostgroups['writer']} WHERE")
    assert _index(calls, "read_only = ON") < wait < moved
    assert calls[wait][0] == f.replica_host
    assert calls[moved][0] == "proxy-1"


def test_mysql_switchover_waits_on_the_gtid_set_and_lifts_both_read_only_flags(
    tmp_path: Path,
) -> None:
    plan, files = _scripts("pxc")
    f = plan.failovers[0]
    uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    answers: list[tuple[str, object]] = [
        (
            r"SHOW REPLICA",
            "     Replica_IO_Running: Yes\n     Replica_SQL_Running: Yes\n"
            "     Seconds_Behind_Source: 0",
        ),
        (r"gtid_executed", f"{uuid}:1-120"),
        (r"WAIT_FOR_EXECUTED_GTID_SET", "0"),
    ]
    result, calls = _run_generated(tmp_path, files[f.switchover_file], answers)
    assert result.returncode == 0, result.stderr
    on = [h for h, s in calls if s == "SET GLOBAL super_read_only = ON"]
    assert on == f.lost_hosts
    joined = ",".join([f"{uuid}:1-120"] * len(f.lost_hosts))
    wait = _index(calls, rf"WAIT_FOR_EXECUTED_GTID_SET\('{re.escape(joined)}', ")
    assert calls[wait][0] == f.replica_host
    # super_read_only OFF leaves read_only ON: both go on the taker's nodes.
    for flag in ("super_read_only", "read_only"):
        off = [h for h, s in calls if s == f"SET GLOBAL {flag} = OFF"]
        assert off == f.taker_hosts, (flag, off)
    assert wait < _index(calls, "super_read_only = OFF") < _index(calls, "mysql_query_rules")
