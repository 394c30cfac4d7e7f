"""The graph of sites joined by measured links: the best relayed path between two sites.

A packet between two sites nobody measured can be relayed through measured neighbours, so
the direct round trip need not exceed the shortest path over measured links (any number of
hops), weighted by each link's measured p50. That path bounds an estimate from above
(:func:`advisor.model.physics.bounded_estimate_ms`). networkx is imported only when a
topology has an estimated pair to bound.
"""

from __future__ import annotations

__all__ = ["MeasuredPath", "measured_paths"]

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from math import fsum


@dataclass(frozen=True)
class MeasuredPath:
    """The best path between two sites over measured links."""

    bound_ms: float  # sum of the legs [ms]
    sites: tuple[str, ...]  # both ends included
    legs_ms: tuple[float, ...]  # measured p50 of each hop [ms]

    @property
    def via(self) -> tuple[str, ...]:
        """The sites on the way, the ends left out."""
        return self.sites[1:-1]


def measured_paths(
    measured_p50_ms: Mapping[tuple[str, str], float],
) -> Callable[[str, str], MeasuredPath | None]:
    """Best path between two sites over measured links only (weighted shortest path by p50,
    any number of hops); None when no measured path joins them or a == b has no path.

    ``measured_p50_ms`` maps a measured pair of sites (either order: a link carries both
    directions) to its round trip's p50 [ms]. The bound is the legs' correctly rounded sum
    (``math.fsum``), so that it does not depend on which end is named first.

    >>> path = measured_paths({("paris-1", "paris-2"): 0.47, ("paris-1", "frankfurt"): 9.76})
    >>> found = path("paris-2", "frankfurt")
    >>> round(found.bound_ms, 2), found.via, found.legs_ms
    (10.23, ('paris-1',), (0.47, 9.76))
    >>> path("paris-2", "paris-2") is None
    True
    """
    import networkx as nx

    graph = nx.Graph()
    for (a, b), p50_ms in measured_p50_ms.items():
        graph.add_edge(a, b, p50_ms=float(p50_ms))

    def best(a: str, b: str) -> MeasuredPath | None:
        if a == b or a not in graph or b not in graph:
            return None
        try:
            sites = nx.dijkstra_path(graph, a, b, weight="p50_ms")
        except nx.NetworkXNoPath:
            return None
        legs_ms = tuple(graph.edges[u, v]["p50_ms"] for u, v in pairwise(sites))
        return MeasuredPath(fsum(legs_ms), tuple(sites), legs_ms)

    return best
