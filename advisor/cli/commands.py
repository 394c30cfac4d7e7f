"""The typer app: every command of ``advisor``, one library call each.

Only typer is imported at start-up; every command imports what it needs, so that
``advisor --help`` stays fast. User errors (:class:`AdvisorError`) print one line on stderr
and exit 2; a failed ``--require`` or ``--fail-on`` check exits 1 (:mod:`advisor.cli.output`).
"""

from __future__ import annotations

__all__ = ["app"]

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from advisor.cli import startup
from advisor.cli.check import check_command
from advisor.cli.collect import collect_command
from advisor.cli.output import EXIT_BAD_INPUT, Exit, guarded, out, require_stdout
from advisor.cli.recommend import DEFAULT_MAX_FILE_MB, FailOn, width
from advisor.cli.recommend import recommend as run_recommend
from advisor.vocabulary import Architecture, ReportFormat, SweepFormat, SweepVariable

if TYPE_CHECKING:
    from advisor.inputs.loading import LoadedTopology

app = typer.Typer(
    name="advisor",
    help="Can this Galera cluster span these sites, or must each site run its own cluster?",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _load(path: Path, root: str | None, max_file_mb: float) -> LoadedTopology:
    """Load a topology with the command line's limits and measurement folder."""
    from advisor.inputs.loading import Limits, load_topology

    limits = Limits(measurement_bytes=int(max_file_mb * 2**20))
    return load_topology(path, limits, measurements_root=_root(root))


def _root(root: str | None) -> Path | None:
    return None if root is None else _path(root, "--measurements-root")


def _user_errors(function: Callable[..., None], *, prints: bool = False) -> Callable[..., None]:
    """User errors become one line on stderr and exit code 2; Ctrl-C exits 130. A command
    that ``prints`` its result stops first when the standard output is closed."""

    def checked(*args: object, **kwargs: object) -> None:
        if prints:
            require_stdout()
        function(*args, **kwargs)

    @functools.wraps(function)
    def run(*args: object, **kwargs: object) -> None:
        startup.resume()  # typer has read the command line: the run collects its garbage
        code = guarded(lambda: checked(*args, **kwargs))
        if code:
            raise typer.Exit(code)

    return run


def _command(name: str | None = None) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register a command of the app, with :func:`_user_errors`; each prints its result."""

    def register(function: Callable[..., None]) -> Callable[..., None]:
        return app.command(name)(_user_errors(function, prints=True))

    return register


def _path(value: str, option: str) -> Path:
    """A path given on the command line; an empty one is refused (``Path("")`` is the
    current folder, where ``-o ''`` would have written)."""
    from advisor.errors import AdvisorError

    if not value.strip():
        raise AdvisorError(f"{option} is empty: give a path ('.' for the current folder)")
    return Path(value)


def _paths(values: list[str] | None, option: str) -> list[Path]:
    return [_path(v, option) for v in values or ()]


FilesArg = Annotated[list[Path], typer.Argument(help="topology.yaml files.", show_default=False)]
FileArg = Annotated[Path, typer.Argument(help="A topology.yaml file.", show_default=False)]
RootOpt = Annotated[
    str | None,
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
    list[str] | None,
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
    max_file_mb: MaxMbOpt = DEFAULT_MAX_FILE_MB,
    jobs: JobsOpt = None,
) -> None:
    """Recommend an architecture for each topology file, with its numbers and reasons.

    Several files are judged in parallel. With --format jsonl each result is one JSON line,
    in the order of the files, and a bad file is one error on stderr (exit 2) that does not
    stop the others; the other formats print nothing unless every file is valid.
    """
    run_recommend(
        files,
        output_format=output_format,
        require=require,
        fail_on=fail_on,
        rules=_paths(rules, "--rules"),
        measurements_root=_root(measurements_root),
        max_file_mb=max_file_mb,
        jobs=jobs,
    )


@_command()
def doc(
    file: FileArg,
    output: Annotated[str, typer.Option("--output", "-o", help="Folder to write into.")],
    templates: Annotated[
        str | None, typer.Option("--templates", help="Folder of templates searched first.")
    ] = None,
    formats: Annotated[
        str, typer.Option("--format", help="Comma-separated: md, html, adr.")
    ] = "md,html,adr",
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files in the folder the tool did not write.")
    ] = False,
    rules: RulesOpt = None,
    measurements_root: RootOpt = None,
    max_file_mb: MaxMbOpt = DEFAULT_MAX_FILE_MB,
) -> None:
    """Write the design document(s) and the configuration artifacts into a folder."""
    from advisor.analysis import analyse
    from advisor.documents.render import write_documents
    from advisor.errors import AdvisorError

    chosen = [f.strip() for f in formats.split(",") if f.strip()]
    unknown = sorted(set(chosen) - {"md", "html", "adr"})
    if unknown or not chosen:
        raise AdvisorError(f"--format takes md, html and adr, got {formats!r}")
    out_dir = _path(output, "--output")
    templates_dir = None if templates is None else _path(templates, "--templates")
    rules_dirs = _paths(rules, "--rules")
    analysis = analyse(_load(file, measurements_root, max_file_mb), rules_dirs=rules_dirs)
    written = write_documents(
        analysis,
        out_dir,
        formats=chosen,
        templates_dir=templates_dir,
        force=force,
    )
    if written:
        out("\n".join(str(path) for path in written))


@_command()
def validate(
    files: FilesArg, measurements_root: RootOpt = None, max_file_mb: MaxMbOpt = DEFAULT_MAX_FILE_MB
) -> None:
    """Check topology files and the measurement files they name; list every error."""
    from advisor.inputs.loading import Limits
    from advisor.text.escape import terminal
    from advisor.validate import validate_files

    limits = Limits(measurement_bytes=int(max_file_mb * 2**20))
    problems = validate_files(files, limits=limits, measurements_root=_root(measurements_root))
    for problem in problems:
        typer.echo(terminal(str(problem)), err=True)
    if problems:
        raise Exit(EXIT_BAD_INPUT)
    out(f"{len(files)} file(s) valid")


@_command()
def schema() -> None:
    """Print the JSON Schema of topology.yaml, for editors and CI checks."""
    from advisor.inputs.schema import topology_schema_json

    out(topology_schema_json())


@_command("rules")
def rules_command(
    rule_id: Annotated[str | None, typer.Argument(help="A rule id to explain.")] = None,
    rules: RulesOpt = None,
) -> None:
    """List the rules, or explain one with its rationale and references."""
    from advisor.errors import AdvisorError
    from advisor.rules.pack import load_rules
    from advisor.text.rules import describe_rule, list_rules

    pack = load_rules(_paths(rules, "--rules"))
    if rule_id is None:
        out(list_rules(pack))
        return
    if rule_id.upper() not in pack:
        raise AdvisorError(f"unknown rule {rule_id!r}; known rules: {', '.join(sorted(pack))}")
    out(describe_rule(pack[rule_id.upper()]))


@_command()
def sweep(
    file: FileArg,
    vary: Annotated[SweepVariable, typer.Option("--vary", help="The quantity to vary.")],
    value_range: Annotated[
        str, typer.Option("--range", help="A:B, or A:B:N for N points (default 200).")
    ],
    output_format: Annotated[SweepFormat, typer.Option("--format", "-f")] = "text",
    chart: Annotated[
        str | None, typer.Option("--chart", help="Also write the chart as an SVG file.")
    ] = None,
    rules: RulesOpt = None,
    measurements_root: RootOpt = None,
    max_file_mb: MaxMbOpt = DEFAULT_MAX_FILE_MB,
) -> None:
    """Show where the recommendation flips as one quantity varies: a table and a chart."""
    from advisor.analysis import analyse
    from advisor.sweep.grid import parse_range
    from advisor.sweep.grid import sweep as run
    from advisor.sweep.render import render_sweep, sweep_svg

    grid = parse_range(value_range, variable=vary)
    chart_file = None if chart is None else _path(chart, "--chart")
    if chart_file is not None:
        from advisor.safe_write import check_file_target

        check_file_target(chart_file)  # before the sweep, not after it
    loaded = _load(file, measurements_root, max_file_mb)
    result = run(analyse(loaded, rules_dirs=_paths(rules, "--rules")), vary, grid)
    out(render_sweep(result, output_format, width=width()))
    if chart_file is not None:
        from advisor.safe_write import write_file

        write_file(chart_file, sweep_svg(result))


app.command("collect", help=collect_command.__doc__)(_user_errors(collect_command))
app.command("check", help=check_command.__doc__)(_user_errors(check_command, prints=True))
