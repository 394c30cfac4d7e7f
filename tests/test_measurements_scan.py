"""The vectorised byte scanner, and that no input makes a parser raise anything else."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.errors import AdvisorError
from advisor.measurements import FORMATS, parse_measurement
from advisor.measurements.scan import followed_by, preceded_by, read_numbers

DECIMALS = st.from_regex(r"\A[0-9]{1,6}(\.[0-9]{1,5})?\Z")


@given(st.lists(DECIMALS, min_size=1, max_size=40))
def test_read_numbers_rounds_exactly_like_float(numbers: list[str]) -> None:
    text = " ".join(f"time={n} ms" for n in numbers).encode()
    buf = np.frombuffer(text, dtype=np.uint8)
    value, length, ok = read_numbers(buf, np.flatnonzero(buf == ord("=")) + 1)
    assert value.tolist() == [float(n) for n in numbers]
    assert length.tolist() == [len(n) for n in numbers]
    assert ok.all()


def _read_one_by_one(text: bytes, start: int, width: int) -> tuple[float | None, int, bool]:
    """What read_numbers says of the number at ``start``, read byte by byte."""
    piece = text[start : start + width + 1]  # one more byte shows where the number ends
    length = 0
    while length < len(piece) and piece[length : length + 1] in b"0123456789.":
        length += 1
    number = piece[:length]
    ok = number[:1].isdigit() and number.count(b".") <= 1 and length <= width
    return (float(number) if ok else None), length, ok


@settings(max_examples=300)
@given(
    text=st.text("0123456789. x", max_size=40).map(str.encode),
    width=st.integers(1, 15),
    data=st.data(),
)
def test_read_numbers_agrees_with_reading_byte_by_byte(
    text: bytes, width: int, data: st.DataObject
) -> None:
    # numbers of 1 to 16+ bytes, with 0 to several dots, anywhere up to the buffer's end
    starts = data.draw(st.lists(st.integers(0, len(text)), max_size=8))
    value, length, ok = read_numbers(
        np.frombuffer(text, dtype=np.uint8), np.array(starts, dtype=np.int64), width
    )
    for row, start in enumerate(starts):
        expected, expected_length, expected_ok = _read_one_by_one(text, start, width)
        assert (bool(ok[row]), int(length[row])) == (expected_ok, expected_length)
        if expected_ok:
            assert value[row] == expected


def test_read_numbers_flags_what_is_not_a_number() -> None:
    text = b"a=-1 b=1.2.3 c=.5 d=1234567890123456 e=7"
    buf = np.frombuffer(text, dtype=np.uint8)
    value, length, ok = read_numbers(buf, np.flatnonzero(buf == ord("=")) + 1)
    assert ok.tolist() == [False, False, False, False, True]
    assert length.tolist() == [0, 5, 2, 16, 1]  # cut at width + 1 bytes
    assert value[-1] == 7.0  # a number in the very last byte of the buffer


def test_fifteen_digits_are_exact() -> None:
    text = b"123456789012345 9999999.9999999 0.0000000000001 00012 5."
    starts = np.array([0, 16, 32, 48, 54])
    value, length, ok = read_numbers(np.frombuffer(text, dtype=np.uint8), starts)
    assert value.tolist() == [123456789012345.0, 9999999.9999999, 1e-13, 12.0, 5.0]
    assert length.tolist() == [15, 15, 15, 5, 2] and ok.all()


def test_preceded_and_followed_by() -> None:
    text = b"lifetime=3 icmp_seq=12 ttl=63 time=4.5 ms\nseq=9 time=1 s"
    buf = np.frombuffer(text, dtype=np.uint8)
    equals = np.flatnonzero(buf == ord("="))
    assert np.flatnonzero(buf == ord("\n")).tolist() == [text.index(b"\n")]
    seq_at, time_at = preceded_by(buf, equals, b"seq") + 1, preceded_by(buf, equals, b" time") + 1
    assert [text[p : p + 2] for p in seq_at.tolist()] == [b"12", b"9 "]
    assert [text[p : p + 3] for p in time_at.tolist()] == [b"4.5", b"1 s"]  # not lifetime=
    assert followed_by(buf, time_at + np.array([3, 1]), b" ms").tolist() == [True, False]
    assert followed_by(buf, np.array([len(text) - 2]), b" s ").tolist() == [False]  # the end
    assert preceded_by(buf, np.array([2]), b"seq").size == 0  # the start


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=300), fmt=st.sampled_from(sorted(FORMATS)))
def test_parsers_raise_only_advisor_errors(text: str, fmt: str) -> None:
    try:
        parse_measurement(text, fmt, source="fuzz.txt")
    except AdvisorError as error:
        assert str(error).startswith("fuzz.txt")


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(
        st.sampled_from(
            [
                "64 bytes from 10.0.0.2: icmp_seq=1 ttl=63 time=4.1 ms",
                "64 bytes from 10.0.0.2: icmp_seq=65535 ttl=63 time=120 ms (DUP!)",
                "From 10.0.0.1 icmp_seq=7 Destination Host Unreachable",
                "no answer yet for icmp_seq=",
                "icmp_seq=99999999 time=",
                "Request timeout for icmp_seq 3",
                "time=5 ms",
                "3 packets transmitted, 2 received, 33% packet loss, time 2003ms",
                "rtt min/avg/max/mdev = 1.000/2.000/3.000/0.500 ms",
                "PING h (10.0.0.2) 56(84) bytes of data.",
                "",
            ]
        ),
        max_size=12,
    )
)
def test_ping_shaped_noise_raises_only_advisor_errors(lines: list[str]) -> None:
    try:
        parsed = parse_measurement("\n".join(lines), "ping")
    except AdvisorError:
        return
    if parsed.loss is not None:
        assert 0.0 <= parsed.loss <= 1.0
    assert parsed.samples_ms is None or (parsed.samples_ms >= 0).all()


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9])
def test_tiny_inputs(size: int) -> None:
    buf = np.frombuffer(b"=" * size, dtype=np.uint8)
    equals = np.flatnonzero(buf == ord("="))
    assert preceded_by(buf, equals, b"seq").size == 0
    assert not read_numbers(buf, equals + 1)[2].any()  # "=" is never followed by a number


@pytest.mark.parametrize("module", ["__init__", "ping", "result", "samples", "scan"])
def test_docstring_examples(module: str) -> None:
    imported = importlib.import_module(f"advisor.measurements.{module}".removesuffix(".__init__"))
    failed, tried = doctest.testmod(imported, optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failed == 0
