"""Many topologies at once: :func:`recommend_many` evaluates files in parallel, in order.

A fleet of topology files (one per service or region pair, kept in a repository) is judged
file by file with :func:`advisor.recommendation.recommend`; the files are independent, so
they are spread over worker processes, one per core by default. Results come back in the
order of the input, whatever order the workers finish in, and equal a sequential run's
(the engine draws from fixed seeds, never from the process). A bad file is one failed item
with its one-line error; the others still run.

Every file is reported, whatever one of them does:

- an unexpected exception in one file's analysis (a bug) is that file's one-line error,
  naming the exception;
- a worker that dies (SIGKILL, the kernel's out-of-memory killer, a crash in a C library)
  breaks its pool: the files it had not reported are run again in a new pool, one file per
  task, and those that break that one too each alone in a pool of their own, so that only
  the file that kills its worker every time is reported as failed;
- workers die with their parent: on Linux each asks the kernel for SIGKILL when its parent
  ends (``prctl(PR_SET_PDEATHSIG)``), elsewhere a thread in it checks every second that its
  parent is still the one that started it. A parent killed by SIGKILL no longer leaves
  workers running (about 300 MB each) and holding its standard output, so that
  ``advisor recommend ... | cat`` ends. The pool must be used from the thread that made it
  (the kernel's signal follows the thread that started the worker).

>>> items = list(recommend_many(["examples/us-eu/topology.yaml", "missing.yaml"], jobs=1))
>>> items[0].recommendation.architecture, items[1].error
('per_site_clusters', 'missing.yaml: topology file not found')
"""

from __future__ import annotations

__all__ = ["FleetItem", "recommend_many"]

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from advisor.errors import AdvisorError
from advisor.inputs.loading import Limits, load_topology
from advisor.recommendation import recommend

if TYPE_CHECKING:
    from advisor.result import Recommendation
    from advisor.rules.pack import RulesDirs

# Files handed to a worker at once: few enough to keep every core busy to the end, enough
# to amortise a round trip through the pool (a small topology takes tens of ms of CPU).
_CHUNK_FILES = 4


@dataclass(frozen=True)
class FleetItem:
    """One file of a fleet: its recommendation, or the one-line error that stopped it."""

    path: Path
    recommendation: Recommendation | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.recommendation is not None


@dataclass(frozen=True)
class _Settings:
    """What every file is judged with (pickled once per worker task)."""

    rules_dirs: tuple[Path, ...]
    limits: Limits
    measurements_root: Path | None


