"""netperf TCP_RR parser: -v 2 with burst, -v 1 rate tables, -k selectors, wrong tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.errors import AdvisorError
from advisor.measurements import parse_file, parse_netperf

DATA = Path(__file__).parent / "data" / "measurements"


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_v2_burst_example_takes_the_printed_round_trip() -> None:
    # the manual's "-f m -v 2 -- -b 6 -r 32K" run: 2015.402 us = 10^6 * (1 + 6) / 3473.252
    parsed = parse_netperf(read("netperf_v2_burst.txt"))
    assert parsed.tool == "netperf"
    assert parsed.samples_ms is None
    assert parsed.percentiles_ms == pytest.approx({"mean": 2.015402})
    little_ms = 1e6 * (1 + 6) / 3473.252 / 1000  # what the printed latency must agree with
    assert parsed.percentiles_ms == pytest.approx({"mean": little_ms}, abs=1e-6)
    assert (parsed.request_bytes, parsed.response_bytes) == (32768, 32768)
    assert parsed.loss is None and parsed.transmitted is None
    assert parsed.notes == ("netperf reports a mean round trip only, no percentiles",)


def test_v1_rate_uses_the_burst_stated_in_the_banner() -> None:
    parsed = parse_netperf(read("netperf_v1.txt"))
    # first burst 0: one transaction in flight, round trip = 1 / rate
    assert parsed.percentiles_ms == pytest.approx({"mean": 1 / 29150.15 * 1000})
    assert (parsed.request_bytes, parsed.response_bytes) == (1, 1)
    assert parsed.notes[0] == (
        "round trip = 10^6 x (1 + 0) / 29150.15 transactions/s = 34.305 us (netperf's own formula)"
    )


def test_v1_without_stated_burst_assumes_zero_or_takes_the_option() -> None:
    text = read("netperf_v1.txt").replace(" : first burst 0", "")
    assumed = parse_netperf(text)
    assert assumed.percentiles_ms == pytest.approx({"mean": 1000 / 29150.15})
    assert assumed.notes[0] == (
        "the output does not state netperf's -b burst; assumed 0 (one transaction in "
        "flight): give burst if netperf ran with -b"
    )
    given = parse_netperf(text, burst=6)
    assert given.percentiles_ms == pytest.approx({"mean": 7 * 1000 / 29150.15})


def test_burst_option_that_contradicts_the_output_is_an_error() -> None:
    with pytest.raises(AdvisorError) as caught:
        parse_netperf(read("netperf_v1.txt"), burst=4, source="rr.txt")
    assert str(caught.value) == (
        "rr.txt: burst=4 was given but the netperf output states first burst 0; "
        "drop the burst option or fix it"
    )


def test_keyval_output_gives_percentiles_and_the_exact_mean() -> None:
    parsed = parse_netperf(read("netperf_k.txt"))
    assert parsed.percentiles_ms == pytest.approx(
        {
            "min": 0.048,
            "p50": 0.061,
            "p90": 0.075,
            "p99": 0.118,
            "max": 2.310,
            "mean": 0.064513,  # RT_LATENCY, not the bucketed MEAN_LATENCY
        }
    )
    assert (parsed.request_bytes, parsed.response_bytes) == (1024, 64)
    assert parsed.notes == ()


def test_keyval_with_only_a_rate_and_burst_size() -> None:
    text = "TRANSACTION_RATE=500.00\nBURST_SIZE=3\nP99_LATENCY=-1\n"
    parsed = parse_netperf(text)
    assert parsed.percentiles_ms == pytest.approx({"mean": 1e6 * 4 / 500 / 1000})
    assert "P99_LATENCY=-1: netperf did not measure it (needs the global -j)" in parsed.notes


def test_keyval_throughput_in_transactions() -> None:
    parsed = parse_netperf("THROUGHPUT=2000\nTHROUGHPUT_UNITS=Trans/s\n")
    assert parsed.percentiles_ms == pytest.approx({"mean": 0.5})


def test_cpu_columns_and_leading_text_are_tolerated() -> None:
    text = (
        "$ netperf -H db2 -t TCP_RR -c -C\n"
        "MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to db2 () "
        "port 0 AF_INET : first burst 0\n"
        "Local /Remote\n"
        "Socket Size   Request Resp.  Elapsed Trans.   CPU    CPU    S.dem   S.dem\n"
        "Send   Recv   Size    Size   Time    Rate     local  remote local   remote\n"
        "bytes  bytes  bytes   bytes  secs.   per sec  % S    % S    us/Tr   us/Tr\n"
        "\n"
        "16384  87380  128     64     10.00   5817.04  1.54   1.47   10.561  10.129\n"
        "16384  87380\n"
    )
    parsed = parse_netperf(text)
    assert parsed.percentiles_ms == pytest.approx({"mean": 1000 / 5817.04})
    assert (parsed.request_bytes, parsed.response_bytes) == (128, 64)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "",
            "rr.txt: no TCP_RR result found in netperf output; expected the table of "
            "'netperf -t TCP_RR' (Trans. Rate per sec), its '-v 2' RoundTrip Latency block, "
            "or '-k' lines like 'RT_LATENCY=63.1'",
        ),
        (
            "MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to db2 () port 0 "
            "AF_INET\nRecv   Send    Send\n 87380  16384  16384    10.01    5022.02\n",
            "rr.txt:1: this netperf output is a TCP STREAM test; expected 'netperf -t TCP_RR' "
            "(TCP REQUEST/RESPONSE TEST)",
        ),
        (
            "RT_LATENCY=abc\n",
            "rr.txt:1: RT_LATENCY must be a finite number, found 'abc'",
        ),
        (
            "TRANSACTION_RATE=0\n",
            "rr.txt:1: TRANSACTION_RATE must be at least 0.001 transactions/s, found '0'",
        ),
        (
            "P50_LATENCY=61\nP50_LATENCY=70\n",
            "rr.txt:2: P50_LATENCY appears twice (line 1 and here); expected one netperf "
            "result per file",
        ),
    ],
)
def test_errors(text: str, message: str) -> None:
    with pytest.raises(AdvisorError) as caught:
        parse_netperf(text, source="rr.txt")
    assert str(caught.value) == message


def test_throughput_table_without_round_trip_block_is_an_error() -> None:
    text = read("netperf_v2_burst.txt").split("Alignment")[0]
    with pytest.raises(AdvisorError) as caught:
        parse_netperf(text, source="rr.txt")
    assert str(caught.value) == (
        "rr.txt: netperf printed a throughput (-f) instead of a transaction rate and no "
        "RoundTrip Latency block; rerun without -f, or with -v 2"
    )


def test_two_results_in_one_file_are_refused() -> None:
    with pytest.raises(AdvisorError) as caught:
        parse_netperf(read("netperf_v1.txt") * 2, source="rr.txt")
    assert str(caught.value) == "rr.txt: the file holds 2 netperf results; expected one per file"


def test_crlf_file_and_burst_through_parse_file(tmp_path: Path) -> None:
    path = tmp_path / "rr.txt"
    text = read("netperf_v1.txt").replace(" : first burst 0", "")
    path.write_bytes(text.replace("\n", "\r\n").encode())
    parsed = parse_file(path, "netperf", burst=6)
    assert parsed.percentiles_ms == pytest.approx({"mean": 7 * 1000 / 29150.15})
    assert (parsed.request_bytes, parsed.response_bytes) == (1, 1)


def test_table_without_value_line_is_an_error() -> None:
    text = read("netperf_v1.txt").split("\n\n")[0] + "\n\n(interrupted)\n"
    with pytest.raises(AdvisorError) as caught:
        parse_netperf(text, source="rr.txt")
    assert str(caught.value) == (
        "rr.txt:3: the netperf table has no value line; expected a line like "
        "'16384 87380 1 1 10.00 29150.15'"
    )


def test_v0_prints_the_rate_alone_after_the_banner() -> None:
    banner = read("netperf_v1.txt").split("\n")[0]
    parsed = parse_netperf(f"{banner}\n29150.15\n")
    assert parsed.percentiles_ms == pytest.approx({"mean": 1000 / 29150.15})
    assert "netperf -v 0: the transaction rate alone" in parsed.notes
    with pytest.raises(AdvisorError):  # without the banner a lone number says nothing
        parse_netperf("29150.15\n")


def test_burst_from_a_pasted_command_line() -> None:
    body = read("netperf_v1.txt").replace(" : first burst 0", "")
    parsed = parse_netperf("$ netperf -H db2 -t TCP_RR -l 30 -- -r 1,1 -b 3\n" + body)
    assert parsed.percentiles_ms == pytest.approx({"mean": 4 * 1000 / 29150.15})
    global_b = parse_netperf("$ netperf -b 3 -H db2 -t TCP_RR -- -r 1,1\n" + body)
    assert global_b.percentiles_ms == pytest.approx({"mean": 1000 / 29150.15})
