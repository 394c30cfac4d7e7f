"""Sample files read straight from their bytes (scan.decimal_lines): the same numbers, and
the same errors, as the checking text path of parse_samples."""

from __future__ import annotations

import random

import numpy as np
import pytest

from advisor.errors import AdvisorError
from advisor.measurements.samples import parse_samples, parse_samples_bytes
from advisor.measurements.scan import decimal_lines


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"49.6\n12\n.5\n0.045\n", [49.6, 12.0, 0.5, 0.045]),
        (b"5.\n7", [5.0, 7.0]),  # a trailing dot, no final newline
        (b"\n\n1.5\n\n", [1.5]),  # blank lines dropped
        (b"123456789012345\n", [123456789012345.0]),  # 15 digits: exact below 2**53
        (b"9999999.9999999\n0.0000000000001\n", [9999999.9999999, 1e-13]),
        (b"00012\n0.0\n", [12.0, 0.0]),
    ],
)
def test_plain_decimals_read_as_float_reads_them(data: bytes, expected: list[float]) -> None:
    values = decimal_lines(data)
    assert values is not None
    assert values.tolist() == expected


@pytest.mark.parametrize(
    "data",
    [b"1.2.3\n", b"-1\n", b".\n", b"1e3\n", b"8.1 # warm\n", b"8.1\r\n", b"1234567890123456\n"],
)
def test_anything_else_goes_down_the_checking_path(data: bytes) -> None:
    assert decimal_lines(data) is None


def _random_decimals(seed: int, max_digits: int) -> list[str]:
    """20,000 lines of 1 to ``max_digits`` digits, 80 % of them with a dot anywhere."""
    rng = random.Random(seed)
    lines = []
    for _ in range(20_000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, max_digits)))
        dot = rng.randint(0, len(digits))
        lines.append(digits[:dot] + "." + digits[dot:] if rng.random() < 0.8 else digits)
    return lines


def test_every_digit_count_and_dot_place_matches_float() -> None:
    lines = _random_decimals(3, 14)
    values = decimal_lines(("\n".join(lines) + "\n").encode())
    assert values is not None
    assert np.array_equal(values, [float(line) for line in lines])


def test_lines_of_at_most_eight_bytes_match_float() -> None:
    # a file of short lines only ("49.625") is read one word per line: every dot place
    lines = _random_decimals(4, 7)
    lines.append("12345678")  # eight digits, no dot
    values = decimal_lines(("\n".join(lines) + "\n").encode())
    assert values is not None
    assert np.array_equal(values, [float(line) for line in lines])
    assert decimal_lines(b"1.5\n.\n") is None and decimal_lines(b"1.5\n1..2\n") is None


def test_bytes_and_text_paths_agree_on_values_and_errors() -> None:
    rng = random.Random(5)
    pieces = ["1", "9", "0", ".", "\n", "\n", "-", "e", " ", "#", "\r\n", "12.5", "003.140"]

    def outcome(parse: object, argument: object) -> tuple[str, object]:
        try:
            parsed = parse(argument, source="f.txt")  # type: ignore[operator]
        except AdvisorError as error:
            return "error", str(error)
        return "values", parsed.samples_ms.tolist()

    for _ in range(5_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        assert outcome(parse_samples_bytes, text.encode()) == outcome(
            parse_samples, text.replace("\r\n", "\n")
        ), text


def test_ascending_equals_a_sort_of_the_floats_bit_for_bit() -> None:
    # the short lines sort as integers of their digits on a common number of places; mixed
    # places, a lone "0" and an eight-digit line included
    short = [*_random_decimals(6, 7), "0", "12345678", ".5", "5."]
    # integers beyond 32 bits on the common places (7 places): sorted as floats instead
    wide = ["9999999", "0.000001", *_random_decimals(7, 7)]
    # lines of 9 bytes or more: the two-word path, then a sort
    long = _random_decimals(8, 14)
    for lines in (short, wide, long, ["3.25", "3.250", "03.25", "1"]):
        data = ("\n".join(lines) + "\n").encode()
        ascending = decimal_lines(data, ascending=True)
        assert ascending is not None
        expected = np.sort(np.array([float(line) for line in lines]))
        assert ascending.tobytes() == expected.tobytes()
    assert decimal_lines(b"1.5\n1..2\n", ascending=True) is None


def test_ascending_samples_from_either_path() -> None:
    plain = parse_samples_bytes(b"8.3\n8.1\n9.9\n", ascending=True)
    commented = parse_samples_bytes(b"8.3\n# warm\n8.1\n9.9\n", ascending=True)
    assert plain.samples_ms is not None and commented.samples_ms is not None
    assert plain.samples_ms.tolist() == commented.samples_ms.tolist() == [8.1, 8.3, 9.9]


@pytest.mark.parametrize("span", [0, 1, 2**16 - 1, 2**16, 2**32 - 1])
def test_radix_sort_of_the_digits_equals_numpy_sort(span: int) -> None:
    from advisor.measurements.scan import _radix_sorted

    rng = np.random.default_rng(span)
    integers = rng.integers(0, span + 1, 5_000, dtype=np.uint64) + (2**32 - 1 - span) // 2
    integers = integers.astype(np.uint32)
    integers[:2] = [integers.min(), integers.max()]  # repeated values too
    assert np.array_equal(_radix_sorted(integers), np.sort(integers))
    assert _radix_sorted(integers).dtype == np.uint32
    assert _radix_sorted(np.array([7], dtype=np.uint32)).tolist() == [7]
