"""Choose the parser for a format, and read measurement files safely.

A measurement file is untrusted input: it may be a directory, a device, a FIFO (which would
block a read forever), huge, binary or UTF-16 (PowerShell's ``>`` redirect). Each case is an
:class:`AdvisorError` naming the file, never a traceback or a hang.
"""

from __future__ import annotations

__all__ = [
    "FORMATS",
    "MAX_FILE_BYTES",
    "MAX_LINE_BYTES",
    "MAX_SAMPLES",
    "open_regular",
    "parse_file",
    "parse_measurement",
]

import codecs
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from advisor.errors import AdvisorError, Location
from advisor.measurements.netperf import parse_netperf
from advisor.measurements.ping import parse_ping, parse_ping_bytes
from advisor.measurements.result import ParsedMeasurement
from advisor.measurements.samples import parse_samples, parse_samples_bytes
from advisor.measurements.sockperf import parse_sockperf

# Each format's parser: text -> ParsedMeasurement (netperf also takes burst=).
FORMATS: dict[str, Callable[..., ParsedMeasurement]] = {
    "ping": parse_ping,
    "netperf": parse_netperf,
    "sockperf": parse_sockperf,
    "samples": parse_samples,
}
# Largest file read [bytes]: a million ping replies with -D timestamps are ~100 MB.
MAX_FILE_BYTES = 200 * 2**20
# Most samples kept from one measurement: a day of ping -i 0.01 (SECURITY.md, limits).
MAX_SAMPLES = 10_000_000
# Longest line read [bytes]: the tools print lines of under 200 bytes (a pasted command line
# a few hundred); a longer one is refused, with its line number, as soon as the reading
# reaches it, before a parser holds it (one 160 MB line made the samples reader take 3.6 GB).
MAX_LINE_BYTES = 64 * 2**10
# Bytes read at a time, each piece checked for over-long lines before the next is read.
_CHUNK_BYTES = 2**20


def parse_measurement(
    text: str, fmt: str, *, source: str = "<text>", burst: int | None = None
) -> ParsedMeasurement:
    """Parse a tool's output given as text.

    Parameters
    ----------
    text
        The output; CRLF line ends are accepted.
    fmt
        ``"ping"``, ``"netperf"``, ``"sockperf"`` or ``"samples"``.
    source
        Name used in error messages.
    burst
        netperf only: the ``-b`` burst, for outputs that do not state it.

    Raises
    ------
    AdvisorError
        Unknown format, or output the parser cannot use.
    """
    parser = _parser(fmt, source, burst)
    _refuse_long_text_lines(text, source)
    # CRLF (Windows) and lone CR (old Mac) line ends are read as lines
    text = text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
    options = {} if burst is None else {"burst": burst}
    return parser(text, source=source, **options)


def parse_file(
    path: Path,
    fmt: str,
    *,
    max_bytes: int = MAX_FILE_BYTES,
    burst: int | None = None,
    max_samples: int = MAX_SAMPLES,
) -> ParsedMeasurement:
    """Read and parse a measurement file; errors name the file (and line).

    Parameters
    ----------
    path
        A regular file of UTF-8 (or ASCII) text, at most ``max_bytes`` [bytes].
    fmt
        ``"ping"``, ``"netperf"``, ``"sockperf"`` or ``"samples"``.
    max_bytes
        Largest file accepted [bytes].
    burst
        netperf only: the ``-b`` burst, for outputs that do not state it.
    max_samples
        Most round-trip samples accepted from the file.
    """
    source = str(path)
    _parser(fmt, source, burst)
    data = _read_bytes(Path(path), max_bytes, source)
    _check_encoding(data, source)
    data = data.removeprefix(codecs.BOM_UTF8)
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        # lone CRs end lines (old Mac, some serial consoles): read as lines, not as one
        # line (a CR-only ping log read as 1 sample and no loss); CRLF the parsers take
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if fmt == "samples":
        _refuse_many_sample_lines(data, max_samples, source)
    if fmt == "ping":  # the hot path: parse the bytes as they are, no decode and re-encode
        parsed = parse_ping_bytes(data, source=source)
    elif fmt == "samples":  # likewise: plain decimals are decoded from the bytes
        parsed = parse_samples_bytes(data, source=source)
    else:
        parsed = parse_measurement(data.decode("utf-8"), fmt, source=source, burst=burst)
    count = 0 if parsed.samples_ms is None else parsed.samples_ms.size
    if count > max_samples:
        raise AdvisorError(
            f"holds {count:,} samples, more than the limit of {max_samples:,} per measurement",
            Location(source),
        )
    return parsed


def _refuse_many_sample_lines(data: bytes, max_samples: int, source: str) -> None:
    """Refuse before parsing a samples file with surely more than ``max_samples`` samples.

    A line that starts with a digit holds one sample (or an error), so their count is a lower
    bound of the samples; counted in 16 MB slices of the bytes, so a 200 MB file is refused in
    a fraction of a second and a few tens of MB instead of after a parse of seconds and a GB.
    """
    if data.count(b"\n") < max_samples:
        return  # one sample per line at most
    import numpy as np

    view = np.frombuffer(data, dtype=np.uint8)
    digits = int(data[:1].isdigit())
    step = 16 * 2**20
    for start in range(0, view.size - 1, step):
        before = view[start : start + step]  # a byte, then the byte after it
        after = view[start + 1 : start + step + 1]
        before = before[: after.size]
        digits += int(np.count_nonzero((before == 10) & (after >= 48) & (after <= 57)))
    if digits > max_samples:
        raise AdvisorError(
            f"holds at least {digits:,} samples, more than the limit of {max_samples:,} "
            "per measurement",
            Location(source),
        )


