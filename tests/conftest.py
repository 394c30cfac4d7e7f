"""Shared helpers: write a topology into tmp_path and run the CLI on it."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from advisor.cli import app

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
CALIBRATION = REPO / "benchmarks" / "calibration"  # a copy of the team's ../shared/calibration


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    """``write(text, name="topology.yaml")`` dedents text into a file under tmp_path."""

    def _write(text: str, name: str = "topology.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write


@pytest.fixture
def cli() -> Callable[..., object]:
    """``cli("recommend", path, "--format", "json")`` -> click Result (stderr separate)."""
    runner = CliRunner()

    def _run(*args: object) -> object:
        return runner.invoke(
            app,
            [str(a) for a in args],
            catch_exceptions=False,
            env={"COLUMNS": "100", "NO_COLOR": "1"},
        )

    return _run
