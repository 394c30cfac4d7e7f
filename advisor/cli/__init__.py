"""The command line: ``advisor`` (:func:`main`) and its typer app (``advisor.cli.app``, from
:mod:`advisor.cli.commands`, imported only when a command line or a test needs it)."""

from __future__ import annotations

__all__ = ["main"]

from typing import Any


def main() -> None:
    """Console-script entry point."""
    import sys

    from advisor.cli import startup

    startup.pause()  # until a command starts (advisor.cli.startup)
    try:
        from advisor.cli.commands import app

        for stream in (sys.stdout, sys.stderr):
            # A PYTHONIOENCODING or locale that cannot spell a name (latin-1 and a hot row
            # called "東京") writes \u6771 instead of a UnicodeEncodeError traceback.
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors="backslashreplace")
        app(prog_name="advisor")
    finally:
        startup.resume()  # no command ran (--help, a usage error)


def __getattr__(name: str) -> Any:
    """``app``, the typer app, on first use (for typer's CliRunner and the tests)."""
    if name == "app":
        from advisor.cli.commands import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return list(__all__)
