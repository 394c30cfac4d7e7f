"""advisor.engine.site_graph by hand: the best path over measured links bounds an estimate from
above, the triangle over measured links from below."""

from __future__ import annotations

import pytest

from advisor.engine.site_graph import MeasuredPath, measured_lower_bounds, measured_paths


def test_paris_2_reaches_frankfurt_through_paris_1():
    # paris-2 -> paris-1 0.47 ms, paris-1 -> frankfurt 9.76 ms: 10.23 ms via paris-1.
    path = measured_paths({("paris-1", "paris-2"): 0.47, ("paris-1", "frankfurt"): 9.76})
    found = path("paris-2", "frankfurt")
    assert found == MeasuredPath(
        pytest.approx(10.23), ("paris-2", "paris-1", "frankfurt"), (0.47, 9.76)
    )
    assert found is not None and found.via == ("paris-1",)


def test_any_number_of_hops_and_the_shortest():
    # a-b 1, b-c 2, c-d 3, a-c 10: a to c is 1 + 2 = 3 via b (less than the direct 10),
    # a to d 1 + 2 + 3 = 6 via b and c.
    path = measured_paths({("a", "b"): 1.0, ("b", "c"): 2.0, ("c", "d"): 3.0, ("a", "c"): 10.0})
    assert path("a", "d") == MeasuredPath(6.0, ("a", "b", "c", "d"), (1.0, 2.0, 3.0))
    assert path("a", "c") == MeasuredPath(3.0, ("a", "b", "c"), (1.0, 2.0))
    # Read backwards: the same sites and legs reversed, the same bound.
    assert path("d", "a") == MeasuredPath(6.0, ("d", "c", "b", "a"), (3.0, 2.0, 1.0))


def test_a_measured_pair_is_its_own_path_when_nothing_is_shorter():
    path = measured_paths({("a", "b"): 1.0, ("b", "c"): 2.0})
    found = path("b", "a")
    assert found == MeasuredPath(1.0, ("b", "a"), (1.0,)) and found.via == ()


def test_no_path_without_a_measured_chain_or_to_the_site_itself():
    path = measured_paths({("a", "b"): 1.0, ("c", "d"): 1.0})
    assert path("a", "c") is None  # two islands
    assert path("a", "e") is None  # a site no measured link reaches
    assert path("a", "a") is None
    assert measured_paths({})("a", "b") is None


def test_the_bound_does_not_depend_on_which_end_is_named_first():
    # 0.1 + 0.2 + 0.3 summed left to right is 0.6000000000000001, right to left 0.6: the
    # correctly rounded sum is 0.6 both ways.
    path = measured_paths({("a", "b"): 0.1, ("b", "c"): 0.2, ("c", "d"): 0.3})
    forth, back = path("a", "d"), path("d", "a")
    assert forth is not None and back is not None
    assert forth.bound_ms == back.bound_ms == 0.6


# -- the triangle's lower bound ---------------------------------------------------------------


def test_paris_2_frankfurt_is_at_least_the_difference_through_paris_1():
    # paris-1 - frankfurt 9.76 measured, paris-2 - paris-1 0.47: d(paris-2, frankfurt) >=
    # 9.76 - 0.47 = 9.29 ms (the figure).
    lower = measured_lower_bounds({("paris-1", "paris-2"): 0.47, ("paris-1", "frankfurt"): 9.76})
    found = lower("paris-2", "frankfurt")
    assert found is not None and found.bound_ms == pytest.approx(9.29)
    assert found.pivot == "paris-1" and found.sites == ("paris-2", "paris-1", "frankfurt")
    assert found.near_ms == 0.47 and found.far.legs_ms == (9.76,)
    # From the other end: the same bound (frankfurt is 9.76 from paris-1, which is 0.47 from
    # paris-2).
    back = lower("frankfurt", "paris-2")
    assert back is not None and back.bound_ms == pytest.approx(9.29)


def test_a_relayed_path_is_only_subtracted():
    # a-k 1 measured, k-m 2 and m-b 3 measured: the path k..b (5 ms) is only an upper bound on
    # k-b, so 5 - 1 bounds nothing. From b's side: b-m 3 measured, m-a path 2 + 1 = 3:
    # 3 - 3 = 0 bounds nothing either. No bound.
    lower = measured_lower_bounds({("a", "k"): 1.0, ("k", "m"): 2.0, ("m", "b"): 3.0})
    assert lower("a", "b") is None
    # a-k 10 measured, k-m 2, m-b 3: a is at least 10 - 5 = 5 ms from b.
    lower = measured_lower_bounds({("a", "k"): 10.0, ("k", "m"): 2.0, ("m", "b"): 3.0})
    found = lower("a", "b")
    assert found is not None and found.bound_ms == pytest.approx(5.0)
    assert found.sites == ("a", "k", "m", "b") and found.far.bound_ms == pytest.approx(5.0)


def test_the_largest_bound_over_every_pivot_wins():
    # Pivots k1 (a-k1 1, k1-b 4: 3 ms) and k2 (a-k2 2, k2-b 9: 7 ms): 7 ms via k2.
    lower = measured_lower_bounds(
        {("a", "k1"): 1.0, ("k1", "b"): 4.0, ("a", "k2"): 2.0, ("k2", "b"): 9.0}
    )
    found = lower("a", "b")
    assert found is not None and found.bound_ms == pytest.approx(7.0) and found.pivot == "k2"


def test_no_lower_bound_for_a_measured_pair_or_islands():
    lower = measured_lower_bounds({("a", "b"): 1.0, ("b", "c"): 5.0, ("d", "e"): 1.0})
    assert lower("b", "c") is None  # measured itself
    assert lower("a", "d") is None  # no measured chain joins them
    assert lower("a", "a") is None
