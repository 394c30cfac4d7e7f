"""The command line: a thin typer layer, one library call per command.

Only typer is imported at start-up; every command imports what it needs, so that
``advisor --help`` stays fast. User errors (:class:`AdvisorError`) print one line on stderr
and exit 2; a failed ``--require`` or ``--fail-on`` check exits 1.
"""

from __future__ import annotations

__all__ = ["app", "main"]

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, NoReturn

import typer

from advisor.vocabulary import SEVERITIES, Architecture, ReportFormat, SweepFormat, SweepVariable

if TYPE_CHECKING:
    from advisor.inputs.loading import LoadedTopology
    from advisor.result import Recommendation

app = typer.Typer(
    name="advisor",
    help="Can this Galera cluster span these sites, or must each site run its own cluster?",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2


# What --fail-on accepts: a finding at least this severe fails the check.
FailOn = Literal["blocker", "warning"]


def _load(path: Path, root: Path | None, max_file_mb: float) -> LoadedTopology:
    """Load a topology with the command line's limits and measurement folder."""
    from advisor.inputs.loading import Limits, load_topology

    limits = Limits(measurement_bytes=int(max_file_mb * 2**20))
    return load_topology(path, limits, measurements_root=root)


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    from advisor.text.escape import terminal

    typer.echo(f"advisor: {terminal(message)}", err=True)  # a message may quote the input
    raise typer.Exit(code)


def _warn(message: str) -> None:
    """One line on stderr that does not end the run (one bad file of a fleet)."""
    from advisor.text.escape import terminal

    typer.echo(f"advisor: {terminal(message)}", err=True)  # a message may quote the input


def _user_errors(function: Callable[..., None]) -> Callable[..., None]:
    """User errors become one line on stderr and exit code 2; Ctrl-C exits 130."""

    @functools.wraps(function)
    def run(*args: object, **kwargs: object) -> None:
        from advisor.errors import AdvisorError

        try:
            function(*args, **kwargs)
        except AdvisorError as error:
            _fail(str(error))
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        except OSError as error:  # the output could not be written: /dev/full, a closed pipe
            _output_failed(error)

    return run


def _output_failed(error: OSError) -> NoReturn:
    """One line and exit 2 (FORMAT.md: nothing usable was produced), and no second error
    when Python flushes the same broken stdout at exit."""
    import contextlib
    import os
    import sys

    where = error.filename if error.filename is not None else "the output"
    with contextlib.suppress(OSError, ValueError):  # no real stdout (a test runner's buffer)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    _fail(f"cannot write {where}: {error.strerror or error}")


def _command(name: str | None = None) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register a command of the app, with :func:`_user_errors`."""

    def register(function: Callable[..., None]) -> Callable[..., None]:
        return app.command(name)(_user_errors(function))

    return register


FilesArg = Annotated[list[Path], typer.Argument(help="topology.yaml files.", show_default=False)]
FileArg = Annotated[Path, typer.Argument(help="A topology.yaml file.", show_default=False)]
RootOpt = Annotated[
    Path | None,
    typer.Option(
        "--measurements-root",
        help="A second folder measurement files may come "
        "from (by default only the topology's own folder; see SECURITY.md).",
    ),
]
MaxMbOpt = Annotated[
    float,
    typer.Option(
        "--max-file-mb",
        min=0.001,
        help="Largest measurement file to read [MB] (a day of ping -D is about 100 MB).",
    ),
]
RulesOpt = Annotated[
    list[Path] | None,
    typer.Option("--rules", help="Folder of rule files overriding the shipped pack (repeatable)."),
]


JobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        help="Worker processes for several files (default: one per core).",
    ),
]


@_command()
def recommend(
    files: FilesArg,
    output_format: Annotated[ReportFormat, typer.Option("--format", "-f")] = "text",
    require: Annotated[
        Architecture | None,
        typer.Option("--require", help="Exit 1 unless this architecture is recommended."),
    ] = None,
    fail_on: Annotated[
        FailOn | None,
        typer.Option(
            "--fail-on", help="Exit 1 if the recommended option has findings this severe."
        ),
    ] = None,
    rules: RulesOpt = None,
    measurements_root: RootOpt = None,
    max_file_mb: MaxMbOpt = 200.0,
    jobs: JobsOpt = None,
) -> None:
    """Recommend an architecture for each topology file, with its numbers and reasons.

    Several files are judged in parallel. With --format jsonl each result is one JSON line,
    in the order of the files, and a bad file is one error on stderr (exit 2) that does not
    stop the others; the other formats print nothing unless every file is valid.
    """
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
                _fail(str(item.error))  # all or nothing: a report of some files misleads
            _warn(str(item.error))
            bad_files = True
            continue
        results.append((item.path, item.recommendation))
        if output_format == "jsonl":
            _end_progress()
            typer.echo(render_recommendations([item.recommendation], "jsonl"))
    _end_progress(final=True)
    if output_format != "jsonl":
        typer.echo(render_recommendations([r for _, r in results], output_format, width=_width()))
    problems = [p for path, result in results for p in _checks(path, result, require, fail_on)]
    for problem in problems:
        _warn(problem)
    if bad_files:
        raise typer.Exit(EXIT_BAD_INPUT)
    if problems:
        raise typer.Exit(EXIT_CHECK_FAILED)


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


_progress_shown = [False]  # whether a progress line is on stderr now


def _progress_bar() -> Callable[[int, int], None] | None:
    """A one-line count of files done on stderr, only when stderr is a terminal."""
    import sys

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
    import sys

    if _progress_shown[0] and (final or sys.stdout.isatty()):
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()
        _progress_shown[0] = False


@_command()
def doc(
    file: FileArg,
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder to write into.")],
    templates: Annotated[
        Path | None, typer.Option("--templates", help="Folder of templates searched first.")
    ] = None,
    formats: Annotated[
        str, typer.Option("--format", help="Comma-separated: md, html, adr.")
    ] = "md,html,adr",
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files in the folder the tool did not write.")
    ] = False,
    rules: RulesOpt = None,
    measurements_root: RootOpt = None,
    max_file_mb: MaxMbOpt = 200.0,
) -> None:
    """Write the design document(s) and the configuration artifacts into a folder."""
    from advisor.analysis import analyse
    from advisor.documents.render import write_documents
    from advisor.errors import AdvisorError

    chosen = [f.strip() for f in formats.split(",") if f.strip()]
    unknown = sorted(set(chosen) - {"md", "html", "adr"})
    if unknown or not chosen:
        raise AdvisorError(f"--format takes md, html and adr, got {formats!r}")
    analysis = analyse(_load(file, measurements_root, max_file_mb), rules_dirs=rules or ())
    written = write_documents(
        analysis,
        output,
        formats=chosen,
        templates_dir=templates,
        force=force,
    )
    for path in written:
        typer.echo(str(path))


@_command()
def validate(
    files: FilesArg, measurements_root: RootOpt = None, max_file_mb: MaxMbOpt = 200.0
) -> None:
    """Check topology files and the measurement files they name; list every error."""
    from advisor.inputs.loading import Limits
    from advisor.text.escape import terminal
    from advisor.validate import validate_files

    limits = Limits(measurement_bytes=int(max_file_mb * 2**20))
    problems = validate_files(files, limits=limits, measurements_root=measurements_root)
    for problem in problems:
        typer.echo(terminal(str(problem)), err=True)
    if problems:
        raise typer.Exit(EXIT_BAD_INPUT)
    typer.echo(f"{len(files)} file(s) valid")


@_command()
def schema() -> None:
    """Print the JSON Schema of topology.yaml, for editors and CI checks."""
    from advisor.inputs.schema import topology_schema_json

    typer.echo(topology_schema_json())


@_command("rules")
def rules_command(
    rule_id: Annotated[str | None, typer.Argument(help="A rule id to explain.")] = None,
    rules: RulesOpt = None,
) -> None:
    """List the rules, or explain one with its rationale and references."""
    from advisor.errors import AdvisorError
    from advisor.rules.pack import load_rules
    from advisor.text.rules import describe_rule, list_rules

    pack = load_rules(rules or ())
    if rule_id is None:
        typer.echo(list_rules(pack))
        return
    if rule_id.upper() not in pack:
        raise AdvisorError(f"unknown rule {rule_id!r}; known rules: {', '.join(sorted(pack))}")
    typer.echo(describe_rule(pack[rule_id.upper()]))


@_command()
def sweep(
    file: FileArg,
    vary: Annotated[SweepVariable, typer.Option("--vary", help="The quantity to vary.")],
    value_range: Annotated[
        str, typer.Option("--range", help="A:B, or A:B:N for N points (default 200).")
    ],
    output_format: Annotated[SweepFormat, typer.Option("--format", "-f")] = "text",
    chart: Annotated[
        Path | None, typer.Option("--chart", help="Also write the chart as an SVG file.")
    ] = None,
    rules: RulesOpt = None,
    measurements_root: RootOpt = None,
    max_file_mb: MaxMbOpt = 200.0,
) -> None:
    """Show where the recommendation flips as one quantity varies: a table and a chart."""
    from advisor.analysis import analyse
    from advisor.sweep.grid import parse_range
    from advisor.sweep.grid import sweep as run
    from advisor.sweep.render import render_sweep, sweep_svg

    grid = parse_range(value_range, variable=vary)
    if chart is not None:
        from advisor.safe_write import check_file_target

        check_file_target(chart)  # before the sweep, not after it
    loaded = _load(file, measurements_root, max_file_mb)
    result = run(analyse(loaded, rules_dirs=rules or ()), vary, grid)
    typer.echo(render_sweep(result, output_format, width=_width()))
    if chart is not None:
        from advisor.safe_write import write_file

        write_file(chart, sweep_svg(result))


def _width() -> int:
    import shutil

    return max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))


def _register_collect() -> None:
    """``advisor collect`` lives in advisor.collect (typer only at import; the driver later)."""
    from advisor.collect.cli import collect_command

    app.command("collect", help=collect_command.__doc__)(_user_errors(collect_command))


_register_collect()


def main() -> None:
    """Console-script entry point."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        # A PYTHONIOENCODING or locale that cannot spell a name (latin-1 and a hot row
        # called "東京") writes \u6771 instead of a UnicodeEncodeError traceback.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    app(prog_name="advisor")
