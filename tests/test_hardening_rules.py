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
        f"{folder / 'HOT-ROW-RATE.yaml'}:3:3: references: references must be a list of text "
        "(one source per item)"
    )
    assert peak_bytes < 32 * 2**20


def test_aliases_of_long_text_cannot_multiply_a_rule_past_its_file_size(tmp_path):
    text = "x" * 100_000
    body = f'id: HOT-ROW-RATE\nreferences: [&t "{text}", *t, *t]\n'
    folder = _rules(tmp_path, body)
    assert _error(folder) == (
        f"{folder / 'HOT-ROW-RATE.yaml'}:2:13: references: 300,000 characters once YAML "
        "aliases are expanded; a rule file holds at most 262,144"
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
    column = body.index(":") + 3  # the line and column of the key's value
    assert _error(folder).startswith(f"{folder / 'HOT-ROW-RATE.yaml'}:2:{column}: {says}")


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
        f"{folder / 'HOT-ROW-RATE.yaml'}:2:31: parameters.max_utilisation: must be a finite number"
    )


# -- issue 26 --------------------------------------------------------------------------------


def test_twenty_thousand_nested_brackets_are_one_line(tmp_path):
    body = "id: HOT-ROW-RATE\nreferences: " + "[" * 20_000 + "]" * 20_000 + "\n"
    folder = _rules(tmp_path, body)
    assert _error(folder) == (
        f"{folder / 'HOT-ROW-RATE.yaml'}:2: YAML syntax error: exceeded maximum nesting depth"
    )


def test_deep_nesting_without_libyaml_is_one_line(tmp_path, monkeypatch):
    import yaml

    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)  # the pure parser recurses
    body = "id: HOT-ROW-RATE\nreferences: " + "[" * 20_000 + "]" * 20_000 + "\n"
    folder = _rules(tmp_path, body)
    assert _error(folder) == f"{folder / 'HOT-ROW-RATE.yaml'}: YAML nested too deeply"


def test_a_five_thousand_digit_width_is_refused_and_not_echoed_whole(tmp_path):
    # int() of 5,000 digits raised ValueError (Python's 4,300-digit limit): a traceback
    folder = _rules(tmp_path, "id: HOT-ROW-RATE\nmessage: '{row:" + "9" * 5000 + "}'\n")
    message = _error(folder)
    assert message == (
        f"{folder / 'HOT-ROW-RATE.yaml'}: message template field {{row:{'9' * 37}...}}: "
        "widths and precisions are at most 100"
    )


@pytest.mark.parametrize(
    ("value", "got"),
    [
        ("no", "False (YAML reads an unquoted no, off, yes or on as a boolean)"),
        ("null", "None"),
        ('""', "''"),
        ("0", "0"),
    ],
)
def test_a_severity_that_is_not_one_is_refused(tmp_path, value, got):
    folder = _rules(tmp_path, f"id: HOT-ROW-RATE\nseverity: {value}\n")
    assert _error(folder) == (
        f"{folder / 'HOT-ROW-RATE.yaml'}:2:11: severity: severity must be one of blocker, warning, "
        f"info, got {got}"
    )


@pytest.mark.parametrize(
    ("rule", "parameter", "value", "says"),
    [
        (
            "SEND-WINDOW",
            "headroom",
            "1e308",
            "must be from 1 to 100 (rule SEND-WINDOW), got 1e+308",
        ),
        ("SEND-WINDOW", "min_window", "0", "must be from 1 to 1024 (rule SEND-WINDOW), got 0"),
        # an M/D/1 queue at a utilisation of 2 waits forever: "wait_ms": Infinity in the JSON
        ("HOT-ROW-QUEUE", "max_utilisation", "2", "must be from 0.01 to 1 (rule HOT-ROW-QUEUE)"),
        # a negative rate fired on single-writer rows, and the message that could not be
        # filled blamed the shipped rules/HOT-ROW-CONFLICTS.yaml
        ("HOT-ROW-CONFLICTS", "min_conflicts_per_s", "-1", "must be from 0 to 1e+09"),
        ("BANDWIDTH", "max_utilisation", "1.5", "must be from 0.01 to 1 (rule BANDWIDTH)"),
    ],
)
def test_a_parameter_outside_its_bounds_blames_the_override(tmp_path, rule, parameter, value, says):
    folder = _rules(tmp_path, f"id: {rule}\nparameters: {{{parameter}: {value}}}\n", f"{rule}.yaml")
    column = len(f"parameters: {{{parameter}: ") + 1
    assert _error(folder).startswith(
        f"{folder / f'{rule}.yaml'}:2:{column}: parameters.{parameter}: {says}"
    )


def test_every_shipped_parameter_has_bounds_around_its_default():
    for rule in load_rules().values():
        assert set(rule.bounds) == set(rule.parameters), rule.id
        for name, value in rule.parameters.items():
            low, high = rule.bounds[name]
            assert low <= value <= high, (rule.id, name)


def test_an_override_cannot_move_the_bounds(tmp_path):
    body = "id: HOT-ROW-QUEUE\nbounds: {max_utilisation: [0, 5]}\n"
    folder = _rules(tmp_path, body, "HOT-ROW-QUEUE.yaml")
    assert _error(folder) == (
        f"{folder / 'HOT-ROW-QUEUE.yaml'}:2:9: bounds: bounds belong to the shipped rule: an "
        "override sets parameters within them"
    )


@pytest.mark.parametrize(
    ("written", "read"), [("1e1", 10.0), ("2.5E+1", 25.0), ("+3e0", 3.0), (".5e2", 50.0)]
)
def test_numbers_are_read_as_yaml_1_2_reads_them(tmp_path, written, read):
    # PyYAML reads YAML 1.1, where 1e1 (no dot, no signed exponent) is text
    folder = _rules(
        tmp_path, f"id: WRITESET-ROUNDS\nparameters: {{min_extra_ms: {written}}}\n", "W.yaml"
    )
    assert load_rules([folder])["WRITESET-ROUNDS"].parameters["min_extra_ms"] == read


def test_text_that_only_looks_numeric_is_still_refused(tmp_path):
    folder = _rules(tmp_path, "id: WRITESET-ROUNDS\nparameters: {min_extra_ms: 1e}\n", "W.yaml")
    assert _error(folder) == (
        f"{folder / 'W.yaml'}:2:13: parameters: parameters must map names to numbers"
    )


def test_a_rule_id_twice_in_one_folder_names_both_files(tmp_path):
    _rules(tmp_path, "id: HOT-ROW-RATE\nseverity: warning\n", "a.yaml")
    folder = _rules(tmp_path, "id: HOT-ROW-RATE\nseverity: info\n", "b.yaml")
    assert _error(folder) == (
        f"{folder / 'b.yaml'}:1:5: id: rule HOT-ROW-RATE is also defined in {folder / 'a.yaml'}: "
        "one file per rule id in a folder"
    )


def test_folders_given_later_adjust_what_earlier_ones_set(tmp_path):
    team = tmp_path / "team"
    mine = tmp_path / "mine"
    for folder, severity in ((team, "warning"), (mine, "info")):
        folder.mkdir()
        (folder / "r.yaml").write_text(f"id: HOT-ROW-RATE\nseverity: {severity}\n")
    assert load_rules([team, mine])["HOT-ROW-RATE"].severity == "info"
    assert load_rules([mine, team])["HOT-ROW-RATE"].severity == "warning"
