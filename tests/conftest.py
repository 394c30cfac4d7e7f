"""Shared helpers: write a topology into tmp_path and run the CLI on it."""

from __future__ import annotations

import os
import random
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
# The guard is in place while pytest collects and gone before the first test runs, so it
# adds no frame to what tests measure (tests/test_engine_structure.py counts frames).
_MADE: dict[str, Callable[..., None]] = {}


def _refuse(self: object, *args: object, **kwargs: object) -> None:
    raise RuntimeError("a test module runs the engine while pytest collects: use a fixture")


def pytest_collectstart(collector: pytest.Collector) -> None:
    from advisor.engine.evaluator import Evaluator

    if "init" not in _MADE:
        _MADE["init"] = Evaluator.__init__
        Evaluator.__init__ = _refuse  # type: ignore[method-assign]


def pytest_collection_finish(session: pytest.Session) -> None:
    from advisor.engine.evaluator import Evaluator

    if "init" in _MADE:
        Evaluator.__init__ = _MADE.pop("init")  # type: ignore[method-assign]


# The suite runs on every core (pytest-xdist, ``-n auto`` in pyproject.toml). A group of tests
# runs on one worker, so a module's module-scoped fixtures are built once. Each module is its
# own group, but the modules that share the calibration rows (minutes to compute, cached in
# the process) share one, and so do those that start live MariaDB Galera servers (one cluster
# at a time, as in one process: paced workloads measure rates, and two clusters would share
# the CPU).
_SHARED_GROUPS = {
    "tests/test_calibration.py": "calibration rows",
    "tests/test_benchmarks_smoke.py": "calibration rows",
    "tests/test_config_dr.py": "live Galera",
}


def _group(nodeid: str) -> str:
    """The xdist group of a test: its module's, or the group the module shares."""
    module = nodeid.split("::", 1)[0]
    if module.startswith("tests/integration/"):
        return "live Galera"
    return _SHARED_GROUPS.get(module, module)


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Tests sent to the workers by :func:`_group`. (xdist's own ``--dist loadgroup`` marks a
    test by renaming it, which pytest 9 no longer allows: its groups were split.)"""
    from xdist.scheduler import LoadScopeScheduling

    class _ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)

    return _ByGroup(config, log)


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


def pytest_configure(config: pytest.Config) -> None:
    """One per-run hypothesis seed for the whole run: the xdist workers, started after this,
    inherit it from the environment (each would otherwise draw its own, and the header's
    seed would not replay their failures)."""
    if "HYPOTHESIS_SEED" not in os.environ:
        os.environ["HYPOTHESIS_SEED"] = str(random.SystemRandom().randrange(2**32))


def pytest_report_header(config: pytest.Config) -> str:
    """The seed of the per-run property tests (tests/hypothesis_profiles.py), to replay."""
    from hypothesis_profiles import SEED

    return f"hypothesis per-run seed: {SEED} (replay with HYPOTHESIS_SEED={SEED})"
