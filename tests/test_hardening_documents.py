"""Issue 26: ``doc`` on valid inputs the shipped templates did not expect, through the CLI.

Each input is the paris-frankfurt example with one thing changed; each writes its documents
(exit 0, with the words the change calls for) or gives one line and exit 2.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import EXAMPLES

from advisor.documents import charts

PARIS = EXAMPLES / "paris-frankfurt"


def _variant(tmp_path: Path, *changes: tuple[str, str]) -> Path:
    shutil.copytree(PARIS / "measurements", tmp_path / "measurements")
    text = (PARIS / "topology.yaml").read_text(encoding="utf-8")
    for old, new in changes:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "topology.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _doc(cli, topology: Path) -> tuple[int, str, Path]:
    out = topology.parent / "docs"
    result = cli("doc", topology, "-o", out)
    return result.exit_code, result.stderr, out


def test_no_replication_traffic_is_written_as_zero(cli, tmp_path):
    # design.md.j2:50 read "peak or avg": a peak of 0 fell through to a missing average
    topology = _variant(
        tmp_path, ("replicated_bytes_per_s: {peak: 2500000}", "replicated_bytes_per_s: {peak: 0}")
    )
    code, stderr, out = _doc(cli, topology)
    assert (code, stderr) == (0, "")
    assert "- Replication traffic: 0.0 Mbit/s at peak.\n" in (out / "design.md").read_text()


def test_an_average_alone_is_said_to_be_one(cli, tmp_path):
    topology = _variant(
        tmp_path, ("replicated_bytes_per_s: {peak: 2500000}", "replicated_bytes_per_s: {avg: 1e6}")
    )
    code, stderr, out = _doc(cli, topology)
    assert (code, stderr) == (0, "")
    assert "- Replication traffic: 8.0 Mbit/s on average.\n" in (out / "design.md").read_text()


def test_a_topology_where_no_site_writes_is_documented(cli, tmp_path):
    # _macros.j2:6 read commit_latency_ms.p50 of an option with no commits (an empty map)
    text = (PARIS / "topology.yaml").read_text(encoding="utf-8")
    hot_rows = text[text.index("  hot_rows:") : text.index("galera:")]
    topology = _variant(tmp_path, ("    nodes: 3\n", "    nodes: 3\n    writes: false\n"))
    topology.write_text(topology.read_text().replace(hot_rows, "\n"))
    code, stderr, out = _doc(cli, topology)
    assert (code, stderr) == (0, "")
    design = (out / "design.md").read_text()
    assert "| Commit latency at the slowest writing site | none, no site writes (" in design
    assert "| Commit latency p50 / p99 (modelled) | n/a / n/a | n/a / n/a | n/a / n/a |" in design
    assert "commits none, no site writes (modelled)" in (out / "adr.md").read_text()
    assert "<td>n/a / n/a</td>" in (out / "design.html").read_text()


def test_a_zero_timer_does_not_break_the_round_trip_chart():
    # a log axis cannot hold 0: evs.suspect_timeout PT0S put a mark at 0 ms (math domain error)
    series = [charts.Series("a - b", [0.5, 1.0, 2.0], [1.2, 1.5, 2.0])]
    marks = [charts.Mark("suspect_timeout 0 s", 0.0, True), charts.Mark("SLO", 50.0)]
    svg = charts.rtt_chart("rtt-1", "Round trip a - b", "desc", series, marks)
    # the axis spans the positive values (1 to 100 ms); the zero mark sits at its foot
    assert svg.startswith("<svg") and ">suspect_timeout 0 s<" in svg
    assert ">1 ms<" in svg and ">100 ms<" in svg and ">0.1 ms<" not in svg


def test_a_zero_suspect_timeout_is_documented_or_refused_in_one_line(cli, tmp_path):
    # Galera's minimum is PT0.1S (galera.md, 1b): validating it belongs to the input; the
    # documents must not fail on it either way
    topology = _variant(
        tmp_path,
        (
            '  version: "26.4.23"',
            '  version: "26.4.23"\n  provider_options: {evs.suspect_timeout: PT0S}',
        ),
    )
    code, stderr, out = _doc(cli, topology)
    if code == 0:
        chart = out / "charts" / "rtt-paris-1-frankfurt.svg"
        assert ">suspect_timeout 0 s (current)<" in chart.read_text()
    else:
        assert code == 2 and stderr.count("\n") == 1 and "evs.suspect_timeout" in stderr


def test_a_link_too_thin_for_the_traffic_is_documented(cli, tmp_path):
    topology = _variant(
        tmp_path,
        ("    bandwidth_mbps: 1000\n", "    bandwidth_mbps: 1\n"),
        ("replicated_bytes_per_s: {peak: 2500000}", "replicated_bytes_per_s: {peak: 1000000}"),
    )
    code, stderr, out = _doc(cli, topology)
    assert (code, stderr) == (0, "")
    assert (out / "design.md").is_file()
