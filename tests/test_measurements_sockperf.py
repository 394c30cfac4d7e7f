"""sockperf parser: half round trips doubled, --full-rtt kept, loss, sizes, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.errors import AdvisorError
from advisor.measurements import parse_sockperf

DATA = Path(__file__).parent / "data" / "measurements"


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_default_output_is_half_round_trips_doubled() -> None:
    # sockperf doc/main.dox, TCP over Ethernet: "percentile 99.000 = 16.193" us one way
    parsed = parse_sockperf(read("sockperf_default.txt"))
    assert parsed.tool == "sockperf"
    assert parsed.samples_ms is None
    assert parsed.percentiles_ms is not None
    assert list(parsed.percentiles_ms) == [
        "min", "p25", "p50", "p75", "p90", "p99", "p999", "p9999", "p99999", "max", "mean",
    ]  # fmt: skip
    expected_one_way_us = {
        "min": 4.629, "p25": 5.759, "p50": 6.222, "p75": 14.301, "p90": 14.731,
        "p99": 16.193, "p999": 16.824, "p9999": 17.980, "p99999": 72.628, "max": 98.777,
        "mean": 9.017,
    }  # fmt: skip
    for key, one_way_us in expected_one_way_us.items():
        assert parsed.percentiles_ms[key] == pytest.approx(2 * one_way_us / 1000), key
    assert (parsed.transmitted, parsed.received, parsed.duplicates) == (528579, 528579, 0)
    assert parsed.loss == 0.0
    assert (parsed.request_bytes, parsed.response_bytes) == (64, 64)  # from "-m 64"
    assert parsed.notes == (
        "sockperf reported half round trips (its default latency = RTT/2); doubled",
    )


def test_full_rtt_output_is_kept_and_loss_is_dropped_over_sent() -> None:
    parsed = parse_sockperf(read("sockperf_full_rtt.txt"))
    assert parsed.percentiles_ms is not None
    assert parsed.percentiles_ms["p50"] == pytest.approx(0.024118)
    assert parsed.percentiles_ms["p99999"] == pytest.approx(0.198114)
    assert parsed.percentiles_ms["mean"] == pytest.approx(0.024862)
    assert (parsed.transmitted, parsed.received) == (384000, 383996)
    assert parsed.loss == pytest.approx(4 / 384000)
    assert parsed.request_bytes is None  # no command line in this output
    assert parsed.notes == ("sockperf ran with --full-rtt: values are full round trips",)


def test_summary_line_alone_gives_the_mean() -> None:
    parsed = parse_sockperf("sockperf: Summary: Round trip is 30.000 usec\n")
    assert parsed.percentiles_ms == pytest.approx({"mean": 0.030})


def test_percentiles_without_average_are_assumed_half() -> None:
    parsed = parse_sockperf("sockperf: ---> percentile 50.000 =   10.000\n")
    assert parsed.percentiles_ms == pytest.approx({"p50": 0.020})
    assert parsed.notes[-1] == (
        "no avg-latency or Summary line: assumed half round trips, sockperf's default"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "sockperf: == version #3.5-no.git ==\n",
            "pp.txt: no latency statistics found in sockperf output; expected lines like "
            "'sockperf: ---> percentile 99.000 = 16.193' from 'sockperf ping-pong'",
        ),
        (
            "sockperf: ====> avg-latency=9.017 (std-dev=4.171)\n"
            "sockperf: ---> percentile 99.000 =   -3.000\n",
            "pp.txt:2: sockperf p99 must be a non-negative number of usec, found '-3.000'",
        ),
        (
            "sockperf: ---> <MAX> observation =      nan\n",
            "pp.txt:1: sockperf max must be a non-negative number of usec, found 'nan'",
        ),
        (
            "sockperf: ========= Printing statistics for Server No: 0\n"
            "sockperf: ========= Printing statistics for Server No: 1\n",
            "pp.txt: the output holds statistics for 2 servers; expected one server per file",
        ),
    ],
)
def test_errors(text: str, message: str) -> None:
    with pytest.raises(AdvisorError) as caught:
        parse_sockperf(text, source="pp.txt")
    assert str(caught.value) == message
