"""``advisor recommend``: the command, and a reader of its command line that needs no typer.

The command is most of what scripts and CI run, and on a small topology its start-up is most
of its time: typer's import and its parameter set-up alone cost about a third of the bare
``import numpy, pydantic, yaml``. :func:`run_fast` (called by :func:`advisor.cli.main`)
runs the command when :func:`read_arguments` takes its whole command line exactly as click
would: known options with their value apart or after ``=``, valid choices, plain decimal
numbers, at least one file. Anything else (``--help``, every usage error, a short option with
its value attached, ``--``, shell completion) goes to the typer app, which prints what it
always printed. Both run :func:`recommend`.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_MAX_FILE_MB",
    "FailOn",
    "RecommendArgs",
    "read_arguments",
    "recommend",
    "run_fast",
]

import errno
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO, cast, get_args

from advisor.cli import startup
from advisor.cli.output import (
    EXIT_BAD_INPUT,
    EXIT_CHECK_FAILED,
    Echo,
    Exit,
    fail,
    guarded,
    plain_echo,
    plain_streams,
    warn,
)
from advisor.vocabulary import SEVERITIES, Architecture, ReportFormat

if TYPE_CHECKING:
    from advisor.result import Recommendation

# What --fail-on accepts: a finding at least this severe fails the check.
FailOn = Literal["blocker", "warning"]
DEFAULT_MAX_FILE_MB = 200.0  # a day of ping -D is about 100 MB


@dataclass(frozen=True)
class RecommendArgs:
    """The command line of ``advisor recommend``, as the typer command receives it."""

    files: list[Path]
    output_format: ReportFormat = "text"
    require: Architecture | None = None
    fail_on: FailOn | None = None
    rules: list[Path] | None = None
    measurements_root: Path | None = None
    max_file_mb: float = DEFAULT_MAX_FILE_MB
    jobs: int | None = None


def recommend(args: RecommendArgs, echo: Echo) -> None:
    """Recommend an architecture for each file and print the results; raises
    :class:`~advisor.cli.output.Exit` with 2 for a bad file, 1 for a failed check."""
    from advisor.fleet import recommend_many
    from advisor.inputs.loading import Limits
    from advisor.text.report import render_recommendations

    startup.resume()  # the engine is imported: the run collects its garbage
    files, output_format = args.files, args.output_format
    items = recommend_many(
        files,
        rules_dirs=args.rules or (),
        limits=Limits(measurement_bytes=int(args.max_file_mb * 2**20)),
        measurements_root=args.measurements_root,
        jobs=args.jobs,
        progress=_progress_bar() if len(files) > 1 else None,
    )
    results = []
    bad_files = False
    for item in items:
        if item.recommendation is None:
            _end_progress(final=True)
            if output_format != "jsonl":
                fail(echo, str(item.error))  # all or nothing: a report of some files misleads
            warn(echo, str(item.error))
            bad_files = True
            continue
        results.append((item.path, item.recommendation))
        if output_format == "jsonl":
            _end_progress()
            echo(render_recommendations([item.recommendation], "jsonl"))
    _end_progress(final=True)
    if output_format != "jsonl":
        # Only a text report wraps its lines: JSON and Markdown ask no terminal (nor shutil).
        wrap = {"width": width()} if output_format == "text" else {}
        echo(render_recommendations([r for _, r in results], output_format, **wrap))
    problems = [p for path, r in results for p in _checks(path, r, args.require, args.fail_on)]
    for problem in problems:
        warn(echo, problem)
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


# -- the command line without typer ----------------------------------------------------

# Option spellings, as the typer command declares them, to the argument each sets.
_OPTIONS = {
    "--format": "output_format",
    "-f": "output_format",
    "--require": "require",
    "--fail-on": "fail_on",
    "--rules": "rules",
    "--measurements-root": "measurements_root",
    "--max-file-mb": "max_file_mb",
    "--jobs": "jobs",
    "-j": "jobs",
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "output_format": get_args(ReportFormat),
    "require": get_args(Architecture),
    "fail_on": get_args(FailOn),
}
# Numbers in the one spelling every parser reads alike; anything else ("1e3", " 5", "007")
# is left to typer, which decides what it means and words any error.
_DECIMAL = re.compile(r"[0-9]{1,9}(\.[0-9]{1,9})?")
_WHOLE = re.compile(r"[1-9][0-9]{0,5}")
_MIN_FILE_MB = 0.001  # the typer option's min


def read_arguments(argv: Sequence[str]) -> RecommendArgs | None:
    """``advisor recommend``'s arguments in ``argv`` (after the program name), or None when
    ``argv`` is another command or holds anything this reader would not take exactly as
    click does (the typer app then reads it, and words its errors)."""
    if not argv or argv[0] != "recommend":
        return None
    files: list[Path] = []
    rules: list[Path] = []
    values: dict[str, Any] = {}
    tokens = iter(argv[1:])
    for token in tokens:
        if not token.startswith("-"):
            files.append(Path(token))
            continue
        name, equals, value = token.partition("=")
        key = _OPTIONS.get(name)
        if key is None or (equals and not name.startswith("--")):
            return None  # unknown, --help, "-", "--", or "-f=json" (click reads "=json")
        if not equals:
            value = next(tokens, "")
        parsed = _value(key, value) if value and not value.startswith("-") else None
        if parsed is None:
            return None
        if key == "rules":
            rules.append(parsed)
        else:
            values[key] = parsed  # the last of a repeated option wins, as in click
    if not files:
        return None
    return RecommendArgs(files, rules=rules or None, **values)


def _value(key: str, text: str) -> Any:
    """An option's value as typer converts it, or None to leave it to typer."""
    if key in _CHOICES:
        return text if text in _CHOICES[key] else None
    if key in ("rules", "measurements_root"):
        return Path(text)
    if key == "jobs":
        return int(text) if _WHOLE.fullmatch(text) else None
    mb = float(text) if _DECIMAL.fullmatch(text) else None  # max_file_mb
    return mb if mb is not None and mb >= _MIN_FILE_MB else None


def run_fast(argv: Sequence[str]) -> int | None:
    """Run ``advisor recommend`` without typer and return its exit code, or None (nothing
    done) when the typer app must read this command line."""
    if not plain_streams() or os.environ.get("_ADVISOR_COMPLETE"):
        return None  # click's output conversions, or shell completion: typer's
    args = read_arguments(argv)
    if args is None:
        return None
    try:
        return guarded(plain_echo, lambda: recommend(args, plain_echo))
    except KeyboardInterrupt:  # between the command's own handlers: click's silent 130
        return 130
    except OSError as error:  # stderr closed under the error message: click's exit 1
        if error.errno != errno.EPIPE:
            raise
        sys.stdout = cast(TextIO, _Pacified(sys.stdout))
        sys.stderr = cast(TextIO, _Pacified(sys.stderr))
        return 1


class _Pacified:
    """A stream whose flush ignores a closed pipe (click's PacifyFlushWrapper), so that
    Python's flush at exit does not print a second error."""

    def __init__(self, wrapped: TextIO) -> None:
        self._wrapped = wrapped

    def flush(self) -> None:
        try:
            self._wrapped.flush()
        except OSError as error:
            if error.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wrapped, name)
