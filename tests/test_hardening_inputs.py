"""Issue 14, inputs and the API: numbers as YAML 1.2 reads them, typed arguments, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor import analyse, recommend
from advisor.errors import AdvisorError
from advisor.inputs.loading import load_topology, parse_topology
from advisor.rules.pack import load_rules

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "us-eu" / "topology.yaml"

ROW = """\
name: t
sites:
  - {name: a, location: {lat: 48.85, lon: 2.35}}
workload:
  hot_rows: [{name: r, updates_per_s: VALUE, writer_sites: [a]}]
"""


@pytest.mark.parametrize("value", ["1:30", "017", "0b11", "1_000", "1:30.5", "1_0.5"])
def test_yaml_11_only_numbers_are_refused_with_the_key(value):
    # updates_per_s: 1:30 was read as 90 (YAML 1.1 base 60); 017 as 15 (octal).
    with pytest.raises(AdvisorError) as caught:
        parse_topology(ROW.replace("VALUE", value))
    assert str(caught.value).startswith(
        f"<topology>:5:39: workload.hot_rows[0].updates_per_s: '{value}' is a number only in "
        "YAML 1.1"
    )


@pytest.mark.parametrize(("value", "number"), [("90", 90), ("1.5", 1.5), ("1e3", 1000), ("17", 17)])
def test_yaml_12_numbers_still_read(value, number):
    loaded = parse_topology(ROW.replace("VALUE", value))
    assert loaded.topology.workload.hot_rows[0].updates_per_s == number


def test_a_quoted_base_60_value_is_text_and_refused_as_such():
    with pytest.raises(AdvisorError, match="expected a number, got text '1:30'"):
        parse_topology(ROW.replace("VALUE", "'1:30'"))


@pytest.mark.parametrize("text", [None, b"name: t", 42])
def test_parse_topology_of_a_non_text_is_a_clear_error(text):
    with pytest.raises(AdvisorError, match=r"parse_topology takes the YAML as text \(str\), got"):
        parse_topology(text)


def test_analyse_of_none_is_a_clear_error():
    with pytest.raises(AdvisorError, match="load_topology takes a file path, got NoneType"):
        analyse(None)
    with pytest.raises(AdvisorError, match="got NoneType"):
        load_topology(None)


def test_rules_dirs_may_be_a_single_folder(tmp_path):
    # recommend(path, rules_dirs="dir") iterated the characters of "dir".
    folder = tmp_path / "my-rules"
    folder.mkdir()
    (folder / "hot.yaml").write_text("id: HOT-ROW-RATE\nseverity: warning\n")
    for given in (str(folder), folder, [str(folder)]):
        assert load_rules(given)["HOT-ROW-RATE"].severity == "warning"
    result = recommend(EXAMPLE, rules_dirs=str(folder))
    assert result.architecture == recommend(EXAMPLE, rules_dirs=[folder]).architecture


@pytest.mark.parametrize("given", [5, [1], b"rules", {"a": "b"}])
def test_rules_dirs_of_a_wrong_type_is_a_clear_error(given):
    with pytest.raises(AdvisorError, match="rules_dirs must be a folder or a list of folders"):
        load_rules(given)
