"""rtt.quantiles_at and reading quantiles: numpy's estimator for samples, the given values
for percentiles, one level or many."""

import numpy as np
import pytest

from advisor.model.rtt import RttDistribution, quantiles_at


def test_quantiles_at_reads_each_distribution_at_the_same_levels() -> None:
    dists = [
        RttDistribution.from_samples([1.0, 2.0, 3.0, 4.0]),
        RttDistribution.from_percentiles({"min": 0.0, "max": 10.0}),
        RttDistribution.point(12.0),
    ]
    got = quantiles_at(dists, [0.0, 0.5, 1.0])
    assert [values.tolist() for values in got] == [
        [1.0, 2.5, 4.0],
        [0.0, 5.0, 10.0],
        [12.0, 12.0, 12.0],
    ]


def test_quantiles_at_refuses_levels_outside_zero_one() -> None:
    with pytest.raises(ValueError, match="within \\[0, 1\\]"):
        quantiles_at([RttDistribution.point(1.0)], [0.5, 1.5])


def test_sample_quantiles_are_numpys_linear_estimator_one_level_or_many() -> None:
    rng = np.random.default_rng(8)
    samples = rng.gamma(2.0, 1.5, 4_001) + 10.0
    dist = RttDistribution.from_samples(samples)
    levels = np.r_[rng.random(500), 0.0, 1.0, 0.5, 0.999, 1e-12, 1.0 - 1e-12]
    one_by_one = np.array([dist.quantile(float(q)) for q in levels])
    assert all(type(dist.quantile(float(q))) is float for q in levels[:3])
    assert one_by_one.tobytes() == np.quantile(samples, levels).tobytes()
    assert np.asarray(dist.quantile(levels)).tobytes() == np.quantile(samples, levels).tobytes()


def test_one_level_is_a_float_and_bad_levels_are_refused() -> None:
    dist = RttDistribution.from_samples([1.0, 2.0, 3.0, 4.0])
    given = RttDistribution.from_percentiles({"p50": 4.0, "p99": 10.0})
    for d, expected in ((dist, [1.0, 2.5, 3.97, 4.0]), (given, [4.0, 4.0, 10.0, 10.0])):
        read = [d.quantile(q) for q in (0.0, 0.5, 0.99, 1.0)]
        assert read == pytest.approx(expected)
        assert all(type(v) is float for v in read)
        assert d.quantile(1) == read[-1] and type(d.quantile(1)) is float
        for bad in (float("nan"), 1.5, -0.1):
            with pytest.raises(ValueError, match="within \\[0, 1\\]"):
                d.quantile(bad)
