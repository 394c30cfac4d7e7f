"""Issue 14, user templates: bounded strings and lists, links out of the folder, filters."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from advisor.documents.environment import MAX_ITEMS, make_environment, render_template
from advisor.errors import AdvisorError

TENFOLD = "|replace('x', 'xxxxxxxxxx')"


def _render(folder: Path, body: str, name: str = "t.j2") -> str:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(body)
    return render_template(make_environment(folder), name, {})


def _stopped(folder: Path, body: str) -> str:
    tracemalloc.start()
    try:
        with pytest.raises(AdvisorError) as caught:
            _render(folder, body)
        _, peak_bytes = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Nothing near the 1 GB the unbounded template built: at most twice the output bound.
    assert peak_bytes < 200 * 2**20
    return str(caught.value)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        # chained replace built a 1 GB string (the bound was checked after it was built)
        ("{{ 'x'" + TENFOLD * 9 + "|length }}", "refused a replace of more than 20000000"),
        ("{{ 'x'" + ".replace('x', 'xxxxxxxxxx')" * 9 + "|length }}", "refused a replace"),
        ("{{ ('x' * 1000)|join('y' * 100000) }}", "refused a join of more than 20000000"),
        # concatenation and + in a loop double a value each round
        (
            "{% set ns = namespace(s='x') %}{% for i in range(40) %}"
            "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
            "built a value of more than 20000000 characters",
        ),
        (
            "{% set ns = namespace(s=['x']) %}{% for i in range(40) %}"
            "{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}",
            f"built a list of more than {MAX_ITEMS} items",
        ),
        (
            "{% macro d(s) %}{{ s }}{{ s }}{% endmacro %}{{ "
            + "d(" * 35
            + "'x'"
            + ")" * 35
            + " }}",
            "built a value of more than 20000000 characters",
        ),
    ],
)
def test_strings_a_template_builds_stay_within_the_output_bound(tmp_path, body, says):
    assert says in _stopped(tmp_path / "t", body)


def test_a_sort_of_twenty_million_items_is_refused_before_it_runs(tmp_path):
    # ((range(100000)|list)*200)|sort ran 23 s, past the 10 s deadline (one filter call).
    message = _stopped(tmp_path / "t", "{{ ((range(100000)|list) * 200)|sort|length }}")
    assert "refused to repeat a value 200 times" in message


def test_a_long_string_cannot_become_a_huge_list(tmp_path):
    message = _stopped(tmp_path / "t", "{{ ('x' * 20000000)|list|sort|length }}")
    assert f"refused filter list over more than {MAX_ITEMS} items" in message


def test_filters_returning_iterators_are_counted(tmp_path):
    body = "{{ ((range(100000)|list) * 10)|map('string')|list|length }}"
    assert _render(tmp_path / "t", body) == "1000000"


def test_a_link_out_of_the_templates_folder_is_refused(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0\n")
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "outside").symlink_to(tmp_path)
    (folder / "inside.j2").write_text("fine")
    (folder / "link.j2").symlink_to(folder / "inside.j2")
    assert _render(folder, '{% include "link.j2" %}', "ok.j2") == "fine"
    with pytest.raises(AdvisorError) as caught:
        _render(folder, '{% include "outside/secret.txt" %}')
    assert str(caught.value) == (
        f"{folder / 't.j2'}:1: template refused by the sandbox: template "
        f"'outside/secret.txt' links outside the templates folder (to {secret})"
    )
    assert "root:x" not in str(caught.value)


def test_the_builtin_wordwrap_and_truncate_filters_work(tmp_path):
    body = "{{ 'aaa bbb ccc ddd'|wordwrap(8) }}|{{ 'aaa bbb ccc ddd eee fff'|truncate(12) }}"
    assert _render(tmp_path / "t", body) == "aaa bbb\nccc ddd|aaa bbb..."


def test_wordwrap_and_truncate_keep_their_bounds(tmp_path):
    assert "huge width" in _stopped(tmp_path / "t", "{{ 'a b'|wordwrap(999999999) }}")
