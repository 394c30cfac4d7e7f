"""The command line: a thin typer layer, one library call per command.

Only typer is imported at start-up; every command imports what it needs, so that
``advisor --help`` stays fast. User errors (:class:`AdvisorError`) print one line on stderr
and exit 2; a failed ``--require`` check exits 1.
"""

from __future__ import annotations

__all__ = ["app", "main"]

import functools
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, NoReturn

import typer

app = typer.Typer(
    name="advisor",
    help="Can this Galera cluster span these sites, or must each site run its own cluster?",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode=None,
)

EXIT_REQUIRE_FAILED = 1
EXIT_BAD_INPUT = 2


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    typer.echo(f"advisor: {message}", err=True)
    raise typer.Exit(code)


def _command(function: Callable[..., None]) -> Callable[..., None]:
    """Register a command whose user errors become one line on stderr and exit code 2."""

    @functools.wraps(function)
    def run(*args: object, **kwargs: object) -> None:
        from advisor.errors import AdvisorError

        try:
            function(*args, **kwargs)
        except AdvisorError as error:
            _fail(str(error))

    return app.command()(run)


FilesArg = Annotated[
    list[Path], typer.Argument(help="topology.yaml files", show_default=False)
]


@_command
def recommend(
    files: FilesArg,
    output_format: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="Output format.")
    ] = OutputFormat.text,
    rules: Annotated[
        list[Path] | None, typer.Option("--rules", help="Folder of rule files overriding the shipped pack.")
    ] = None,
) -> None:
    """Recommend an architecture for each topology file."""
    from advisor.recommend import recommend as run
    from advisor.render import render_recommendations

    results = [run(path, rules_dirs=rules or ()) for path in files]
    typer.echo(render_recommendations(results, output_format.value))


@_command
def validate(files: FilesArg) -> None:
    """Check topology files and their measurement files; list every error."""
    from advisor.validate import validate_files

    problems = validate_files(files)
    for problem in problems:
        typer.echo(str(problem), err=True)
    if problems:
        raise typer.Exit(EXIT_BAD_INPUT)
    typer.echo(f"{len(files)} file(s) valid")


@_command
def schema() -> None:
    """Print the JSON Schema of topology.yaml (for editors and CI checks)."""
    import json

    from advisor.topology import Topology

    typer.echo(json.dumps(Topology.model_json_schema(), indent=2))


def main() -> None:
    """Console-script entry point."""
    app(prog_name="advisor")


if __name__ == "__main__":  # pragma: no cover
    main()
