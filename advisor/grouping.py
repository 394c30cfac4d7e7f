"""Which sites may share a cluster: the search for the best ``grouped_clusters`` partition.

A group is *locally viable* when, as one cluster, it raises no blocker of its own (commit
SLO, hot rows it owns, quorum, bandwidth). A partition is viable when all its groups are and
no hot row's writers span groups. The best partition has the fewest clusters, then the lowest
worst commit latency. Up to :data:`EXACT_LIMIT` data sites every set partition is tried
(Bell(8) = 4,140, each group evaluated once); beyond, a deterministic agglomerative
heuristic merges the two groups with the shortest worst RTT between them, in name order on
ties, as long as the merged group stays locally viable (complete linkage).
"""

from __future__ import annotations

__all__ = ["EXACT_LIMIT", "best_partition", "set_partitions"]

from collections.abc import Callable, Iterator, Sequence

EXACT_LIMIT = 8

Group = tuple[str, ...]
Partition = list[Group]


def set_partitions(items: Sequence[str]) -> Iterator[Partition]:
    """Every partition of ``items`` into non-empty groups, each exactly once.

    >>> sorted(len(p) for p in set_partitions("abc"))
    [1, 2, 2, 2, 3]
    """
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in set_partitions(rest):
        yield [(first,), *partition]
        for i, group in enumerate(partition):
            yield [*partition[:i], (first, *group), *partition[i + 1 :]]


def best_partition(
    sites: Sequence[str],
    viable_group: Callable[[Group], bool],
    spans_ok: Callable[[Partition], bool],
    score: Callable[[Partition], float],
    distance: Callable[[str, str], float],
) -> Partition | None:
    """The viable partition with 2 <= groups < len(sites) that is best, or None.

    ``viable_group`` judges one group, ``spans_ok`` the cross-group rules, ``score`` breaks
    ties among partitions with the same number of groups (lower is better), ``distance``
    orders merges in the heuristic.
    """
    if len(sites) < 3:
        return None
    if len(sites) <= EXACT_LIMIT:
        candidates = (
            p
            for p in set_partitions(list(sites))
            if 2 <= len(p) < len(sites) and all(viable_group(g) for g in p) and spans_ok(p)
        )
        ranked = sorted(candidates, key=lambda p: (len(p), score(p), _names(p)))
        return _normal(ranked[0]) if ranked else None
    found = _agglomerate(sites, viable_group, distance)
    if found is not None and 2 <= len(found) < len(sites) and spans_ok(found):
        return _normal(found)
    return None


def _agglomerate(
    sites: Sequence[str],
    viable_group: Callable[[Group], bool],
    distance: Callable[[str, str], float],
) -> Partition | None:
    groups: Partition = [(s,) for s in sorted(sites)]
    if not all(viable_group(g) for g in groups):
        return None
    refused: set[frozenset[str]] = set()
    while True:
        pairs = sorted(
            (max(distance(a, b) for a in g for b in h), i, j)
            for i, g in enumerate(groups)
            for j, h in enumerate(groups)
            if i < j and frozenset(g + h) not in refused
        )
        for _, i, j in pairs:
            merged = tuple(sorted(groups[i] + groups[j]))
            if viable_group(merged):
                groups = [g for k, g in enumerate(groups) if k not in (i, j)] + [merged]
                break
            refused.add(frozenset(merged))
        else:
            return groups


def _names(partition: Partition) -> list[list[str]]:
    return sorted(sorted(g) for g in partition)


def _normal(partition: Partition) -> Partition:
    return [tuple(g) for g in sorted((sorted(g) for g in partition), key=lambda g: g[0])]
