"""Vectorised reading of ``key=number`` fields in large text logs, with numpy over bytes.

A ping log of a million replies is about 100 MB. A regular expression per line, or even
``re.findall`` (one Python object per field), costs seconds; these helpers instead find
every ``=`` and newline in one pass and decode the numbers after chosen keys column by
column, so no Python code runs per line.
"""

from __future__ import annotations

__all__ = [
    "LINES_BYTES",
    "BoolArray",
    "ByteArray",
    "FloatArray",
    "IntArray",
    "after_keys",
    "decimal_lines",
    "equals_and_lines",
    "equals_and_newlines",
    "key_rows",
    "line_chunks",
    "line_text",
    "read_decimals",
    "spells",
]

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

BoolArray = npt.NDArray[np.bool_]
ByteArray = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
U64Array = npt.NDArray[np.uint64]

# Scan in 4 MiB chunks: temporaries that small are recycled by the allocator instead of
# being page-faulted in afresh (a 100 MB boolean temporary costs ~0.2 s in faults alone).
_CHUNK_BYTES = 1 << 22
# Bytes of whole lines read at once by a parser (line_chunks): with 4 MiB the temporaries of
# a range outgrew what glibc keeps for reuse and were faulted in afresh (0.25 s more on a
# million-line ping log); 1 MiB ranges cost a few thousand numpy calls on such a log.
LINES_BYTES = 1 << 20
# Longest number read by default [bytes]: "123456.789" (a ping time= in ms) fits.
NUMBER_WIDTH = 12
_EQUALS, _NEWLINE = ord("="), ord("\n")
_WORD = 8  # bytes in the word read before each "=" sign


def equals_and_newlines(
    data: bytes, start: int = 0, end: int | None = None
) -> tuple[IntArray, IntArray]:
    """Byte offsets of every ``=`` and every newline in ``data[start:end]``, each sorted."""
    buf = np.frombuffer(data, dtype=np.uint8)
    end = buf.size if end is None else end
    equals, newlines = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    for first in range(start, end, _CHUNK_BYTES):
        chunk = buf[first : min(first + _CHUNK_BYTES, end)]
        equals.append(np.flatnonzero(chunk == _EQUALS) + first)
        newlines.append(np.flatnonzero(chunk == _NEWLINE) + first)
    return np.concatenate(equals), np.concatenate(newlines)


def line_chunks(data: bytes, size: int = LINES_BYTES) -> Iterator[tuple[int, int]]:
    """``(start, end)`` byte ranges of about ``size`` bytes of whole lines, covering ``data``.

    Each range but the last ends just after a newline (a line longer than ``size`` makes a
    longer range), so whatever is read per line can be read range by range with small,
    recycled temporaries.

    >>> list(line_chunks(b"ab\\ncd\\nef", size=4)), list(line_chunks(b"abcdef\\ng", size=4))
    ([(0, 3), (3, 6), (6, 8)], [(0, 7), (7, 8)])
    """
    start = 0
    while start < len(data):
        end = len(data) if start + size >= len(data) else data.rfind(b"\n", start, start + size) + 1
        if end <= start:  # no newline within size bytes: the range runs to the line's end
            end = data.find(b"\n", start + size) + 1 or len(data)
        yield start, end
        start = end


def equals_and_lines(
    data: bytes, start: int, end: int, scratch: BoolArray | None = None
) -> tuple[IntArray, IntArray, IntArray]:
    """In ``data[start:end]``: the offsets of every ``=``, the line of each (the count of
    newlines from ``start`` to it) and the offsets of every newline.

    One pass finds both bytes, so a line is a running count instead of a search per ``=``.
    ``scratch``, at least twice ``end - start`` booleans, is reused for the byte masks
    instead of fresh memory (whose page faults cost more than the comparisons).

    >>> [a.tolist() for a in equals_and_lines(b"a=1\\nb\\nc=2 d=3", 0, 13)]
    [[1, 7, 11], [0, 2, 2], [3, 5]]
    """
    chunk = np.frombuffer(data, dtype=np.uint8)[start:end]
    if scratch is None or scratch.size < 2 * chunk.size:
        scratch = np.empty(2 * chunk.size, dtype=bool)
    mark = np.equal(chunk, _EQUALS, out=scratch[: chunk.size])
    mark |= np.equal(chunk, _NEWLINE, out=scratch[chunk.size : 2 * chunk.size])
    marks = np.flatnonzero(mark)
    newline = chunk[marks] == _NEWLINE
    line = np.cumsum(newline)
    equals = ~newline
    marks += start
    return marks[equals], line[equals], marks[newline]


