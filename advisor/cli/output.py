"""How a command ends: what it prints, its one-line errors and its exit code, without typer.

Every command's user errors (:class:`~advisor.errors.AdvisorError`) print one line on stderr
and exit 2, Ctrl-C exits 130, an output that cannot be written exits 2 (FORMAT.md: nothing
usable was produced). The typer app prints with ``typer.echo``; ``advisor recommend`` on its
fast path (:mod:`advisor.cli.recommend`) with :func:`plain_echo`, which writes what ``typer.echo``
writes to the standard streams it accepts (:func:`plain_streams`).
"""

from __future__ import annotations

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_CHECK_FAILED",
    "Echo",
    "Exit",
    "fail",
    "guarded",
    "plain_echo",
    "plain_streams",
    "warn",
]

import io
import re
import sys
from collections.abc import Callable
from typing import NoReturn, Protocol, TextIO

EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class Echo(Protocol):
    """``typer.echo``, or :func:`plain_echo`: one line to stdout, or to stderr with ``err``."""

    def __call__(self, message: str, *, err: bool = ...) -> None: ...


class Exit(Exception):
    """Ends a command with ``code`` once its messages are printed."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


# What click strips from text bound for something that is not a terminal (click.utils.echo).
_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")


def plain_streams() -> bool:
    """Whether stdout and stderr are streams :func:`plain_echo` writes to as ``typer.echo`` does.

    click writes to a text stream as it is unless its encoding is ASCII (it then writes
    UTF-8 instead) or the stream is not a plain text file (a binary stream, a notebook's,
    none at all); on Windows it also converts colours. Those cases take the typer app.
    """
    if sys.platform.startswith("win"):
        return False
    for stream in (sys.stdout, sys.stderr):
        if not isinstance(stream, io.TextIOWrapper) or stream.errors is None:
            return False
        if _is_ascii(stream.encoding):
            return False
    return True


def _is_ascii(encoding: str | None) -> bool:
    import codecs

    try:
        return codecs.lookup(encoding or "ascii").name == "ascii"
    except LookupError:
        return False


def plain_echo(message: str, *, err: bool = False) -> None:
    """``typer.echo`` on the streams :func:`plain_streams` accepts: the message and a newline,
    ANSI codes stripped unless the stream is a terminal, flushed."""
    stream = sys.stderr if err else sys.stdout
    out = message + "\n"
    if not _isatty(stream):
        out = _ANSI.sub("", out)
    stream.write(out)
    stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except Exception:  # click.utils.isatty: a stream that cannot say is no terminal
        return False


def fail(echo: Echo, message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """One line on stderr (``advisor: ...``), then the command ends with ``code``."""
    warn(echo, message)
    raise Exit(code)


def warn(echo: Echo, message: str) -> None:
    """One line on stderr that does not end the run (one bad file of a fleet)."""
    from advisor.text.escape import terminal

    echo(f"advisor: {terminal(message)}", err=True)  # a message may quote the input


def guarded(echo: Echo, command: Callable[[], None]) -> int:
    """Run ``command``; its exit code, with user errors as one line on stderr (exit 2) and
    Ctrl-C as exit 130."""
    from advisor.errors import AdvisorError

    try:
        try:
            command()
        except AdvisorError as error:
            fail(echo, str(error))
        except KeyboardInterrupt:
            fail(echo, "interrupted", EXIT_INTERRUPTED)
        except OSError as error:  # the output could not be written: /dev/full, a closed pipe
            _output_failed(echo, error)
    except Exit as end:
        return end.code
    return 0


def _output_failed(echo: Echo, error: OSError) -> NoReturn:
    """One line and exit 2 (FORMAT.md: nothing usable was produced), and no second error
    when Python flushes the same broken stdout at exit."""
    import contextlib
    import os

    where = error.filename if error.filename is not None else "the output"
    with contextlib.suppress(OSError, ValueError):  # no real stdout (a test runner's buffer)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    fail(echo, f"cannot write {where}: {error.strerror or error}")
