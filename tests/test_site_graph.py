"""advisor.engine.site_graph by hand: the best path over measured links bounds an estimate."""

from __future__ import annotations

import pytest

from advisor.engine.site_graph import MeasuredPath, measured_paths


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