def after_keys(buf: ByteArray, equals: IntArray, *keys: bytes) -> list[IntArray]:
    """For each key (at most 8 bytes), the offsets just after the ``=`` signs it precedes.

    >>> buf = np.frombuffer(b"64 bytes: icmp_seq=1 ttl=6 time=4.5", dtype=np.uint8)
    >>> [p.tolist() for p in after_keys(buf, np.array([18, 24, 31]), b"seq", b" time")]
    [[19], [32]]
    """
    return [equals[rows] + 1 for rows in key_rows(buf, equals, *keys)]


def key_rows(buf: ByteArray, equals: IntArray, *keys: bytes) -> list[IntArray]:
    """For each key (at most 8 bytes), the indices of the ``=`` signs (at ``equals``) it
    precedes; a sign in the first 8 bytes of ``buf`` is never a key's.

    The 8 bytes before every ``=`` are read as one 64-bit word, so each key is tested with
    one AND and one compare per ``=`` sign.
    """
    if buf.size < _WORD:
        return [np.empty(0, dtype=np.int64) for _ in keys]
    room = equals >= _WORD
    words = _words(buf)[np.maximum(equals, _WORD) - _WORD]
    found = []
    for key in keys:
        mask, want = _pattern(key, at_end=True)
        found.append(np.flatnonzero(((words & mask) == want) & room))
    return found


def spells(buf: ByteArray, at: IntArray, word: bytes) -> BoolArray:
    """Which offsets ``at`` start an occurrence of ``word`` (false past the end).

    >>> spells(np.frombuffer(b"time=1 ms", dtype=np.uint8), np.array([6, 4, 8]), b" ms").tolist()
    [True, False, False]
    """
    width = max(len(word), _WORD)  # room for 64-bit reads
    if at.size and int(at.min()) >= 0 and int(at.max()) + width <= buf.size:
        return _spells_inside(buf, at, word)  # the usual case: no offset near the end
    hit = np.zeros(at.size, dtype=bool)
    inside = at + len(word) <= buf.size
    whole = np.flatnonzero(inside & (at + width <= buf.size))
    if whole.size:
        hit[whole] = _spells_inside(buf, at[whole], word)
    for row in np.flatnonzero(inside & (at + width > buf.size)):  # the buffer's last bytes
        start = int(at[row])
        hit[row] = buf[start : start + len(word)].tobytes() == word
    return hit


def _spells_inside(buf: ByteArray, at: IntArray, word: bytes) -> BoolArray:
    """:func:`spells` where every offset has ``max(len(word), 8)`` bytes after it."""
    words = _words(buf)
    mask, want = _pattern(word[:_WORD], at_end=False)
    hit: BoolArray = (words[at] & mask) == want
    for offset in range(_WORD, len(word), _WORD):  # 8 bytes at a time, of the rows still in
        rows = np.flatnonzero(hit)
        mask, want = _pattern(word[offset : offset + _WORD], at_end=False)
        hit[rows] = (words[at[rows] + offset] & mask) == want
    return hit


