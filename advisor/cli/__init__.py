"""The command line: ``advisor`` (:func:`main`) and its typer app (``advisor.cli.app``, from
:mod:`advisor.cli.commands`, imported only when a command line or a test needs it).

``advisor recommend`` runs without typer when :func:`advisor.cli.recommend.read_arguments`
takes its whole command line; every other command, ``--help`` and every usage error go to
the typer app.
"""

from __future__ import annotations

__all__ = ["main"]

from typing import Any


def main() -> None:
    """Console-script entry point."""
    import sys

    from advisor.cli import startup

    startup.pause()  # until the command's modules are imported (advisor.cli.startup)
    try:
        for stream in (sys.stdout, sys.stderr):
            # A PYTHONIOENCODING or locale that cannot spell a name (latin-1 and a hot row
            # called "東京") writes \u6771 instead of a UnicodeEncodeError traceback.
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors="backslashreplace")
        from advisor.cli.recommend import run_fast

        code = run_fast(sys.argv[1:])
        if code is None:
            from advisor.cli.commands import app

            startup.resume()
            app(prog_name="advisor")
    finally:
        startup.resume()
    sys.exit(code)


def __getattr__(name: str) -> Any:
    """``app``, the typer app, on first use (for typer's CliRunner and the tests)."""
    if name == "app":
        from advisor.cli.commands import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return list(__all__)
