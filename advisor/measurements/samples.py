"""Plain sample files: one round-trip time in milliseconds per line.

Blank lines and ``#`` comments (whole-line or trailing) are allowed; anything else is an
error that names the line. One regular-expression search finds the first bad line, and the
numbers are converted in one numpy call, so a million samples read in a fraction of a second.
"""

from __future__ import annotations

__all__ = ["parse_samples", "parse_samples_bytes"]

import io
import re
import warnings

import numpy as np

from advisor.measurements.result import (
    MAX_RTT_MS,
    ParsedMeasurement,
    check_round_trip_ms,
    line_number,
    source_error,
)
from advisor.measurements.scan import MAX_WIDTH, FloatArray, read_numbers

_COMMENT = re.compile(r"#[^\n]*")
# what float() reads, less its rarities (digit underscores, hex): 49.6, .5, 1e3, inf, nan
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?i:inf|infinity|nan)"
# a line that is not blank, not a comment, and not one number with an optional comment;
# each run of digits or blanks has one way to match (linear: '\d+\.?\d*' or two adjacent
# '[ \t]*' made a 20 KB line take seconds, a megabyte hours)
_BAD_LINE = re.compile(rf"^(?![ \t]*(?:(?:{_NUMBER})[ \t]*)?(?:#.*)?\r?$).+$", re.M)
_NO_SAMPLES = (
    "no round-trip samples found; expected one round-trip time in ms per line, e.g. '49.6'"
)


def parse_samples(text: str, *, source: str = "<text>") -> ParsedMeasurement:
    """Read one round-trip time [ms] per line.

    Parameters
    ----------
    text
        The file's content.
    source
        Name of the file, for error messages.

    Returns
    -------
    ParsedMeasurement
        ``samples_ms`` [ms] in file order; loss and counts are unknown (``None``).

    >>> parse_samples("# paris-frankfurt\\n8.1\\n8.3  # warm\\n\\n9.9\\n").samples_ms.tolist()
    [8.1, 8.3, 9.9]
    """
    return _measurement(_checked_samples(text, source), source)


def parse_samples_bytes(data: bytes, *, source: str = "<text>") -> ParsedMeasurement:
    """:func:`parse_samples` on a file's raw UTF-8 bytes.

    A file of plain decimals, one per line (what tools and scripts write), is read straight
    from the bytes (:func:`_plain_decimals`); anything else (comments, signs, exponents,
    CRLF, an error to report) takes the checking path of :func:`parse_samples`.

    >>> parse_samples_bytes(b"8.3\\n8.1\\n\\n9.9\\n").samples_ms.tolist()
    [8.3, 8.1, 9.9]
    """
    samples_ms = _plain_decimals(data)
    if samples_ms is None:
        text = data.decode("utf-8")
        samples_ms = _checked_samples(text.replace("\r\n", "\n") if "\r" in text else text, source)
    elif samples_ms.size and float(samples_ms.max()) > MAX_RTT_MS:
        _refuse_beyond_bound(samples_ms, data.decode("utf-8"), source)
    return _measurement(samples_ms, source)


def _refuse_beyond_bound(samples_ms: np.ndarray, text: str, source: str) -> None:
    """The located error for the first sample over :data:`MAX_RTT_MS` (1e39 gave NaN)."""
    index = int(np.argmax(samples_ms > MAX_RTT_MS))
    line, found = _line_of_number(text, index)
    check_round_trip_ms(float(samples_ms[index]), "a round-trip time", found, source, line)


def _plain_decimals(data: bytes) -> FloatArray | None:
    """The numbers of ``data`` when every non-blank line is one plain decimal that starts
    with a digit (``49.6``, ``12``, ``5.``) of at most 15 bytes, in file order; None for
    anything else (and for no number at all), which the checking path then reads or reports.

    >>> _plain_decimals(b"49.6\\n\\n12\\n5.\\n0.045").tolist()
    [49.6, 12.0, 5.0, 0.045]
    >>> _plain_decimals(b"1.2.3\\n") is None, _plain_decimals(b"-1\\n") is None
    (True, True)
    """
    if data.translate(None, b"0123456789.\n"):
        return None
    buf = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(buf == ord("\n"))
    starts = np.concatenate(([0], newlines + 1))
    lengths = np.append(newlines, buf.size) - starts
    starts, lengths = starts[lengths > 0], lengths[lengths > 0]  # blank lines are allowed
    if not starts.size or int(lengths.max()) > MAX_WIDTH:
        return None
    value, _, ok = read_numbers(buf, starts, width=int(lengths.max()))
    return value if ok.all() else None


def _checked_samples(text: str, source: str) -> np.ndarray:
    """The samples of ``text``, or an error naming the first bad line."""
    samples_ms = _read_fast(text)
    bad = _BAD_LINE.search(text) if samples_ms is None else None
    if bad is not None:
        raise source_error(
            "expected one round-trip time in ms per line (a plain number), "
            f"found {_without_comment(bad.group(0))!r}",
            source,
            line_number(text, bad.start()),
        )
    if samples_ms is None:
        numbers = _COMMENT.sub("", text).split()
        samples_ms = np.array(numbers, dtype=np.float64)
    if not samples_ms.size:
        raise source_error(_NO_SAMPLES, source)
    wrong = ~np.isfinite(samples_ms) | (samples_ms < 0)
    if wrong.any():
        line, found = _line_of_number(text, int(np.argmax(wrong)))
        raise source_error(
            f"a round-trip time must be a finite number of ms >= 0, found {found!r}",
            source,
            line,
        )
    if float(samples_ms.max()) > MAX_RTT_MS:
        _refuse_beyond_bound(samples_ms, text, source)
    return samples_ms


def _measurement(samples_ms: np.ndarray, source: str) -> ParsedMeasurement:
    return ParsedMeasurement(
        tool="samples",
        samples_ms=samples_ms,
        percentiles_ms=None,
        transmitted=None,
        received=None,
        duplicates=0,
        loss=None,
        request_bytes=None,
        response_bytes=None,
        payload_bytes=None,
        notes=(),
    )


def _read_fast(text: str) -> np.ndarray | None:
    """numpy's C reader for the common clean file; None sends it down the checking path.

    Only ASCII without digit underscores (which numpy would read but the format does not
    allow), and one number per line (a 1-D result).
    """
    if not text.isascii() or "_" in text:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an empty file warns; the caller reports it
            rows = np.loadtxt(io.StringIO(text), dtype=np.float64, comments="#", ndmin=2)
    except ValueError:
        return None
    if rows.size == 0:
        return np.empty(0)
    return rows[:, 0].copy() if rows.shape[1] == 1 else None


def _without_comment(line: str) -> str:
    return _COMMENT.sub("", line).strip()


def _line_of_number(text: str, index: int) -> tuple[int, str]:
    """Line number and text of the ``index``-th number (error path only)."""
    seen = -1
    for number, line in enumerate(text.split("\n"), start=1):
        value = _without_comment(line)
        seen += bool(value)
        if value and seen == index:
            return number, value
    raise AssertionError(f"no number {index} in the text")  # callers count the same numbers
