"""rtt.quantiles_at: the same values as each distribution's own quantile, shared work or not."""

import numpy as np
import pytest

from advisor.model.rtt import RttDistribution, quantiles_at


def test_quantiles_at_equals_each_quantile_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    samples = RttDistribution.from_samples(rng.gamma(2.0, 1.5, 5_000) + 10.0)
    dists = [
        samples,
        samples.map(lambda v: v * 1.5 + 2.0),  # samples, the same knots' count: shared index
        RttDistribution.from_samples(rng.random(333) + 4.0),  # another count
        RttDistribution.from_samples([7.5]),  # one sample: read through interp
        RttDistribution.from_percentiles({"p50": 4.0, "p99": 10.0, "max": 30.0}),
        RttDistribution.point(12.0),
    ]
    levels = np.r_[rng.random(4_000), 0.0, 1.0, 0.5, 0.5]
    got = quantiles_at(dists, levels)
    for dist, values in zip(dists, got, strict=True):
        assert np.array_equal(values, dist.quantile(levels))


def test_quantiles_at_refuses_levels_outside_zero_one() -> None:
    with pytest.raises(ValueError, match="within \\[0, 1\\]"):
        quantiles_at([RttDistribution.point(1.0)], [0.5, 1.5])


def test_one_level_reads_as_numpy_quantile_and_as_the_array_path() -> None:
    # the scalar path (Python floats) and the array path (numpy) are the same arithmetic
    rng = np.random.default_rng(8)
    samples = rng.gamma(2.0, 1.5, 4_001) + 10.0
    dist = RttDistribution.from_samples(samples)
    levels = np.r_[rng.random(500), 0.0, 1.0, 0.5, 0.999, 1e-12, 1.0 - 1e-12]
    one_by_one = np.array([dist.quantile(float(q)) for q in levels])
    assert all(isinstance(dist.quantile(float(q)), float) for q in levels[:3])
    assert one_by_one.tobytes() == np.asarray(dist.quantile(levels)).tobytes()
    assert one_by_one.tobytes() == np.quantile(samples, levels).tobytes()


def test_a_level_read_again_is_the_value_read_first_and_bad_levels_stay_refused() -> None:
    dist = RttDistribution.from_samples([1.0, 2.0, 3.0, 4.0])
    given = RttDistribution.from_percentiles({"p50": 4.0, "p99": 10.0})
    for d in (dist, given):
        first = [d.quantile(q) for q in (0.0, 0.5, 0.99, 1.0)]
        assert [d.quantile(q) for q in (0.0, 0.5, 0.99, 1.0)] == first
        assert first == [float(v) for v in d.quantile(np.array([0.0, 0.5, 0.99, 1.0]))]
        assert d.quantile(1) == first[-1] and type(d.quantile(1)) is float
        for bad in (float("nan"), 1.5, -0.1):
            with pytest.raises(ValueError, match="within \\[0, 1\\]"):
                d.quantile(bad)
    shifted = dist.shift(1.0)  # a new distribution: its own readings
    assert shifted.quantile(0.5) == 3.5 and dist.quantile(0.5) == 2.5
