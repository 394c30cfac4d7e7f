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
    "decimal_lines",
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


# decimal_lines: the longest line read as one number [bytes]; 15 digits stay below 2**53,
# so the integer of the digits is exact in int64 and in float64.
_MAX_DECIMAL_LINE = 15
_ROWS_PER_BLOCK = 1 << 16  # lines decoded at once: temporaries stay in the CPU's cache
_PLAIN_DECIMAL_BYTES = b"0123456789.\n"
_U64 = np.uint64
_ASCII_ZEROS = _U64(0x3030303030303030)  # "00000000"
_DIGIT_BIT = _U64(0x1010101010101010)  # set in every byte "0" to "9", clear in "." (0x2E)
# _KEEP[n]: the top n bytes of a little-endian word, i.e. the last n bytes of its text.
_KEEP = np.array(
    [0] + [(2**64 - 1) ^ (2 ** (8 * (8 - n)) - 1) for n in range(1, _WORD + 1)], dtype=np.uint64
)


def decimal_lines(data: bytes) -> FloatArray | None:
    """Every non-blank line of ``data`` read as one unsigned decimal (``49.6``, ``12``, ``.5``).

    None when any byte is not a digit, a dot or a newline, or a line holds more than one dot,
    no digit, or more than 15 bytes: the caller then takes its checking path. Each line's
    last 16 bytes are read as two 64-bit words and their eight digits combined in three
    multiply-and-shift steps (SWAR), so no Python code runs per line; the integer of all the
    digits (exact below 2**53) is divided once by ten to the digits after the dot, which
    rounds as ``float(text)`` does.

    >>> decimal_lines(b"49.6\\n\\n12\\n.5\\n0.045").tolist()
    [49.6, 12.0, 0.5, 0.045]
    >>> decimal_lines(b"1.2.3\\n") is None, decimal_lines(b"-1\\n") is None
    (True, True)
    """
    if data.translate(None, _PLAIN_DECIMAL_BYTES):
        return None
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(buf == _NEWLINE)
    if not data.endswith(b"\n"):
        ends = np.append(ends, buf.size)
    lengths = ends.copy()
    lengths[1:] -= ends[:-1] + 1
    if not lengths.all():  # blank lines are allowed: drop them
        ends, lengths = ends[lengths > 0], lengths[lengths > 0]
    if not lengths.size:
        return np.empty(0)
    if int(lengths.max()) > _MAX_DECIMAL_LINE:
        return None
    padded = np.concatenate((np.zeros(2 * _WORD, np.uint8), buf, np.zeros(_WORD, np.uint8)))
    words = _words(padded)  # words[end + 8] holds the line's last 8 bytes, [end] the 8 before
    out = np.empty(lengths.size)
    for first in range(0, lengths.size, _ROWS_PER_BLOCK):
        block = slice(first, first + _ROWS_PER_BLOCK)
        values = _decode_block(words, ends[block], lengths[block])
        if values is None:
            return None
        out[block] = values
    return out


def _decode_block(
    words: npt.NDArray[np.uint64], ends: IntArray, lengths: IntArray
) -> FloatArray | None:
    """The numbers of lines ending at ``ends`` (right-aligned in two words), or None."""
    high, high_dot = _line_word(words[ends + _WORD], np.minimum(lengths, _WORD))
    whole = _eight_digits(high).astype(np.int64)
    dots = np.bitwise_count(high_dot)
    after = _digits_after(high_dot, 0)
    if bool((lengths > _WORD).any()):
        low, low_dot = _line_word(words[ends], np.maximum(lengths - _WORD, 0))
        whole += _eight_digits(low).astype(np.int64) * 100_000_000
        dots += np.bitwise_count(low_dot)
        after = np.where(low_dot != 0, _digits_after(low_dot, _WORD), after)
    if bool((dots > 1).any() or (dots == lengths).any()):
        return None  # two dots on a line, or a line that is just "."
    # The dot was read as a 0 digit, so the digits left of it are one place too high.
    scale = 10 ** after.astype(np.int64)
    right = whole % scale
    return np.where(dots > 0, ((whole - right) // 10 + right) / scale, whole.astype(np.float64))


def _line_word(
    word: npt.NDArray[np.uint64], keep: IntArray
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """The word with bytes before the line read as "0", its dot as "0"; and the dot's bit."""
    mask = _KEEP[keep]
    word = (word & mask) | (_ASCII_ZEROS & ~mask)
    dot = ~word & _DIGIT_BIT
    return word + (dot >> _U64(3)), dot  # "." + 2 = "0"


def _digits_after(dot: npt.NDArray[np.uint64], offset: int) -> IntArray:
    """Digits after the dot whose bit (8b + 4 for byte b) is set, ``offset`` more in a low word."""
    byte = (np.bitwise_count(dot - _U64(1)).astype(np.int64) - 4) // 8
    return np.where(dot != 0, _WORD - 1 - byte + offset, 0)


def _eight_digits(word: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """The integer of 8 ASCII digits, the first at the lowest byte (three SWAR steps)."""
    word = word - _ASCII_ZEROS
    word = ((word & _U64(0x0F0F0F0F0F0F0F0F)) * _U64(10 * 2**8 + 1)) >> _U64(8)
    word = ((word & _U64(0x00FF00FF00FF00FF)) * _U64(100 * 2**16 + 1)) >> _U64(16)
    return ((word & _U64(0x0000FFFF0000FFFF)) * _U64(10000 * 2**32 + 1)) >> _U64(32)


def line_text(data: bytes, position: int) -> str:
    """The line of ``data`` that holds byte ``position``, decoded, without its line end."""
    start = data.rfind(b"\n", 0, position) + 1
    end = data.find(b"\n", position)
    line = data[start : len(data) if end < 0 else end].rstrip(b"\r")
    return line.decode("utf-8", errors="replace")
