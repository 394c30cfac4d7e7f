"""The one entry point: ``recommend(topology) -> Recommendation``."""

from __future__ import annotations

__all__ = ["link_report", "recommend", "rtt_summary"]

from collections.abc import Iterable
from pathlib import Path

from advisor.checks import Context, evaluate
from advisor.evidence import LinkEvidence, gather_links
from advisor.loading import LoadedTopology, load_topology
from advisor.result import LinkReport, MeasurementReport, Recommendation
from advisor.rtt import RttDistribution
from advisor.rules import load_rules

_LINK_RULES = ("RTT-BELOW-PHYSICS", "RTT-ESTIMATED", "PING-ONLY")


def recommend(
    topology: LoadedTopology | str | Path, *, rules_dirs: Iterable[Path] = ()
) -> Recommendation:
    """Evaluate a topology and say which architecture fits, why, and with what numbers.

    ``topology`` is a loaded topology or the path of a ``topology.yaml``; ``rules_dirs`` hold
    rule files that override the shipped pack. Raises :class:`~advisor.errors.AdvisorError`
    for bad input.
    """
    loaded = topology if isinstance(topology, LoadedTopology) else load_topology(topology)
    rules = load_rules(rules_dirs)
    links = gather_links(loaded)
    sizes = _writeset_sizes(loaded)
    ctx = Context(topology=loaded.topology, links=links, writeset_p50_bytes=sizes[0])
    return Recommendation(
        topology=loaded.topology.name,
        links=[link_report(link, sizes) for link in links],
        findings=evaluate(rules, ctx, _LINK_RULES),
    )


def _writeset_sizes(loaded: LoadedTopology) -> tuple[float, float]:
    """Write-set p50 and p99 [bytes]; 2 KB and 64 KB when the workload does not say."""
    given = loaded.topology.workload.writeset_bytes
    if given is None:
        return 2048.0, 65536.0
    dist = RttDistribution.from_percentiles(given.given())
    return float(dist.quantile(0.5)), float(dist.quantile(0.99))


def rtt_summary(dist: RttDistribution) -> dict[str, float]:
    """p50, p95, p99 always; p99.9 and max only where real samples back them."""
    keys = ["p50", "p95", "p99"]
    if dist.basis == "samples":
        keys += ["p999", "max"]
    return {k: round(v, 4) for k, v in dist.percentiles_ms(keys).items()}


def link_report(link: LinkEvidence, writeset_sizes: tuple[float, float]) -> LinkReport:
    p50_size, p99_size = writeset_sizes
    small, source = link.writeset_rtt(p50_size)
    large, _ = link.writeset_rtt(p99_size)
    return LinkReport(
        sites=link.sites, distance_km=_round(link.distance_km, 1),
        distance_source=link.distance_source, route_km=link.route_km, medium=link.medium,
        bandwidth_mbps=link.bandwidth_mbps, floor_rtt_ms=_round(link.floor_rtt_ms, 3),
        rtt_ms=rtt_summary(link.rtt), rtt_source=link.rtt_source,
        light_speed_fraction=_round(link.light_speed_fraction, 3),
        loss=_round(link.rtt.loss, 6) if link.rtt_source == "measured" else None,
        measurements=[
            MeasurementReport(
                method=m.method,
                payload_bytes=(m.spec.payload_bytes or 56) if m.method == "icmp" else None,
                request_bytes=m.request_bytes, response_bytes=m.response_bytes,
                samples=m.distribution.n_samples, rtt_ms=_measured_summary(m.distribution),
                loss=_round(m.distribution.loss, 6), source=m.source, tool=m.tool,
                notes=list(m.notes),
            )
            for m in link.measurements
        ],
        writeset_rtt_ms={
            "p50_size_p50": round(float(small.quantile(0.5)), 4),
            "p50_size_p99": round(float(small.quantile(0.99)), 4),
            "p99_size_p50": round(float(large.quantile(0.5)), 4),
        },
        writeset_rtt_source=source if link.rtt_source == "measured" else "estimated",
    )


def _measured_summary(dist: RttDistribution) -> dict[str, float]:
    keys = ["p50", "p99", "max"] if dist.basis != "point" else ["p50"]
    return {k: round(v, 4) for k, v in dist.percentiles_ms(keys).items()}


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)
