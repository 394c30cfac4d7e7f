"""replication.lag_parts_ms on plain numbers: Python floats out, and out-of-range inputs
refused with a message naming the input."""

from __future__ import annotations

import math

import pytest

from advisor.model.replication import lag_parts_ms


def test_plain_numbers_give_plain_floats_computed_by_hand() -> None:
    # 10 MB/s on 100 Mbit/s: rho 0.8; a 64,000 B write set: 5.12 ms; mean 8,000 B: 0.64 ms
    # of service, p99 wait 0.64 / 0.2 x ln(0.8 / 0.01).
    parts = lag_parts_ms(
        80.0, 64_000, 100.0, 1.0, replicated_bytes_per_s=10e6, mean_writeset_bytes=8_000,
        quantile=0.99,
    )  # fmt: skip
    fields = (parts.one_way_ms, parts.serialisation_ms, parts.queue_ms, parts.apply_ms)
    assert all(type(v) is float for v in (*fields, parts.utilisation, parts.total_ms))
    assert fields == pytest.approx((40.0, 5.12, 3.2 * math.log(80.0), 1.0))
    assert parts.utilisation == pytest.approx(0.8)


def test_an_unlimited_link_has_no_serialisation_and_no_queue() -> None:
    parts = lag_parts_ms(10.0, 1_000_000, math.inf, 1.0, replicated_bytes_per_s=1e9)
    assert (parts.serialisation_ms, parts.queue_ms, parts.utilisation) == (0.0, 0.0, 0.0)
    assert parts.total_ms == 6.0


@pytest.mark.parametrize(
    ("args", "quantile", "message"),
    [
        ((-1.0, 100.0, 10.0, 1.0), 0.5, "rtt_ms must be finite and >= 0"),
        ((1.0, math.nan, 10.0, 1.0), 0.5, "size_bytes must be finite and >= 0"),
        ((1.0, 100.0, 0.0, 1.0), 0.5, "bandwidth_mbps must be > 0"),
        ((1.0, 100.0, 10.0, 1.0), 1.0, "quantile must be within"),
    ],
)
def test_numbers_out_of_range_are_refused(
    args: tuple[float, ...], quantile: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        lag_parts_ms(*args, quantile=quantile)
