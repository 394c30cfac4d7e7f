"""How a command ends: its one-line errors and its exit code.

Every command's user errors (:class:`~advisor.errors.AdvisorError`) print one line on stderr
and exit 2, Ctrl-C exits 130, an output that cannot be written exits 2 (FORMAT.md: nothing
usable was produced; a closed standard output, ``>&-``, included: click's echo would print
nothing and exit 0), a failed ``--require`` or ``--fail-on`` check exits 1.
"""

from __future__ import annotations

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_CHECK_FAILED",
    "Exit",
    "fail",
    "guarded",
    "out",
    "require_stdout",
    "warn",
]

import errno
import sys
from collections.abc import Callable
from typing import NoReturn

import typer

EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class Exit(Exception):
    """Ends a command with ``code`` once its messages are printed."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """One line on stderr (``advisor: ...``), then the command ends with ``code``."""
    warn(message)
    raise Exit(code)


def require_stdout() -> None:
    """Stop before any work when there is no standard output to print the result on: with
    ``>&-`` Python starts with ``sys.stdout`` None, and click's echo then prints nothing."""
    if sys.stdout is None:
        raise OSError(errno.EBADF, "the standard output is closed")


def out(text: str) -> None:
    """``text`` and a newline on the standard output; a closed one is an output error."""
    require_stdout()
    typer.echo(text)


def warn(message: str) -> None:
    """One line on stderr that does not end the run (one bad file of a fleet)."""
    from advisor.text.escape import terminal

    typer.echo(f"advisor: {terminal(message)}", err=True)  # a message may quote the input


def guarded(command: Callable[[], None]) -> int:
    """Run ``command``; its exit code, with user errors as one line on stderr (exit 2) and
    Ctrl-C as exit 130."""
    from advisor.errors import AdvisorError

    try:
        try:
            command()
        except AdvisorError as error:
            fail(str(error))
        except KeyboardInterrupt:
            fail("interrupted", EXIT_INTERRUPTED)
        except OSError as error:  # the output could not be written: /dev/full, a closed pipe
            _output_failed(error)
    except Exit as end:
        return end.code
    return 0


def _output_failed(error: OSError) -> NoReturn:
    """One line and exit 2 (FORMAT.md: nothing usable was produced), and no second error
    when Python flushes the same broken stdout at exit."""
    import contextlib
    import os

    where = error.filename if error.filename is not None else "the output"
    # no real stdout (a test runner's buffer), or none at all (>&-)
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    fail(f"cannot write {where}: {error.strerror or error}")