def _words(buf: ByteArray) -> U64Array:
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

    The 16 bytes at each start are read as two 64-bit words, classified and decoded eight
    bytes at a time (SWAR, as :func:`decimal_lines`), so the cost does not grow with the
    width. Digits make an exact integer mantissa divided once by a power of ten, which
    rounds exactly as ``float(text)`` does.

    Returns
    -------
    value, length, ok
        The numbers, their lengths [bytes] (at most ``width + 1``), and whether each is well
        formed: starts with a digit, holds at most one dot and is at most ``width`` bytes long
        (at most 15). A value where ``ok`` is false means nothing.

    >>> buf = np.frombuffer(b"time=49.6 ms time=0.045 ms seq=7", dtype=np.uint8)
    >>> value, length, ok = read_decimals(buf, np.array([5, 18, 31]))
    >>> value.tolist(), length.tolist(), ok.tolist()
    ([49.6, 0.045, 7.0], [4, 5, 1], [True, True, True])
    """
    if not 0 < width < 2 * _WORD:
        raise ValueError(f"width must be 1 to {2 * _WORD - 1} bytes, got {width}")
    starts = np.asarray(starts, dtype=np.int64)
    near_end = starts > buf.size - 2 * _WORD  # the few numbers in the last bytes
    if not near_end.any():
        return _read_words(_words(buf), starts, width) if starts.size else _none_read()
    # read those from a zero-padded copy of the buffer's tail, the rest in place
    offset = max(buf.size - 2 * _WORD, 0)
    tail = np.concatenate((buf[offset:], np.zeros(2 * _WORD, dtype=np.uint8)))
    value, length = np.empty(starts.size), np.empty(starts.size, dtype=np.int64)
    ok = np.empty(starts.size, dtype=bool)
    rows = near_end
    value[rows], length[rows], ok[rows] = _read_words(_words(tail), starts[rows] - offset, width)
    rows = ~near_end
    if rows.any():
        value[rows], length[rows], ok[rows] = _read_words(_words(buf), starts[rows], width)
    return value, length, ok


def _none_read() -> tuple[FloatArray, IntArray, BoolArray]:
    return np.empty(0), np.empty(0, dtype=np.int64), np.empty(0, dtype=bool)


def _read_words(
    words: U64Array, starts: IntArray, width: int
) -> tuple[FloatArray, IntArray, BoolArray]:
    """:func:`read_decimals` where ``words`` holds two whole words at every start."""
    low = words[starts]  # the number's first byte is the word's lowest
    digit, dot = _classify(low)
    end = _first_set_byte(~(digit | dot) & _HIGH_BITS)  # the first byte after the number
    if bool((end == _WORD).any()):  # a number of 8 bytes or more: read two words
        value, length, ok = np.empty(starts.size), end, np.empty(starts.size, dtype=bool)
        long_ = end == _WORD
        value[long_], length[long_], ok[long_] = _read_two_words(words, starts[long_], width)
        short = ~long_
        value[short], ok[short] = _one_word(low[short], digit[short], dot[short], end[short], width)
        return value, np.minimum(length, width + 1), ok
    value, ok = _one_word(low, digit, dot, end, width)
    return value, np.minimum(end, width + 1), ok


def _one_word(
    word: U64Array,
    digit: U64Array,
    dot: U64Array,
    end: IntArray,
    width: int,
) -> tuple[FloatArray, BoolArray]:
    """Value and well-formedness of the numbers in the first ``end`` (< 8) bytes of ``word``,
    whose digits and dots :func:`_classify` marked."""
    dot = dot & ((_U64(1) << (end.astype(np.uint64) * _U64(8))) - _U64(1))  # in the number
    ok = ((digit & _U64(0x80)) != 0) & (np.bitwise_count(dot) <= 1) & (end <= width)
    # drop the dot: the bytes after it move down one place (no dot: nothing moves)
    before_dot: U64Array = (dot >> _U64(7)) - _U64(1)
    word = (word & before_dot) | ((word >> _U64(8)) & ~before_dot)
    has_dot = dot != 0
    digits = end - has_dot
    # right-align the digits, "0" before them, and read them as one integer
    shift = (_WORD - digits).astype(np.uint64) * _U64(8)
    word = (word << shift) | (_ASCII_ZEROS >> (_U64(64) - shift))
    after = np.maximum(digits - np.bitwise_count(before_dot).astype(np.int64) // 8, 0)
    return _eight_digits(word) / _POWERS_OF_TEN[after], ok


def _read_two_words(
    words: U64Array, starts: IntArray, width: int
) -> tuple[FloatArray, IntArray, BoolArray]:
    """:func:`_read_words` for numbers of 8 bytes or more."""
    low, high = words[starts], words[starts + _WORD]
    low_digit, low_dot = _classify(low)
    high_digit, high_dot = _classify(high)
    # the number runs to the first byte that is neither digit nor dot (16 when none is)
    low_end = _first_set_byte(~(low_digit | low_dot) & _HIGH_BITS)
    high_end = _first_set_byte(~(high_digit | high_dot) & _HIGH_BITS)
    length = np.where(low_end < _WORD, low_end, _WORD + high_end)
    dots = np.bitwise_count(low_dot & _KEEP_LOW[np.minimum(length, _WORD)])
    dots += np.bitwise_count(high_dot & _KEEP_LOW[np.maximum(length - _WORD, 0)])
    ok = ((low_digit & _U64(0x80)) != 0) & (dots <= 1) & (length < width + 1)
    # right-align the number in the 16 bytes (a shift of 64 bits or more gives 0 in numpy)
    shift: U64Array = (2 * _WORD - np.minimum(length, 2 * _WORD)).astype(np.uint64) * _U64(8)
    high = (high << shift) | (low >> (_U64(64) - shift)) | (low << (shift - _U64(64)))
    low = low << shift
    value = _right_aligned(low, high, np.minimum(length, 2 * _WORD))
    return value, np.minimum(length, width + 1).astype(np.int64), ok


def _classify(word: U64Array) -> tuple[U64Array, ...]:
    """The high bit of each byte that is an ASCII digit, and of each that is a dot."""
    ascii_ = ~word & _HIGH_BITS
    low7 = word & _U64(0x7F7F7F7F7F7F7F7F)  # adding below cannot carry into the next byte
    at_least_0 = (low7 + _U64(0x5050505050505050)) & _HIGH_BITS  # byte >= "0" (0x30)
    at_most_9 = ~(low7 + _U64(0x4646464646464646)) & _HIGH_BITS  # byte <= "9" (0x39)
    zero_if_dot = low7 ^ _U64(0x2E2E2E2E2E2E2E2E)
    dot = ~((zero_if_dot + _U64(0x7F7F7F7F7F7F7F7F)) | zero_if_dot) & ascii_
    return at_least_0 & at_most_9 & ascii_, dot


def _first_set_byte(high_bits: U64Array) -> IntArray:
    """Index of the lowest byte whose high bit is set; 8 when none is."""
    lowest = high_bits & (~high_bits + _U64(1))
    return np.bitwise_count(lowest - _U64(1)).astype(np.int64) // 8


def _right_aligned(low: U64Array, high: U64Array, length: IntArray) -> FloatArray:
    """The numbers whose last of ``length`` bytes ends ``high`` (digits and at most one dot;
    the bytes before them are ignored), as :func:`_decode_block` reads a line."""
    high, high_dot = _line_word(high, np.minimum(length, _WORD))
    low, low_dot = _line_word(low, np.maximum(length - _WORD, 0))
    whole = _eight_digits(high).astype(np.int64) + _eight_digits(low).astype(np.int64) * 10**8
    after = np.where(low_dot != 0, _digits_after(low_dot, _WORD), _digits_after(high_dot, 0))
    scale = 10 ** after.astype(np.int64)
    right = whole % scale
    has_dot = (low_dot | high_dot) != 0
    return np.where(has_dot, ((whole - right) // 10 + right) / scale, whole.astype(np.float64))


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
# _ZEROS_BEFORE[n]: "0" in the bytes of a word before its last n bytes (its text's end).
_ZEROS_BEFORE = _ASCII_ZEROS & ~_KEEP
# _KEEP_LOW[n]: the low n bytes of a word, i.e. the first n bytes of its text.
_KEEP_LOW = np.array([2 ** (8 * n) - 1 for n in range(_WORD + 1)], dtype=np.uint64)
_HIGH_BITS = _U64(0x8080808080808080)  # the high bit of every byte
_POWERS_OF_TEN = 10.0 ** np.arange(2 * _WORD)  # exact in float64, as every power to 1e22 is
_INT_POWERS_OF_TEN = 10 ** np.arange(_WORD, dtype=np.uint64)


def decimal_lines(data: bytes, *, ascending: bool = False) -> FloatArray | None:
    """Every non-blank line of ``data`` read as one unsigned decimal (``49.6``, ``12``, ``.5``),
    in file order, or sorted when ``ascending`` (:func:`_ascending`: what a distribution
    needs, sorted as integers of the digits, three times faster than the floats).

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
    >>> decimal_lines(b"49.6\\n12\\n.5\\n0.045", ascending=True).tolist()
    [0.045, 0.5, 12.0, 49.6]
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
    if ascending and int(lengths.max()) <= _WORD:  # the usual lines: their digits sort
        return _ascending(words, ends, lengths)
    out = np.empty(lengths.size)
    for first in range(0, lengths.size, _ROWS_PER_BLOCK):
        block = slice(first, first + _ROWS_PER_BLOCK)
        values = _decode_block(words, ends[block], lengths[block])
        if values is None:
            return None
        out[block] = values
    if ascending:
        out.sort()
    return out