def _parser(fmt: str, source: str, burst: int | None) -> Callable[..., ParsedMeasurement]:
    if fmt not in FORMATS:
        raise AdvisorError(
            f"unknown measurement format {fmt!r}; expected one of {', '.join(sorted(FORMATS))}",
            Location(source),
        )
    if burst is not None and fmt != "netperf":
        raise AdvisorError(
            f"burst applies to the netperf format only, not {fmt!r}", Location(source)
        )
    return FORMATS[fmt]


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading without ever blocking on it.

    O_NONBLOCK makes opening a FIFO return at once (a blocking open waits for a writer
    forever); the caller then checks with ``fstat`` on the open file that it is a regular
    file, closing the race in which a file is swapped for a FIFO after a ``stat``. On a
    regular file O_NONBLOCK changes nothing.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    return os.fdopen(os.open(path, flags), "rb")


def _read_bytes(path: Path, max_bytes: int, source: str) -> bytes:
    """The file's bytes, after refusing what is not a small enough regular file."""
    try:
        _check_regular(os.stat(path), max_bytes, source)  # a device is never opened
        with open_regular(path) as handle:
            info = os.fstat(handle.fileno())
            _check_regular(info, max_bytes, source)  # swapped since?
            data = _read_lines_bounded(handle, max_bytes, source)
    except FileNotFoundError:
        raise AdvisorError("measurement file not found", Location(source)) from None
    except OSError as error:
        raise AdvisorError(f"cannot read the file: {error.strerror}", Location(source)) from None
    except ValueError as error:  # a NUL in the path
        raise AdvisorError(f"cannot read the file: {error}", Location(source)) from None
    if len(data) > max_bytes:  # grew while we read it
        raise AdvisorError(f"is more than the limit of {max_bytes} bytes", Location(source))
    return data


def _read_lines_bounded(handle: BinaryIO, max_bytes: int, source: str) -> bytes:
    """The file's bytes (at most ``max_bytes`` + 1), read a piece at a time; a line longer
    than :data:`MAX_LINE_BYTES` is refused, with its number, when the reading reaches it."""
    lines = _LineCounter(source)
    chunks: list[bytes] = []
    total = 0
    while total <= max_bytes and (chunk := handle.read(min(_CHUNK_BYTES, max_bytes + 1 - total))):
        lines.check(chunk)
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


class _LineCounter:
    """Lengths and numbers of the lines of a file read in pieces. A line ends at LF, at a
    CR not followed by LF (old Mac), and a CRLF is one end."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.line = 1  # the number of the line being read
        self.length = 0  # its bytes so far
        self.cr_before = False  # the last piece ended with CR

    def check(self, chunk: bytes) -> None:
        """Count the lines of the next piece; refuse the first one over the bound."""
        import numpy as np

        view = np.frombuffer(chunk, dtype=np.uint8)
        is_lf, is_cr = view == 10, view == 13
        ends_here = is_lf | is_cr
        ends_here[:-1] &= ~(is_cr[:-1] & is_lf[1:])  # CRLF: the LF ends the line, not the CR
        skip = int(self.cr_before and chunk[:1] == b"\n")  # a CRLF split between pieces
        ends_here[:skip] = False
        ends = np.flatnonzero(ends_here)
        if ends.size:
            lengths = np.diff(ends, prepend=skip - 1) - 1
            lengths[0] += self.length
            over = np.flatnonzero(lengths > MAX_LINE_BYTES)
            if over.size:
                self._refuse(self.line + int(over[0]))
            self.line += ends.size
            self.length = view.size - int(ends[-1]) - 1
        else:
            self.length += view.size - skip
        if self.length > MAX_LINE_BYTES:
            self._refuse(self.line)
        self.cr_before = chunk[-1:] == b"\r"

    def _refuse(self, line: int) -> None:
        raise AdvisorError(
            f"a line of more than {MAX_LINE_BYTES:,} bytes; no tool prints one so long (a "
            "binary file, or many lines joined?)",
            Location(self.source, line),
        )


def _refuse_long_text_lines(text: str, source: str) -> None:
    """:class:`_LineCounter`'s bound for output given as text (the API)."""
    if len(text) <= MAX_LINE_BYTES:
        return
    for number, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        if len(line.encode("utf-8", "surrogatepass")) > MAX_LINE_BYTES:
            raise AdvisorError(
                f"a line of more than {MAX_LINE_BYTES:,} bytes; no tool prints one so long (a "
                "binary file, or many lines joined?)",
                Location(source, number),
            )


def _check_regular(info: os.stat_result, max_bytes: int, source: str) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise AdvisorError("is a directory; expected a measurement file", Location(source))
    if not stat.S_ISREG(info.st_mode):
        raise AdvisorError(
            "is not a regular file (a device, FIFO or socket); expected a measurement file",
            Location(source),
        )
    if info.st_size > max_bytes:
        raise AdvisorError(
            f"is {info.st_size} bytes, more than the limit of {max_bytes} bytes",
            Location(source),
        )


def _check_encoding(data: bytes, source: str) -> None:
    """Refuse what is not UTF-8 text: UTF-16, NUL bytes (binary), undecodable bytes."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise AdvisorError(
            "is UTF-16 text (a PowerShell '>' redirect?); save it as UTF-8", Location(source)
        )
    nul = data.find(b"\x00")
    if nul >= 0:
        raise AdvisorError(
            f"is binary (NUL byte at offset {nul}); expected a text file", Location(source)
        )
    if data.isascii():  # fast, and ASCII is UTF-8
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise AdvisorError(
            f"is not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start}); "
            "expected a text file",
            Location(source),
        ) from None
