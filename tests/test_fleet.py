"""A fleet of topologies: recommend_many and `advisor recommend --format jsonl --jobs N`.

Results come in input order, equal the one-file runs, and a bad file is one error that does
not stop the others.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from advisor.cli import app
from advisor.errors import AdvisorError
from advisor.fleet import recommend_many
from advisor.recommendation import recommend
from advisor.text.report import to_json

EXAMPLES = sorted(Path("examples").glob("*/topology.yaml"))


@pytest.fixture
def fleet(tmp_path: Path) -> list[Path]:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: no-sites\n", encoding="utf-8")
    return [EXAMPLES[0], bad, *EXAMPLES[1:]]


def test_parallel_results_come_in_input_order_and_equal_one_file_runs(fleet: list[Path]) -> None:
    items = list(recommend_many(fleet, jobs=2))
    assert [item.path for item in items] == fleet
    assert [item.ok for item in items] == [True, False, *([True] * (len(fleet) - 2))]
    assert items[1].error == f"{fleet[1]}:1:1: sites: required key 'sites' is missing"
    for item in items:
        if item.recommendation is not None:
            assert item.recommendation == recommend(item.path)


def test_progress_counts_every_file_in_order(fleet: list[Path]) -> None:
    seen: list[tuple[int, int]] = []
    list(recommend_many(fleet[:3], jobs=2, progress=lambda done, total: seen.append((done, total))))
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_jobs_below_one_is_refused() -> None:
    with pytest.raises(AdvisorError, match="jobs must be a whole number of at least 1, got 0"):
        recommend_many(EXAMPLES, jobs=0)


def test_jsonl_prints_one_object_a_line_and_exits_2_for_the_bad_file(fleet: list[Path]) -> None:
    files = [str(p) for p in fleet]
    parallel = CliRunner().invoke(app, ["recommend", *files, "--format", "jsonl", "--jobs", "2"])
    sequential = CliRunner().invoke(app, ["recommend", *files, "--format", "jsonl", "-j", "1"])
    assert parallel.exit_code == sequential.exit_code == 2
    assert parallel.stdout == sequential.stdout
    lines = parallel.stdout.splitlines()
    assert len(lines) == len(fleet) - 1
    good = [p for p in fleet if p != fleet[1]]
    for line, path in zip(lines, good, strict=True):
        assert json.loads(line) == json.loads(to_json(recommend(path)))
    assert parallel.stderr == f"advisor: {fleet[1]}:1:1: sites: required key 'sites' is missing\n"


def test_other_formats_print_nothing_when_a_file_is_bad(fleet: list[Path]) -> None:
    result = CliRunner().invoke(app, ["recommend", *map(str, fleet), "--format", "json"])
    assert result.exit_code == 2
    assert result.stdout == ""


def test_a_bad_file_of_a_fleet_cannot_write_terminal_controls(tmp_path: Path) -> None:
    # A file name is user text: an OSC 52 (clipboard write) in it is shown as codes, as the
    # one-file errors are (advisor.text.escape.terminal).
    hostile = tmp_path / "x\x1b]52;c;aGk=\x07.yaml"
    hostile.write_text("name: no-sites\n", encoding="utf-8")
    files = [str(EXAMPLES[0]), str(hostile)]
    result = CliRunner().invoke(app, ["recommend", *files, "--format", "jsonl", "-j", "1"])
    assert result.exit_code == 2
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "sites: required key 'sites' is missing" in result.stderr
