"""Issue 14, injection: what reaches the terminal and Markdown from names and rule files."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from advisor import recommend
from advisor.cli import app
from advisor.documents.filters import md
from advisor.rules.pack import load_rules
from advisor.text.escape import markdown_inline, terminal
from advisor.text.report import render_recommendations
from advisor.text.rules import describe_rule, list_rules

HOSTILE_ROW = "<img src=x onerror=alert(1)> [click](http://evil.example) # H ```"

TOPOLOGY = f"""\
name: "t <b>bold</b>"
sites:
  - {{name: a, location: {{lat: 48.85, lon: 2.35}}}}
  - {{name: b, location: {{lat: 50.11, lon: 8.68}}}}
links:
  - {{sites: [a, b], measurements: [{{method: icmp, samples_ms: [20, 21]}}]}}
workload:
  hot_rows: [{{name: {json.dumps(HOSTILE_ROW)}, updates_per_s: 90, writer_sites: [a, b]}}]
"""

# What a terminal acts on: ESC, BEL, C1 controls, bidi overrides.
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _recommendation(tmp_path: Path):
    path = tmp_path / "topology.yaml"
    path.write_text(TOPOLOGY)
    return path, recommend(path)


def test_recommend_markdown_escapes_html_links_headings_and_fences(tmp_path):
    path, _ = _recommendation(tmp_path)
    result = CliRunner().invoke(app, ["recommend", "-f", "markdown", str(path)])
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "<img" not in out and "<b>" not in out
    assert "[click](http" not in out and "```" not in out
    assert out.startswith("# t &lt;b&gt;bold&lt;/b&gt;: ")
    escaped_row = markdown_inline(HOSTILE_ROW)
    assert escaped_row == (
        "&lt;img src=x onerror=alert(1)&gt; \\[click\\](http://evil.example) \\# H \\`\\`\\`"
    )
    assert f"| {escaped_row} |" in out  # the hot-row table cell
    assert f'"{escaped_row}"' in out  # quoted in a finding's message


def test_doc_and_recommend_share_one_markdown_escape():
    for text in (HOSTILE_ROW, "a|b", "&amp;", "x\x1b[2J"):
        assert md(text) == markdown_inline(text)


def test_text_and_markdown_show_terminal_controls_as_escapes(tmp_path):
    # The loader refuses them in names; a Recommendation built another way (the API, an old
    # JSON file) still cannot write the clipboard (OSC 52) or clear the screen.
    _, result = _recommendation(tmp_path)
    hostile = result.model_copy(
        update={
            "topology": "t\x1b]52;c;aGk=\x07",
            "summary": "s\x1b[2J\x9b2J\u202eevil",
        }
    )
    text = render_recommendations([hostile], "text")
    assert not RAW_CONTROL.search(text)
    assert text.startswith("t\\x1b]52;c;aGk=\\x07: per_site_clusters\n")
    assert "\ns\\x1b[2J\\x9b2J\\u202eevil\n" in text
    markdown = render_recommendations([hostile], "markdown")
    assert not RAW_CONTROL.search(markdown)  # escaped, then the backslashes escaped for Markdown
    assert markdown.startswith("# t\\\\x1b\\]52;c;aGk=\\\\x07: per_site_clusters\n")


def test_json_output_escapes_controls_as_json_does(tmp_path):
    _, result = _recommendation(tmp_path)
    hostile = result.model_copy(update={"topology": "t\x1b]52;c;aGk=\x07"})
    out = render_recommendations([hostile], "json")
    assert not RAW_CONTROL.search(out)
    assert json.loads(out)["topology"] == "t\x1b]52;c;aGk=\x07"


def test_rule_files_reach_the_terminal_escaped(tmp_path):
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "x.yaml").write_text(
        'id: HOT-ROW-RATE\ntitle: "clear\\e[2J"\nreferences: ["\\e]8;;http://evil\\e\\\\link"]\n'
    )
    rules = load_rules([folder])
    for out in (list_rules(rules), describe_rule(rules["HOT-ROW-RATE"])):
        assert not RAW_CONTROL.search(out)
        assert "clear\\x1b[2J" in out


def test_terminal_keeps_newlines_and_tabs():
    assert terminal("a\tb\nc\x07") == "a\tb\nc\\x07"


def test_an_error_message_quoting_the_input_reaches_stderr_escaped(tmp_path, monkeypatch):
    from advisor import analysis
    from advisor.errors import AdvisorError

    def hostile(*args, **kwargs):
        raise AdvisorError("bad name 'x\x1b]52;c;aGk=\x07'")

    path, _ = _recommendation(tmp_path)
    monkeypatch.setattr(analysis, "analyse", hostile)
    result = CliRunner().invoke(app, ["sweep", str(path), "--vary", "rtt", "--range", "0:9"])
    assert result.exit_code == 2
    assert result.stderr == "advisor: bad name 'x\\x1b]52;c;aGk=\\x07'\n"


# -- issue 26 --------------------------------------------------------------------------------


def test_a_rule_file_s_escape_sequences_reach_no_document_raw(tmp_path):
    # design.html kept the ESC of an overridden title and message: autoescaping knows <>&"'
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "r.yaml").write_text(
        'id: HOT-ROW-RATE\ntitle: "evil \\e]52;c;aGk=\\a title"\nmessage: "boom \\e[2J {row}"\n'
    )
    path, _ = _recommendation(tmp_path)
    out = tmp_path / "docs"
    result = CliRunner().invoke(
        app, ["doc", str(path), "--rules", str(rules), "-o", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    documents = {name: (out / name).read_text() for name in ("design.html", "design.md", "adr.md")}
    for name, text in documents.items():
        assert not RAW_CONTROL.search(text), name
    assert "boom \\x1b[2J" in documents["design.html"]
    assert "evil \\x1b]52;c;aGk=\\x07 title" in documents["design.html"]


def test_a_closed_standard_output_is_an_error(tmp_path):
    # with >&- Python starts with sys.stdout None and click's echo printed nothing: exit 0
    import os
    import subprocess
    import sys

    path, _ = _recommendation(tmp_path)
    for args in (["recommend", str(path)], ["schema"], ["rules"]):
        done = subprocess.run(
            [sys.executable, "-m", "advisor", *args],
            preexec_fn=lambda: os.close(1),
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
        assert (done.returncode, done.stderr) == (
            2,
            "advisor: cannot write the output: the standard output is closed\n",
        ), args


def test_doc_with_a_closed_standard_output_writes_nothing(tmp_path):
    import os
    import subprocess
    import sys

    path, _ = _recommendation(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "advisor", "doc", str(path), "-o", str(tmp_path / "docs")],
        preexec_fn=lambda: os.close(1),
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert not (tmp_path / "docs").exists()


def test_empty_paths_are_refused_not_read_as_the_current_folder(tmp_path, monkeypatch):
    path, _ = _recommendation(tmp_path)
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    for args, option in (
        (["doc", str(path), "-o", ""], "--output"),
        (["doc", str(path), "-o", "out", "--templates", " "], "--templates"),
        (["recommend", str(path), "--rules", ""], "--rules"),
        (["sweep", str(path), "--vary", "rtt", "--range", "1:2:2", "--chart", ""], "--chart"),
        (["validate", str(path), "--measurements-root", ""], "--measurements-root"),
    ):
        result = CliRunner().invoke(app, args, catch_exceptions=False)
        assert (result.exit_code, result.stderr) == (
            2,
            f"advisor: {option} is empty: give a path ('.' for the current folder)\n",
        ), args
    assert list(here.iterdir()) == []
    result = CliRunner().invoke(app, ["doc", str(path), "-o", "."], catch_exceptions=False)
    assert result.exit_code == 0 and (here / "design.md").is_file()  # '.' is still allowed


def _strict_json(text: str) -> object:
    """JSON as RFC 8259 has it: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> object:
        raise AssertionError(f"{constant} in the JSON")

    return json.loads(text, parse_constant=refuse)


