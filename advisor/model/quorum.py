"""Quorum: which failures leave a primary component that can still take writes.

A partition stays primary only if it holds more than half of the weight of the last primary
component (``pc.weight``, 1 per node by default, garbd included; Codership docs, Weighted
Quorum: https://galeracluster.com/library/documentation/weighted-quorum.html). The sites of
one cluster form a graph (networkx); a failure removes a site or cuts one inter-site link.
With three or more sites a single cut does not partition the cluster: Galera relays messages
through the remaining sites (gmcast "message relay"), so only the components of the graph
without that edge count.
"""

from __future__ import annotations

__all__ = ["Failure", "node_loss_failures", "site_failures"]

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True)
class Failure:
    """A single failure after which writes stop: what failed and what weight was left."""

    event: str  # "loss of site X", "cut of link X-Y", "loss of one node at X"
    surviving_fraction: float  # best surviving component's share of the total weight

    def describe(self) -> str:
        return (
            f"{self.event} leaves at most {self.surviving_fraction:.0%} of the votes "
            "with the writers, not a majority"
        )


def _graph(weights: Mapping[str, float]) -> nx.Graph:
    import networkx as nx  # imported where used: it costs 80 ms of start-up

    graph = nx.complete_graph(sorted(weights))
    nx.set_node_attributes(graph, dict(weights), "weight")
    return graph


def _best_component(graph: Any, writers: Set[str], total: float) -> tuple[bool, float]:
    """Whether some component is a primary holding writers, and the best writer share."""
    import networkx as nx

    best = 0.0
    primary = False
    for component in nx.connected_components(graph):
        weight = sum(graph.nodes[site]["weight"] for site in component)
        if component & writers:
            best = max(best, weight / total)
            primary = primary or weight > total / 2
    return primary, best


def site_failures(weights: Mapping[str, float], writers: Set[str]) -> list[Failure]:
    """Every single-site loss or inter-site link cut that stops writes.

    ``weights`` maps each site of the cluster to its summed ``pc.weight``; ``writers`` are
    the sites whose applications write. Only an articulation point's loss or a bridge's cut
    can split the remaining sites; any other single failure leaves them connected.
    """
    total = float(sum(weights.values()))
    if total <= 0:
        return [Failure("a cluster with no votes", 0.0)]
    import networkx as nx

    graph = _graph(weights)
    cut_vertices = set(nx.articulation_points(graph))
    failures = []
    for site in sorted(weights):
        remaining_writers = set(writers) - {site}
        if not remaining_writers:
            continue  # nobody is left to write; the site's own loss is not a quorum problem
        rest = graph.subgraph(set(graph) - {site})
        if site in cut_vertices:
            primary, share = _best_component(rest, remaining_writers, total)
        else:
            share = (total - weights[site]) / total
            primary = share > 0.5
        if not primary:
            failures.append(Failure(f"loss of site {site}", share))
    for a, b in sorted(tuple(sorted(edge)) for edge in nx.bridges(graph)):
        cut = nx.restricted_view(graph, [], [(a, b)])
        primary, share = _best_component(cut, set(writers), total)
        if not primary:
            failures.append(Failure(f"cut of link {a}-{b}", share))
    return failures


def node_loss_failures(member_weights: Mapping[str, Sequence[int]]) -> list[Failure]:
    """Sites where losing one member (the heaviest there) leaves no majority.

    ``member_weights`` maps each site to the ``pc.weight`` of every member there (data nodes
    and garbd).
    """
    total = float(sum(sum(ws) for ws in member_weights.values()))
    failures = []
    for site, weights in sorted(member_weights.items()):
        if not weights:
            continue
        left = total - max(weights)
        if not left > total / 2:
            failures.append(Failure(f"loss of one node at {site}", left / total if total else 0.0))
    return failures
