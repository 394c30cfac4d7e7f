"""parse_file and parse_measurement: format choice, unsafe files, encodings, CRLF."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest

from advisor.errors import AdvisorError
from advisor.measurements import FORMATS, ParsedMeasurement, parse_file, parse_measurement

DATA = Path(__file__).parent / "data" / "measurements"
PING_REPLY = b"64 bytes from 10.0.0.2: icmp_seq=1 ttl=63 time=4.12 ms\n"


def error_of(call: object, *args: object, **kwargs: object) -> str:
    assert callable(call)
    with pytest.raises(AdvisorError) as caught:
        call(*args, **kwargs)
    return str(caught.value)


def test_every_format_reads_its_fixture() -> None:
    fixtures = {
        "ping": "ping_iputils.txt",
        "netperf": "netperf_k.txt",
        "sockperf": "sockperf_default.txt",
        "samples": "samples.txt",
    }
    assert set(fixtures) == set(FORMATS)
    for fmt, name in fixtures.items():
        parsed = parse_file(DATA / name, fmt)
        assert isinstance(parsed, ParsedMeasurement)
        text = (DATA / name).read_text(encoding="utf-8")
        again = parse_measurement(text, fmt, source=name)
        assert again.percentiles_ms == parsed.percentiles_ms
        assert again.received == parsed.received


def test_unknown_format_lists_the_valid_ones() -> None:
    assert error_of(parse_measurement, "1.0\n", "iperf") == (
        "<text>: unknown measurement format 'iperf'; expected one of netperf, ping, "
        "samples, sockperf"
    )
    assert error_of(parse_file, DATA / "samples.txt", "csv") == (
        f"{DATA / 'samples.txt'}: unknown measurement format 'csv'; expected one of "
        "netperf, ping, samples, sockperf"
    )


def test_burst_only_for_netperf() -> None:
    assert error_of(parse_measurement, "1.0\n", "samples", burst=2) == (
        "<text>: burst applies to the netperf format only, not 'samples'"
    )


def test_crlf_text_is_accepted() -> None:
    text = (DATA / "ping_iputils.txt").read_text(encoding="utf-8").replace("\n", "\r\n")
    parsed = parse_measurement(text, "ping")
    assert parsed.samples_ms is not None and parsed.samples_ms.size == 9
    assert (parsed.transmitted, parsed.received, parsed.duplicates) == (10, 9, 1)


def test_directory_is_refused(tmp_path: Path) -> None:
    assert error_of(parse_file, tmp_path, "ping") == (
        f"{tmp_path}: is a directory; expected a measurement file"
    )


def test_missing_file(tmp_path: Path) -> None:
    assert error_of(parse_file, tmp_path / "nope.txt", "ping") == (
        f"{tmp_path / 'nope.txt'}: measurement file not found"
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert error_of(parse_file, fifo, "ping") == (
        f"{fifo}: is not a regular file (a device, FIFO or socket); expected a measurement file"
    )


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_device_is_refused() -> None:
    assert error_of(parse_file, Path("/dev/null"), "samples") == (
        "/dev/null: is not a regular file (a device, FIFO or socket); expected a measurement file"
    )


def test_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"1.0\n" * 100)
    assert error_of(parse_file, path, "samples", max_bytes=399) == (
        f"{path}: is 400 bytes, more than the limit of 399 bytes"
    )
    assert parse_file(path, "samples", max_bytes=400).samples_ms is not None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            "is binary (NUL byte at offset 8); expected a text file",
        ),
        (b"8.1\n\xe98.2\n", "is not UTF-8 text (byte 0xe9 at offset 4); expected a text file"),
        (
            codecs.BOM_UTF16_LE + "8.1\r\n".encode("utf-16-le"),
            "is UTF-16 text (a PowerShell '>' redirect?); save it as UTF-8",
        ),
    ],
)
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_not_utf8_text_is_refused(tmp_path: Path, content: bytes, message: str, fmt: str) -> None:
    path = tmp_path / "m.txt"
    path.write_bytes(content)
    assert error_of(parse_file, path, fmt) == f"{path}: {message}"


@pytest.mark.parametrize(
    ("fmt", "message"),
    [
        ("ping", "no round-trip samples found in ping output"),
        ("netperf", "no TCP_RR result found in netperf output"),
        ("sockperf", "no latency statistics found in sockperf output"),
        ("samples", "no round-trip samples found; expected one round-trip time"),
    ],
)
def test_empty_file_says_what_was_expected(tmp_path: Path, fmt: str, message: str) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert error_of(parse_file, path, fmt).startswith(f"{path}: {message}")


def test_utf8_bom_and_non_ascii_host_names(tmp_path: Path) -> None:
    path = tmp_path / "ping.txt"
    banner = "PING bücher.example (10.0.0.2) 56(84) bytes of data.\n".encode()
    path.write_bytes(codecs.BOM_UTF8 + banner + PING_REPLY)
    parsed = parse_file(path, "ping")
    assert parsed.payload_bytes == 56
    assert (parsed.transmitted, parsed.received) == (1, 1)
    samples = tmp_path / "s.txt"
    samples.write_bytes(codecs.BOM_UTF8 + "# Zürich → Genève\n3.5\n".encode())
    assert parse_file(samples, "samples").samples_ms.tolist() == [3.5]  # type: ignore[union-attr]


def test_a_samples_file_with_too_many_lines_is_refused_before_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 14: the sample limit was checked only after parsing (a 200 MB file: 9 s, 2 GB).
    path = tmp_path / "many.txt"
    path.write_text("".join(f"{10 + i % 7}.5\n" for i in range(12)), encoding="utf-8")

    def never(*_: object, **__: object) -> None:
        raise AssertionError("parsed before the limit was checked")

    monkeypatch.setattr("advisor.measurements.reading.parse_samples_bytes", never)
    with pytest.raises(AdvisorError) as error:
        parse_file(path, "samples", max_samples=10)
    assert str(error.value) == (
        f"{path}: holds at least 12 samples, more than the limit of 10 per measurement"
    )


def test_comment_lines_do_not_count_against_the_sample_limit(tmp_path: Path) -> None:
    path = tmp_path / "commented.txt"
    path.write_text("# header\n" * 20 + "10.5\n11.5\n", encoding="utf-8")
    assert parse_file(path, "samples", max_samples=10).samples_ms.tolist() == [10.5, 11.5]


def test_a_file_that_grew_since_its_fstat_is_read_whole_or_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the read asks for the fstat size and one byte more, then for the rest up to the limit
    from advisor.measurements import reading

    path = tmp_path / "growing.txt"
    path.write_bytes(b"1.5\n" * 100)  # 400 bytes on disk; fstat says 40, as before it grew
    real_stat, real_fstat = os.stat, os.fstat

    def before_growth(info: os.stat_result) -> os.stat_result:
        return os.stat_result((*info[0:6], 40, *info[7:10]))

    monkeypatch.setattr(reading.os, "stat", lambda p: before_growth(real_stat(p)))
    monkeypatch.setattr(reading.os, "fstat", lambda fd: before_growth(real_fstat(fd)))
    parsed = parse_file(path, "samples", max_bytes=400)
    assert parsed.samples_ms is not None and parsed.samples_ms.tolist() == [1.5] * 100
    assert error_of(parse_file, path, "samples", max_bytes=399) == (
        f"{path}: is more than the limit of 399 bytes"
    )
