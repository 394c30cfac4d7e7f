"""The installed package finds its rule pack and templates, wherever it is installed."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys

import pytest
from conftest import REPO


def _installed_files() -> set[str]:
    try:
        return {str(f) for f in importlib.metadata.files("galera-advisor") or []}
    except importlib.metadata.PackageNotFoundError:
        return set()


def test_the_wheel_ships_rules_and_templates():
    files = _installed_files()
    if not any(f.startswith("advisor/") and f.endswith(".py") for f in files):
        pytest.skip("not installed from a wheel (editable or not installed): nothing to check")
    rules = {f for f in files if f.startswith("advisor/_data/rules/")}
    templates = {f for f in files if f.startswith("advisor/_data/templates/")}
    assert {f"advisor/_data/rules/{p.name}" for p in (REPO / "rules").glob("*.yaml")} <= rules
    assert "advisor/_data/templates/design.md.j2" in templates


def test_rules_and_templates_are_found_outside_the_repository(tmp_path):
    # From another folder the interpreter imports the installed package, not the checkout.
    code = (
        "import json; from advisor.rules.pack import load_rules; "
        "from advisor.documents.environment import default_templates_dir as t; "
        "print(json.dumps([len(load_rules()), str(t()), (t() / 'design.md.j2').is_file()]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    count, templates, found = json.loads(done.stdout)
    assert count == len(list((REPO / "rules").glob("*.yaml")))
    assert found, templates
