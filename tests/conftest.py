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


# Collecting the tests runs no engine: a module-level analysis (or one in a parametrize
# list) would cost every run, even of one test, its seconds. Every evaluation goes through
# Evaluator, so while pytest collects, making one is an error that names the culprit.
_COLLECTING = {"now": False}


def pytest_collectstart(collector: pytest.Collector) -> None:
    _COLLECTING["now"] = True


def pytest_collection_finish(session: pytest.Session) -> None:
    _COLLECTING["now"] = False


def _no_engine_while_collecting() -> None:
    from advisor.engine.evaluator import Evaluator

    made = Evaluator.__init__

    def guarded(self: Evaluator, *args: object, **kwargs: object) -> None:
        if _COLLECTING["now"]:
            raise RuntimeError("a test module runs the engine while pytest collects: use a fixture")
        made(self, *args, **kwargs)  # type: ignore[arg-type]

    Evaluator.__init__ = guarded  # type: ignore[method-assign]


_no_engine_while_collecting()


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


def pytest_report_header(config: pytest.Config) -> str:
    """The seed of the per-run property tests (tests/hypothesis_profiles.py), to replay."""
    from hypothesis_profiles import SEED

    return f"hypothesis per-run seed: {SEED} (replay with HYPOTHESIS_SEED={SEED})"
