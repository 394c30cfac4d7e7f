"""Every command and every exit path of the CLI, through typer's CliRunner."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, REPO

PARIS = EXAMPLES / "paris-frankfurt" / "topology.yaml"
US_EU = EXAMPLES / "us-eu" / "topology.yaml"


def test_recommend_text_puts_the_verdict_first(cli):
    result = cli("recommend", PARIS)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "paris-frankfurt: grouped_clusters"
    assert "Clusters: paris-1 + paris-2 + garbd@paris-witness | frankfurt" in result.stdout
    for heading in ("Options", "Hot rows", "Findings", "Links", "What would change"):
        assert heading in result.stdout
    assert "\x1b[" not in result.stdout  # plain text when not a terminal


def test_recommend_json_follows_the_contract(cli):
    result = cli("recommend", US_EU, "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["format_version"] == 1 and data["architecture"] == "per_site_clusters"
    assert data["groups"] == [["virginia"], ["dublin"]]
    link = data["links"][0]
    assert {
        "sites",
        "distance_km",
        "medium",
        "floor_rtt_ms",
        "rtt_ms",
        "rtt_source",
        "light_speed_fraction",
        "measurements",
    } <= set(link)
    icmp = link["measurements"][0]
    assert (
        icmp["method"] == "icmp"
        and icmp["samples"] == 8636
        and icmp["loss"] == pytest.approx(4 / 8640, rel=1e-3)
    )
    assert {o["architecture"] for o in data["options"]} == {"single_cluster", "per_site_clusters"}
    assert {"rule", "severity", "subject", "option", "message"} <= set(data["findings"][0])


def test_several_files_give_a_json_array(cli):
    result = cli("recommend", PARIS, US_EU, "--format", "json")
    assert [d["topology"] for d in json.loads(result.stdout)] == ["paris-frankfurt", "us-eu"]


def test_markdown_report(cli):
    result = cli("recommend", PARIS, "--format", "markdown")
    assert result.stdout.startswith("# paris-frankfurt: grouped_clusters")
    assert "| option | clusters | viable |" in result.stdout


def test_require_holds_or_exits_1(cli):
    assert cli("recommend", US_EU, "--require", "per_site_clusters").exit_code == 0
    failed = cli("recommend", US_EU, "--require", "single_cluster")
    assert failed.exit_code == 1
    assert failed.stderr.strip().endswith(
        "--require single_cluster did not hold: per_site_clusters is recommended"
    )


def test_fail_on(cli):
    assert cli("recommend", US_EU, "--fail-on", "blocker").exit_code == 0
    warned = cli(
        "recommend", EXAMPLES / "pxc-wan-windows" / "topology.yaml", "--fail-on", "warning"
    )
    assert warned.exit_code == 1 and "SEND-WINDOW" in warned.stderr
    stuck = cli("recommend", EXAMPLES / "global-counter" / "topology.yaml", "--fail-on", "blocker")
    # Nothing is viable; the least bad, per-site clusters, still needs the row routed.
    assert stuck.exit_code == 1 and "MULTI-SITE-WRITES-ASYNC" in stuck.stderr


def test_rules_override_changes_severity_and_threshold(cli, tmp_path):
    (tmp_path / "mine.yaml").write_text("id: HOT-ROW-RATE\nseverity: warning\n")
    result = cli(
        "recommend",
        EXAMPLES / "global-counter" / "topology.yaml",
        "--format",
        "json",
        "--rules",
        tmp_path,
    )
    data = json.loads(result.stdout)
    assert data["architecture"] == "single_cluster"
    assert not any(
        f["severity"] == "blocker" for f in data["findings"] if f["option"] == "single_cluster"
    )


def test_bad_rules_are_one_line_errors(cli, tmp_path):
    (tmp_path / "x.yaml").write_text("id: NO-SUCH-RULE\nseverity: info\n")
    result = cli("recommend", PARIS, "--rules", tmp_path)
    assert result.exit_code == 2
    assert "unknown rule id 'NO-SUCH-RULE'" in result.stderr and result.stderr.count("\n") == 1
    missing = cli("recommend", PARIS, "--rules", tmp_path / "nope")
    assert missing.exit_code == 2 and "rules directory not found" in missing.stderr


def test_bad_topology_exits_2_with_one_line(cli, write):
    path = write("name: t\nsites:\n  - name: a\n    nodes: -2\n")
    result = cli("recommend", path)
    assert result.exit_code == 2
    assert result.stderr == f"advisor: {path}:4:12: sites[0].nodes: must be >= 0, got -2\n"
    assert result.stdout == ""


def test_missing_measurement_file_names_the_yaml_line(cli, write, tmp_path):
    path = write(
        "name: t\nsites: [{name: a}, {name: b}]\nlinks:\n  - sites: [a, b]\n"
        "    measurements:\n      - {method: icmp, file: gone.txt}\n"
    )
    result = cli("recommend", path)
    assert result.exit_code == 2
    assert result.stderr == (
        f"advisor: {path}:6:30: links[0].measurements[0].file: measurement "
        f"file not found: {tmp_path / 'gone.txt'}\n"
    )


def test_usage_errors_exit_2(cli):
    assert cli("recommend").exit_code == 2
    assert cli("recommend", PARIS, "--format", "yaml").exit_code == 2
    assert cli("frobnicate").exit_code == 2


def test_validate_lists_every_error(cli, write):
    good = cli("validate", PARIS, US_EU)
    assert good.exit_code == 0 and good.stdout == "2 file(s) valid\n"
    path = write("name: t\nsites:\n  - {name: a, nodes: -1}\n  - {name: b, nodes: x}\n")
    bad = cli("validate", path)
    assert bad.exit_code == 2
    assert bad.stderr.splitlines() == [
        f"{path}:3:22: sites[0].nodes: must be >= 0, got -1",
        f"{path}:4:22: sites[1].nodes: expected an integer, got text 'x'",
    ]


def test_schema_is_json_schema_that_accepts_every_example(cli):
    jsonschema = pytest.importorskip("jsonschema")
    import yaml

    schema = json.loads(cli("schema").stdout)
    assert schema["$schema"].endswith("2020-12/schema")
    for path in sorted(EXAMPLES.glob("*/topology.yaml")):
        jsonschema.validate(yaml.safe_load(path.read_text()), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": "t", "sites": [{"name": "a", "nodez": 3}]}, schema)


def test_the_committed_schema_file_is_current(cli):
    assert json.loads((REPO / "topology.schema.json").read_text()) == json.loads(
        cli("schema").stdout
    ), "regenerate with: advisor schema > topology.schema.json"


def test_rules_list_and_explain(cli):
    listing = cli("rules")
    assert listing.exit_code == 0
    assert listing.stdout.splitlines()[0].split() == ["id", "severity", "title"]
    assert "HOT-ROW-RATE" in listing.stdout and "RTT-ESTIMATED" in listing.stdout
    explained = cli("rules", "hot-row-rate")
    assert explained.stdout.startswith("HOT-ROW-RATE (blocker): A hot row needs more updates")
    assert "Callaghan" in explained.stdout and "max_utilisation: 1" in explained.stdout
    unknown = cli("rules", "NOPE")
    assert unknown.exit_code == 2 and "unknown rule 'NOPE'; known rules:" in unknown.stderr


def test_sweep_finds_where_the_answer_flips(cli, tmp_path):
    result = cli(
        "sweep", EXAMPLES / "global-counter" / "topology.yaml", "--vary", "rtt", "--range", "0.5:40"
    )
    assert result.exit_code == 0
    # The counter's 120/s fits one commit of at most 8.3 ms: single_cluster is viable only
    # while the worst RTT stays below about (8.3 - 1.3) / 1.5 ms; beyond, the least bad is
    # per-site clusters with the counter routed to one owner.
    line = next(x for x in result.stdout.splitlines() if "single_cluster stops being viable" in x)
    assert 4.0 < float(line.split(" at ")[1].split()[0]) < 6.5
    assert "flips at" in result.stdout and "single_cluster -> per_site_clusters" in result.stdout
    metro = EXAMPLES / "amsterdam-metro" / "topology.yaml"
    data = json.loads(
        cli("sweep", metro, "--vary", "rtt", "--range", "0.2:20:100", "--format", "json").stdout
    )
    # One cluster until the 5 ms p99 (and the 300/s sequence) no longer fit, then per-site
    # clusters as the least bad: their one blocker, the shared sequence, stays.
    assert [(f["from"], f["to"]) for f in data["flips"]] == [
        ("single_cluster", "per_site_clusters")
    ]
    assert 1.5 < data["flips"][0]["at"] < 3.5
    assert data["viability_changes"][0]["option"] == "single_cluster"
    csv = cli("sweep", US_EU, "--vary", "hot-row-rate", "--range", "1:50:5", "--format", "csv")
    assert csv.stdout.splitlines()[0].startswith("hot-row-rate,recommended,")
    assert len(csv.stdout.splitlines()) == 6
    chart = tmp_path / "flip.svg"
    cli("sweep", US_EU, "--vary", "distance", "--range", "10:3000", "--chart", chart)
    assert chart.read_text().startswith("<svg")


@pytest.mark.parametrize("bad", ["5", "9:3", "a:b", "-1:4", "1:2:1"])
def test_sweep_bad_range(cli, bad):
    result = cli("sweep", US_EU, "--vary", "rtt", "--range", bad)
    assert result.exit_code == 2 and "--range must be A:B or A:B:N" in result.stderr


def test_sweep_needs_something_to_vary(cli, write):
    path = write("name: t\nsites: [{name: a}]\n")
    result = cli("sweep", path, "--vary", "rtt", "--range", "1:5")
    assert result.exit_code == 2 and "single site" in result.stderr


def test_collect_rejects_a_bad_duration(cli):
    result = cli("collect", "--host", "127.0.0.1", "--user", "u", "--duration", "soon")
    assert result.exit_code == 2 and "soon" in result.stderr


def test_shell_completion_script(cli):
    result = cli("--show-completion", "bash")
    assert result.exit_code == 0 and "complete" in result.stdout


def test_python_dash_m_and_help_work_as_a_process():
    result = subprocess.run(
        [sys.executable, "-m", "advisor", "--help"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert result.returncode == 0
    for command in ("recommend", "doc", "validate", "schema", "rules", "sweep", "collect"):
        assert command in result.stdout


def test_no_traceback_for_a_directory_given_as_topology(cli, tmp_path):
    result = cli("recommend", tmp_path)
    assert result.exit_code == 2
    assert result.stderr == f"advisor: {tmp_path}: topology file is a directory; expected a file\n"


def test_doc_writes_documents_and_configuration(cli, tmp_path):
    out = tmp_path / "out"
    result = cli("doc", PARIS, "-o", out)
    assert result.exit_code == 0
    written = {Path(line).relative_to(out).as_posix() for line in result.stdout.splitlines()}
    assert {
        "design.md",
        "design.html",
        "adr.md",
        "config/garbd.conf",
        "config/proxysql.sql",
        "config/sysctl-advisor.conf",
    } <= written
    assert (out / "design.md").read_text().startswith("# Design: paris-frankfurt")
    # Writing again over the tool's own files is fine; over a file a person changed is not.
    assert cli("doc", PARIS, "-o", out).exit_code == 0
    (out / "adr.md").write_text("my notes\n")
    refused = cli("doc", PARIS, "-o", out)
    assert refused.exit_code == 2 and "use --force" in refused.stderr
    assert (out / "adr.md").read_text() == "my notes\n"
    assert cli("doc", PARIS, "-o", out, "--force").exit_code == 0


def test_doc_formats_and_user_templates(cli, tmp_path):
    only_md = cli("doc", US_EU, "-o", tmp_path / "md", "--format", "md")
    assert only_md.exit_code == 0
    names = [Path(line).name for line in only_md.stdout.splitlines()]
    assert "design.md" in names and "design.html" not in names and "adr.md" not in names
    bad = cli("doc", US_EU, "-o", tmp_path / "x", "--format", "pdf")
    assert bad.exit_code == 2 and "--format takes md, html and adr" in bad.stderr
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "design.md.j2").write_text(
        '{% extends "default/design.md.j2" %}{% block consequences %}## Our notes\n{% endblock %}'
    )
    custom = cli("doc", US_EU, "-o", tmp_path / "c", "--format", "md", "--templates", templates)
    assert custom.exit_code == 0
    text = (tmp_path / "c" / "design.md").read_text()
    assert "## Our notes" in text and "## Consequences" not in text


def test_measurement_files_outside_the_folder_need_measurements_root(cli, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "ab.txt").write_text("9.8\n10.1\n" * 300)  # 2,700 bytes
    topo = tmp_path / "site" / "topology.yaml"
    topo.parent.mkdir()
    topo.write_text(
        "name: t\nsites: [{name: a}, {name: b}]\nlinks:\n  - sites: [a, b]\n"
        "    measurements: [{method: icmp, file: ../shared/ab.txt, format: samples}]\n"
    )
    refused = cli("recommend", topo)
    assert refused.exit_code == 2
    assert "outside the topology's folder" in refused.stderr
    allowed = cli("recommend", topo, "--measurements-root", shared, "--format", "json")
    assert allowed.exit_code == 0
    assert json.loads(allowed.stdout)["links"][0]["rtt_ms"]["p50"] == pytest.approx(9.95)
    small = cli("recommend", topo, "--measurements-root", shared, "--max-file-mb", "0.001")
    assert small.exit_code == 2 and "limit" in small.stderr
