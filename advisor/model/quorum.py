"""Quorum: which failures leave a primary component that can still take writes.

A partition stays primary only if it holds more than half of the weight of the last primary
component (``pc.weight``, 1 per node by default, garbd included; Codership docs, Weighted
Quorum: https://galeracluster.com/library/documentation/weighted-quorum.html). The sites of
one cluster form a complete graph: every member talks to every other (gmcast), and Galera
relays messages through the remaining sites (gmcast "message relay"). A single failure
splits that graph where a site is lost (the node removed) or where a bridge is cut (a link
whose cut disconnects it: with three or more sites there is none, with two the one link).
The search runs on the graph (networkx), so it would hold for any graph of sites.
"""

from __future__ import annotations

__all__ = ["Failure", "node_loss_failures", "site_failures"]

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass


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


def _best_component(
    components: Iterable[Set[str]], weights: Mapping[str, float], writers: Set[str], total: float
) -> tuple[bool, float]:
    """Whether some component is a primary holding writers, and the best writer share."""
    best = 0.0
    primary = False
    for component in components:
        weight = sum(weights[site] for site in component)
        if component & writers:
            best = max(best, weight / total)
            primary = primary or weight > total / 2
    return primary, best


def site_failures(weights: Mapping[str, float], writers: Set[str]) -> list[Failure]:
    """Every single-site loss or inter-site link cut that stops writes.

    Parameters
    ----------
    weights
        Each site of the cluster to its summed ``pc.weight`` [votes].
    writers
        The sites whose applications write.

    Returns
    -------
    list[Failure]
        The site losses (by name) then the link cuts (by name) after which no component
        holding writers keeps more than half of the votes, each with the best such
        component's share of the votes [fraction]. The loss of the only writing sites is
        left out: nobody is left to write.
    """
    import networkx as nx

    total = float(sum(weights.values()))
    if total <= 0:
        return [Failure("a cluster with no votes", 0.0)]
    graph = nx.complete_graph(sorted(weights))  # gmcast: every pair of sites talks
    failures = []
    for site in sorted(weights):
        if not set(writers) - {site}:
            continue  # nobody is left to write; the site's own loss is not a quorum problem
        after = nx.restricted_view(graph, [site], [])
        primary, share = _best_component(nx.connected_components(after), weights, writers, total)
        if not primary:
            failures.append(Failure(f"loss of site {site}", share))
    # A bridge is a biconnected component of one edge (networkx's chain decomposition in
    # nx.bridges finds the same edges, several times slower on these small graphs).
    bridges = [c[0] for c in nx.biconnected_component_edges(graph) if len(c) == 1]
    for a, b in sorted(tuple(sorted(edge)) for edge in bridges):
        after = nx.restricted_view(graph, [], [(a, b)])
        primary, share = _best_component(nx.connected_components(after), weights, writers, total)
        if not primary:
            failures.append(Failure(f"cut of link {a}-{b}", share))
    return failures


def node_loss_failures(member_weights: Mapping[str, Sequence[int]]) -> list[Failure]:
    """Sites where losing one member (the heaviest there) leaves no majority.

    Parameters
    ----------
    member_weights
        Each site to the ``pc.weight`` of every member there, data nodes and garbd [votes].

    Returns
    -------
    list[Failure]
        By site name, the sites where the loss of their heaviest member leaves no more than
        half of the votes, each with the share left [fraction].
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
