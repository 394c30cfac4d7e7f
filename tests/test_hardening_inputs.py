"""Issue 14, inputs and the API: numbers as YAML 1.2 reads them, typed arguments, clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


# -- names with control characters (C0, C1, ESC, NUL, DEL, bidi) are refused at load ---------

NAMED = """\
name: NAME
description: DESCRIPTION
sites:
  - {name: a, location: {lat: 48.85, lon: 2.35}}
workload:
  hot_rows: [{name: ROW, updates_per_s: 5, writer_sites: [a]}]
"""


def _named(name: str = "t", row: str = "r", description: str = "d") -> str:
    return (
        NAMED.replace("NAME", json.dumps(name))
        .replace("DESCRIPTION", json.dumps(description))
        .replace("ROW", json.dumps(row))
    )


@pytest.mark.parametrize(
    ("char", "code"),
    [
        ("\x1b]52;c;aGk=\x07", "U+001B"),  # OSC 52: writes the terminal's clipboard
        ("\x1b]8;;http://x\x1b\\", "U+001B"),  # OSC 8: a hidden hyperlink
        ("\x00", "U+0000"),
        ("\x7f", "U+007F"),
        ("\x9b2J", "U+009B"),  # C1 CSI: clears the screen on some terminals
        ("\u202e", "U+202E"),  # right-to-left override
        ("\u2066", "U+2066"),  # left-to-right isolate
        ("\n", "U+000A"),
    ],
)
def test_control_characters_in_names_are_refused_naming_the_key(char, code):
    for text, key, line in (
        (_named(name="x" + char), "name", 1),
        (_named(row="x" + char), "workload.hot_rows[0].name", 6),
    ):
        with pytest.raises(AdvisorError) as caught:
            parse_topology(text)
        message = str(caught.value)
        assert message.startswith(f"<topology>:{line}:")
        assert f": {key}: must not contain control characters: {code} at position 2" in message


def test_a_description_keeps_newlines_and_tabs_but_not_escapes():
    loaded = parse_topology(_named(description="two\nlines\tand a tab"))
    assert loaded.topology.description == "two\nlines\tand a tab"
    with pytest.raises(AdvisorError, match="description: must not contain control characters"):
        parse_topology(_named(description="clear\x1b[2J"))


# -- a NUL or a 300-character component in a measurement path --------------------------------

MEASURED = """\
name: t
sites:
  - {name: a, location: {lat: 48.85, lon: 2.35}}
  - {name: b, location: {lat: 50.11, lon: 8.68}}
links:
  - {sites: [a, b], measurements: [{method: icmp, format: samples, file: FILE}]}
"""


@pytest.mark.parametrize(
    ("file", "says"),
    [
        ('"a\\0b.txt"', "must not contain control characters: U+0000 at position 2"),
        ("a" * 300 + ".txt", "a path component is 304 bytes; file systems allow at most 255"),
        ("x/" + "b" * 256 + "/s.txt", "a path component is 256 bytes"),
    ],
)
def test_impossible_measurement_paths_are_located_errors(tmp_path, file, says):
    path = tmp_path / "topology.yaml"
    path.write_text(MEASURED.replace("FILE", file))
    with pytest.raises(AdvisorError) as caught:
        analyse(path)
    assert str(caught.value).startswith(f"{path}:6:74: links[0].measurements[0].file: {says}")


# -- a measurement file swapped to a FIFO between the check and the open ---------------------

SWAPPED = """
import os, sys
from pathlib import Path
from advisor.errors import AdvisorError
from advisor.measurements import reading
fifo, regular = Path(sys.argv[1]), Path(sys.argv[2])
real_stat = os.stat
# The check sees a regular file; by the open, the name is a FIFO with no writer.
reading.os.stat = lambda p, *a, **k: real_stat(regular if Path(p) == fifo else p)
try:
    reading.parse_file(fifo, "samples")
except AdvisorError as error:
    print(error)
"""


def test_a_file_swapped_to_a_fifo_after_the_check_does_not_block(tmp_path):
    fifo = tmp_path / "ping.txt"
    os.mkfifo(fifo)
    regular = tmp_path / "regular.txt"
    regular.write_text("8.1\n")
    done = subprocess.run(
        [sys.executable, "-c", SWAPPED, str(fifo), str(regular)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout == (
        f"{fifo}: is not a regular file (a device, FIFO or socket); expected a measurement file\n"
    )


def test_read_text_file_checks_the_open_file_too(tmp_path, monkeypatch):
    from advisor.inputs import loading

    fifo = tmp_path / "topology.yaml"
    os.mkfifo(fifo)
    regular = tmp_path / "regular.yaml"
    regular.write_text("name: t\n")
    monkeypatch.setattr(Path, "stat", lambda self, **k: os.stat(regular))
    with pytest.raises(AdvisorError, match="is not a regular file"):
        loading.read_text_file(fifo, 2**20, what="topology file")
