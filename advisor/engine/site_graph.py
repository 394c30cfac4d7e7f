"""The graph of sites joined by measured links: both triangle bounds on an unmeasured pair.

Above: a packet between two sites nobody measured can be relayed through measured
neighbours, so the direct round trip need not exceed the shortest path over measured links
(any number of hops), weighted by each link's measured p50 (:func:`measured_paths`).

Below: the triangle inequality. For an unmeasured pair a-b and a site k measured from a,
``d(a,b) >= |d(a,k) - d(k,b)|`` (:func:`measured_lower_bounds`): paris-2 is 0.47 ms from
paris-1, which is 9.76 ms from frankfurt, so paris-2 - frankfurt takes at least 9.29 ms.
Where k-b is not measured itself, the best measured path k-b is only an upper bound on it: it
may be subtracted from d(a,k) (``d(a,k) - path(k,b)``), never d(a,k) from it.

Both bound an estimate (:func:`advisor.model.physics.bounded_estimate_ms`). networkx is
imported only when a topology has an estimated pair to bound.
"""

from __future__ import annotations

__all__ = ["LowerBound", "MeasuredPath", "measured_lower_bounds", "measured_paths"]

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from math import fsum
from typing import Any


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


@dataclass(frozen=True)
class LowerBound:
    """The largest triangle lower bound on an unmeasured pair over measured links:
    ``|near_ms - far.bound_ms|``, from ``end`` one measured hop to the pivot k, then the
    best measured path ``far`` from k on to the pair's other end."""

    bound_ms: float  # [ms]
    end: str  # the end of the pair measured directly to k
    near_ms: float  # the measured p50 from that end to k [ms]
    far: MeasuredPath  # the best measured path from k to the other end

    @property
    def pivot(self) -> str:
        """The site k."""
        return self.far.sites[0]

    @property
    def sites(self) -> tuple[str, ...]:
        """From ``end`` through k to the other end."""
        return (self.end, *self.far.sites)


def _graph(measured_p50_ms: Mapping[tuple[str, str], float]) -> Any:
    import networkx as nx

    graph = nx.Graph()
    for (a, b), p50_ms in measured_p50_ms.items():
        graph.add_edge(a, b, p50_ms=float(p50_ms))
    return graph


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

    graph = _graph(measured_p50_ms)

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


def measured_lower_bounds(
    measured_p50_ms: Mapping[tuple[str, str], float],
) -> Callable[[str, str], LowerBound | None]:
    """The largest triangle lower bound on the round trip between two sites.

    For the pair a-b, every site k measured directly from one end (say a) gives
    ``d(k,b) - d(a,k)`` where k-b is measured too, and ``d(a,k) - path(k,b)`` where a
    measured path (:func:`measured_paths`) joins k to b (a path is an upper bound on the
    direct round trip, so only that difference is a bound). The largest over k and over both
    ends wins. None where no k gives a positive bound, or the pair is itself measured (a
    measurement needs no bound).

    >>> measured = {("paris-1", "paris-2"): 0.47, ("paris-1", "frankfurt"): 9.76}
    >>> lower = measured_lower_bounds(measured)
    >>> found = lower("paris-2", "frankfurt")
    >>> round(found.bound_ms, 2), found.sites, found.pivot
    (9.29, ('paris-2', 'paris-1', 'frankfurt'), 'paris-1')
    """
    import networkx as nx

    graph = _graph(measured_p50_ms)

    @functools.cache
    def paths_from(k: str) -> dict[str, list[str]]:
        # One shortest-path tree per pivot, shared by every pair that uses it.
        return dict(nx.single_source_dijkstra_path(graph, k, weight="p50_ms"))

    def path(sites: list[str]) -> MeasuredPath:
        legs_ms = tuple(float(graph.edges[u, v]["p50_ms"]) for u, v in pairwise(sites))
        return MeasuredPath(fsum(legs_ms), tuple(sites), legs_ms)

    def lower(a: str, b: str) -> LowerBound | None:
        if a == b or a not in graph or b not in graph or graph.has_edge(a, b):
            return None
        found: LowerBound | None = None
        for end, other in ((a, b), (b, a)):
            for k in sorted(graph.neighbors(end)):
                near_ms = float(graph.edges[end, k]["p50_ms"])
                candidates = []
                if graph.has_edge(k, other):
                    direct = path([k, other])
                    candidates.append((direct.bound_ms - near_ms, direct))
                if k != other and other in paths_from(k):
                    far = path(paths_from(k)[other])
                    candidates.append((near_ms - far.bound_ms, far))
                for bound_ms, via in candidates:
                    if bound_ms > 0 and (found is None or bound_ms > found.bound_ms):
                        found = LowerBound(bound_ms, end, near_ms, via)
        return found

    return lower
