"""metrics.percentiles and median: numpy's, bit for bit, on draws like the engine's."""

import numpy as np
import pytest

from advisor.engine.metrics import median, percentiles

LEVELS = [50, 95, 99, 99.9, 100]


@pytest.mark.parametrize("size", [1, 2, 3, 4, 7, 999, 1000, 1001, 2000, 20000])
@pytest.mark.parametrize("kind", ["gamma", "rounded", "constant", "float32"])
def test_equal_to_numpy_percentile(size: int, kind: str) -> None:
    rng = np.random.default_rng(size)
    draws = {
        "gamma": lambda: rng.gamma(2.0, 3.0, size) + 10.0,
        "rounded": lambda: np.round(rng.gamma(2.0, 3.0, size), 1),  # many ties
        "constant": lambda: np.full(size, 7.3),
        "float32": lambda: (rng.random(size) * 1e3).astype(np.float32).astype(np.float64),
    }[kind]()
    for levels in (LEVELS, [50, 95], [50], [0, 25, 100]):
        assert np.array_equal(percentiles(draws, levels), np.percentile(draws, levels))


def test_a_nan_draw_makes_every_percentile_nan_as_numpy() -> None:
    got = percentiles(np.array([1.0, np.nan, 3.0]), LEVELS)
    assert np.isnan(got).all() and np.isnan(np.percentile([1.0, np.nan, 3.0], LEVELS)).all()


@pytest.mark.parametrize("size", [1, 2, 3, 4, 999, 1000, 2000, 2001, 20000])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_median_equal_to_numpy_median(size: int, dtype: type) -> None:
    rng = np.random.default_rng(size)
    for draws in (rng.gamma(2.0, 3.0, size), np.round(rng.gamma(2.0, 3.0, size), 1)):
        values = draws.astype(dtype)
        assert median(values) == float(np.median(values))
    assert np.isnan(median(np.array([1.0, np.nan], dtype=dtype)))