def test_an_infinite_finding_value_is_null_with_its_reason():
    from advisor.result import Finding

    finding = Finding(
        rule="HOT-ROW-QUEUE",
        severity="warning",
        subject="row",
        message="m",
        values={"wait_ms": float("inf"), "margin_ms": float("-inf"), "commit_p50_ms": 2.5},
    )
    data = finding.model_dump(mode="json")
    assert data["values"] == {"wait_ms": None, "margin_ms": None, "commit_p50_ms": 2.5}
    assert data["unbounded"] == {"wait_ms": "unbounded", "margin_ms": "unbounded below"}
    plain = Finding(rule="R", severity="info", subject="s", message="m", values={"a": 1.0})
    assert "unbounded" not in plain.model_dump(mode="json")  # other findings as they were


def test_a_nan_anywhere_in_the_result_is_one_clear_error():
    import pytest

    from advisor.errors import AdvisorError
    from advisor.result import Finding, Throughput

    with pytest.raises(AdvisorError) as caught:
        Throughput(commits_per_s=10.0, txn_latency_ms={"p50": float("nan")})
    assert str(caught.value) == (
        "the result holds a number that is not finite at Throughput.txn_latency_ms.p50 = nan "
        "(a bug in advisor: please report it with the topology)"
    )
    with pytest.raises(AdvisorError, match=r"Finding.values.x = nan"):
        Finding(rule="R", severity="info", subject="s", message="m", values={"x": float("nan")})
    with pytest.raises(AdvisorError, match=r"Throughput.commits_per_s = inf"):
        Throughput(commits_per_s=float("inf"), txn_latency_ms={})


def test_a_wait_that_never_ends_reaches_the_json_as_null(tmp_path, monkeypatch):
    # HOT-ROW-QUEUE at max_utilisation 2 printed "wait_ms": Infinity. The rule's bounds now
    # refuse that override; lifted here, the whole pipeline still writes valid JSON.
    import advisor.rules.pack

    monkeypatch.setattr(advisor.rules.pack, "_check_bound", lambda *args: None)
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "q.yaml").write_text("id: HOT-ROW-QUEUE\nparameters: {max_utilisation: 2}\n")
    path = tmp_path / "topology.yaml"
    path.write_text(TOPOLOGY)
    result = CliRunner().invoke(
        app, ["recommend", str(path), "--rules", str(rules), "-f", "json"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    data = _strict_json(result.stdout)
    queued = [f for f in data["findings"] if f["rule"] == "HOT-ROW-QUEUE"]
    unbounded = [f for f in queued if "unbounded" in f]
    assert unbounded, queued
    for finding in unbounded:
        assert finding["unbounded"] == {"wait_ms": "unbounded"}
        assert finding["values"]["wait_ms"] is None
