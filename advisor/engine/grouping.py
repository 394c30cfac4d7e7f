"""Which sites may share a cluster: the search for the best ``grouped_clusters`` partition.

A group is *locally viable* when, as one cluster, it raises no blocker of its own (commit
SLO, hot rows it owns, quorum, bandwidth). A partition is viable when all its groups are and
no hot row's writers span groups. The best partition has the fewest clusters, then the lowest
worst commit latency. Up to :data:`EXACT_LIMIT` data sites the search is exact over every
set partition (Bell(8) = 4,140), tried by number of groups so that it stops at the fewest
that work. Beyond, a deterministic heuristic: the
complete-linkage tree of the sites (merge the two groups whose farthest pair is nearest,
name order on ties), then the fewest viable groups among the cuts of that tree, found
exactly on the tree by recursion: 2n - 1 candidate groups, so 30 sites take seconds. It can
miss a partition that cuts across the tree; it never returns a non-viable one.
"""

from __future__ import annotations

__all__ = ["EXACT_LIMIT", "best_partition", "set_partitions"]

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

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

    ``viable_group`` judges one group (asked again for each partition that holds it: the
    caller keeps its answers), ``spans_ok`` the cross-group rules, ``score`` breaks ties
    among partitions with the same number of groups (lower is better), ``distance`` orders
    merges in the heuristic.
    """
    if len(sites) < 3:
        return None
    if len(sites) <= EXACT_LIMIT:
        return _exact_partition(sites, viable_group, spans_ok, score)
    found = _tree_partition(sites, viable_group, distance)
    if found is not None and 2 <= len(found) < len(sites) and spans_ok(found):
        return _normal(found)
    return None


def _exact_partition(
    sites: Sequence[str],
    viable_group: Callable[[Group], bool],
    spans_ok: Callable[[Partition], bool],
    score: Callable[[Partition], float],
) -> Partition | None:
    """The first of the viable partitions by (groups, score, names), over every partition.

    The fewest groups come first, so the partitions are tried by their number of groups and
    the first number with a viable one ends the search: one with more groups could not come
    first.
    """
    partitions = [p for p in set_partitions(list(sites)) if 2 <= len(p) < len(sites)]
    for count in range(2, len(sites)):
        candidates = [
            p
            for p in partitions
            if len(p) == count and all(viable_group(g) for g in p) and spans_ok(p)
        ]
        if candidates:
            return _normal(min(candidates, key=lambda p: (score(p), _names(p))))
    return None


@dataclass(frozen=True)
class _Node:
    sites: Group
    children: tuple[_Node, ...] = ()


def _dendrogram(sites: Sequence[str], distance: Callable[[str, str], float]) -> _Node:
    """Complete-linkage clustering: merge the two groups whose farthest pair is nearest."""
    nodes = [_Node((s,)) for s in sorted(sites)]
    while len(nodes) > 1:
        _, i, j = min(
            (max(distance(a, b) for a in g.sites for b in h.sites), i, j)
            for i, g in enumerate(nodes)
            for j, h in enumerate(nodes)
            if i < j
        )
        merged = _Node(nodes[i].sites + nodes[j].sites, (nodes[i], nodes[j]))
        nodes = [n for k, n in enumerate(nodes) if k not in (i, j)] + [merged]
    return nodes[0]


def _tree_partition(
    sites: Sequence[str],
    viable_group: Callable[[Group], bool],
    distance: Callable[[str, str], float],
) -> Partition | None:
    """The fewest viable groups among the cuts of the complete-linkage tree (exact on it).

    Each subtree either stands as one group, if viable, or splits into its two children's
    best partitions; a singleton that is not viable makes the whole search fail.
    """

    def best(node: _Node) -> Partition | None:
        if viable_group(tuple(sorted(node.sites))):
            return [node.sites]
        if not node.children:
            return None
        parts = [best(child) for child in node.children]
        return None if any(p is None for p in parts) else [g for p in parts if p for g in p]

    return best(_dendrogram(sites, distance))


def _names(partition: Partition) -> list[list[str]]:
    return sorted(sorted(g) for g in partition)


def _normal(partition: Partition) -> Partition:
    return [tuple(g) for g in sorted((sorted(g) for g in partition), key=lambda g: g[0])]
