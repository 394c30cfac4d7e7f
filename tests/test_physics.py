"""Physics values computed by hand."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisor.model import physics


def test_fibre_speed_is_c_over_group_index():
    # 299,792.458 km/s / 1.4682 = 204,191 km/s
    assert physics.propagation_km_per_ms("fiber") == pytest.approx(204.19, abs=0.01)


def test_floor_over_400_km_of_fibre_is_3_92_ms():
    # 2 * 400 km / 204.19 km/ms = 3.918 ms (DOMAIN.md section 1)
    assert physics.floor_rtt_ms(400, "fiber") == pytest.approx(3.918, abs=0.001)


def test_rome_to_mountain_view():
    # Published: about 10,060 km great circle, 33.54 ms one way at c (field-data propagation).
    km = physics.great_circle_km(41.9028, 12.4964, 37.3861, -122.0839)
    assert km == pytest.approx(10062, rel=0.002)
    at_c_ms = 2 * km / physics.SPEED_OF_LIGHT_KM_PER_MS
    assert at_c_ms / 2 == pytest.approx(33.54, rel=0.002)
    # In fibre: 2 * 10,069 / 204.19 = 98.6 ms (DOMAIN.md: 98.6 ms)
    assert physics.floor_rtt_ms(km, "fiber") == pytest.approx(98.6, abs=0.1)


def test_great_circle_is_zero_for_same_point_and_half_circumference_for_antipodes():
    assert physics.great_circle_km(10, 20, 10, 20) == pytest.approx(0.0, abs=1e-9)
    assert physics.great_circle_km(0, 0, 0, 180) == pytest.approx(math.pi * 6371.0088)


@pytest.mark.parametrize(
    ("medium", "km_per_ms"),
    [("hollow_core_fiber", 298.89), ("microwave", 299.70), ("copper", 197.86)],
)
def test_other_media(medium, km_per_ms):
    assert physics.propagation_km_per_ms(medium) == pytest.approx(km_per_ms, abs=0.01)


def test_geostationary_hop_adds_477_ms_even_for_zero_ground_distance():
    # 4 * 35,786 km / 299.79 km/ms = 477.5 ms (network.md 1.4)
    assert physics.floor_rtt_ms(0, "geo_satellite") == pytest.approx(477.5, abs=0.1)
    assert physics.floor_rtt_ms(0, "leo_satellite") == pytest.approx(7.34, abs=0.01)


def test_unknown_medium_lists_the_valid_ones():
    with pytest.raises(ValueError, match="unknown medium 'carrier_pigeon'; expected one of fiber"):
        physics.propagation_km_per_ms("carrier_pigeon")


def test_light_speed_fraction_and_max_distance_invert_the_floor():
    floor = physics.floor_rtt_ms(480, "fiber")
    assert physics.light_speed_fraction(floor, 9.8) == pytest.approx(4.7016 / 9.8, rel=1e-3)
    assert physics.max_distance_km(floor, "fiber") == pytest.approx(480)


def test_the_backbone_estimate_is_overhead_plus_stretched_floor():
    # 1,000 km without coordinates: 3.6 ms + 2.18 * (2 * 1000 / 204.19) = 3.6 + 21.353 =
    # 24.95 ms; between Europe and North America the stretch is 1.60: 3.6 + 15.672 = 19.27 ms.
    assert physics.estimated_rtt_ms(1000) == pytest.approx(24.953, abs=0.01)
    assert physics.estimated_rtt_ms(1000, ("EU", "NA")) == pytest.approx(19.272, abs=0.01)
    assert physics.estimate_parts_ms(1000) == pytest.approx((3.6, 21.353), abs=1e-3)


def test_under_100_km_a_private_metro_path_well_under_3_ms():
    # 12 km: 0.5 + 2.18 * 0.1175 = 0.756 ms; just under 100 km: 0.5 + 2.18 * 0.979 = 2.64 ms.
    assert physics.estimated_rtt_ms(12) == pytest.approx(0.7562, abs=1e-3)
    assert physics.estimated_rtt_ms(99.99) == pytest.approx(2.635, abs=1e-3)
    assert physics.distance_band(99.99) == "metro" and physics.distance_band(100) == "backbone"
    # The range admits the public Internet's scatter: up to 7.34 x the estimate.
    estimate, low, high = physics.estimate_range_ms(12)
    assert (estimate, low, high) == pytest.approx((0.7562, 0.1175, 5.551), abs=1e-3)


def test_beyond_6000_km_the_route_between_regions_decides():
    # Sydney - Sao Paulo, 13,357 km: floor 130.83 ms. Oceania-South America paths run through
    # the US: stretch 2.50, 3.6 + 2.50 x 130.83 = 330.68 ms (measured 294-330; the old
    # 7.5 ms + 1.39 x floor said 189 ms).
    km = float(physics.great_circle_km(-33.87, 151.21, -23.55, -46.63))
    regions = (physics.coarse_region(-33.87, 151.21), physics.coarse_region(-23.55, -46.63))
    assert regions == ("OC", "SA") and physics.distance_band(km) == "long_haul"
    assert physics.floor_rtt_ms(km) == pytest.approx(130.83, abs=0.01)
    assert physics.estimated_rtt_ms(km, regions) == pytest.approx(330.68, abs=0.02)
    _estimate, low, high = physics.estimate_range_ms(km, regions)
    assert (low, high) == pytest.approx((130.83, 330.68 * 1.54), abs=0.05)


def test_a_stated_kind_of_path_takes_its_own_fit_from_100_km_up():
    # 1,000 km, floor 2 x 1000 / 204.19 = 9.7948 ms. Public Internet without coordinates:
    # 8.2 + 2.61 x 9.7948 = 33.764 ms (the fit of both kinds: 24.95); a provider's backbone:
    # 3.6 + 1.75 x 9.7948 = 20.741 ms. Between Europe and North America the kinds' own
    # stretches: internet 8.2 + 1.60 x 9.7948 = 23.872, backbone 3.6 + 1.58 x 9.7948 = 19.076.
    assert physics.estimated_rtt_ms(1000, path="internet") == pytest.approx(33.764, abs=1e-3)
    assert physics.estimated_rtt_ms(1000, path="backbone") == pytest.approx(20.741, abs=1e-3)
    assert physics.estimated_rtt_ms(1000, ("NA", "EU"), "internet") == pytest.approx(
        23.872, abs=1e-3
    )
    assert physics.estimated_rtt_ms(1000, ("EU", "NA"), "backbone") == pytest.approx(
        19.076, abs=1e-3
    )
    assert physics.estimate_parts_ms(1000, path="internet") == pytest.approx(
        (8.2, 25.564), abs=1e-3
    )
    # Each kind's range: from the floor to its own scatter over its estimate (backbone band:
    # 1.52 for provider backbones, 2.68 for the public Internet; long haul 1.50 and 1.42).
    _estimate, low, high = physics.estimate_range_ms(1000, path="backbone")
    assert (low, high) == pytest.approx((9.7948, 1.52 * 20.741), abs=1e-3)
    assert physics.scatter_factor(1000, "internet") == 2.68
    assert physics.scatter_factor(7000, "backbone") == 1.5
    assert physics.scatter_factor(7000) == 1.54


def test_a_kind_of_path_changes_neither_a_metro_path_nor_a_known_route():
    # Under 100 km the private metro path whatever the kind: 0.5 + 2.18 x 0.1175 = 0.756 ms.
    assert physics.applied_path(12.0, "internet") is None
    assert physics.estimated_rtt_ms(12, path="internet") == physics.estimated_rtt_ms(12)
    assert physics.scatter_factor(12, "internet") == 7.34
    # A known route: the overhead of both kinds' fit and the route's own floor.
    assert physics.applied_path(500.0, "internet", route_km=600.0) is None
    assert physics.estimate_parts_ms(500, route_km=600, path="internet") == pytest.approx(
        (3.6, 2 * 600 / 204.19), abs=1e-3
    )
    assert physics.applied_path(500.0, None) is None
    assert physics.applied_path(100.0, "backbone") == "backbone"


def test_an_unknown_kind_of_path_lists_the_known_ones():
    with pytest.raises(ValueError, match="backbone, internet"):
        physics.estimated_rtt_ms(1000, path="satellite")


@pytest.mark.parametrize(
    ("lat", "lon", "region"),
    [
        (51.51, -0.13, "EU"),  # London
        (55.75, 37.62, "EU"),  # Moscow
        (32.09, 34.78, "ME"),  # Tel Aviv
        (-26.20, 28.05, "AF"),  # Johannesburg
        (30.06, 31.23, "EU"),  # Cairo: its cables land in Europe
        (35.90, 14.51, "EU"),  # Valletta
        (6.52, 3.38, "AF"),  # Lagos
        (19.08, 72.88, "SAS"),  # Mumbai
        (1.29, 103.85, "EAS"),  # Singapore
        (-33.87, 151.21, "OC"),  # Sydney
        (40.71, -74.01, "NA"),  # New York
        (20.59, -100.39, "NA"),  # Queretaro
        (-33.45, -70.67, "SA"),  # Santiago
    ],
)
def test_coarse_regions(lat, lon, region):
    assert physics.coarse_region(lat, lon) == region


def test_route_factor_reads_either_order_and_falls_back():
    assert physics.route_factor(("SA", "OC")) == physics.route_factor(("OC", "SA")) == 2.5
    assert physics.route_factor(None) == physics.ESTIMATE_ROUTE_FACTOR == 2.18


def test_vectorised_over_arrays():
    km = np.array([0.0, 400.0, 10_000.0])
    assert physics.floor_rtt_ms(km).shape == (3,)


@given(st.floats(0, 20_000), st.floats(0, 20_000))
def test_floor_grows_with_distance(a, b):
    low, high = sorted((a, b))
    assert physics.floor_rtt_ms(low) <= physics.floor_rtt_ms(high)


def test_typical_distance_inverts_the_estimate_band_by_band():
    # 2 ms: a metro path, (2.0 - 0.5) / 2.18 = 0.6881 ms of floor = 0.6881 / 2 x 204.19 =
    # 70.25 km. 20 ms: the backbone, (20 - 3.6) / 2.18 = 7.523 ms of floor = 768.06 km. 5 ms
    # is more than a metro path at 100 km (2.64 ms) and less than the backbone there
    # (5.74 ms): the bands' edge.
    assert physics.typical_distance_km(2.0) == pytest.approx(70.25, abs=0.01)
    assert physics.typical_distance_km(20.0) == pytest.approx(768.06, abs=0.01)
    assert physics.typical_distance_km(5.0) == 100.0
    assert physics.typical_distance_km(0.3) == 0.0
    for km in (10.0, 60.0, 300.0, 2_000.0):
        assert physics.typical_distance_km(physics.estimated_rtt_ms(km)) == pytest.approx(km)