def recommend_many(
    paths: Iterable[str | os.PathLike[str]],
    *,
    rules_dirs: RulesDirs = (),
    limits: Limits | None = None,
    measurements_root: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[FleetItem]:
    """Recommend an architecture for every topology file, in parallel, in input order.

    Parameters
    ----------
    paths
        topology.yaml files.
    rules_dirs, limits, measurements_root
        As for :func:`~advisor.inputs.loading.load_topology` and
        :func:`~advisor.recommendation.recommend`, the same for every file.
    jobs
        Worker processes; None: one per core (never more than files). 1 runs in this
        process.
    progress
        Called with (files done, files in all) after each file, in input order.

    Yields
    ------
    FleetItem
        One per path, in the order given, as soon as it and every file before it is done.
    """
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise AdvisorError(f"jobs must be a whole number of at least 1, got {jobs!r}")
    files = [Path(p) for p in paths]
    dirs = (rules_dirs,) if isinstance(rules_dirs, str | os.PathLike) else tuple(rules_dirs)
    settings = _Settings(
        tuple(Path(d) for d in dirs),
        limits or Limits(),
        None if measurements_root is None else Path(measurements_root),
    )
    workers = min(jobs or os.cpu_count() or 1, max(len(files), 1))
    return _in_order(files, settings, workers, progress)


# After a worker died: (workers, files per task) of the pool that runs the unreported files
# again; files that break that pool too are each run alone, and fail if they break it again.
_RETRY_FILES_PER_TASK = 1


def _in_order(
    files: list[Path],
    settings: _Settings,
    workers: int,
    progress: Callable[[int, int], None] | None,
) -> Iterator[FleetItem]:
    results = (
        map(_one, files, [settings] * len(files))
        if workers == 1
        else _parallel(files, settings, workers)
    )
    for done, item in enumerate(results, start=1):
        if progress is not None:
            progress(done, len(files))
        yield item


def _parallel(files: list[Path], settings: _Settings, workers: int) -> Iterator[FleetItem]:
    """``_one`` over ``files`` in pools of ``workers`` processes, in input order.

    A pool broken by a dead worker costs only a retry: its unreported files run again in a
    new pool (one per task), and those that break that one too each alone.
    """
    chunk = max(1, min(_CHUNK_FILES, len(files) // (workers * 4)))
    done: dict[int, FleetItem] = {}
    emitted = 0
    retry: list[int] = []
    for index, item in _pool_round(files, list(range(len(files))), settings, workers, chunk):
        if item is None:
            retry.append(index)
            continue
        done[index] = item
        while emitted in done:
            yield done.pop(emitted)
            emitted += 1
    alone: list[int] = []
    if retry:
        rounds = _pool_round(files, retry, settings, workers, _RETRY_FILES_PER_TASK)
        for index, item in rounds:
            if item is None:
                alone.append(index)
            else:
                done[index] = item
    for index in alone:
        for _, item in _pool_round(files, [index], settings, 1, 1):
            done[index] = item if item is not None else _died(files[index])
    while emitted in done:
        yield done.pop(emitted)
        emitted += 1


def _died(path: Path) -> FleetItem:
    return FleetItem(
        path,
        None,
        f"{path}: the worker process analysing it died (killed by a signal, or out of "
        "memory), also when tried again alone",
    )


def _pool_round(
    files: list[Path], indices: list[int], settings: _Settings, workers: int, chunk: int
) -> Iterator[tuple[int, FleetItem | None]]:
    """(index, item) for ``files[i]``, i in ``indices``, in that order; None for a file whose
    worker died before reporting it (the pool is then broken, and every later file too)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # fork shares the imported engine with the workers (no re-import per worker); elsewhere
    # (macOS, Windows) fork is unsafe or missing, and spawn re-imports.
    context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(indices)),
        mp_context=context,
        initializer=_worker,
        initargs=(os.getpid(),),
    )
    try:
        tasks = [indices[start : start + chunk] for start in range(0, len(indices), chunk)]
        futures = [pool.submit(_many, [files[i] for i in task], settings) for task in tasks]
        for task, future in zip(tasks, futures, strict=True):
            try:
                items: list[FleetItem | None] = list(future.result())
            except BrokenProcessPool:
                items = [None] * len(task)
            yield from zip(task, items, strict=True)
    finally:  # also when the caller stops early: files not yet started are not run
        pool.shutdown(wait=True, cancel_futures=True)


def _many(paths: list[Path], settings: _Settings) -> list[FleetItem]:
    return [_one(path, settings) for path in paths]


def _worker(parent_pid: int) -> None:
    """Set up a worker: die with the parent; Ctrl-C is the parent's to handle (it stops the
    fleet and waits for the workers)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not _die_with_parent():
        _watch_parent(parent_pid)
    if os.getppid() != parent_pid:  # the parent died before the kernel was asked
        os._exit(1)


# prctl(2) option: the signal this process gets when the thread that created it ends
# (include/uapi/linux/prctl.h).
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> bool:
    """Ask Linux for SIGKILL when the parent ends; False where that is not available."""
    if sys.platform != "linux":
        return False
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


# How often a worker without prctl checks that its parent is alive [s].
_PARENT_CHECK_S = 1.0


def _watch_parent(parent_pid: int) -> None:
    """A daemon thread that ends the worker once its parent is gone (it is re-parented)."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(_PARENT_CHECK_S)
        os._exit(1)

    threading.Thread(target=watch, name="advisor-parent-watch", daemon=True).start()


def _one(path: Path, settings: _Settings) -> FleetItem:
    """One file's recommendation, or its error as one line (the first of a topology's).

    An unexpected exception is a bug in advisor; it is this file's error, so that the
    other files are still reported.
    """
    try:
        loaded = load_topology(path, settings.limits, measurements_root=settings.measurements_root)
        return FleetItem(path, recommend(loaded, rules_dirs=settings.rules_dirs))
    except AdvisorError as error:
        return FleetItem(path, None, str(error).splitlines()[0] if str(error) else repr(error))
    except Exception as error:  # a bug in one file must not hide the others
        what = (str(error).splitlines() or [""])[0][:_MAX_BUG_CHARS]
        return FleetItem(
            path,
            None,
            f"{path}: advisor failed on this file (a bug: please report it with the file): "
            f"{type(error).__name__}: {what}".rstrip(": "),
        )


# The exception's own text, cut: a bug's message may quote a huge input.
_MAX_BUG_CHARS = 200
