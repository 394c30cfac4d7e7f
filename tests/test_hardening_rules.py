"""Issue 14, rule files under --rules: bounded work and clear errors for every wrong type."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from advisor.errors import AdvisorError
from advisor.rules.pack import load_rules


def _rules(tmp_path: Path, body: str, name: str = "HOT-ROW-RATE.yaml") -> Path:
    folder = tmp_path / "rules"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(body)
    return folder


def _error(folder: Path) -> str:
    with pytest.raises(AdvisorError) as caught:
        load_rules([folder])
    return str(caught.value)


def test_an_alias_bomb_under_references_is_refused_in_bounded_memory(tmp_path):
    # A 610-byte file reached 6 GB: levels of nine aliases each, expanded by str(). Seven levels
    # here (9**7 copies of 60 characters: 290 MB had it been expanded).
    body = 'id: HOT-ROW-RATE\nreferences:\n  - &a0 ["' + "x" * 60 + '"]\n'
    for level in range(1, 8):
        body += f"  - &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]\n"
    folder = _rules(tmp_path, body)
    tracemalloc.start()
    try:
        message = _error(folder)
        _, peak_bytes = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert message == (
        f"{folder / 'HOT-ROW-RATE.yaml'}: references: references must be a list of text "
        "(one source per item)"
    )
    assert peak_bytes < 32 * 2**20


def test_aliases_of_long_text_cannot_multiply_a_rule_past_its_file_size(tmp_path):
    text = "x" * 100_000
    body = f'id: HOT-ROW-RATE\nreferences: [&t "{text}", *t, *t]\n'
    folder = _rules(tmp_path, body)
    assert _error(folder) == (
        f"{folder / 'HOT-ROW-RATE.yaml'}: references: 300,000 characters once YAML aliases are "
        "expanded; a rule file holds at most 262,144"
    )


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("references: {a: b}", "references: references must be a list of text"),
        ("references: [1, 2]", "references: references must be a list of text"),
        ("references: text", "references: references must be a list of text"),
        ("examples: [a, b]", "examples: examples must map names (fires, quiet) to a topology"),
        ("examples: {fires: {sites: []}}", "examples: examples must map names"),
        ("examples: {1: text}", "examples: examples must map names"),
    ],
)
def test_wrong_types_for_examples_and_references_are_clear_errors(tmp_path, body, says):
    folder = _rules(tmp_path, f"id: HOT-ROW-RATE\n{body}\n")
    assert _error(folder).startswith(f"{folder / 'HOT-ROW-RATE.yaml'}: {says}")


@pytest.mark.parametrize(
    "message",
    ["{row:100000000}", "{utilisation:.100000000f}", "{row:x^101}", "{row:0>{option}}"],
)
def test_message_format_widths_and_precisions_are_bounded(tmp_path, message):
    folder = _rules(tmp_path, f"id: HOT-ROW-RATE\nmessage: '{message}'\n")
    assert "message template field {" in _error(folder)


def test_a_message_width_within_the_bound_still_works(tmp_path):
    folder = _rules(tmp_path, "id: HOT-ROW-RATE\nmessage: '{row:>20} {utilisation:.3f}'\n")
    assert load_rules([folder])["HOT-ROW-RATE"].message == "{row:>20} {utilisation:.3f}"


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", ".NaN"])
def test_a_non_finite_threshold_is_refused(tmp_path, value):
    # max_utilisation: .nan silently disabled HOT-ROW-RATE (every comparison with NaN is False).
    folder = _rules(tmp_path, f"id: HOT-ROW-RATE\nparameters: {{max_utilisation: {value}}}\n")
    assert _error(folder).startswith(
        f"{folder / 'HOT-ROW-RATE.yaml'}: parameters.max_utilisation: must be a finite number"
    )
