"""Documents and artifacts: golden files of every example, template overrides, sandbox limits.

Regenerate the golden files (after a deliberate change, or for a new example) with::

    ADVISOR_REGEN_GOLDEN=1 python -m pytest tests/test_report.py
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import textwrap
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from advisor.analysis import Analysis, analyse
from advisor.documents.filters import commented, md, ms, mysql_str, rate, size, sqlite_str
from advisor.documents.render import Limits, render_documents, write_documents
from advisor.errors import AdvisorError
from advisor.inputs.loading import parse_topology
from advisor.recommendation import build_recommendation
from advisor.text.report import render_recommendations

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "examples").glob("*/topology.yaml"))
GOLDEN = Path(__file__).resolve().parent / "golden"
REGENERATE = "ADVISOR_REGEN_GOLDEN=1 python -m pytest tests/test_report.py"

SMALL = """
name: small
sites: [{name: a}, {name: b}, {name: c}]
links:
  - {sites: [a, b], measurements: [{method: icmp, samples_ms: [5, 5.2, 5.1]}]}
  - {sites: [a, c], measurements: [{method: icmp, samples_ms: [6, 6.1, 6.2]}]}
  - {sites: [b, c], measurements: [{method: icmp, samples_ms: [7, 7.1, 7.3]}]}
"""


@cache
def small() -> Analysis:
    return analyse(parse_topology(textwrap.dedent(SMALL)))


@cache
def rendered(topology: Path) -> dict[str, str]:
    return render_documents(analyse(topology))


# -- golden files -------------------------------------------------------------------------


@pytest.mark.parametrize("topology", EXAMPLES, ids=lambda p: p.parent.name)
def test_golden_documents_and_artifacts(topology: Path) -> None:
    files = rendered(topology)
    folder = GOLDEN / topology.parent.name
    if os.environ.get("ADVISOR_REGEN_GOLDEN") == "1":
        shutil.rmtree(folder, ignore_errors=True)
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text, encoding="utf-8")
        return
    expected = {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
    assert sorted(files) == sorted(expected), (
        f"the files of {topology.parent.name} differ from tests/golden; if intended, "
        f"regenerate with: {REGENERATE}"
    )
    for name, text in files.items():
        if text != expected[name]:
            diff = "\n".join(
                list(
                    difflib.unified_diff(
                        expected[name].splitlines(), text.splitlines(), "golden", "now", lineterm=""
                    )
                )[:40]
            )
            pytest.fail(
                f"{topology.parent.name}/{name} differs from its golden file; if "
                f"intended, regenerate with: {REGENERATE}\n{diff}"
            )


@pytest.mark.parametrize("topology", EXAMPLES, ids=lambda p: p.parent.name)
def test_nothing_machine_specific_in_the_output(topology: Path) -> None:
    for name, text in rendered(topology).items():
        assert str(REPO) not in text, name
        assert not re.search(r"(/tmp/|/home/|/root/|/work/|[A-Z]:\\)", text), name
        assert not re.search(r"\b(19|20)\d\d-\d\d-\d\d\b", text), name


def test_every_example_has_a_golden_folder_and_no_stale_ones() -> None:
    assert sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()) == sorted(
        p.parent.name for p in EXAMPLES
    ), f"regenerate with: {REGENERATE}"


# -- what the documents hold ----------------------------------------------------------------


def test_markdown_links_its_charts_and_html_inlines_them() -> None:
    files = render_documents(small())
    linked = re.findall(r"\]\((charts/[^)]+\.svg)\)", files["design.md"])
    assert linked and all(name in files for name in linked)
    assert set(linked) == {n for n in files if n.startswith("charts/")}
    html = files["design.html"]
    # The page shows every chart but each link's own one (those are files beside the
    # Markdown): the links share one chart there, charts/rtt-links.svg.
    own = [n for n in linked if n.startswith("charts/rtt-") and n != "charts/rtt-links.svg"]
    assert "charts/rtt-links.svg" in linked and len(own) == 3  # a-b, a-c, b-c
    assert html.count("<svg ") == len(linked) - len(own)
    # Nothing is fetched: no src from anywhere; an address appears only as a link a reader
    # may follow (a reference's <a href>), never on <link>, <image> or <use>.
    assert not re.search(r"""src\s*=\s*["']?\s*(https?:)?//""", html)
    for tag in re.findall(r"<(\w+)[^>]*\bhref\s*=\s*[\"']?\s*(?:https?:)?//", html):
        assert tag == "a", tag
    assert "<script" not in html and "@import" not in html and "url(" not in html


