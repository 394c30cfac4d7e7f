"""The estimate from coordinates against published measured round trips (benchmarks/estimates.py):
the constants of advisor/model/physics.py are what the fit half gives, and the section of
BENCHMARKS.md renders both halves by band."""

from __future__ import annotations

from functools import cache

import pytest

from advisor.model import physics
from benchmarks import estimates


@cache
def _pairs() -> tuple[estimates.Pair, ...]:
    return tuple(estimates.pairs())


def test_every_pair_has_a_source_and_falls_in_one_half():
    pairs = _pairs()
    assert len(pairs) == 2611  # 68 in rtt-by-distance.csv, 2,543 in rtt-published.csv
    assert all(p.source and p.rtt_ms > 0 for p in pairs)
    held = sum(p.held_back for p in pairs)
    assert 0.4 < held / len(pairs) < 0.6


def test_the_physics_constants_are_what_the_fit_half_gives():
    fitted = estimates.fit(_pairs())
    assert fitted.overhead_ms == physics.ESTIMATE_FIXED_OVERHEAD_MS
    assert fitted.route_factor == physics.ESTIMATE_ROUTE_FACTOR
    assert fitted.route_factor_by_regions == physics.ROUTE_FACTOR_BY_REGIONS
    assert fitted.scatter_factor == physics.ESTIMATE_SCATTER_FACTOR_BY_BAND
    assert all(n >= estimates.MIN_PAIRS_PER_REGION_PAIR for n in fitted.pairs_by_regions.values())


def test_every_pair_under_100_km_is_estimated_under_3_ms():
    for p in _pairs():
        if p.distance_km < physics.METRO_MAX_KM:
            assert physics.estimated_rtt_ms(p.distance_km, p.regions) < 3.0


def test_the_section_reports_both_halves_by_band():
    text = estimates.markdown(_pairs())
    rows = [line for line in text.splitlines() if "| fit |" in line or "| held back |" in line]
    assert len(rows) == 6  # three bands, two halves
    results = estimates.evaluate(_pairs())
    for r in results:
        # The range holds the measured value for at least 90 % of the pairs of every band.
        assert r.coverage >= estimates.TARGET_COVERAGE, r
    long_haul = [r for r in results if r.band.startswith("6,000")]
    assert all(r.median_abs_error <= estimates.TARGET_MEDIAN_ERROR for r in long_haul)
    assert "held back" in text and "WonderProxy" in text


@pytest.mark.parametrize("band", ["metro", "backbone", "long_haul"])
def test_each_band_has_its_scatter_factor(band):
    assert physics.ESTIMATE_SCATTER_FACTOR_BY_BAND[band] > 1.0