def _ascending(words: U64Array, ends: IntArray, lengths: IntArray) -> FloatArray | None:
    """The numbers of lines of at most 8 bytes, sorted: the integers of their digits put on
    a common number of places after the dot (``N``, with value ``N / 10**places``), sorted as
    32-bit integers, then divided. Each quotient is the correctly rounded value of the same
    real number as :func:`_decode_one_word`'s, so the values are those of a sort of its floats,
    bit for bit; numbers whose integers do not fit 32 bits sort as floats."""
    digits = np.empty(lengths.size, dtype=np.uint32)  # 8 digits at most: below 2**32
    places = np.empty(lengths.size, dtype=np.uint8)
    for first in range(0, lengths.size, _ROWS_PER_BLOCK):
        block = slice(first, first + _ROWS_PER_BLOCK)
        found = _one_word_digits(words[ends[block] + _WORD], lengths[block])
        if found is None:
            return None
        digits[block], places[block] = found
    most, fewest = int(places.max()), int(places.min())
    if most == fewest:  # the usual file: every number with as many places
        integers = digits
    elif int(digits.max()) * 10 ** (most - fewest) < 2**32:
        integers = (digits * _INT_POWERS_OF_TEN[most - places]).astype(np.uint32)
    else:
        values: FloatArray = digits / _POWERS_OF_TEN[places]
        values.sort()
        return values
    ascending: FloatArray = _radix_sorted(integers) / _POWERS_OF_TEN[most]
    return ascending


