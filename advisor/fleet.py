"""Many topologies at once: :func:`recommend_many` evaluates files in parallel, in order.

A fleet of topology files (one per service or region pair, kept in a repository) is judged
file by file with :func:`advisor.recommendation.recommend`; the files are independent, so
they are spread over worker processes, one per core by default. Results come back in the
order of the input, whatever order the workers finish in, and equal a sequential run's
(the engine draws from fixed seeds, never from the process). A bad file is one failed item
with its one-line error; the others still run.

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
    """``_one`` over ``files`` in a pool of ``workers`` processes, in input order."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # fork shares the imported engine with the workers (no re-import per worker); elsewhere
    # (macOS, Windows) fork is unsafe or missing, and spawn re-imports.
    context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    chunk = max(1, min(_CHUNK_FILES, len(files) // (workers * 4)))
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_worker)
    try:
        yield from pool.map(_one, files, [settings] * len(files), chunksize=chunk)
    finally:  # also when the caller stops early: files not yet started are not run
        pool.shutdown(wait=True, cancel_futures=True)


def _worker() -> None:
    """Ctrl-C is the parent's to handle: it stops the fleet and waits for the workers."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _one(path: Path, settings: _Settings) -> FleetItem:
    """One file's recommendation, or its error as one line (the first of a topology's)."""
    try:
        loaded = load_topology(path, settings.limits, measurements_root=settings.measurements_root)
        return FleetItem(path, recommend(loaded, rules_dirs=settings.rules_dirs))
    except AdvisorError as error:
        return FleetItem(path, None, str(error).splitlines()[0] if str(error) else repr(error))
