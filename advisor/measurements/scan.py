"""Reading ``key=number`` fields and plain decimal lines of large text logs with numpy.

A ping log of a million replies is about 100 MB: a regular expression per line, or even
``re.findall`` (one Python object per field), costs seconds. These helpers find the bytes
that matter (every ``=`` and newline) with numpy, then read each number from the few bytes
after its start, column by column, so no Python code runs per line.
"""

from __future__ import annotations

__all__ = [
    "MAX_WIDTH",
    "BoolArray",
    "ByteArray",
    "FloatArray",
    "IntArray",
    "followed_by",
    "line_text",
    "preceded_by",
    "read_numbers",
]

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import sliding_window_view

BoolArray = npt.NDArray[np.bool_]
ByteArray = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Longest number read [bytes]: 15 digits stay below 2**53, so their integer is exact.
MAX_WIDTH = 15
_ZERO, _DOT = ord("0"), ord(".")


def preceded_by(buf: ByteArray, at: IntArray, word: bytes) -> IntArray:
    """The offsets ``at`` (sorted) that come just after an occurrence of ``word``.

    >>> buf = np.frombuffer(b"lifetime=3 time=4", dtype=np.uint8)
    >>> preceded_by(buf, np.array([8, 15]), b" time").tolist()
    [15]
    """
    found = at[np.searchsorted(at, len(word)) :]  # offsets with room for the word
    for back, byte in enumerate(reversed(word), start=1):  # a byte at a time, of those left
        found = found[buf[found - back] == byte]
    return found


def followed_by(buf: ByteArray, at: IntArray, word: bytes) -> BoolArray:
    """Which offsets ``at`` start an occurrence of ``word`` (false past the end).

    >>> buf = np.frombuffer(b"time=1 ms", dtype=np.uint8)
    >>> followed_by(buf, np.array([6, 4, 8]), b" ms").tolist()
    [True, False, False]
    """
    rows = np.flatnonzero(at + len(word) <= buf.size)
    for ahead, byte in enumerate(word):  # a byte at a time, of the rows left
        rows = rows[buf[at[rows] + ahead] == byte]
    hit = np.zeros(at.size, dtype=bool)
    hit[rows] = True
    return hit


def read_numbers(
    buf: ByteArray, starts: IntArray, width: int = MAX_WIDTH
) -> tuple[FloatArray, IntArray, BoolArray]:
    """Read the unsigned decimal numbers (``12``, ``0.045``, ``5.``) that begin at ``starts``.

    A number runs over the digits and dots after its start. The ``width + 1`` bytes at each
    start are copied into a table, read a column (a byte of every number) at a time: the
    digits make an exact integer, divided at the end by the power of ten of the digits
    after the dot. Both are exact in float64 (at most 15 digits), so the one rounding of the
    division gives what ``float(text)`` gives.

    Returns
    -------
    value, length, ok
        The numbers, their lengths [bytes] (at most ``width + 1``: longer numbers are cut
        there), and whether each is well formed: it starts with a digit, holds at most one
        dot and is at most ``width`` bytes long. A value where ``ok`` is false means nothing.

    >>> buf = np.frombuffer(b"time=49.6 ms time=0.045 ms seq=7", dtype=np.uint8)
    >>> value, length, ok = read_numbers(buf, np.array([5, 18, 31]))
    >>> value.tolist(), length.tolist(), ok.tolist()
    ([49.6, 0.045, 7.0], [4, 5, 1], [True, True, True])
    """
    if not 0 < width <= MAX_WIDTH:
        raise ValueError(f"width must be 1 to {MAX_WIDTH} bytes, got {width}")
    starts = np.asarray(starts, dtype=np.int64)
    last = int(starts.max()) if starts.size else 0
    if last + width >= buf.size:  # a number in the last bytes, or a short buffer: pad it
        buf = np.concatenate((buf, np.zeros(width + 1, dtype=np.uint8)))
    # row k: byte k of every number (gathered start by start, each start's bytes together)
    table = np.ascontiguousarray(sliding_window_view(buf, width + 1)[starts].T)
    whole = np.zeros(starts.size, dtype=np.int64)  # the integer of the digits so far
    length = np.zeros(starts.size, dtype=np.uint8)
    places = np.zeros(starts.size, dtype=np.uint8)  # digits after the dot
    dots = np.zeros(starts.size, dtype=np.uint8)
    inside = np.ones(starts.size, dtype=bool)  # the number goes on
    for byte in table:
        digit = byte - _ZERO  # uint8: a byte below "0" wraps round, above 9
        is_digit = (digit <= 9) & inside
        inside &= is_digit | (byte == _DOT)
        if not inside.any():
            break
        whole *= np.where(is_digit, np.uint8(10), np.uint8(1))
        whole += digit * is_digit
        places += is_digit & (dots > 0)
        dots += inside ^ is_digit  # inside, not a digit: a dot
        length += inside
    ok = ((table[0] - _ZERO) <= 9) & (dots <= 1) & (length <= width)
    return whole / 10.0**places, length.astype(np.int64), ok


def line_text(data: bytes, position: int) -> str:
    """The line of ``data`` that holds byte ``position``, decoded, without its line end."""
    start = data.rfind(b"\n", 0, position) + 1
    end = data.find(b"\n", position)
    line = data[start : len(data) if end < 0 else end].rstrip(b"\r")
    return line.decode("utf-8", errors="replace")
