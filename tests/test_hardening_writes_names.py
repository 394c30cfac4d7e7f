"""Issue 14, "Generated names collide": every generated file and cluster name is distinct.

The decision: site names that would share a file name (``Paris``/``paris``, ``-x``/``_-x``,
``CON``/``CON_``) are refused when the topology is loaded, so ``validate`` and ``doc`` agree;
names joined from several user names (site pairs, cluster labels, a cluster's per-site
files) cannot be refused up front, since the engine picks the groups, so they are made
distinct by construction (:func:`advisor.names.distinct_names`).
"""

from __future__ import annotations

import re
import shutil
import textwrap
from itertools import combinations
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_profiles import examples
from typer.testing import CliRunner

from advisor.cli import app
from advisor.config.model import cluster_labels
from advisor.config.plan import _galera_files
from advisor.errors import AdvisorError
from advisor.inputs.loading import TopologyError, parse_topology
from advisor.names import joined_names, safe_name
from advisor.safe_write import _name_problem
from advisor.validate import validate_files

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

PER_SITE = textwrap.dedent(
    """\
    name: collide
    requirements: {commit_latency_ms: {p99: 40}, survive: site}
    sites:
      - {name: a-b, location: {lat: 38.9, lon: -77.4}, nodes: 3}
      - {name: c, location: {lat: 53.35, lon: -6.26}, nodes: 3}
      - {name: a, location: {lat: 35.7, lon: 139.7}, nodes: 3}
      - {name: b-c, location: {lat: -33.9, lon: 151.2}, nodes: 3}
    workload:
      commits_per_s: {avg: 250, peak: 700}
      hot_rows:
        - {name: r1, updates_per_s: 12, writer_sites: [a-b]}
        - {name: r2, updates_per_s: 9, writer_sites: [c]}
        - {name: r3, updates_per_s: 9, writer_sites: [a]}
        - {name: r4, updates_per_s: 9, writer_sites: [b-c]}
    """
)


def doc(topology: Path, out: Path) -> Any:
    result = CliRunner().invoke(app, ["doc", str(topology), "-o", str(out), "--format", "md"])
    return result


