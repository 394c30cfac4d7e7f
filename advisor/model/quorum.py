"""Quorum: which failures leave a primary component that can still take writes.

A partition stays primary only if it holds more than half of the weight of the last primary
component (``pc.weight``, 1 per node by default, garbd included; Codership docs, Weighted
Quorum: https://galeracluster.com/library/documentation/weighted-quorum.html). The sites of
one cluster form a complete graph: every member talks to every other (gmcast), and with
three or more sites a single cut does not partition the cluster because Galera relays
messages through the remaining sites (gmcast "message relay"). So a site's loss leaves the
other sites in one component, and only the one link of a two-site cluster is a bridge whose
cut splits it. No graph library is needed for that (networkx cost 80 to 150 ms of start-up).
"""

from __future__ import annotations

__all__ = ["Failure", "node_loss_failures", "site_failures"]

from collections.abc import Mapping, Sequence, Set
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
    components: Sequence[Set[str]], weights: Mapping[str, float], writers: Set[str], total: float
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

    ``weights`` maps each site of the cluster to its summed ``pc.weight``; ``writers`` are
    the sites whose applications write. In a complete graph no site is an articulation
    point, so a site's loss leaves the others connected with the rest of the weight; the
    only bridge is the link of a two-site cluster.
    """
    total = float(sum(weights.values()))
    if total <= 0:
        return [Failure("a cluster with no votes", 0.0)]
    failures = []
    for site in sorted(weights):
        if not set(writers) - {site}:
            continue  # nobody is left to write; the site's own loss is not a quorum problem
        share = (total - weights[site]) / total
        if not share > 0.5:
            failures.append(Failure(f"loss of site {site}", share))
    if len(weights) == 2:
        a, b = sorted(weights)
        primary, share = _best_component(({a}, {b}), weights, set(writers), total)
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
