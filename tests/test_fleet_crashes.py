"""Issue 26: a fleet reports every file, whatever one of them does, and dies with its parent.

Before: an unexpected exception in one file's analysis aborted the whole run with a
traceback (``--jobs 1`` and 2); a worker killed by SIGKILL gave a BrokenProcessPool traceback
and most files were never reported; a parent killed by SIGKILL left its workers running,
holding its stdout, so ``advisor recommend ... | cat`` never ended.

The crashes are injected by replacing the fleet's ``load_topology``/``recommend`` in this
process; the workers are forked from it (Linux), so they run the replacement too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from advisor import fleet
from advisor.cli import app
from advisor.fleet import recommend_many

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork and prctl: Linux")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "paris-frankfurt" / "topology.yaml"


def fake_analysis(monkeypatch: pytest.MonkeyPatch, misbehave: dict[str, str]) -> None:
    """Each file 'recommends' its own name at once; a file named in ``misbehave`` raises
    (``"raise"``) or kills the process running it (``"kill"``)."""

    def load(path: Path, *args: object, **kwargs: object) -> Path:
        return Path(path)

    def recommend(path: Path, **kwargs: object) -> str:
        action = misbehave.get(path.name)
        if action == "raise":
            raise ZeroDivisionError("float division by zero")
        if action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        return f"result of {path.name}"

    monkeypatch.setattr(fleet, "load_topology", load)
    monkeypatch.setattr(fleet, "recommend", recommend)


FILES = [Path(f"f{i:02d}.yaml") for i in range(30)]


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_unexpected_exception_is_that_files_one_line_error(monkeypatch, jobs):
    fake_analysis(monkeypatch, {"f07.yaml": "raise"})
    items = list(recommend_many(FILES, jobs=jobs))
    assert [item.path for item in items] == FILES
    assert [item.ok for item in items] == [i != 7 for i in range(30)]
    assert items[7].error == (
        "f07.yaml: advisor failed on this file (a bug: please report it with the file): "
        "ZeroDivisionError: float division by zero"
    )
    assert items[8].recommendation == "result of f08.yaml"


def test_a_worker_killed_by_sigkill_loses_no_file(monkeypatch):
    fake_analysis(monkeypatch, {"f05.yaml": "kill"})
    items = list(recommend_many(FILES, jobs=2))
    assert [item.path for item in items] == FILES
    assert [item.ok for item in items] == [i != 5 for i in range(30)]
    assert items[5].error == (
        "f05.yaml: the worker process analysing it died (killed by a signal, or out of "
        "memory), also when tried again alone"
    )
    assert all(item.recommendation == f"result of {item.path.name}" for item in items if item.ok)


def test_a_crash_through_the_command_line_is_one_line_and_exit_2(monkeypatch):
    def crash(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr(fleet, "recommend", crash)
    for jobs in ("1", "2"):
        result = CliRunner().invoke(
            app, ["recommend", str(EXAMPLE), str(EXAMPLE), "--format", "jsonl", "--jobs", jobs]
        )
        assert result.exit_code == 2, result.output
        assert (
            result.stderr.splitlines()
            == [
                f"advisor: {EXAMPLE}: advisor failed on this file (a bug: please report it with "
                "the file): ZeroDivisionError: float division by zero"
            ]
            * 2
        )


PARENT = """
import multiprocessing, sys, time
from pathlib import Path
from advisor import fleet

def slow(path, **kwargs):
    time.sleep(600)  # a long analysis: the workers are busy when the parent dies

fleet.load_topology = lambda path, *a, **k: Path(path)
fleet.recommend = slow
items = fleet.recommend_many([f"f{i}.yaml" for i in range(8)], jobs=2)
import threading

def tell():
    while len(multiprocessing.active_children()) < 2:
        time.sleep(0.05)
    print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)

threading.Thread(target=tell, daemon=True).start()
for item in items:
    print(item)
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_workers_die_with_a_parent_killed_by_sigkill():
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert parent.stdout is not None
    line = parent.stdout.readline().decode()
    workers = [int(pid) for pid in line.split()]
    assert len(workers) == 2 and all(alive(pid) for pid in workers), line
    try:
        parent.send_signal(signal.SIGKILL)
        # the pipe ends once every process holding it is gone: `recommend ... | cat` ends
        rest, _ = parent.communicate(timeout=60)
        assert rest == b""
        deadline = time.monotonic() + 30
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in workers if alive(pid)]
    finally:
        for pid in workers:  # only when the test failed: the workers it started
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
