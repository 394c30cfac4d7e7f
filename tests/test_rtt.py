"""RTT distributions: construction rules, quantiles, exceedance, bounds, transforms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisor.model.rtt import RttDistribution, parse_percentile_key

UNIFORM_0_10 = {"min": 0.0, "max": 10.0}


# -- parse_percentile_key ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "percent"),
    [
        ("p50", 50.0),
        ("p999", 99.9),
        ("p9999", 99.99),
        ("p5", 5.0),
        ("p0", 0.0),
        ("p100", 100.0),
        ("p99.9", 99.9),
        ("P95", 95.0),
        ("min", 0.0),
        ("max", 100.0),
    ],
)
def test_parse_percentile_key(key: str, percent: float) -> None:
    assert parse_percentile_key(key) == percent


@pytest.mark.parametrize("key", ["mean", "p", "p5x", "q50", "p100.5", "p-5", ""])
def test_parse_percentile_key_rejects(key: str) -> None:
    with pytest.raises(ValueError, match=rf"^unknown percentile key '{key}'; expected min, max"):
        parse_percentile_key(key)


# -- from_samples -----------------------------------------------------------------------


def test_samples_sorted_read_only_and_copied() -> None:
    raw = np.array([9.9, 8.1, 8.3, 8.2])
    dist = RttDistribution.from_samples(raw, loss=0.2)
    raw[0] = 100.0  # the caller's array is not shared
    assert dist.values_ms.tolist() == [8.1, 8.2, 8.3, 9.9]
    assert (dist.basis, dist.n_samples, dist.loss) == ("samples", 4, 0.2)
    with pytest.raises(ValueError, match="read-only"):
        dist.values_ms[0] = 1.0
    with pytest.raises(AttributeError, match="immutable"):
        dist.loss = 0.0  # type: ignore[misc]


def test_samples_quantile_is_numpy_linear() -> None:
    samples = np.array([3.0, 1.0, 2.0, 10.0, 4.0])
    dist = RttDistribution.from_samples(samples)
    q = np.array([0.0, 0.1, 0.5, 0.9, 0.95, 1.0])
    np.testing.assert_array_equal(dist.quantile(q), np.quantile(samples, q))
    # by hand: position 0.9 * 4 = 3.6 between 4 and 10 -> 4 + 0.6 * 6
    assert dist.quantile(0.9) == pytest.approx(7.6)
    assert isinstance(dist.quantile(0.5), float)


def test_samples_exceedance_is_empirical() -> None:
    dist = RttDistribution.from_samples([1.0, 2.0, 3.0, 4.0])
    got = dist.exceedance_probability([0.0, 1.0, 2.5, 4.0, math.inf])
    assert np.asarray(got).tolist() == [1.0, 0.75, 0.5, 0.0, 0.0]


def test_single_sample() -> None:
    dist = RttDistribution.from_samples([7.5])
    assert dist.quantile([0.0, 0.5, 1.0]).tolist() == [7.5, 7.5, 7.5]  # type: ignore[union-attr]
    assert dist.n_samples == 1


@pytest.mark.parametrize(
    ("samples", "message"),
    [
        ([], "no RTT samples given; expected at least one value [ms]"),
        ([1.0, float("nan")], "RTT samples must be finite and >= 0 ms, found nan at index 1"),
        ([math.inf], "RTT samples must be finite and >= 0 ms, found inf at index 0"),
        ([2.0, 3.0, -1.5], "RTT samples must be finite and >= 0 ms, found -1.5 at index 2"),
        ([[1.0, 2.0]], "RTT samples must be one-dimensional, got shape (1, 2)"),
        (["fast"], "RTT samples must be numbers [ms], got ['fast']"),
    ],
)
def test_samples_rejected(samples: object, message: str) -> None:
    with pytest.raises(ValueError) as info:
        RttDistribution.from_samples(samples)  # type: ignore[arg-type]
    assert str(info.value) == message


@pytest.mark.parametrize("loss", [-0.1, 1.0, float("nan")])
def test_loss_must_be_a_fraction(loss: float) -> None:
    with pytest.raises(ValueError, match=r"^loss must be a fraction in \[0, 1\), got"):
        RttDistribution.from_samples([1.0], loss=loss)


# -- from_percentiles -------------------------------------------------------------------


@pytest.mark.parametrize(
    "given_ms",
    [
        {"p50": 4.3, "p95": 9.1, "p99": 37.2, "max": 212.0},
        {"p50": 0.2, "p99": 0.5},
        {"min": 2.9, "p10": 3.0, "p90": 3.3, "p999": 8.0, "p9999": 40.0},
        {"p25": 1.0, "p75": 1.0, "p95": 2.5},
    ],
)
def test_percentiles_exact_at_given_keys(given_ms: dict[str, float]) -> None:
    dist = RttDistribution.from_percentiles(given_ms)
    for key, value in given_ms.items():
        assert dist.quantile(parse_percentile_key(key) / 100) == pytest.approx(value, rel=1e-9)
    assert dist.percentiles_ms(given_ms.keys()) == pytest.approx(given_ms, rel=1e-9)
    assert dist.basis == "percentiles"
    assert dist.n_samples is None


def test_percentiles_interpolate_linearly_with_flat_tails() -> None:
    dist = RttDistribution.from_percentiles({"p50": 4.0, "p99": 10.0})
    # below p50 held at 4, above p99 held at 10; in between linear in probability:
    # Q(0.745) = 4 + (0.245 / 0.49) * 6 = 7
    got = dist.quantile([0.0, 0.3, 0.745, 0.995, 1.0])
    np.testing.assert_allclose(got, [4.0, 4.0, 7.0, 10.0, 10.0], rtol=1e-12)
    # exceedance is the inverse: F(7) = 0.745; nothing claimed beyond the p99 value
    np.testing.assert_allclose(
        dist.exceedance_probability([3.9, 4.0, 7.0, 10.0, 50.0]),
        [1.0, 0.5, 0.255, 0.0, 0.0],
        atol=1e-12,
    )


def test_percentiles_min_and_max_extend_the_tails() -> None:
    dist = RttDistribution.from_percentiles({"min": 2.0, "p50": 4.0, "max": 20.0})
    np.testing.assert_allclose(dist.quantile([0.0, 0.25, 0.75, 1.0]), [2.0, 3.0, 12.0, 20.0])


def test_percentile_atoms_are_mid_bin_quantiles() -> None:
    dist = RttDistribution.from_percentiles({"min": 0.0, "max": 8.0}, resolution=4)
    assert dist.values_ms.tolist() == [1.0, 3.0, 5.0, 7.0]


def test_percentiles_skip_mean_and_avg() -> None:
    dist = RttDistribution.from_percentiles({"mean": 99.0, "avg": 98.0, "p50": 4.0})
    assert dist.quantile(1.0) == 4.0


@pytest.mark.parametrize(
    ("given_ms", "message"),
    [
        (
            {"p50": 4.2, "p99": 3.1},
            "percentiles must not decrease: p99 (3.1) < p50 (4.2)",
        ),
        ({"mean": 4.0}, "no percentiles given (keys: mean); expected e.g. {p50: 4.3, p99: 37.2}"),
        ({}, "no percentiles given (keys: none); expected e.g. {p50: 4.3, p99: 37.2}"),
        (
            {"p50": 4.0, "p50.0": 5.0},
            "p50 (4) and p50.0 (5) name the same percentile with different values",
        ),
        ({"p50": -1.0}, "p50 must be a finite number >= 0 ms, got -1.0"),
        ({"p99": math.nan}, "p99 must be a finite number >= 0 ms, got nan"),
        ({"p99": "slow"}, "p99 must be a number [ms], got 'slow'"),
        (
            {"p50": 1.0, "median": 1.0},
            "unknown percentile key 'median'; expected min, max or p<percent> "
            "such as p50, p99, p999 (99.9th)",
        ),
    ],
)
def test_percentiles_rejected(given_ms: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError) as info:
        RttDistribution.from_percentiles(given_ms)
    assert str(info.value) == message


# -- point ------------------------------------------------------------------------------


def test_point() -> None:
    dist = RttDistribution.point(12.5)
    assert dist.quantile([0.0, 0.5, 1.0]).tolist() == [12.5, 12.5, 12.5]  # type: ignore[union-attr]
    assert np.asarray(dist.exceedance_probability([12.4, 12.5])).tolist() == [1.0, 0.0]
    assert (dist.basis, dist.n_samples, dist.loss) == ("point", None, 0.0)
    assert dist.exceedance_upper_bound(12.4) == 1.0
    with pytest.raises(ValueError, match=r"^RTT must be a finite number >= 0 ms, got -3"):
        RttDistribution.point(-3)


@pytest.mark.parametrize("q", [-0.1, 1.5, math.nan])
def test_quantile_levels_checked(q: float) -> None:
    with pytest.raises(ValueError, match=r"^quantile levels must be within \[0, 1\]"):
        RttDistribution.point(1.0).quantile(q)


# -- exceedance_upper_bound -------------------------------------------------------------


def test_upper_bound_with_no_exceedance_is_the_rule_of_three() -> None:
    dist = RttDistribution.from_samples(np.arange(1000.0))
    assert dist.exceedance_probability(999.0) == 0.0
    bound = dist.exceedance_upper_bound(999.0)
    # exact Clopper-Pearson for 0 of n: 1 - 0.05^(1/1000) = 0.0029912 ~ 3/n
    assert bound == pytest.approx(0.00299124954509533, rel=1e-12)
    assert 2.99 / 1000 < bound < 3.0 / 1000


def test_upper_bound_wilson_by_hand() -> None:
    dist = RttDistribution.from_samples(np.r_[np.ones(90), np.full(10, 5.0)])
    # p = 0.1, n = 100, z = 1.6448536 (one-sided 95 %), z^2 = 2.7055434:
    # (0.1 + 0.0135277 + z * sqrt(0.0009 + 0.0000676)) / (1 + 0.0270554) = 0.160356
    assert dist.exceedance_upper_bound(1.0) == pytest.approx(0.160356, abs=1e-6)
    # 99 % is wider than 95 %
    assert dist.exceedance_upper_bound(1.0, confidence=0.99) > 0.1604


def test_upper_bound_is_the_estimate_for_percentiles() -> None:
    dist = RttDistribution.from_percentiles({"p50": 4.0, "p99": 10.0})
    assert dist.exceedance_upper_bound(7.0) == pytest.approx(0.255)
    with pytest.raises(ValueError, match=r"^confidence must be within \(0, 1\), got 1.0"):
        dist.exceedance_upper_bound(7.0, confidence=1.0)


# -- map, shift, scale ------------------------------------------------------------------


def test_map_keeps_loss_and_sample_count() -> None:
    dist = RttDistribution.from_samples([1.0, 2.0, 3.0], loss=0.05)
    mapped = dist.map(lambda rtt_ms: 2.0 * rtt_ms + 1.0)
    assert mapped.values_ms.tolist() == [3.0, 5.0, 7.0]
    assert (mapped.loss, mapped.basis, mapped.n_samples) == (0.05, "samples", 3)
    assert not mapped.values_ms.flags.writeable


def test_map_of_percentiles_hits_the_given_points() -> None:
    dist = RttDistribution.from_percentiles({"p50": 4.0, "p99": 10.0, "max": 30.0})
    squared = dist.map(np.square)
    assert squared.percentiles_ms(["p50", "p99", "max"]) == pytest.approx(
        {"p50": 16.0, "p99": 100.0, "max": 900.0}, rel=1e-12
    )


def test_shift_and_scale() -> None:
    dist = RttDistribution.from_samples([1.0, 2.0, 4.0])
    assert dist.shift(0.5).values_ms.tolist() == [1.5, 2.5, 4.5]
    assert dist.scale(3.0).values_ms.tolist() == [3.0, 6.0, 12.0]
    with pytest.raises(ValueError, match=r"^the transform must return finite values >= 0 ms$"):
        dist.shift(-2.0)
    with pytest.raises(ValueError, match=r"^scale factor must be a finite number > 0, got 0"):
        dist.scale(0)


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (lambda v: -v + 10.0, "the transform must be non-decreasing: its results are unsorted"),
        (lambda v: v[:1], "the transform must return one value per input, got shape (1,) for (3,)"),
    ],
)
def test_map_rejects_bad_transforms(fn: object, message: str) -> None:
    with pytest.raises(ValueError) as info:
        RttDistribution.from_samples([1.0, 2.0, 3.0]).map(fn)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_map_relabel() -> None:
    samples = RttDistribution.from_samples([1.0, 2.0, 3.0])
    relabelled = samples.map(lambda v: v, basis="percentiles")
    assert (relabelled.basis, relabelled.n_samples) == ("percentiles", None)
    assert relabelled.quantile(0.25) == pytest.approx(1.5)
    with pytest.raises(ValueError, match="cannot relabel a 'percentiles' distribution as samples"):
        relabelled.map(lambda v: v, basis="samples")
    with pytest.raises(ValueError, match="cannot relabel as a point: the atoms differ"):
        samples.map(lambda v: v, basis="point")


# -- properties -------------------------------------------------------------------------

rtts = st.floats(min_value=0.0, max_value=1e4, allow_nan=False)
levels = st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=20)


@given(st.lists(rtts, min_size=1, max_size=200), levels)
def test_sample_quantiles_are_monotone(samples: list[float], qs: list[float]) -> None:
    dist = RttDistribution.from_samples(samples)
    q = np.sort(np.asarray(qs))
    values = np.asarray(dist.quantile(q))
    assert np.all(np.diff(values) >= 0)
    assert min(samples) <= values[0] and values[-1] <= max(samples)


@given(
    st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=6, unique=True),
    st.lists(rtts, min_size=6, max_size=6),
    levels,
)
def test_percentile_quantiles_are_monotone_and_exact(
    permille: list[int], rtt_ms: list[float], qs: list[float]
) -> None:
    keys = [f"p{pm / 10:g}" for pm in sorted(permille)]  # p0.1 ... p99.9, p100
    given_ms = dict(zip(keys, sorted(rtt_ms), strict=False))
    dist = RttDistribution.from_percentiles(given_ms)
    for key, value in given_ms.items():
        assert dist.quantile(parse_percentile_key(key) / 100) == pytest.approx(value, rel=1e-9)
    values = np.asarray(dist.quantile(np.sort(np.asarray(qs))))
    assert np.all(np.diff(values) >= 0)


@given(st.lists(rtts, min_size=1, max_size=100), st.lists(rtts, min_size=1, max_size=20))
def test_exceedance_is_a_non_increasing_probability(
    samples: list[float], thresholds: list[float]
) -> None:
    t_ms = np.sort(np.asarray(thresholds))
    for dist in (
        RttDistribution.from_samples(samples),
        RttDistribution.from_percentiles({"p50": min(samples), "max": max(samples)}),
    ):
        p = np.asarray(dist.exceedance_probability(t_ms))
        bound = np.asarray(dist.exceedance_upper_bound(t_ms))
        assert np.all((p >= 0) & (p <= 1))
        assert np.all(np.diff(p) <= 0)
        assert np.all((bound >= p) & (bound <= 1))


def test_from_samples_sorts_a_copy_of_the_callers_values() -> None:
    given_ms = np.array([3.0, 1.0, 2.0, 2.0])
    dist = RttDistribution.from_samples(given_ms)
    assert dist.values_ms.tolist() == [1.0, 2.0, 2.0, 3.0]
    assert given_ms.flags.writeable  # the caller's array is neither frozen nor reordered
    given_ms[1] = 9.0
    assert dist.values_ms.tolist() == [1.0, 2.0, 2.0, 3.0]
    assert not dist.values_ms.flags.writeable


def test_the_top_level_is_exactly_the_largest_sample():
    # below + 1.0 x (above - below) rounds past the largest sample here (found by the property
    # above); the two-sided lerp, as numpy's, is exact at both knots.
    samples = [1.5095450716885352, 4098.285283101656]
    dist = RttDistribution.from_samples(samples)
    assert dist.quantile(1.0) == max(samples) and dist.quantile(0.0) == min(samples)
