"""Sample files read straight from their bytes (parse_samples_bytes): the numbers float()
reads, and the same numbers and errors as the checking text path of parse_samples."""

from __future__ import annotations

import random

import numpy as np
import pytest

from advisor.errors import AdvisorError
from advisor.measurements.samples import (
    _plain_decimals,
    _read_fast,
    parse_samples,
    parse_samples_bytes,
)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"49.6\n12\n.5\n0.045\n", [49.6, 12.0, 0.5, 0.045]),
        (b"5.\n7", [5.0, 7.0]),  # a trailing dot, no final newline
        (b"\n\n1.5\n\n", [1.5]),  # blank lines dropped
        (b"123456.789012345\n", [123456.789012345]),  # 15 digits: exact below 2**53
        (b"999999.99999999\n0.0000000000001\n", [999999.99999999, 1e-13]),
        (b"00012\n0.0\n", [12.0, 0.0]),
        (b"123456.78901234565\n", [123456.78901234565]),  # longer: read by the checking path
        (b"8.1 # warm\n8.2\r\n1e3\n", [8.1, 8.2, 1000.0]),
    ],
)
def test_plain_decimals_read_as_float_reads_them(data: bytes, expected: list[float]) -> None:
    samples_ms = parse_samples_bytes(data).samples_ms
    assert samples_ms is not None
    assert samples_ms.tolist() == expected


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
    # the number reading itself (values up to 1e14, beyond the 1,000 s a round trip may be)
    for lines in (_random_decimals(3, 14), [*_random_decimals(4, 7), "12345678"]):
        text = "\n".join(lines) + "\n"
        samples_ms = _plain_decimals(text.encode())  # None for '.5': then numpy's reader
        samples_ms = _read_fast(text) if samples_ms is None else samples_ms
        assert samples_ms is not None
        assert samples_ms.tobytes() == np.array([float(line) for line in lines]).tobytes()


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