def _radix_sorted(integers: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    """``np.sort(integers)`` by their 16-bit halves: numpy sorts 16-bit keys stably by radix
    (20,000 in 50 us, a 32-bit sort 330 us), so the low halves' stable order, then the high
    halves', is the sort (least significant digit first). Taken from the smallest, integers
    spanning less than 2**16 (RTTs within 65 ms at three places) need the one pass."""
    smallest = integers.min()
    above = integers - smallest
    if int(above.max()) < 2**16:
        by_both = np.sort(above.astype(np.uint16), kind="stable").astype(np.uint32)
    else:
        by_low = above[np.argsort(above.astype(np.uint16), kind="stable")]  # the low 16 bits
        by_both = by_low[np.argsort((by_low >> np.uint32(16)).astype(np.uint16), kind="stable")]
    by_both += smallest
    return by_both


def _decode_block(words: U64Array, ends: IntArray, lengths: IntArray) -> FloatArray | None:
    """The numbers of lines ending at ``ends`` (right-aligned in two words), or None."""
    if int(lengths.max()) <= _WORD:  # the usual lines ("49.625"): one word each
        return _decode_one_word(words[ends + _WORD], lengths)
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


def _decode_one_word(word: U64Array, lengths: IntArray) -> FloatArray | None:
    """:func:`_decode_block` for lines of at most 8 bytes, each the top bytes of ``word``:
    the integer of the digits divided by the power of ten of the digits after the dot."""
    found = _one_word_digits(word, lengths)
    if found is None:
        return None
    digits, places = found
    value: FloatArray = digits / _POWERS_OF_TEN[places]
    return value


def _one_word_digits(
    word: U64Array, lengths: IntArray
) -> tuple[U64Array, npt.NDArray[np.uint8]] | None:
    """The integer of each line's digits and the number of them after its dot (lines of at
    most 8 bytes, each the top bytes of ``word``), or None for a malformed line: the dot is
    taken out by moving the digits before it up one byte, so the digits read as one integer."""
    word = (word & _KEEP[lengths]) | _ZEROS_BEFORE[lengths]  # the bytes before the line: "0"
    dot = ~word & _DIGIT_BIT  # bit 8k + 4 where byte k is the dot
    dots = np.bitwise_count(dot)
    if int(dots.max()) > 1 or bool((dots == lengths).any()):
        return None  # two dots on a line, or a line that is just "."
    unit: U64Array = dot >> _U64(4)  # 1 << 8k, or 0 without a dot
    before: U64Array = unit - _U64(1)
    after: U64Array = ~((unit << _U64(8)) - _U64(1))  # bytes past the dot (none without one)
    dotless = (word & after) | ((word & before) << _U64(8)) | _U64(0x30)
    digits = _eight_digits(np.where(unit != 0, dotless, word))
    return digits, np.bitwise_count(after) // 8


def _line_word(word: U64Array, keep: IntArray) -> tuple[U64Array, U64Array]:
    """The word with bytes before the line read as "0", its dot as "0"; and the dot's bit."""
    mask = _KEEP[keep]
    word = (word & mask) | (_ASCII_ZEROS & ~mask)
    dot = ~word & _DIGIT_BIT
    return word + (dot >> _U64(3)), dot  # "." + 2 = "0"


def _digits_after(dot: U64Array, offset: int) -> IntArray:
    """Digits after the dot whose bit (8b + 4 for byte b) is set, ``offset`` more in a low word."""
    byte = (np.bitwise_count(dot - _U64(1)).astype(np.int64) - 4) // 8
    return np.where(dot != 0, _WORD - 1 - byte + offset, 0)


def _eight_digits(word: U64Array) -> U64Array:
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
