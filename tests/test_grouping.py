"""advisor.engine.grouping: every set partition once, and the best viable grouping."""

from __future__ import annotations

import random

import pytest

from advisor.engine.grouping import EXACT_LIMIT, best_partition, set_partitions


def always(_):
    return True


def no_score(_):
    return 0.0


def on_a_line(positions):
    """A distance between sites placed on a line [km]."""
    return lambda a, b: abs(positions[a] - positions[b])


@pytest.mark.parametrize(
    ("n", "bell"), [(0, 1), (1, 1), (2, 2), (3, 5), (4, 15), (5, 52), (6, 203), (8, 4140)]
)
def test_set_partitions_count_the_bell_numbers(n, bell):
    assert sum(1 for _ in set_partitions([f"s{i}" for i in range(n)])) == bell


def test_set_partitions_yield_each_partition_once_and_cover_every_item():
    items = ["a", "b", "c", "d"]
    seen = set()
    for partition in set_partitions(items):
        assert sorted(s for group in partition for s in group) == items
        seen.add(frozenset(frozenset(g) for g in partition))
    assert len(seen) == 15


def test_fewer_than_three_sites_have_no_grouping():
    assert best_partition(["a", "b"], always, always, no_score, on_a_line({})) is None


def test_the_viable_partition_with_the_fewest_groups_wins():
    # Only {a, b} and {c, d} may share a cluster (besides singletons): 2 groups beat
    # {a, b}, {c}, {d} (3 groups), whatever the scores say.
    def viable(group):
        return len(group) == 1 or set(group) in ({"a", "b"}, {"c", "d"})

    def score(partition):
        return -len(partition)  # prefers more groups: must not override the count

    got = best_partition(["a", "b", "c", "d"], viable, always, score, on_a_line({}))
    assert got == [("a", "b"), ("c", "d")]


def test_among_equal_group_counts_the_lowest_score_wins():
    # Three 2-group candidates: ab|c, ac|b, bc|a. The score prefers a with c.
    def score(partition):
        return 1.0 if ("a", "c") in [tuple(sorted(g)) for g in partition] else 5.0

    got = best_partition(["a", "b", "c"], always, always, score, on_a_line({}))
    assert got == [("a", "c"), ("b",)]


def test_equal_scores_fall_back_to_name_order():
    # ab|c, ac|b and a|bc tie; sorted by their groups' names, [a], [b, c] comes first.
    got = best_partition(["c", "b", "a"], always, always, no_score, on_a_line({}))
    assert got == [("a",), ("b", "c")]


def test_cross_group_rules_reject_a_partition():
    # spans_ok refuses any partition that separates a from b: only ab|c is left.
    def spans_ok(partition):
        return any({"a", "b"} <= set(g) for g in partition)

    got = best_partition(["a", "b", "c"], always, spans_ok, no_score, on_a_line({}))
    assert got == [("a", "b"), ("c",)]


def test_one_cluster_and_all_singletons_are_not_groupings():
    # Singletons alone are viable: every site apart is per_site_clusters, not a grouping.
    def viable(group):
        return len(group) == 1

    assert best_partition(["a", "b", "c"], viable, always, no_score, on_a_line({})) is None


def test_beyond_eight_sites_the_tree_cut_finds_two_metros():
    # 10 sites: a0..a4 at 0..4 km, b0..b4 at 100..104 km; a group is viable within 10 km.
    # Complete linkage merges each metro before joining them; the root is not viable, its
    # two children are.
    positions = {f"a{i}": i for i in range(5)} | {f"b{i}": 100 + i for i in range(5)}
    distance = on_a_line(positions)
    assert len(positions) > EXACT_LIMIT

    def viable(group):
        return max(distance(x, y) for x in group for y in group) < 10

    got = best_partition(sorted(positions), viable, always, no_score, distance)
    assert got == [tuple(f"a{i}" for i in range(5)), tuple(f"b{i}" for i in range(5))]


def test_the_tree_cut_asks_about_at_most_two_n_minus_one_groups():
    # 9 sites: the complete-linkage tree has 2 x 9 - 1 = 17 nodes, each judged at most once.
    positions = {f"s{i}": i * i for i in range(9)}
    asked = []

    def viable(group):
        asked.append(group)
        return len(group) <= 2

    best_partition(sorted(positions), viable, always, no_score, on_a_line(positions))
    assert 0 < len(asked) <= 17


def test_the_tree_cut_fails_when_a_single_site_is_not_viable():
    positions = {f"s{i}": i for i in range(9)}

    def viable(group):
        return "s4" not in group

    assert best_partition(sorted(positions), viable, always, no_score, on_a_line(positions)) is None


def test_the_tree_cut_is_checked_against_the_cross_group_rules():
    positions = {f"a{i}": i for i in range(5)} | {f"b{i}": 100 + i for i in range(5)}
    distance = on_a_line(positions)

    def viable(group):
        return max(distance(x, y) for x in group for y in group) < 10

    def never(_):
        return False

    assert best_partition(sorted(positions), viable, never, no_score, distance) is None


def _every_partition_ranked(sites, viable_group, spans_ok, score):
    """The search as a plain enumeration: every partition asked, all candidates ranked."""
    candidates = [
        p
        for p in set_partitions(list(sites))
        if 2 <= len(p) < len(sites) and all(viable_group(g) for g in p) and spans_ok(p)
    ]
    ranked = sorted(candidates, key=lambda p: (len(p), score(p), sorted(sorted(g) for g in p)))
    return (
        [tuple(g) for g in sorted((sorted(g) for g in ranked[0]), key=lambda g: g[0])]
        if ranked
        else None
    )


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_the_exact_search_finds_the_best_of_every_partition(n):
    # Random viability (about half of the groups of two or more sites, most single sites),
    # random cross-group vetoes and scores: the partitions tried by group count, stopping at
    # the first count with a viable one, give the whole enumeration's best every time.
    rng = random.Random(n)
    sites = [f"s{i}" for i in range(n)]
    for _ in range(200):
        viable = {}
        vetoed = {}

        def viable_group(group, viable=viable):
            key = frozenset(group)
            if key not in viable:
                viable[key] = rng.random() < (0.9 if len(group) == 1 else 0.5)
            return viable[key]

        def spans_ok(partition, vetoed=vetoed):
            key = frozenset(frozenset(g) for g in partition)
            if key not in vetoed:
                vetoed[key] = rng.random() < 0.8
            return vetoed[key]

        def score(partition):
            return float(sum(len(g) ** 2 for g in partition) % 3)

        found = best_partition(sites, viable_group, spans_ok, score, on_a_line({}))
        assert found == _every_partition_ranked(sites, viable_group, spans_ok, score)