def test_per_site_clusters_a_b_c_get_a_file_per_channel_and_captions_match(tmp_path):
    # Item: "sites a-b, c, a, b-c in per-site clusters have 6 asynchronous channels but get
    # 5 files (...) and a chart's caption names one pair while its file shows another".
    (tmp_path / "t.yaml").write_text(PER_SITE)
    result = doc(tmp_path / "t.yaml", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    out = tmp_path / "out"
    sql = sorted((out / "config").glob("async-replication-*.sql"))
    assert len(sql) == 6  # one per pair of the 4 per-site clusters
    pairs = {re.search(r"between clusters (\S+) and (\S+),", p.read_text()) for p in sql}
    found = {frozenset(m.groups()) for m in pairs if m}
    assert found == {frozenset(pair) for pair in combinations(["a-b", "c", "a", "b-c"], 2)}
    captions = re.findall(
        r"!\[Round trip between (\S+) and (\S+) by percentile[^]]*\]\((charts/[^)]+)\)",
        (out / "design.md").read_text(),
    )
    assert len(captions) == 6 and len({file for _, _, file in captions}) == 6
    for a, b, file in captions:
        title = re.search(r"<title[^>]*>([^<]*)</title>", (out / file).read_text())
        assert title and title.group(1) == f"Round trip {a} - {b}"


@pytest.mark.parametrize(
    ("first", "second", "message"),
    [
        (
            "Paris",
            "paris",
            "site name 'paris' differs from 'Paris' (sites[0]) only in case, which file names "
            "on macOS and Windows and DNS host names ignore; rename one",
        ),
        (
            "-x",
            "_-x",
            "site name '_-x' would share generated file names with '-x' (sites[0]): both "
            "become '_-x'; rename one",
        ),
        (
            "CON",
            "CON_",
            "site name 'CON_' would share generated file names with 'CON' (sites[0]): both "
            "become 'CON_'; rename one",
        ),
    ],
)
def test_names_that_share_a_file_fail_validate_and_doc_alike(tmp_path, first, second, message):
    # Item: "sites -x and _-x, or CON and CON_, share one galera-*.cnf"; "Paris and paris
    # pass validate but doc refuses them".
    topology = tmp_path / "t.yaml"
    topology.write_text(
        "name: t\nsites:\n"
        f"  - {{name: '{first}', location: {{lat: 48.85, lon: 2.35}}}}\n"
        f"  - {{name: '{second}', location: {{lat: 48.95, lon: 2.45}}}}\n"
    )
    line = f"{topology}:4:12: sites[1].name: {message}"
    assert [str(e) for e in validate_files([topology])] == [line]
    validated = CliRunner().invoke(app, ["validate", str(topology)])
    assert (validated.exit_code, validated.stderr) == (2, line + "\n")
    documented = doc(topology, tmp_path / "out")
    assert (documented.exit_code, documented.stderr) == (2, f"advisor: {line}\n")
    assert not (tmp_path / "out").exists()


def test_names_that_stay_distinct_pass(tmp_path):
    topology = tmp_path / "t.yaml"
    topology.write_text(
        "name: t\nsites:\n  - {name: Paris, location: {lat: 48.85, lon: 2.35}}\n"
        "  - {name: paris-2, location: {lat: 48.95, lon: 2.45}}\n"
        "  - {name: _x, location: {lat: 48.9, lon: 2.4}, nodes: 0, writes: false}\n"
    )
    assert validate_files([topology]) == []


def test_a_group_a_b_and_a_site_a_b_get_distinct_cluster_names(tmp_path):
    # Item: "a group a, b and a site a_b give two clusters the same wsrep_cluster_name".
    # The paris-frankfurt example groups paris-1 with paris-2; renamed a, b and a_b.
    folder = tmp_path / "pf"
    shutil.copytree(EXAMPLES / "paris-frankfurt", folder)
    lines = (folder / "topology.yaml").read_text().splitlines(keepends=True)
    renamed = [
        line
        if "file:" in line
        else line.replace("paris-1", "a").replace("paris-2", "b").replace("frankfurt", "a_b")
        for line in lines
    ]
    (folder / "topology.yaml").write_text("".join(renamed))
    result = doc(folder / "topology.yaml", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    cnf = sorted((tmp_path / "out" / "config").glob("galera-*.cnf"))
    names = {
        p.name: re.search(r"^wsrep_cluster_name\s*=\s*(\S+)", p.read_text(), re.M) for p in cnf
    }
    by_cluster = {m.group(1) for m in names.values() if m}
    assert len(cnf) == 3 and len(by_cluster) == 2, names  # a+b (two sites), a_b
    assert all(name.startswith("a_b-") for name in by_cluster)


def test_cluster_labels_stay_readable_unless_they_meet():
    assert cluster_labels([["paris-1", "paris-2"], ["frankfurt"]]) == [
        "paris-1_paris-2",
        "frankfurt",
    ]
    met = cluster_labels([["a", "b"], ["a_b"]])
    assert met[0] != met[1] and all(label.startswith("a_b-") for label in met)
    # case only, and a leading dash made safe: the file names would meet, so the labels differ
    assert len({safe_name(x).casefold() for x in cluster_labels([["a", "B"], ["A_b"]])}) == 2
    assert len({safe_name(x) for x in cluster_labels([[".a", "b"], ["_.a_b"]])}) == 2


def test_a_spanning_clusters_site_file_cannot_meet_a_one_site_cluster_file():
    # galera-<cluster>.<site>.cnf of cluster a_b's site a, and galera-<cluster>.cnf of a
    # cluster of the one site a_b.a: both galera-a_b.a.cnf without distinct_names.
    clusters = [SimpleNamespace(sites=["a", "b"]), SimpleNamespace(sites=["a_b.a"])]
    ctx = SimpleNamespace(labels=["a_b", "a_b.a"], option=SimpleNamespace(clusters=clusters))
    files = _galera_files(ctx)  # type: ignore[arg-type]
    assert files[("a_b", "b")] == "config/galera-a_b.b.cnf"
    assert len(set(files.values())) == 3


# -- the property: any valid site names, any grouping ----------------------------------------

# Site names as the schema allows them, biased towards the characters that meet.
NAME = st.text(alphabet="aAbB-_.cC0nNoO", min_size=1, max_size=6) | st.sampled_from(
    ["CON", "con", "CON_", "nul.x", "-x", "_-x", ".x", "_.x", "a-b", "b-c", "a_b", "a", "b", "c"]
)


def _accepted(names: list[str]) -> bool:
    """What the loader accepts: distinct after safe_name, ignoring case."""
    return len({safe_name(n).casefold() for n in names}) == len(names)


@examples(ci=300)
@given(st.lists(NAME, min_size=2, max_size=7, unique=True), st.data())
def test_generated_names_never_collide(names, data):
    # Property of the issue: "distinct files and distinct cluster names" over generated names.
    topology = "name: t\nsites:\n" + "".join(
        f"  - {{name: '{n}', location: {{lat: 10, lon: {i}}}}}\n" for i, n in enumerate(names)
    )
    try:
        parse_topology(topology)
        loaded = True
    except (TopologyError, AdvisorError):
        loaded = False
    assert loaded == _accepted(names)  # the loader refuses exactly the names that would meet
    if not loaded:
        return
    size = len(names)
    cut = data.draw(st.lists(st.integers(0, size - 1), min_size=size, max_size=size))
    groups = [[n for n, g in zip(names, cut, strict=True) if g == k] for k in sorted(set(cut))]
    labels = cluster_labels(groups)
    assert len(set(labels)) == len(labels)
    assert len({safe_name(label).casefold() for label in labels}) == len(labels)
    clusters = [SimpleNamespace(sites=group) for group in groups]
    ctx = SimpleNamespace(labels=labels, option=SimpleNamespace(clusters=clusters))
    galera = list(_galera_files(ctx).values())  # type: ignore[arg-type]
    pairs = joined_names(combinations(labels, 2))
    channels = [f"config/async-replication-{n}.sql" for n in pairs.values()]
    charts = [f"charts/rtt-{n}.svg" for n in joined_names(combinations(names, 2)).values()]
    for family in (galera, channels, charts):
        assert len({name.casefold() for name in family}) == len(family)
        assert all(_name_problem(name) is None for name in family)


def test_every_file_of_the_plan_has_its_own_name(tmp_path):
    # Item: generated names collide, for every file the plan describes (failover files join
    # two cluster names with "-to-": a-to-b + c and a + b-to-c met). Protection: the joined
    # names, and render_documents' _check_distinct for what a future name might miss.
    from advisor.analysis import analyse
    from advisor.config.plan import plan_configuration
    from advisor.documents.render import render_documents

    names = {"a-b": "a-to-b", "b-c": "b-to-c"}
    text = PER_SITE
    for old, new in names.items():
        text = text.replace(f"name: {old},", f"name: {new},").replace(f"[{old}]", f"[{new}]")
    (tmp_path / "t.yaml").write_text(text)
    analysis = analyse(tmp_path / "t.yaml")
    files = plan_configuration(analysis).files()
    assert len({f.casefold() for f in files}) == len(files)
    assert set(files) <= set(render_documents(analysis, ("md",)))


def test_a_naming_bug_fails_loudly_instead_of_losing_a_file():
    from advisor.documents.render import _check_distinct

    _check_distinct(["config/a.sql", "config/b.sql"])
    with pytest.raises(AdvisorError, match=r"two generated files are both named 'config/A\.sql'"):
        _check_distinct(["config/a.sql", "config/A.sql"])
