"""TCP request/response model: the worked examples, calibration cases, and its properties."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from advisor.model.rtt import RttDistribution
from advisor.model.tcp import (
    bdp_bytes,
    one_way_ms,
    request_response_ms,
    socket_buffer_bytes_for,
)

CALIBRATION = Path(__file__).resolve().parents[1] / "benchmarks" / "calibration"
GBIT_MBPS = 1000.0


def _case(file: str, case_id: str) -> dict[str, Any]:
    cases = yaml.safe_load((CALIBRATION / file).read_text(encoding="utf-8"))["cases"]
    found: dict[str, Any] = next(case for case in cases if case["id"] == case_id)
    return found


def _reference_one_way(
    size: float, rtt: float, rate: float, w1: float = 10, wmax: float = math.inf
) -> float:
    """The sketch of network.md section 4.3, verbatim in substance: the oracle (rate bytes/ms)."""
    mss = 1448
    n = max(1, math.ceil(size / mss))
    t = rtt / 2 + size / rate
    sent, w = 0.0, min(w1, wmax)
    while True:
        sent += w
        if sent >= n:
            return t
        t += max(0.0, rtt + mss / rate - w * mss / rate)
        w = min(w * 2.0, wmax)


# -- network.md 4.3 worked examples (B = 1 Gbit/s, MSS 1448, IW 10, growth 2) ----------

# (size_bytes, rtt_ms, cold_ms, warm_ms): the table, printed to 0.1 ms
WORKED_EXAMPLES = [
    (1000, 10, 5.0, 5.0),
    (1000, 80, 40.0, 40.0),
    (14480, 10, 5.1, 5.1),
    (14480, 80, 40.1, 40.1),
    (16000, 10, 15.0, 5.1),
    (16000, 80, 120.0, 40.1),
    (65536, 10, 25.2, 5.5),
    (65536, 80, 200.2, 40.5),
    (262144, 10, 45.4, 7.1),
    (262144, 80, 360.4, 42.1),
    (1048576, 10, 66.2, 13.4),
    (1048576, 80, 521.2, 48.4),
    (8388608, 10, 127.5, 72.1),
    (8388608, 80, 768.0, 107.1),
]


@pytest.mark.parametrize(("size_bytes", "rtt_ms", "cold_ms", "warm_ms"), WORKED_EXAMPLES)
def test_worked_examples(size_bytes: int, rtt_ms: float, cold_ms: float, warm_ms: float) -> None:
    half_a_printed_digit = 0.05 + 1e-9
    cold = one_way_ms(size_bytes, rtt_ms, GBIT_MBPS)
    warm = one_way_ms(size_bytes, rtt_ms, GBIT_MBPS, window="warm")
    assert cold == pytest.approx(cold_ms, abs=half_a_printed_digit)
    assert warm == pytest.approx(warm_ms, abs=half_a_printed_digit)


def test_one_megabyte_at_80_ms_exactly() -> None:
    # 725 segments in 7 rounds (10..640); 6 stalls of 80 ms + one segment's 0.011584 ms,
    # less the 630 segments they carried: 40 + 8.388608 + 480.069504 - 7.29792 ms
    assert one_way_ms(1048576, 80.0, GBIT_MBPS) == pytest.approx(521.160192, abs=1e-9)
    assert one_way_ms(1048576, 80.0, GBIT_MBPS, window="warm") == pytest.approx(48.388608)


@pytest.mark.parametrize(("usable_fraction", "expected_ms"), [(0.5, 217.0), (0.75, 149.0)])
def test_warm_window_capped_by_receive_buffer(usable_fraction: float, expected_ms: float) -> None:
    # network.md 4.3: 8 MB at 80 ms with tcp_rmem[2] = 6 MB is window-limited, "about 217 ms"
    # (W_max 2,172 segments) or "about 149 ms" (0.75), printed to the ms
    cap = 6291456 * usable_fraction
    got = one_way_ms(8388608, 80.0, GBIT_MBPS, window="warm", max_window_bytes=cap)
    assert got == pytest.approx(expected_ms, abs=0.5)


@pytest.mark.parametrize("size_bytes", [1, 65536, 1048576, 8388608])
@pytest.mark.parametrize("cap_bytes", [45 * 1448, 100_000, 3e6])
@pytest.mark.parametrize("bandwidth_mbps", [100.0, 10_000.0])
def test_capped_cold_start_matches_the_reference_sketch(
    size_bytes: int, cap_bytes: float, bandwidth_mbps: float
) -> None:
    # capped rounds are summed in closed form; the sketch loops over every one of them
    rate = bandwidth_mbps * 1e6 / 8 / 1e3
    expected = _reference_one_way(size_bytes, 30.0, rate, wmax=math.floor(cap_bytes / 1448))
    got = one_way_ms(size_bytes, 30.0, bandwidth_mbps, max_window_bytes=cap_bytes)
    assert got == pytest.approx(expected, rel=1e-12)


def test_vectorised_over_rtt_and_size() -> None:
    rtt_ms = np.array([10.0, 80.0])
    got = one_way_ms(1048576, rtt_ms, GBIT_MBPS)
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, [66.160192, 521.160192])
    sizes = np.array([[1000], [65536]])
    grid = one_way_ms(sizes, rtt_ms, GBIT_MBPS)
    assert np.shape(grid) == (2, 2)
    assert grid[1, 1] == pytest.approx(one_way_ms(65536, 80.0, GBIT_MBPS))  # type: ignore[index]
    assert isinstance(one_way_ms(1000, 10.0), float)


def test_unlimited_bandwidth_pays_only_round_trips() -> None:
    # 65536 B = 46 segments: 3 rounds (10, 20, 40), 2 stalls of a full RTT
    assert one_way_ms(65536, 10.0) == 5.0 + 2 * 10.0
    assert one_way_ms(65536, 10.0, window="warm") == 5.0


def test_bdp_and_socket_buffer() -> None:
    assert bdp_bytes(GBIT_MBPS, 80.0) == 10_000_000.0  # 1 Gbit/s x 80 ms = 10 MB
    assert socket_buffer_bytes_for(GBIT_MBPS, 20.0) == 5_000_000  # 2.5 MB BDP / 0.5
    assert socket_buffer_bytes_for(GBIT_MBPS, 20.0, usable_fraction=0.75) == 3_333_334
    # network.md 4.1: 6 MB at 0.5 covers 1.26 Gbit/s at 20 ms but only 315 Mbit/s at 80 ms
    assert socket_buffer_bytes_for(1258.0, 20.0) <= 6291456 < socket_buffer_bytes_for(1259.0, 20.0)
    assert socket_buffer_bytes_for(314.0, 80.0) <= 6291456 < socket_buffer_bytes_for(315.0, 80.0)


# -- request/response -------------------------------------------------------------------


def test_request_response_is_two_legs_plus_server_time() -> None:
    legs = one_way_ms(49152, 10.0, GBIT_MBPS, window="warm") + one_way_ms(
        1024, 10.0, GBIT_MBPS, window="warm"
    )
    got = request_response_ms(49152, 1024, 10.0, GBIT_MBPS, server_time_ms=0.25)
    assert got == pytest.approx(legs + 0.25)
    # a new connection: one RTT of handshake, then cold windows
    new = request_response_ms(49152, 1024, 10.0, GBIT_MBPS, window="new")
    cold = request_response_ms(49152, 1024, 10.0, GBIT_MBPS, window="cold")
    assert new == pytest.approx(cold + 10.0)


def test_in_flight_shares_the_busier_direction() -> None:
    # 6 in flight, 512 KiB one way and 48 KiB back at 1 Gbit/s: 6 x 4.194304 ms on the wire
    got = request_response_ms(524288, 49152, 0.027, GBIT_MBPS, in_flight=6)
    assert got == pytest.approx(6 * 524288 * 8 / 1e6)
    # below the knee the single transaction time stands
    single = request_response_ms(1024, 1024, 50.0, GBIT_MBPS)
    assert request_response_ms(1024, 1024, 50.0, GBIT_MBPS, in_flight=6) == single


def test_in_flight_limited_by_window_over_rtt() -> None:
    # throughput <= window / RTT: 1 MB per 100 ms is 80 Mbit/s, below the 1 Gbit/s link;
    # 4 x 1 MB then needs 4 windows = 400 ms
    got = request_response_ms(
        1_000_000, 64, 100.0, GBIT_MBPS, in_flight=4, max_window_bytes=1_000_000
    )
    assert got == pytest.approx(400.0)


def test_maps_an_rtt_distribution() -> None:
    dist = RttDistribution.from_samples([9.0, 10.0, 12.0], loss=0.01)
    mapped = dist.map(lambda rtt_ms: request_response_ms(49152, 1024, rtt_ms, GBIT_MBPS))
    assert mapped.quantile(0.5) == pytest.approx(request_response_ms(49152, 1024, 10.0, GBIT_MBPS))
    assert mapped.loss == 0.01


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: one_way_ms(-1, 10.0), "size_bytes must be finite and >= 0 bytes, got -1"),
        (lambda: one_way_ms(1, math.nan), "rtt_ms must be finite and >= 0 ms, got nan"),
        (lambda: one_way_ms(1, 1.0, 0.0), "bandwidth_mbps must be > 0 Mbit/s, got 0.0"),
        (lambda: one_way_ms(1, 1.0, growth=1.0), "growth must be > 1 (2 for Linux slow start)"),
        (
            lambda: one_way_ms(1, 1.0, window="hot"),  # type: ignore[arg-type]
            "unknown window 'hot'; expected cold or warm",
        ),
        (
            lambda: request_response_ms(1, 1, 1.0, in_flight=0),
            "in_flight must be an integer >= 1, got 0",
        ),
        (
            lambda: request_response_ms(1, 1, 1.0, window="tepid"),  # type: ignore[arg-type]
            "unknown window 'tepid'; expected cold, warm or new",
        ),
        (
            lambda: socket_buffer_bytes_for(1.0, 1.0, usable_fraction=0),
            "usable_fraction must be within (0, 1], got 0",
        ),
    ],
)
def test_bad_arguments(call: Any, message: str) -> None:
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value).startswith(message)


# -- calibration: lab-galera.yaml tcp-request-response-rtt10 ----------------------------

LAB = _case("lab-galera.yaml", "tcp-request-response-rtt10")["measured"]


@pytest.mark.parametrize("row", LAB, ids=[f"{row['request_bytes']}B" for row in LAB])
def test_lab_rtt10(row: dict[str, Any]) -> None:
    """RTT 10 ms, 1 KiB response, a path of about 1 Gbit/s; the model within 12 %.

    Model against measured: warm 10.01/10.34, 10.40/10.43, 14.20/12.84 ms; fresh 20.01/20.89,
    40.08/41.12, 70.67/74.58 ms. Why 12 %: the lab adds a fixed 0.3 ms (warm) to 0.9 ms
    (fresh: socket set-up and accept in user space) that the model leaves out, and its
    "1 Gbit/s" is a shaped rate whose burst allowance lets tens of KB through at veth speed:
    48 KiB costs only 0.09 ms over 64 B, 512 KiB 2.5 ms instead of the 4.2 ms that 1 Gbit/s
    needs, so the model is 11 % slow there. The cold 512 KiB case (6 rounds, 5 stalls)
    confirms growth 2 with the handshake as one RTT: 5 % under the measurement.
    """
    request = row["request_bytes"]
    warm = request_response_ms(request, 1024, 10.0, GBIT_MBPS)
    fresh = request_response_ms(request, 1024, 10.0, GBIT_MBPS, window="new")
    assert warm == pytest.approx(row["warm_ms_p50"], rel=0.12)
    assert fresh == pytest.approx(row["fresh_connection_ms_p50"], rel=0.12)


def test_lab_rtt10_supports_doubling_not_delayed_ack_growth() -> None:
    # With growth 1.5 (per-ACK increase halved by delayed ACKs) 512 KiB needs 8 rounds:
    # 90.6 ms, 21 % above the measured 74.58; Linux's doubling gives 70.7 ms, 5 % below.
    measured = LAB[2]["fresh_connection_ms_p50"]
    doubling = request_response_ms(524288, 1024, 10.0, GBIT_MBPS, window="new")
    delayed = request_response_ms(524288, 1024, 10.0, GBIT_MBPS, window="new", growth=1.5)
    assert abs(doubling - measured) < 0.06 * measured < abs(delayed - measured)


# -- calibration: field-data.yaml tcp-payload-400km -------------------------------------

FIELD = _case("field-data.yaml", "tcp-payload-400km")["measured"]
IN_FLIGHT = 6  # netperf TCP_RR -b 5: 1 + 5 transactions outstanding; 48 KB responses


@pytest.mark.parametrize("row", FIELD[:2], ids=[row["pair"] for row in FIELD[:2]])
def test_field_400km(row: dict[str, Any]) -> None:
    """netperf TCP_RR -b 5 over 400 km and inside one DC, at 1 Gbit/s: within a factor 1.5.

    What explains the numbers is bandwidth sharing: with 6 transactions outstanding the
    1 Gbit/s link is saturated, so each round trip is 6 x the serialisation of the busier
    direction (Little's law), not ping + S/B. Inside DC1 2.61 and 27.39 ms are measured
    against 2.36 and 25.17 modelled; a single-transaction model says 0.81 and 4.61 ms.
    Over 400 km 48 KB is RTT-bound (model 3.89 ms against 4.27); 512 KB is modelled at
    25.17 ms against 37.25: the WAN carried only 167 x 512 KiB/s = 700 Mbit/s, with the
    retransmissions the source reports, which a loss-free model cannot see. Hence 1.5.
    The netperf numbers are checked too: round trip = (1 + b) / rate.
    """
    ping_ms = row["ping_ms"]
    small = request_response_ms(49152, 49152, ping_ms, GBIT_MBPS, in_flight=IN_FLIGHT)
    large = request_response_ms(524288, 49152, ping_ms, GBIT_MBPS, in_flight=IN_FLIGHT)
    for model, measured in ((small, row["tcp_rr_48k_ms"]), (large, row["tcp_rr_512k_ms"])):
        assert 1 / 1.5 <= measured / model <= 1.5
        assert model > ping_ms  # the direction: TCP at payload size is well above ping
    assert large > 5 * small  # and 512 KB costs several times 48 KB


def test_field_400km_needs_the_sharing_assumption() -> None:
    inside = FIELD[1]
    assert inside["pair"] == "inside DC1"
    rates = FIELD[3]
    # netperf reports (1 + b) / rate: 6 / 2299 tps = 2.61 ms, 6 / 219 tps = 27.40 ms
    assert IN_FLIGHT / rates["tps_48k"] * 1e3 == pytest.approx(inside["tcp_rr_48k_ms"], abs=0.01)
    assert IN_FLIGHT / rates["tps_512k"] * 1e3 == pytest.approx(inside["tcp_rr_512k_ms"], abs=0.02)
    # one transaction at a time would be 3x to 6x too fast inside the DC
    for size, measured in ((49152, inside["tcp_rr_48k_ms"]), (524288, inside["tcp_rr_512k_ms"])):
        alone = request_response_ms(size, 49152, inside["ping_ms"], GBIT_MBPS)
        assert measured / alone > 3


# -- properties -------------------------------------------------------------------------

sizes = st.integers(min_value=0, max_value=50_000_000)
rtts = st.floats(min_value=0.0, max_value=1000.0)
bandwidths = st.one_of(st.none(), st.floats(min_value=0.1, max_value=100_000.0))
caps = st.one_of(st.none(), st.floats(min_value=1448.0, max_value=50_000_000.0))


def _le(a: float, b: float) -> bool:
    return a <= b + 1e-9 * (1.0 + abs(b))


@given(sizes, sizes, rtts, bandwidths, caps)
def test_one_way_non_decreasing_in_size(
    a: int, b: int, rtt_ms: float, bandwidth_mbps: float | None, cap: float | None
) -> None:
    small, large = sorted((a, b))
    for window in ("cold", "warm"):
        assert _le(
            one_way_ms(small, rtt_ms, bandwidth_mbps, window=window, max_window_bytes=cap),  # type: ignore[arg-type]
            one_way_ms(large, rtt_ms, bandwidth_mbps, window=window, max_window_bytes=cap),  # type: ignore[arg-type]
        )


@given(sizes, rtts, rtts, bandwidths, caps)
def test_one_way_non_decreasing_in_rtt(
    size: int, a: float, b: float, bandwidth_mbps: float | None, cap: float | None
) -> None:
    short, long = sorted((a, b))
    got = one_way_ms(size, np.array([short, long]), bandwidth_mbps, max_window_bytes=cap)
    assert _le(got[0], got[1])  # type: ignore[index]


@given(sizes, rtts, st.floats(0.1, 1e5), st.floats(0.1, 1e5), caps)
def test_one_way_non_increasing_in_bandwidth(
    size: int, rtt_ms: float, a: float, b: float, cap: float | None
) -> None:
    slow, fast = sorted((a, b))
    got = one_way_ms(size, rtt_ms, np.array([slow, fast]), max_window_bytes=cap)
    assert _le(got[1], got[0])  # type: ignore[index]


@given(sizes, rtts, bandwidths, caps)
def test_warm_never_slower_than_cold(
    size: int, rtt_ms: float, bandwidth_mbps: float | None, cap: float | None
) -> None:
    warm = one_way_ms(size, rtt_ms, bandwidth_mbps, window="warm", max_window_bytes=cap)
    cold = one_way_ms(size, rtt_ms, bandwidth_mbps, window="cold", max_window_bytes=cap)
    assert _le(warm, cold)  # type: ignore[arg-type]
    assert _le(rtt_ms / 2, warm)  # type: ignore[arg-type]
