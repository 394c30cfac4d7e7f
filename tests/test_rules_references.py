"""Rule references: titled links to public documents, the project's own evidence named as such.

Every shipped reference is a ``{title, url}`` (a public ``https`` document) or a ``{title,
source_file}`` (this project's lab data or model, a file that exists in this checkout); a
user's pack may still write plain text. The text report, the Markdown and the HTML design
documents show each one by its title.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from advisor.documents.filters import reference_html, reference_md
from advisor.errors import AdvisorError
from advisor.rules.pack import Reference, load_rules
from advisor.text.rules import describe_rule

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden"
SHIPPED = load_rules()
# Folders of this repository: an address or a title must not send a reader into them.
INTERNAL = ("benchmarks/", "advisor/", "rules/", "tests/", "../shared", "examples/")


@pytest.mark.parametrize("rule_id", sorted(SHIPPED))
def test_every_shipped_reference_is_titled_and_public_or_named_as_our_own(rule_id: str) -> None:
    references = SHIPPED[rule_id].references
    public = [r for r in references if r.url]
    assert public, f"{rule_id} cites no public document"
    for ref in references:
        assert isinstance(ref, Reference) and ref.title, ref
        assert "://" not in ref.title and not any(p in ref.title for p in INTERNAL), ref.title
        if ref.url:
            parts = urlsplit(ref.url)
            assert parts.scheme == "https" and "." in parts.hostname, ref.url
            assert not any(p in ref.url for p in ("localhost", "127.0.0.1", "file:")), ref.url
        elif ref.source_file:
            # this project's evidence: a file a clone holds, shown as the advisor's own
            assert (REPO / ref.source_file).is_file(), ref.source_file
            assert ref.title.startswith("advisor's "), ref.title
        else:  # a printed work has no address; it must say so
            assert "printed" in ref.title, ref.title


def test_the_lab_data_that_rules_cite_is_named_as_the_advisors_own() -> None:
    cited = {r.source_file for rule in SHIPPED.values() for r in rule.references}
    assert {
        "benchmarks/calibration/lab-galera.yaml",
        "benchmarks/calibration/lab-runs.yaml",
        "advisor/model/physics.py",
    } <= cited


def test_the_terminal_shows_each_title_with_its_address() -> None:
    text = describe_rule(SHIPPED["FLOW-CONTROL"])
    assert (
        "  - Codership docs, Flow Control (wsrep_flow_control_paused, gcs.fc_limit, "
        "gcs.fc_factor): https://galeracluster.com/library/documentation/managing-fc.html"
    ) in text
    assert (
        "(benchmarks/calibration/lab-runs.yaml in the advisor source)" in text
    )  # our own evidence, as what it is


def test_titled_forms_render_as_links_and_as_named_files() -> None:
    public = Reference(title="Docs, A & B", url="https://e.example/a?x=1&y=2")
    ours = Reference(title="advisor's lab <data>", source_file="benchmarks/x.yaml")
    assert str(reference_html(public)) == (
        '<a href="https://e.example/a?x=1&amp;y=2">Docs, A &amp; B</a>'
    )
    assert reference_md(public) == "[Docs, A &amp; B](https://e.example/a?x=1&y=2)"
    assert str(reference_html(ours)) == (
        "advisor&#39;s lab &lt;data&gt; (<code>benchmarks/x.yaml</code> in the advisor source)"
    )
    assert reference_md(ours) == (
        "advisor's lab &lt;data&gt; (`benchmarks/x.yaml` in the advisor source)"
    )
    assert str(public) == "Docs, A & B: https://e.example/a?x=1&y=2"


def _pack(tmp_path: Path, references: str) -> Path:
    folder = tmp_path / "rules"
    folder.mkdir(exist_ok=True)
    (folder / "HOT-ROW-RATE.yaml").write_text(
        f"id: HOT-ROW-RATE\nreferences:\n{references}", encoding="utf-8"
    )
    return folder


def test_a_users_pack_may_still_write_plain_text_beside_the_titled_form(tmp_path: Path) -> None:
    folder = _pack(
        tmp_path,
        '  - "Our runbook, section 4: https://wiki.example/db#4"\n'
        '  - {title: "Vendor docs", url: "https://docs.example/x"}\n'
        '  - {title: "our own lab", source_file: "lab/results.yaml"}\n',
    )
    refs = load_rules([folder])["HOT-ROW-RATE"].references
    assert refs == (
        Reference(title="Our runbook, section 4: https://wiki.example/db#4"),
        Reference(title="Vendor docs", url="https://docs.example/x"),
        Reference(title="our own lab", source_file="lab/results.yaml"),
    )
    # the plain form is linked as before: the address under the words before it
    assert str(reference_html(refs[0])) == (
        '<a href="https://wiki.example/db#4">Our runbook, section 4</a>'
    )
    assert reference_md(refs[0]) == "[Our runbook, section 4](https://wiki.example/db#4)"
    assert str(refs[0]) == "Our runbook, section 4: https://wiki.example/db#4"


@pytest.mark.parametrize(
    ("item", "says"),
    [
        ('{url: "https://e.example"}', "a reference mapping needs a title"),
        ('{title: "", url: "https://e.example"}', "a reference mapping needs a title"),
        ('{title: T, url: "javascript:alert(1)"}', "url must be an http(s) address"),
        ('{title: T, url: "https://e.example/a b"}', "url must be an http(s) address"),
        ('{title: T, url: "https://e.example/\\"x"}', "url must be an http(s) address"),
        ('{title: T, url: "https://e.example", source_file: a.py}', "not both"),
        ("{title: T, source_file: ../../etc/passwd}", "source_file must be a path inside"),
        ("{title: T, source_file: /etc/passwd}", "source_file must be a path inside"),
        ("{title: T, link: https://e.example}", "got key 'link'"),
        ("{title: [a, b]}", "a mapping of title, url or source_file to text"),
    ],
)
def test_a_malformed_titled_reference_is_refused_naming_file_and_key(
    tmp_path: Path, item: str, says: str
) -> None:
    folder = _pack(tmp_path, f"  - {item}\n")
    with pytest.raises(AdvisorError) as caught:
        load_rules([folder])
    message = str(caught.value)
    assert message.startswith(f"{folder / 'HOT-ROW-RATE.yaml'}:3:") and "references: " in message
    assert says in message


@pytest.mark.parametrize("example", sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()))
def test_the_design_documents_print_titles_not_paths(example: str) -> None:
    html = (GOLDEN / example / "design.html").read_text(encoding="utf-8")
    md = (GOLDEN / example / "design.md").read_text(encoding="utf-8")
    lists = re.findall(r'<ul class="references">(.*?)</ul>', html, flags=re.S)
    items = [i for ul in lists for i in re.findall(r"<li>(.*?)</li>", ul, flags=re.S)]
    assert items
    for item in items:
        linked = re.fullmatch(r'<a href="https://[^"]+">[^<]+</a>', item)
        ours = re.fullmatch(r"[^<]+ \(<code>[\w./-]+</code> in the advisor source\)", item)
        printed = "printed book" in item and "http" not in item
        assert linked or ours or printed, item
    lines = [line.split("References:", 1)[1] for line in md.splitlines() if "References:" in line]
    assert lines
    for line in lines:
        # what is left once every titled link and every named file of ours is taken out
        rest = re.sub(r"\[[^\]]+\]\(https://[^)\s]+\)", "", line)
        rest = re.sub(r"\(`[\w./-]+` in the advisor source\)", "", rest)
        assert "http" not in rest and "`" not in rest, line
        assert not any(p in rest for p in INTERNAL), line
