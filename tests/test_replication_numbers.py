"""replication.lag_parts_ms: plain numbers take a path of Python floats, which must give the
array path's values bit for bit, and its errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from advisor.model import replication
from advisor.model.replication import lag_parts_ms


def _fields(parts: replication.LagParts) -> list[float]:
    return [
        float(v)
        for v in (
            parts.one_way_ms,
            parts.serialisation_ms,
            parts.queue_ms,
            parts.apply_ms,
            parts.utilisation,
            parts.total_ms,
        )
    ]


def test_numbers_and_arrays_give_the_same_parts_bit_for_bit() -> None:
    rng = np.random.default_rng(13)
    for _ in range(3_000):
        rtt = float(rng.choice([0.0, rng.uniform(0, 300), rng.exponential(5)]))
        size = float(rng.choice([0.0, rng.uniform(1, 5e6), 1800.0]))
        rate = float(rng.choice([rng.uniform(1, 1e5), 1000.0, math.inf]))
        load = float(rng.choice([0.0, rng.uniform(0, 2e9), rng.uniform(0, 1e8)]))
        mean = None if rng.random() < 0.3 else float(rng.uniform(1, 1e6))
        quantile = float(rng.choice([0.5, 0.99, 0.0, rng.random()]))
        kwargs = {"replicated_bytes_per_s": load, "mean_writeset_bytes": mean, "quantile": quantile}
        numbers = lag_parts_ms(rtt, size, rate, 1.0, **kwargs)  # type: ignore[arg-type]
        arrays = lag_parts_ms(
            np.asarray(rtt),
            np.asarray(size),
            np.asarray(rate),
            np.asarray(1.0),
            **kwargs,  # type: ignore[arg-type]
        )
        assert np.array_equal(_fields(numbers), _fields(arrays)), (rtt, size, rate, kwargs)
        assert all(type(v) is float for v in _fields(numbers))


@pytest.mark.parametrize(
    ("args", "quantile", "message"),
    [
        ((-1.0, 100.0, 10.0, 1.0), 0.5, "rtt_ms must be finite and >= 0"),
        ((1.0, math.nan, 10.0, 1.0), 0.5, "size_bytes must be finite and >= 0"),
        ((1.0, 100.0, 0.0, 1.0), 0.5, "bandwidth_mbps must be > 0"),
        ((1.0, 100.0, 10.0, 1.0), 1.0, "quantile must be within"),
    ],
)
def test_numbers_out_of_range_are_refused_as_arrays_are(
    args: tuple[float, ...], quantile: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        lag_parts_ms(*args, quantile=quantile)
