"""Issue 26, ``collect --into`` and ``-o``: what collect writes loads with advisor's loader.

Before: a valid flow-style topology (``{name: fl, sites: [...], workload: {...}}``) became
invalid YAML (exit 0, "updated"), and hot-row names holding ESC or a newline were written as
they came, which the loader then refuses. Now names are written escaped (``\\x1b``) on one
line, every comment too, the result is loaded by advisor's own loader before it replaces the
file, and a top level in flow style is refused before collecting, with one line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from test_collect_writer import SITES, _evidence
from typer.testing import CliRunner

from advisor.cli import app
from advisor.collect.hotrows import HotRowRate
from advisor.collect.writer import check_into, evidence_to_yaml, merge_into
from advisor.errors import AdvisorError
from advisor.inputs.loading import load_topology

FLOW = (
    "{name: fl, sites: [{name: paris, nodes: 3}, {name: lyon, nodes: 3}], "
    "workload: {commits_per_s: 5}}\n"
)


def test_a_flow_style_topology_is_refused_and_left_as_it_was(tmp_path: Path):
    path = tmp_path / "topology.yaml"
    path.write_text(FLOW)
    load_topology(path)  # valid as given
    with pytest.raises(AdvisorError) as caught:
        merge_into(path, _evidence())
    assert str(caught.value) == (
        f"{path}:1:1: --into updates a topology written in block style (one key a line); "
        "this one is a flow mapping ({...}) that advisor would have to rewrite whole: turn it "
        "into block style, or write the sections with -o FILE and copy them in"
    )
    assert path.read_text() == FLOW
    with pytest.raises(AdvisorError, match="a flow mapping"):
        check_into(path)  # the same, before collecting


def test_the_command_refuses_a_flow_style_file_before_connecting(tmp_path: Path):
    path = tmp_path / "topology.yaml"
    path.write_text(FLOW)
    # port 1 on loopback: nothing listens; the refusal must come before any connection
    result = CliRunner().invoke(
        app,
        [*CONNECT_NOWHERE, "--duration", "1s", "--interval", "1s", "--into", str(path)],
    )
    assert result.exit_code == 2, result.output
    assert "a flow mapping" in result.stderr and "cannot connect" not in result.stderr
    assert path.read_text() == FLOW


CONNECT_NOWHERE = ["collect", "--user", "u", "--host", "127.0.0.1", "--port", "1"]
HOSTILE_ROWS = [
    HotRowRate("shop.or\x1b]52;c;aGk=\x07ders id=1", 40.0, 800),
    HotRowRate("shop.a\nb id=2", 20.0, 400),
    HotRowRate("shop.\u202eevil id=3", 10.0, 200),
]


def test_names_with_escapes_or_newlines_are_written_escaped_and_load(tmp_path: Path):
    path = tmp_path / "topology.yaml"
    path.write_text(SITES)
    evidence = _evidence(HOSTILE_ROWS)
    merge_into(path, evidence)
    loaded = load_topology(path)
    names = [row.name for row in loaded.topology.workload.hot_rows]
    assert names == [
        "shop.or\\x1b]52;c;aGk=\\x07ders id=1",
        "shop.a b id=2",
        "shop.\\u202eevil id=3",
    ]
    text = path.read_text()
    assert "\x1b" not in text and "\u202e" not in text
    assert "hot-row names are written with control characters as their codes" in text
    # -o writes the same sections: with sites they load too
    alone = tmp_path / "alone.yaml"
    alone.write_text(SITES + evidence_to_yaml(evidence))
    assert [row.name for row in load_topology(alone).topology.workload.hot_rows] == names


def test_names_that_meet_after_escaping_or_cutting_stay_distinct(tmp_path: Path):
    long = "shop.t " + "k" * 300
    rows = [
        HotRowRate(long + "a", 4.0, 80),
        HotRowRate(long + "b", 3.0, 60),
        HotRowRate("x\x1by", 2.0, 40),
        HotRowRate("x\\x1by", 1.0, 20),
    ]
    path = tmp_path / "topology.yaml"
    path.write_text(SITES)
    merge_into(path, _evidence(rows))
    names = [row.name for row in load_topology(path).topology.workload.hot_rows]
    assert len(set(names)) == 4 and all(len(name) <= 256 for name in names)


def test_comments_from_the_server_cannot_break_the_yaml(tmp_path: Path):
    # YAML allows no control character anywhere, comments included (PyYAML: "special
    # characters are not allowed"): a note quoting a server's text is escaped too.
    evidence = _evidence()
    evidence.notes.append("the binary log stream stopped early: bad \x1b[2J table\x00name")
    path = tmp_path / "topology.yaml"
    path.write_text(SITES)
    merge_into(path, evidence)
    load_topology(path)
    assert "\\x1b[2J" in path.read_text()
    yaml.safe_load(evidence_to_yaml(evidence))


def test_a_result_the_loader_refuses_leaves_the_file_unchanged(tmp_path: Path):
    # 20 million updates/s is beyond the schema's bound (1e7): a hostile server's numbers
    # must not turn a valid file into one advisor refuses.
    path = tmp_path / "topology.yaml"
    path.write_text(SITES)
    with pytest.raises(AdvisorError) as caught:
        merge_into(path, _evidence([HotRowRate("hot.t id=1", 2e7, 10)]))
    message = str(caught.value)
    assert message.startswith(f"{path}: not updated: the result would not load (")
    assert "updates_per_s" in message and "\n" not in message
    assert path.read_text() == SITES


def test_an_option_value_with_a_control_character_is_left_out_with_a_note():
    from advisor.collect.server import server_info

    variables = {
        "wsrep_on": "ON",
        "wsrep_provider": "/usr/lib/galera/libgalera_smm.so",
        "wsrep_provider_options": "evs.suspect_timeout = PT\x1b5S; gcs.fc_limit = 16",
    }
    info = server_info(variables, {}, "u@db1:3306")
    assert info.provider_options == {"gcs.fc_limit": 16}
    assert info.ignored_options == (("evs.suspect_timeout", "PT\\x1b5S"),)
