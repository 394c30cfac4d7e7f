"""Predicates of the link rules: what the evidence about a site pair says by itself,
whatever the architecture (a round trip faster than light, an estimate, ping only), and
whether the verdict holds over the range of the estimated pairs.

Each predicate takes the :class:`~advisor.rules.context.Context` and the rule's parameters and
yields :class:`~advisor.rules.pack.RuleHit`; the rule's YAML file holds its severity,
thresholds and message.
"""

from __future__ import annotations

__all__ = ["estimate_flips_verdict", "ping_only", "rtt_below_physics", "rtt_estimated"]

from collections.abc import Iterator, Mapping

from advisor.engine.evidence import LinkEvidence, RttEstimate
from advisor.model import physics
from advisor.rules.context import Context
from advisor.rules.pack import RuleHit

Params = Mapping[str, float]


def _pair(link: LinkEvidence) -> str:
    return f"{link.sites[0]}-{link.sites[1]}"


def rtt_below_physics(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A measured round trip faster than light allows over the stated path."""
    for link in ctx.links:
        if link.floor_rtt_ms is None:
            continue
        path_km = link.route_km or link.distance_km or 0.0
        for measured in link.measurements:
            fastest_ms = float(measured.distribution.quantile(0.0))
            gap_ms = link.floor_rtt_ms - fastest_ms
            if gap_ms > p["tolerance_ms"]:
                yield RuleHit(
                    _pair(link),
                    {
                        "sites": _pair(link),
                        "rtt_min_ms": fastest_ms,
                        "floor_rtt_ms": link.floor_rtt_ms,
                        "gap_ms": gap_ms,
                        "medium": link.medium,
                        "path_km": path_km,
                        "source": measured.source,
                        "max_distance_km": float(physics.max_distance_km(fastest_ms, link.medium)),
                    },
                )


def rtt_estimated(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A pair nobody measured: its RTT comes from distance and a published fit, bounded by
    physics below and by the best path over measured links above."""
    for link in ctx.links:
        if link.rtt_source != "estimated":
            continue
        estimate = link.estimate
        p50_ms = float(link.rtt.quantile(0.5))
        yield RuleHit(
            _pair(link),
            {
                "sites": _pair(link),
                "rtt_p50_ms": p50_ms,
                "range_low_ms": estimate.low_ms if estimate else p50_ms,
                "range_low_basis": _low_basis(estimate),
                "range_high_ms": estimate.high_ms if estimate else p50_ms,
                "range_high_basis": _high_basis(estimate),
                "basis": estimate.basis if estimate else "",
                "fit_ms": estimate.fit_ms if estimate else p50_ms,
                "path_bound_ms": estimate.path_bound_ms if estimate else None,
                "scatter_factor": estimate.scatter_factor if estimate else 1.0,
                "distance_km": link.distance_km or 0.0,
                "floor_rtt_ms": link.floor_rtt_ms or 0.0,
                "overhead_ms": estimate.overhead_ms if estimate else 0.0,
                "route_factor": (
                    estimate.propagation_ms / estimate.floor_ms
                    if estimate and estimate.floor_ms > 0
                    else 0.0
                ),
            },
        )


def _high_basis(estimate: RttEstimate | None) -> str:
    """What sets the top of an estimate's range, in words."""
    if estimate is None:
        return "the estimate"
    if estimate.path_bound_ms is not None and estimate.high_ms == estimate.path_bound_ms:
        return f"the measured path via {', '.join(estimate.via)}"
    return f"{estimate.scatter_factor:g} x the fit"


def _low_basis(estimate: RttEstimate | None) -> str:
    """What sets the bottom of an estimate's range, in words."""
    if estimate is None:
        return "the estimate"
    if estimate.lower_bound_ms is not None and estimate.low_ms == estimate.lower_bound_ms:
        return f"the triangle over measured links via {', '.join(estimate.lower_path[1:-1])}"
    return "the physical floor"


def estimate_flips_verdict(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """The recommendation differs with the estimated pairs at an end of their range.

    Reads what the analysis computed (``ctx.estimate_ends``: the recommended architecture
    with every estimated link at the low end, at the estimate and at the high end of its
    range); names the estimated pairs that an option can use (at least one end holds data).
    """
    ends = ctx.estimate_ends
    central = ends.get("estimate")
    if central is None or all(ends.get(end, central) == central for end in ("low", "high")):
        return
    data = {s.name for s in ctx.topology.sites if s.nodes > 0}
    varied = [
        link for link in ctx.links if link.estimate is not None and data.intersection(link.sites)
    ]
    if not varied:
        return
    yield RuleHit(
        ", ".join(_pair(link) for link in varied),
        {
            "pairs": "; ".join(
                f"{_pair(link)} {link.estimate.low_ms:.2f} to {link.estimate.high_ms:.2f} ms "
                f"(estimate {link.estimate.p50_ms:.2f} ms)"
                for link in varied
                if link.estimate is not None
            ),
            "low": ends.get("low", central),
            "estimate": central,
            "high": ends.get("high", central),
        },
    )


def ping_only(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """Only ICMP was measured: the TCP round trip at write-set size is a model's estimate."""
    size = ctx.writeset_p50_bytes
    for link in ctx.links:
        if link.icmp_only:
            modelled, _ = link.writeset_rtt(size)
            yield RuleHit(
                _pair(link),
                {
                    "sites": _pair(link),
                    "rtt_p50_ms": float(link.rtt.quantile(0.5)),
                    "writeset_bytes": size,
                    "writeset_rtt_p50_ms": float(modelled.quantile(0.5)),
                    "bandwidth_mbps": link.effective_bandwidth_mbps,
                    "bandwidth_note": ""
                    if link.bandwidth_mbps
                    else " (assumed; no bandwidth_mbps given)",
                },
            )
