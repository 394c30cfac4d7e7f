"""``advisor recommend``: judge each file (:func:`advisor.fleet.recommend_many`), print the
reports, and exit 1 when ``--require`` or ``--fail-on`` finds a result wanting."""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_FILE_MB", "FailOn", "recommend", "width"]

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from advisor.cli.output import EXIT_BAD_INPUT, EXIT_CHECK_FAILED, Exit, fail, out, warn
from advisor.vocabulary import SEVERITIES, Architecture, ReportFormat

if TYPE_CHECKING:
    from advisor.result import Recommendation

# What --fail-on accepts: a finding at least this severe fails the check.
FailOn = Literal["blocker", "warning"]
DEFAULT_MAX_FILE_MB = 200.0  # a day of ping -D is about 100 MB


def recommend(
    files: list[Path],
    *,
    output_format: ReportFormat,
    require: Architecture | None,
    fail_on: FailOn | None,
    rules: list[Path] | None,
    measurements_root: Path | None,
    max_file_mb: float,
    jobs: int | None,
) -> None:
    """Recommend an architecture for each file and print the results; raises
    :class:`~advisor.cli.output.Exit` with 2 for a bad file, 1 for a failed check."""
    from advisor.fleet import recommend_many
    from advisor.inputs.loading import Limits
    from advisor.text.report import render_recommendations

    items = recommend_many(
        files,
        rules_dirs=rules or (),
        limits=Limits(measurement_bytes=int(max_file_mb * 2**20)),
        measurements_root=measurements_root,
        jobs=jobs,
        progress=_progress_bar() if len(files) > 1 else None,
    )
    results = []
    bad_files = False
    for item in items:
        if item.recommendation is None:
            _end_progress(final=True)
            if output_format != "jsonl":
                fail(str(item.error))  # all or nothing: a report of some files misleads
            warn(str(item.error))
            bad_files = True
            continue
        results.append((item.path, item.recommendation))
        if output_format == "jsonl":
            _end_progress()
            out(render_recommendations([item.recommendation], "jsonl"))
    _end_progress(final=True)
    if output_format != "jsonl":
        # Only a text report wraps its lines: JSON and Markdown ask no terminal.
        wrap = {"width": width()} if output_format == "text" else {}
        out(render_recommendations([r for _, r in results], output_format, **wrap))
    problems = [p for path, r in results for p in _checks(path, r, require, fail_on)]
    for problem in problems:
        warn(problem)
    if bad_files:
        raise Exit(EXIT_BAD_INPUT)
    if problems:
        raise Exit(EXIT_CHECK_FAILED)


def _checks(
    path: Path, result: Recommendation, require: str | None, fail_on: str | None
) -> list[str]:
    """What --require and --fail-on find wrong with one file's result."""
    problems = []
    if require is not None and result.architecture != require:
        problems.append(
            f"{path}: --require {require} did not hold: {result.architecture} is recommended"
        )
    if fail_on is not None:
        severities = SEVERITIES[: SEVERITIES.index(fail_on) + 1]
        hits = sorted(
            {
                f.rule
                for f in result.findings
                if f.severity in severities and f.option in (None, result.architecture)
            }
        )
        if hits:
            problems.append(f"{path}: --fail-on {fail_on}: {', '.join(hits)}")
    return problems


def width() -> int:
    """The width of a text report: the terminal's, within 60 to 120 columns."""
    import shutil

    return max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))


_progress_shown = [False]  # whether a progress line is on stderr now


def _progress_bar() -> Callable[[int, int], None] | None:
    """A one-line count of files done on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        filled = 30 * done // total
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} files")
        sys.stderr.flush()
        _progress_shown[0] = True

    return show


def _end_progress(*, final: bool = False) -> None:
    """Clear the progress line: at the end, before an error, before output to the terminal."""
    if _progress_shown[0] and (final or sys.stdout.isatty()):
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()
        _progress_shown[0] = False