def test_formats_select_documents_and_artifacts_always_come() -> None:
    files = render_documents(small(), formats=("adr",))
    assert "adr.md" in files and "design.md" not in files and "design.html" not in files
    assert not any(n.startswith("charts/") for n in files)
    assert {"config/proxysql.sql", "config/sysctl-advisor.sh"} <= set(files)
    assert files["adr.md"].startswith("---\nstatus: proposed\n---\n\n# Run ")
    with pytest.raises(AdvisorError) as error:
        render_documents(small(), formats=("pdf",))
    assert str(error.value) == "unknown document format 'pdf'; expected one of md, html, adr"


def test_hostile_names_are_escaped_for_each_format(write: Callable[..., Path]) -> None:
    text = (
        SMALL.replace("name: small", 'name: "evil <script>alert(1)</script> | x"')
        + """
workload:
  hot_rows: [{name: "t id=1'; DROP TABLE x; -- [link](http://evil)", updates_per_s: 1}]
"""
    )
    files = render_documents(analyse(write(text)))
    assert "<script>" not in files["design.html"]
    assert "&lt;script&gt;" in files["design.html"]
    assert "# Design: evil &lt;script&gt;alert(1)&lt;/script&gt; \\| x" in files["design.md"]
    assert "[link](http" not in files["design.md"]
    assert "\\[link\\](http://evil)" in files["design.md"]
    for name in ("config/galera-a_b_c.a.cnf", "config/sysctl-advisor.sh"):
        for line in files[name].splitlines():  # user text only ever inside a comment line
            assert not ("evil" in line and not line.startswith("#")), line


def test_a_newline_in_a_row_name_cannot_escape_a_commented_sql_line(
    write: Callable[..., Path],
) -> None:
    text = SMALL.replace("[5, 5.2, 5.1]", "[100, 101]").replace("[6, 6.1, 6.2]", "[100, 101]")
    text = (
        text.replace("[7, 7.1, 7.3]", "[100, 101]")
        + """
workload:
  hot_rows:
    - {name: "x\\nDELETE FROM mysql_servers; --", updates_per_s: 50, writer_sites: [b]}
"""
    )
    # Issue 14: the loader refuses control characters in names, newlines included.
    with pytest.raises(AdvisorError, match=r"hot_rows\[0\]\.name: must not contain control"):
        analyse(write(text))
    # And should one reach a template anyway, it stays inside its comment line and literal.
    assert (
        commented("x\nDELETE FROM mysql_servers; --", "-- ") == "-- x DELETE FROM mysql_servers; --"
    )
    assert sqlite_str("x\nDELETE") == "'x DELETE'"


def test_a_user_template_overrides_one_block_of_the_default(tmp_path: Path) -> None:
    (tmp_path / "design.md.j2").write_text(
        '{% extends "default/design.md.j2" %}{% block title %}# Our house style\n\n{% endblock %}',
        encoding="utf-8",
    )
    custom = render_documents(small(), formats=("md",), templates_dir=tmp_path)["design.md"]
    default = render_documents(small(), formats=("md",))["design.md"]
    assert custom.startswith("# Our house style\n\n## Decision\n")
    assert custom.split("## Decision", 1)[1] == default.split("## Decision", 1)[1]


def test_write_documents_renders_everything_before_writing(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "adr.md.j2").write_text("{{ no_such_value }}", encoding="utf-8")
    out = tmp_path / "out"
    with pytest.raises(AdvisorError) as error:
        write_documents(small(), out, templates_dir=templates)
    assert str(error.value) == (
        f"{templates / 'adr.md.j2'}:1: template uses an undefined "
        "value: 'no_such_value' is undefined"
    )
    assert not out.exists()
    written = write_documents(small(), out)
    assert (out / "design.md").is_file() and (out / "config" / "proxysql.sql").is_file()
    assert written == write_documents(small(), out)  # its own files: replaced without force


def test_templates_folder_must_exist(tmp_path: Path) -> None:
    with pytest.raises(AdvisorError) as error:
        render_documents(small(), templates_dir=tmp_path / "missing")
    assert str(error.value) == f"{tmp_path / 'missing'}: templates folder not found or not a folder"


# -- the sandbox and its limits -------------------------------------------------------------


