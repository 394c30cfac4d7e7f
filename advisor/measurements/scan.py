"""Vectorised reading of ``key=number`` fields in large text logs, with numpy over bytes.

A ping log of a million replies is about 100 MB. A regular expression per line, or even
``re.findall`` (one Python object per field), costs seconds; these helpers instead find
every ``=`` and newline in one pass and decode the numbers after chosen keys column by
column, so no Python code runs per line.
"""

from __future__ import annotations

__all__ = [
    "BoolArray",
    "FloatArray",
    "IntArray",
    "after_keys",
    "equals_and_newlines",
    "line_text",
    "read_decimals",
    "spells",
]

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import sliding_window_view

BoolArray = npt.NDArray[np.bool_]
ByteArray = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Scan in 4 MiB chunks: temporaries that small are recycled by the allocator instead of
# being page-faulted in afresh (a 100 MB boolean temporary costs ~0.2 s in faults alone).
_CHUNK_BYTES = 1 << 22
# Longest number read by default [bytes]: "123456.789" (a ping time= in ms) fits.
NUMBER_WIDTH = 12
_EQUALS, _NEWLINE = ord("="), ord("\n")
_WORD = 8  # bytes in the word read before each "=" sign
# Byte -> code: digits to their value, "." to _DOT_CODE, anything else to _OTHER.
_DOT_CODE, _OTHER = -1, -2
_CODE = np.full(256, _OTHER, dtype=np.int8)
_CODE[ord("0") : ord("9") + 1] = np.arange(10)
_CODE[ord(".")] = _DOT_CODE


def equals_and_newlines(data: bytes) -> tuple[IntArray, IntArray]:
    """Byte offsets of every ``=`` and every newline in ``data``, each sorted."""
    buf = np.frombuffer(data, dtype=np.uint8)
    equals, newlines = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    for start in range(0, buf.size, _CHUNK_BYTES):
        chunk = buf[start : start + _CHUNK_BYTES]
        equals.append(np.flatnonzero(chunk == _EQUALS) + start)
        newlines.append(np.flatnonzero(chunk == _NEWLINE) + start)
    return np.concatenate(equals), np.concatenate(newlines)


def after_keys(buf: ByteArray, equals: IntArray, *keys: bytes) -> list[IntArray]:
    """For each key (at most 8 bytes), the offsets just after the ``=`` signs it precedes.

    The 8 bytes before every ``=`` are read as one 64-bit word, so each key is tested with
    one AND and one compare per ``=`` sign.

    >>> buf = np.frombuffer(b"64 bytes: icmp_seq=1 ttl=6 time=4.5", dtype=np.uint8)
    >>> [p.tolist() for p in after_keys(buf, np.array([18, 24, 31]), b"seq", b" time")]
    [[19], [32]]
    """
    if buf.size < _WORD:
        return [np.empty(0, dtype=np.int64) for _ in keys]
    at = equals[equals >= _WORD]
    words = _words(buf)[at - _WORD]
    found = []
    for key in keys:
        mask, want = _pattern(key, at_end=True)
        found.append(at[(words & mask) == want] + 1)
    return found


def spells(buf: ByteArray, at: IntArray, word: bytes) -> BoolArray:
    """Which offsets ``at`` start an occurrence of ``word`` (false past the end).

    >>> spells(np.frombuffer(b"time=1 ms", dtype=np.uint8), np.array([6, 4, 8]), b" ms").tolist()
    [True, False, False]
    """
    hit = np.zeros(at.size, dtype=bool)
    inside = at + len(word) <= buf.size
    whole = inside & (at + max(len(word), _WORD) <= buf.size)  # room for 64-bit reads
    rows = np.flatnonzero(whole)
    if rows.size:
        words = _words(buf)
        for offset in range(0, len(word), _WORD):
            mask, want = _pattern(word[offset : offset + _WORD], at_end=False)
            rows = rows[(words[at[rows] + offset] & mask) == want]
    hit[rows] = True
    for row in np.flatnonzero(inside & ~whole):  # the last few bytes of the buffer
        start = int(at[row])
        hit[row] = buf[start : start + len(word)].tobytes() == word
    return hit


def _words(buf: ByteArray) -> npt.NDArray[np.uint64]:
    """Every offset of ``buf`` seen as the start of an (unaligned) 64-bit word."""
    return np.ndarray((buf.size - _WORD + 1,), dtype=np.uint64, buffer=buf, strides=(1,))


def _pattern(text: bytes, *, at_end: bool) -> tuple[np.uint64, np.uint64]:
    """(mask, value) that test whether a word holds ``text`` at its end or its start."""
    pad = b"\0" * (_WORD - len(text))
    if at_end:
        mask, want = pad + b"\xff" * len(text), pad + text
    else:
        mask, want = b"\xff" * len(text) + pad, text + pad
    return np.frombuffer(mask, dtype=np.uint64)[0], np.frombuffer(want, dtype=np.uint64)[0]


def read_decimals(
    buf: ByteArray, starts: IntArray, width: int = NUMBER_WIDTH
) -> tuple[FloatArray, IntArray, BoolArray]:
    """Decode the unsigned decimal numbers (``12``, ``0.045``) that begin at ``starts``.

    Digits are accumulated into an exact integer mantissa and divided once by a power of
    ten, which rounds exactly as ``float(text)`` does.

    Returns
    -------
    value, length, ok
        The numbers, their lengths [bytes], and whether each is well formed: starts with a
        digit, holds at most one dot and is at most ``width`` bytes long.

    >>> buf = np.frombuffer(b"time=49.6 ms time=0.045 ms seq=7", dtype=np.uint8)
    >>> value, length, ok = read_decimals(buf, np.array([5, 18, 31]))
    >>> value.tolist(), length.tolist(), ok.tolist()
    ([49.6, 0.045, 7.0], [4, 5, 1], [True, True, True])
    """
    width += 1  # one more byte shows where the number ends
    if buf.size < width:
        buf = np.concatenate((buf, np.zeros(width, dtype=np.uint8)))
    limit = buf.size - width
    window = sliding_window_view(buf, width)[np.minimum(starts, limit)]  # a copy per row
    for row in np.flatnonzero(starts > limit):  # the few numbers in the last bytes
        piece = buf[starts[row] :]
        window[row] = 0
        window[row, : piece.size] = piece
    codes = _CODE[np.ascontiguousarray(window.T)]  # one row per byte position of the numbers
    n = starts.size
    mantissa = np.zeros(n, dtype=np.int64)
    decimals = np.zeros(n, dtype=np.int64)
    length = np.zeros(n, dtype=np.int64)
    dots = np.zeros(n, dtype=np.int64)
    running = codes[0] >= 0  # a number starts with a digit
    ok = running.copy()
    for code in codes:
        running &= code != _OTHER
        if not running.any():
            break
        digit = running & (code >= 0)
        mantissa = np.where(digit, mantissa * 10 + code, mantissa)  # Horner, exact in int64
        decimals += digit & (dots > 0)
        dots += running & (code == _DOT_CODE)
        length += running
    ok &= (dots <= 1) & (length < width)
    return mantissa / 10.0**decimals, length, ok


def line_text(data: bytes, position: int) -> str:
    """The line of ``data`` that holds byte ``position``, decoded, without its line end."""
    start = data.rfind(b"\n", 0, position) + 1
    end = data.find(b"\n", position)
    line = data[start : len(data) if end < 0 else end].rstrip(b"\r")
    return line.decode("utf-8", errors="replace")
