"""The one exception a user can cause, and how it names the place of the problem.

Library code raises :class:`AdvisorError`; only the CLI catches it, prints ``str(error)``
as one line on stderr and exits with code 2.
"""

from __future__ import annotations

__all__ = ["MAX_MESSAGE_CHARS", "AdvisorError", "Location"]

from dataclasses import dataclass

MAX_MESSAGE_CHARS = 400  # longer messages end in "..." (SECURITY.md: errors stay one line)


@dataclass(frozen=True)
class Location:
    """Where in which file a problem sits; every part is optional.

    ``line`` and ``column`` are 1-based, as editors show them.
    """

    file: str | None = None
    line: int | None = None
    column: int | None = None
    key: str | None = None

    def prefix(self) -> str:
        """``file:line:col: key: `` with the parts that are known."""
        parts = []
        if self.file is not None:
            # A file name with a newline or other control character would break the one-line
            # promise: show it quoted and escaped, as Python does.
            place = self.file if self.file.isprintable() else repr(self.file)
            if self.line is not None:
                place += f":{self.line}"
                if self.column is not None:
                    place += f":{self.column}"
            parts.append(place)
        if self.key:
            parts.append(self.key)
        return "".join(f"{part}: " for part in parts)


class AdvisorError(Exception):
    """Bad input or usage: one line that names file, line, column, key and the fix.

    >>> str(AdvisorError("must be >= 0, got -2", Location("t.yaml", 14, 7, "sites[1].nodes")))
    't.yaml:14:7: sites[1].nodes: must be >= 0, got -2'
    """

    def __init__(self, message: str, location: Location | None = None) -> None:
        message = " ".join(message.split())  # always one line
        # A message that quotes the input (a 1 MB log line) must not fill a terminal.
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[: MAX_MESSAGE_CHARS - 3] + "..."
        self.message = message
        self.location = location or Location()
        super().__init__(str(self))

    def __str__(self) -> str:
        return self.location.prefix() + self.message
