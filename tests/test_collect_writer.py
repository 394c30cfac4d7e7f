"""The workload and galera sections as YAML, and --into: update two sections, keep the rest."""

from __future__ import annotations

import os
import re
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from advisor.collect.api import CollectedEvidence, WritesetSizes
from advisor.collect.hotrows import HotRowRate
from advisor.collect.server import server_info
from advisor.collect.status import StatusSample, summarise_status
from advisor.collect.writer import evidence_to_yaml, merge_into
from advisor.errors import AdvisorError
from advisor.inputs.loading import load_topology

VARIABLES = {
    "version": "10.11.19-MariaDB-0+deb12u1-log",
    "version_comment": "Debian 12",
    "wsrep_on": "ON",
    "wsrep_provider": "/usr/lib/galera/libgalera_smm.so",
    "wsrep_provider_options": "evs.send_window = 4; evs.user_send_window = 2; "
    "evs.suspect_timeout = PT5S; gcs.fc_limit = 16; "
    "gcs.fc_single_primary = no; gmcast.segment = 0; ",
    "log_bin": "ON",
    "binlog_format": "ROW",
    "log_slave_updates": "ON",
    "performance_schema": "OFF",
}
STATUS = {"wsrep_provider_version": "4.23(rXXXX)", "wsrep_cluster_status": "Primary"}


def _evidence(hot_rows: list[HotRowRate] | None = None) -> CollectedEvidence:
    # Two intervals of 10 s: 300 then 600 write sets of 1000 bytes; avg 45/s, peak 60/s.
    columns = {
        "Uptime": [100, 110, 120],
        "wsrep_replicated": [0, 100, 300],
        "wsrep_received": [0, 200, 600],
        "wsrep_replicated_bytes": [0, 100000, 300000],
        "wsrep_received_bytes": [0, 200000, 600000],
        "wsrep_cluster_size": [3, 3, 3],
        "wsrep_gmcast_segment": [0, 0, 0],
        "wsrep_evs_repl_latency": ["0.0001/0.0004/0.002/0.0001/120"] * 3,
    }
    samples = [StatusSample(10.0 * i, {k: str(v[i]) for k, v in columns.items()}) for i in range(3)]
    return CollectedEvidence(
        target="advisor@db1:3306",
        started_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        interval_s=10.0,
        requested_duration_s=20.0,
        duration_s=20.0,
        ended_early=False,
        server=server_info(VARIABLES, STATUS, "advisor@db1:3306"),
        status=summarise_status(samples),
        writeset=WritesetSizes(980.4, 2500.0, "900 binlog transactions, scaled by 1.10"),
        hot_rows=hot_rows
        if hot_rows is not None
        else [HotRowRate("hot.t id=1", 40.0, 800, (1, 2)), HotRowRate("accounts id=42", 3.5, 70)],
        hot_row_source="binlog",
        hot_row_window_s=10.0,
        hot_row_events=900,
        binlog_transactions=900,
        notes=["log_slave_updates is OFF: an example note"],
        samples=samples,
    )


SITES = "name: test\nsites:\n  - name: paris\n    nodes: 3\n  - name: lyon\n    nodes: 3\n"


def test_sections_carry_the_measured_values() -> None:
    document = yaml.safe_load(evidence_to_yaml(_evidence()))
    assert set(document) == {"workload", "galera"}
    workload = document["workload"]
    assert workload["commits_per_s"] == {"avg": 45.0, "peak": 60.0}
    assert workload["writeset_bytes"] == {"p50": 980, "p99": 2500}
    assert workload["replicated_bytes_per_s"] == {"peak": 60000}
    assert workload["hot_rows"] == [
        {"name": "hot.t id=1", "updates_per_s": 40.0},
        {"name": "accounts id=42", "updates_per_s": 3.5},
    ]
    galera = document["galera"]
    assert galera["flavor"] == "mariadb"
    assert galera["version"] == "26.4.23"
    assert galera["provider_options"] == {
        "evs.send_window": 4,
        "evs.user_send_window": 2,
        "evs.suspect_timeout": "PT5S",
        "gcs.fc_limit": 16,
        "gcs.fc_single_primary": False,
        "gmcast.segment": 0,
    }


def test_every_number_says_where_it_came_from() -> None:
    text = evidence_to_yaml(_evidence())
    lines = {line.split(":")[0].strip(): line for line in text.splitlines() if ":" in line}
    assert (
        "# wsrep_last_committed less wsrep_local_cert_failures per 10s interval"
        in lines["commits_per_s"]
    )
    assert "# 900 binlog transactions" in lines["writeset_bytes"]
    assert "wsrep_replicated_bytes + wsrep_received_bytes" in lines["replicated_bytes_per_s"]
    assert "# binary log: row events per primary key, peak over 10s" in lines["hot_rows"]
    assert "# wsrep_provider_version '4.23(rXXXX)'" in lines["version"]
    assert "# 800 changes in the run, from server_id 1, 2" in text
    assert "advisor@db1:3306 at 2026-01-02T03:04:05Z: 3 status samples every 10s" in text
    assert "# Note: log_slave_updates is OFF: an example note" in text
    unwrapped = re.sub(r"\n\s*#\s+", " ", text)
    assert (
        "replication latency (wsrep_evs_repl_latency) min 0.1 ms, avg 0.4 ms, max 2 ms "
        "over 120 messages; cluster size 3; this node is in segment 0."
    ) in unwrapped


def test_the_sections_plus_sites_load_as_a_topology(tmp_path: Path) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(SITES + evidence_to_yaml(_evidence()))
    loaded = load_topology(path)
    topology = loaded.topology
    assert topology.workload.hot_rows[0].updates_per_s == 40.0
    assert topology.galera.version == "26.4.23"
    assert topology.workload.commits_per_s.peak == 60.0


