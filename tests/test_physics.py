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


def test_estimate_uses_the_two_term_cloud_fit():
    # 7.5 ms + 1.39 * (2 * 1000 / 204.19) = 7.5 + 13.615 = 21.11 ms
    assert physics.estimated_rtt_ms(1000) == pytest.approx(21.115, abs=0.01)


def test_vectorised_over_arrays():
    km = np.array([0.0, 400.0, 10_000.0])
    assert physics.floor_rtt_ms(km).shape == (3,)


@given(st.floats(0, 20_000), st.floats(0, 20_000))
def test_floor_grows_with_distance(a, b):
    low, high = sorted((a, b))
    assert physics.floor_rtt_ms(low) <= physics.floor_rtt_ms(high)
