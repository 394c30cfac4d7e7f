"""The estimate from coordinates against published measured round trips (benchmarks/estimates.py):
the constants of advisor/model/physics.py are what the fit half gives, each kind of path's
included, and the section of BENCHMARKS.md renders both halves by band, without and with the
kind of path."""

from __future__ import annotations

import csv
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


def test_each_kind_of_paths_constants_are_what_its_fit_pairs_give():
    fitted = estimates.fit(_pairs())
    assert set(fitted.by_path) == set(physics.PATH_KINDS)
    for path, own in fitted.by_path.items():
        assert own.overhead_ms == physics.ESTIMATE_FIXED_OVERHEAD_MS_BY_PATH[path]
        assert own.route_factor == physics.ESTIMATE_ROUTE_FACTOR_BY_PATH[path]
        assert own.route_factor_by_regions == physics.ROUTE_FACTOR_BY_REGIONS_BY_PATH[path]
        # From 100 km up only: under 100 km the estimate is the private metro path.
        assert own.scatter_factor == physics.ESTIMATE_SCATTER_FACTOR_BY_PATH[path]
        assert set(own.scatter_factor) == {"backbone", "long_haul"}
    # The kinds sit on either side of the fit of both: the public Internet's overhead above
    # it, the providers' route stretch below it.
    assert fitted.by_path["internet"].overhead_ms > fitted.overhead_ms
    assert fitted.by_path["backbone"].route_factor < fitted.route_factor


def test_every_published_row_carries_the_kind_its_source_says():
    # rtt-published.csv states it; rtt-by-distance.csv (the shared table) is read through
    # path_of_source; both agree wherever both apply.
    with (estimates.CALIBRATION / "rtt-published.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {row["path"] for row in rows} == {"backbone", "internet"}
    for row in rows:
        assert row["path"] == estimates.path_of_source(row["source"]), row["a"]
    pairs = _pairs()
    counts = {path: sum(p.path == path for p in pairs) for path in ("backbone", "internet", None)}
    # 488 AWS rows in rtt-published.csv + 44 provider rows in rtt-by-distance.csv (AWS 8,
    # Azure 18, Google Cloud 9, IBM Cloud 9); 2,055 + 22 WonderProxy rows; own fibre in the
    # Docklands and the New York - Chicago lease: none.
    assert counts == {"backbone": 532, "internet": 2077, None: 2}


def test_every_pair_under_100_km_is_estimated_under_3_ms():
    for p in _pairs():
        if p.distance_km < physics.METRO_MAX_KM:
            assert physics.estimated_rtt_ms(p.distance_km, p.regions) < 3.0


def test_the_section_reports_both_halves_by_band():
    text = estimates.markdown(_pairs())
    rows = [line for line in text.splitlines() if "| fit |" in line or "| held back |" in line]
    # three bands x two halves without the kind of path; then two bands from 100 km up x
    # three kinds (backbone, internet, all) x two halves with it
    assert len(rows) == 6 + 12
    results = estimates.evaluate(_pairs())
    for r in results:
        # The range holds the measured value for at least 90 % of the pairs of every band.
        assert r.coverage >= estimates.TARGET_COVERAGE, r
    long_haul = [r for r in results if r.band.startswith("6,000")]
    assert all(r.median_abs_error <= estimates.TARGET_MEDIAN_ERROR for r in long_haul)
    assert "held back" in text and "WonderProxy" in text


def test_with_the_kind_of_path_the_range_still_holds_and_backbones_meet_the_target():
    results = estimates.evaluate_paths(_pairs())
    # two bands from 100 km up x (backbone, internet, all) x two halves
    assert len(results) == 12
    for r in results:
        assert r.coverage_with >= estimates.TARGET_COVERAGE, r
        assert abs(r.signed_with) < abs(r.signed_without), r  # each kind's fit is centred
    held = {(r.band, r.path): r for r in results if r.half == "held back"}
    backbone = held[("100 to 6,000 km", "backbone")]
    assert backbone.error_with <= estimates.TARGET_MEDIAN_ERROR
    assert backbone.error_with < backbone.error_without - 0.05  # 18.4 % without the kind
    text = estimates.markdown(_pairs())
    assert "| 100 to 6,000 km | internet | held back | 322 |" in text
    assert "for provider backbones" in text


@pytest.mark.parametrize("band", ["metro", "backbone", "long_haul"])
def test_each_band_has_its_scatter_factor(band):
    assert physics.ESTIMATE_SCATTER_FACTOR_BY_BAND[band] > 1.0