def render_user(tmp_path: Path, body: str, limits: Limits | None = None) -> str:
    (tmp_path / "design.md.j2").write_text(body, encoding="utf-8")
    files = render_documents(
        small(), formats=("md",), templates_dir=tmp_path, limits=limits or Limits()
    )
    return files["design.md"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "{{ rec.__class__.__mro__ }}",
            "template refused by the sandbox: access to attribute "
            "'__class__' of 'Recommendation' object is unsafe.",
        ),
        (
            "{{ 'x' * 100000000 }}",
            "template stopped: it refused to repeat a value 100000000 times (render limit)",
        ),
        (
            "{{ '%0999999999d' % 1 }}",
            "template stopped: it refused a format with a huge width (render limit)",
        ),
        (
            "{{ 'x'.center(999999999) }}",
            "template stopped: it refused str.center to more than "
            "20000000 characters (render limit)",
        ),
        (
            "{{ 'x'|center(999999999) }}",
            "template stopped: it refused filter do_center with a huge width (render limit)",
        ),
        (
            "{{ 2 ** 100000 }}",
            "template stopped: it refused a power with exponent 100000 (render limit)",
        ),
        ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "template stopped: recursion too deep"),
        (
            "{% for x in 1 %}{% endfor %}",
            "template failed: TypeError: 'int' object is not iterable",
        ),
        (
            "{% for x in %}",
            "template syntax error: Expected an expression, got 'end of statement block'",
        ),
    ],
)
def test_hostile_templates_stop_with_one_line(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(AdvisorError) as error:
        render_user(tmp_path, body)
    assert str(error.value) == f"{tmp_path / 'design.md.j2'}:1: {message}"


def test_a_runaway_loop_stops_at_the_time_limit(tmp_path: Path) -> None:
    body = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    with pytest.raises(AdvisorError) as error:
        render_user(tmp_path, body, Limits(time_s=0.2))
    assert str(error.value) == (
        f"{tmp_path / 'design.md.j2'}:1: template stopped: it took longer than 0.2 s (render limit)"
    )


def test_output_size_is_bounded(tmp_path: Path) -> None:
    body = "{% for i in range(1000) %}0123456789{% endfor %}"
    assert len(render_user(tmp_path, body)) == 10_000
    with pytest.raises(AdvisorError) as error:
        render_user(tmp_path, body, Limits(output_chars=5_000))
    assert "template stopped: it wrote more than 5000 characters (render limit)" in str(error.value)


# -- filters ------------------------------------------------------------------------------


def test_number_filters_carry_units() -> None:
    assert [ms(0.4671), ms(9.761), ms(15.52), ms(137.4), ms(2.0, 1)] == [
        "0.467 ms",
        "9.76 ms",
        "15.5 ms",
        "137 ms",
        "2.0 ms",
    ]
    assert [rate(0.523), rate(64.44), rate(1500)] == ["0.523/s", "64.4/s", "1,500/s"]
    assert [size(1800), size(48000), size(20_000_000)] == ["1,800 bytes", "48 KB", "20 MB"]


def test_escaping_filters() -> None:
    assert md("a | b <i>x</i> [l](u) *y*\nz") == (
        "a \\| b &lt;i&gt;x&lt;/i&gt; \\[l\\](u) \\*y\\* z"
    )
    assert sqlite_str("it's \\b") == "'it''s \\b'"
    assert sqlite_str("a\nb\r\n") == "'a b '"
    assert mysql_str("it's \\b\n") == "'it\\'s \\\\b\\n'"
    assert commented("one\ntwo", "-- ", 20) == "-- one two"
    assert commented("word " * 8, "# ", 24).splitlines() == [
        "# word word word word",
        "#   word word word word",
    ]


def test_a_hot_rows_levers_reach_every_document_escaped(write: Callable[..., Path]) -> None:
    # A row far over its bound under single_cluster: its split (with the SQL pattern) and its
    # batching are in what would change the answer, its name escaped in each format.
    text = (
        SMALL
        + """
workload:
  hot_rows: [{name: "t <b>[x](y)</b>", updates_per_s: 500, writer_sites: [a]}]
"""
    )
    analysis = analyse(write(text))
    files = render_documents(analysis)
    assert "Split into" in files["design.html"] and "SELECT SUM(n)" in files["design.html"]
    assert "<b>" not in files["design.html"] and "&lt;b&gt;" in files["design.html"]
    assert "Split into" in files["design.md"] and "[x](y)" not in files["design.md"]
    report = render_recommendations([build_recommendation(analysis)], "text")
    section = report.split("What would change the answer")[1]
    assert "Split into" in section and "batch the updates" in section
