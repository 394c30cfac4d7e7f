"""Every docstring example (``>>>``) of every module under advisor/ runs with the standard
``doctest`` module, from the repository root, with no option flags beyond those an example
sets itself (``# doctest: +ELLIPSIS``)."""

from __future__ import annotations

import doctest
import importlib
import io
import types

import pytest
from conftest import REPO

# Modules that cannot be imported for their docstrings, each with the reason.
NOT_IMPORTED = {"advisor.__main__": "importing it runs the command line"}
# How many modules have examples today; fewer means examples were lost. Raise it as they grow.
MIN_MODULES_WITH_EXAMPLES = 20


def _module_names() -> list[str]:
    names = []
    for path in sorted((REPO / "advisor").rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return [name for name in names if name not in NOT_IMPORTED]


def _doctests(module: types.ModuleType) -> list[doctest.DocTest]:
    return [test for test in doctest.DocTestFinder().find(module) if test.examples]


def _failures(module: types.ModuleType) -> tuple[int, str]:
    """(examples attempted, the report of every failure; empty if none failed)."""
    report = io.StringIO()
    runner = doctest.DocTestRunner(verbose=False, optionflags=0)
    for test in _doctests(module):
        runner.run(test, out=report.write)
    return runner.tries, report.getvalue()


MODULES = _module_names()
WITH_EXAMPLES = [name for name in MODULES if _doctests(importlib.import_module(name))]


def test_every_module_is_found():
    assert "advisor.cli" in MODULES and "advisor.model.rtt" in MODULES
    assert set(NOT_IMPORTED) <= {
        ".".join(p.relative_to(REPO).with_suffix("").parts)
        for p in (REPO / "advisor").rglob("*.py")
    }, "NOT_IMPORTED names a module that no longer exists"


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples(name, monkeypatch):
    monkeypatch.chdir(REPO)
    tries, report = _failures(importlib.import_module(name))
    assert tries > 0
    assert not report, f"doctest failures in {name}:\n{report}"


def test_modules_keep_their_examples():
    assert len(WITH_EXAMPLES) >= MIN_MODULES_WITH_EXAMPLES, (
        f"only {len(WITH_EXAMPLES)} modules have docstring examples, expected at least "
        f"{MIN_MODULES_WITH_EXAMPLES}: {WITH_EXAMPLES}"
    )


def test_a_wrong_example_is_reported():
    """The harness itself: a module whose example is wrong fails, with the details."""
    module = types.ModuleType("fake_module")
    exec(
        'def double(x):\n    """\n    >>> double(2)\n    5\n    """\n    return 2 * x\n',
        module.__dict__,
    )
    tries, report = _failures(module)
    assert tries == 1
    assert "double(2)" in report and "Expected:\n    5\nGot:\n    4" in report


# Modules of advisor/model/ whose public functions and methods carry numpy-style docstrings
# (pvlib's habit): a Parameters section, each with its unit, and a Returns section.
NUMPY_DOCSTRING_MODULES = (
    "membership",
    "physics",
    "pipeline",
    "provider_options",
    "replication",
    "row_locks",
    "rtt",
    "tcp",
)
# Left to their own changes (issue 20): physics' relay paths are going.
NUMPY_DOCSTRING_PENDING = {"physics.relay_paths_ms", "physics.relay_path"}


def _public_callables(module: types.ModuleType) -> list[tuple[str, object]]:
    import inspect

    found = []
    for name, value in vars(module).items():
        if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(value):
            found.append((name, value))
        elif inspect.isclass(value):
            for attr, member in vars(value).items():
                if not attr.startswith("_") and isinstance(member, (classmethod, staticmethod)):
                    found.append((f"{name}.{attr}", member.__func__))
                elif not attr.startswith("_") and inspect.isfunction(member):
                    found.append((f"{name}.{attr}", member))
    return found


@pytest.mark.parametrize("short", NUMPY_DOCSTRING_MODULES)
def test_model_functions_have_numpy_docstrings(short):
    import inspect

    module = importlib.import_module(f"advisor.model.{short}")
    missing = []
    for name, function in _public_callables(module):
        if f"{short}.{name}" in NUMPY_DOCSTRING_PENDING:
            continue
        doc = inspect.getdoc(function) or ""
        takes = [p for p in inspect.signature(function).parameters if p not in ("self", "cls")]
        if (takes and "Parameters\n----------" not in doc) or "Returns\n-------" not in doc:
            missing.append(name)
    assert not missing, f"advisor.model.{short}: no Parameters/Returns sections in {missing}"