def test_no_rates_and_no_hot_rows_still_load(tmp_path: Path) -> None:
    evidence = _evidence(hot_rows=[])
    one_sample = summarise_status(evidence.samples[:1])
    bare = CollectedEvidence(**{**evidence.__dict__, "status": one_sample, "writeset": None})
    text = evidence_to_yaml(bare)
    assert "hot_rows" not in text and "commits_per_s" not in text
    path = tmp_path / "t.yaml"
    path.write_text(SITES + text)
    load_topology(path)


USER_FILE = """\
# Our two data centres. Keep this comment.
version: 1
name: paris-lyon   # the name
requirements:
  commit_latency_ms: {p99: 200}
sites:
  - name: paris   # primary
    nodes: 3
  - name: lyon
    nodes: 3

# What the application does (the app team's numbers)
workload:
  # guessed, to be replaced
  commits_per_s: {avg: 800, peak: 2500}   # a guess
  hot_rows:
    - name: "hot.t id=1"
      updates_per_s: 10
      writer_sites: [paris]   # only paris writes it
  clients:   # measured by the app team
    concurrency: 4
    baseline_txn_latency_ms: 2.5

# Galera section: what we plan
galera:
  flavor: mariadb
  provider_options:
    evs.send_window: 512   # planned
    evs.keepalive_period: PT3S
# last line comment
links:
  - sites: [paris, lyon]
    distance_km: 400
"""


def test_merge_updates_two_sections_and_keeps_every_other_byte(tmp_path: Path) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(USER_FILE)
    merge_into(path, _evidence())
    text = path.read_text()
    before_workload = USER_FILE[: USER_FILE.index("workload:")]
    assert text.startswith(before_workload)
    assert "\n# Galera section: what we plan\ngalera:\n" in text
    assert text.endswith(
        "# last line comment\nlinks:\n  - sites: [paris, lyon]\n    distance_km: 400\n"
    )
    document = yaml.safe_load(text)
    workload = document["workload"]
    assert workload["commits_per_s"] == {"avg": 45.0, "peak": 60.0}
    assert workload["clients"] == {"concurrency": 4, "baseline_txn_latency_ms": 2.5}
    assert "clients:   # measured by the app team" in text
    assert workload["hot_rows"][0] == {
        "name": "hot.t id=1",
        "updates_per_s": 40.0,
        "writer_sites": ["paris"],
    }
    assert workload["hot_rows"][1] == {"name": "accounts id=42", "updates_per_s": 3.5}
    assert "a guess" not in text
    options = document["galera"]["provider_options"]
    assert options["evs.send_window"] == 4  # what runs replaces what was planned
    assert options["evs.keepalive_period"] == "PT3S"  # not collected from this node: kept
    assert document["galera"]["version"] == "26.4.23"
    load_topology(path)


def test_merging_twice_gives_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(USER_FILE)
    merge_into(path, _evidence())
    once = path.read_text()
    merge_into(path, _evidence())
    assert path.read_text() == once


def test_missing_sections_are_appended(tmp_path: Path) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(SITES + "# trailing comment")
    merge_into(path, _evidence())
    text = path.read_text()
    assert text.startswith(SITES + "# trailing comment\n\nworkload:\n")
    assert yaml.safe_load(text)["galera"]["flavor"] == "mariadb"
    load_topology(path)


def test_flow_style_sections_are_replaced(tmp_path: Path) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(SITES + "workload: {commits_per_s: 5}\ngalera: {flavor: pxc}\n")
    merge_into(path, _evidence())
    document = yaml.safe_load(path.read_text())
    assert document["workload"]["commits_per_s"] == {"avg": 45.0, "peak": 60.0}
    assert document["galera"]["flavor"] == "mariadb"
    assert document["sites"][1] == {"name": "lyon", "nodes": 3}


def test_indentation_of_the_users_file_is_followed(tmp_path: Path) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(
        "name: t\nsites:\n- name: a\n  nodes: 1\nworkload:\n  hot_rows:\n"
        "  - name: x\n    updates_per_s: 1\n"
    )
    merge_into(path, _evidence())
    text = path.read_text()
    assert "\n  hot_rows:" in text
    assert '\n  - name: "hot.t id=1"\n' in text
    load_topology(path)


def test_file_mode_is_kept_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(SITES)
    os.chmod(path, 0o640)
    merge_into(path, _evidence())
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["topology.yaml"]


def test_merge_errors_are_one_line_with_the_place(tmp_path: Path) -> None:
    with pytest.raises(AdvisorError) as caught:
        merge_into(tmp_path / "none.yaml", _evidence())
    assert str(caught.value) == (
        f"{tmp_path / 'none.yaml'}: no such file to update (use -o to write a new one)"
    )
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: t\nsites: [a\n")
    with pytest.raises(AdvisorError, match=r"broken.yaml:3:1: YAML syntax error"):
        merge_into(broken, _evidence())
    listing = tmp_path / "list.yaml"
    listing.write_text("- a\n- b\n")
    with pytest.raises(AdvisorError) as caught:
        merge_into(listing, _evidence())
    assert str(caught.value) == (
        f"{listing}:1:1: expected a mapping with keys such as name, "
        "sites and links at the top level, got a list"
    )
    assert listing.read_text() == "- a\n- b\n"
    # --into reads like any topology: a FIFO is refused at once, never opened (no hang).
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    with pytest.raises(AdvisorError, match="not a regular file"):
        merge_into(fifo, _evidence())
