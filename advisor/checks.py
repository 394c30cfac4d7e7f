"""One small named predicate per rule: metrics in, :class:`~advisor.rules.RuleHit` out.

The rule's data (severity, thresholds, message) lives in ``rules/<ID>.yaml``; here is only
the logic. :data:`CHECKS` maps each rule id to its predicate, and :func:`evaluate` turns the
hits into findings.
"""

from __future__ import annotations

__all__ = ["CHECKS", "CROSS_CLUSTER_RULES", "LINK_RULES", "Context", "evaluate"]

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from advisor import option_checks as oc
from advisor import physics
from advisor.errors import AdvisorError
from advisor.evidence import LinkEvidence
from advisor.options import Option
from advisor.result import Finding
from advisor.rules import Rule, RuleHit, render_message
from advisor.topology import Topology

Params = Mapping[str, float]


@dataclass(frozen=True)
class Context:
    """Everything a predicate may look at."""

    topology: Topology
    links: Sequence[LinkEvidence]
    writeset_p50_bytes: float = 2048.0
    options: Sequence[Option] = field(default_factory=tuple)  # evaluated architectures
    provider_options: Mapping[str, Any] = field(default_factory=dict)


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
    """A pair nobody measured: its RTT comes from distance and a published fit."""
    for link in ctx.links:
        if link.rtt_source == "estimated":
            yield RuleHit(
                _pair(link),
                {
                    "sites": _pair(link),
                    "rtt_p50_ms": float(link.rtt.quantile(0.5)),
                    "distance_km": link.distance_km or 0.0,
                    "floor_rtt_ms": link.floor_rtt_ms or 0.0,
                    "overhead_ms": physics.ESTIMATE_FIXED_OVERHEAD_MS,
                    "route_factor": physics.ESTIMATE_ROUTE_FACTOR,
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


CHECKS: dict[str, Callable[[Context, Params], Iterator[RuleHit]]] = {
    "RTT-BELOW-PHYSICS": rtt_below_physics,
    "RTT-ESTIMATED": rtt_estimated,
    "PING-ONLY": ping_only,
    "COMMIT-LATENCY-SLO": oc.commit_latency_slo,
    "HOT-ROW-RATE": oc.hot_row_rate,
    "HOT-ROW-QUEUE": oc.hot_row_queue,
    "HOT-ROW-CONFLICTS": oc.hot_row_conflicts,
    "QUORUM-SITE-LOSS": oc.quorum_site_loss,
    "QUORUM-NODE-LOSS": oc.quorum_node_loss,
    "ARBITRATOR-PLACED": oc.arbitrator_placed,
    "RTT-TAIL-INSTABILITY": oc.rtt_tail_instability,
    "SEND-WINDOW": oc.send_window,
    "BANDWIDTH": oc.bandwidth,
    "MULTI-SITE-WRITES-ASYNC": oc.multi_site_writes_async,
    "ASYNC-OWNERSHIP": oc.async_ownership,
    "ASYNC-DATA-LOSS": oc.async_data_loss,
}
LINK_RULES = ("RTT-BELOW-PHYSICS", "RTT-ESTIMATED", "PING-ONLY")
# Rules that judge how clusters relate, not one cluster alone (grouping search skips them
# when it asks whether one candidate group could stand as a cluster).
CROSS_CLUSTER_RULES = ("MULTI-SITE-WRITES-ASYNC", "ASYNC-OWNERSHIP", "ASYNC-DATA-LOSS")


def evaluate(
    rules: Mapping[str, Rule], ctx: Context, ids: Sequence[str] | None = None
) -> list[Finding]:
    """Run the predicates of ``ids`` (default: every rule) and build the findings."""
    findings = []
    for rule_id in ids if ids is not None else sorted(rules):
        rule = rules[rule_id]
        check = CHECKS.get(rule_id)
        if check is None:
            raise AdvisorError(f"rule {rule_id} has no predicate in advisor.checks")
        for hit in check(ctx, rule.parameters):
            values = {**rule.parameters, **hit.values}
            findings.append(
                Finding(
                    rule=rule.id,
                    severity=rule.severity,
                    subject=hit.subject,
                    option=hit.option,
                    title=rule.title,
                    message=render_message(rule, values),
                    values={k: _plain(v) for k, v in hit.values.items()},
                )
            )
    return findings


def _plain(value: Any) -> float | int | str | None:
    if value is None or isinstance(value, int | str):
        return value
    if isinstance(value, float):
        return round(value, 6)
    return str(value)
