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
        out[name] = (plan_configuration(analysis), render_documents(analysis, ("md",)))
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
            assert stop in promote and f"'{f.channel}'" in promote
            moved = files[f.proxysql_file]
            to, old = taker.hostgroups["writer"], lost.hostgroups["writer"]
            expected = f"SET destination_hostgroup = {to}\n WHERE destination_hostgroup = {old};"
            assert expected in moved
            assert "OFFLINE_HARD" in moved
            assert "read_only = ON" in files[f.fence_file]
            # The runbook names the same files, hosts, hostgroups and numbers.
            for text in (
                f.promote_file,
                f.proxysql_file,
                f.fence_file,
                f.return_file,
                f"On {f.replica_host}:",
                f"hostgroup {lost.hostgroups['writer']} for the offline hostgroup "
                f"{lost.hostgroups['offline']}",
                f"about {f.rto_s:.1f} s",
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
        assert f"CREATE EVENT IF NOT EXISTS advisor.heartbeat_{beat.server_id}" in text
        # 49 writes 20 ms apart fit in the event's one-second period.
        assert "WHILE n < 49 DO" in text and "DO SLEEP(0.02);" in text
