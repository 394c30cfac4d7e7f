"""The one entry point: ``recommend(topology) -> Recommendation``.

Loading -> evidence per link -> candidate options evaluated -> rules -> verdict -> result.
"""

from __future__ import annotations

__all__ = ["Analysis", "analyse", "link_report", "recommend", "rtt_summary"]

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from advisor import verdict
from advisor.checks import CROSS_CLUSTER_RULES, LINK_RULES, Context, evaluate
from advisor.evidence import LinkEvidence, gather_links
from advisor.grouping import best_partition
from advisor.loading import LoadedTopology, load_topology
from advisor.options import Evaluator, Option
from advisor.result import (
    Finding,
    HotRowReport,
    LinkReport,
    MeasurementReport,
    OptionReport,
    Recommendation,
    Throughput,
)
from advisor.rtt import RttDistribution
from advisor.rules import Rule, load_rules

SCREEN_DRAWS = 2_000
_OPERATIONS = {
    "single_cluster": "one cluster to run; every commit crosses the WAN; quorum spans sites",
    "per_site_clusters": "a cluster per site, asynchronous channels between them, ProxySQL "
    "routing writes to each row's owner site",
    "grouped_clusters": "a cluster per group, asynchronous channels between groups, ProxySQL "
    "routing writes to each row's owner group",
}


@dataclass
class Analysis:
    """Everything the engine computed, for callers who want more than the report."""

    loaded: LoadedTopology
    links: list[LinkEvidence]
    evaluator: Evaluator
    options: list[Option]
    findings: list[Finding]
    chosen: Option
    rules: dict[str, Rule]


def recommend(
    topology: LoadedTopology | str | Path, *, rules_dirs: Iterable[Path] = ()
) -> Recommendation:
    """Evaluate a topology and say which architecture fits, why, and with what numbers.

    ``topology`` is a loaded topology or the path of a ``topology.yaml``; ``rules_dirs`` hold
    rule files that override the shipped pack. Raises :class:`~advisor.errors.AdvisorError`
    for bad input.
    """
    return report(analyse(topology, rules_dirs=rules_dirs))


def analyse(topology: LoadedTopology | str | Path, *, rules_dirs: Iterable[Path] = ()) -> Analysis:
    """Run the engine and keep its intermediate results (options, evidence, findings)."""
    loaded = topology if isinstance(topology, LoadedTopology) else load_topology(topology)
    rules = load_rules(rules_dirs)
    links = gather_links(loaded)
    sizes = writeset_sizes(loaded)
    evaluator = Evaluator(loaded.topology, links, writeset_bytes=sizes)
    # The grouping search judges many candidate groups: it uses the first SCREEN_DRAWS of the
    # same draws, and only the partition it picks is evaluated in full.
    screen = Evaluator(loaded.topology, links, writeset_bytes=sizes, draws=SCREEN_DRAWS)
    base = Context(
        topology=loaded.topology,
        links=links,
        writeset_p50_bytes=sizes[0],
        provider_options=evaluator.options,
    )
    options = _candidates(evaluator, screen, rules, base)
    ctx = replace(base, options=tuple(options))
    findings = evaluate(rules, ctx)
    chosen = verdict.choose(options, findings)
    return Analysis(loaded, links, evaluator, options, findings, chosen, rules)


def _candidates(
    evaluator: Evaluator, screen: Evaluator, rules: dict[str, Rule], base: Context
) -> list[Option]:
    sites = evaluator.data_sites
    options = [evaluator.option("single_cluster", [sites])]
    if len(sites) > 1:
        options.append(evaluator.option("per_site_clusters", [[s] for s in sites]))
    local_rules = [r for r in rules if r not in CROSS_CLUSTER_RULES and r not in LINK_RULES]

    def blocked(option: Option, ids: list[str]) -> bool:
        ctx = replace(base, options=(option,))
        return any(f.severity == "blocker" for f in evaluate(rules, ctx, ids))

    judged: dict[frozenset[str], bool] = {}

    def viable_group(group: tuple[str, ...]) -> bool:
        # The screen rejects fast; what it accepts is confirmed on the full draws, so that
        # Monte Carlo noise near a threshold cannot let a non-viable group through.
        key = frozenset(group)
        if key not in judged:
            judged[key] = not any(
                blocked(judge.option("grouped_clusters", [group]), local_rules)
                for judge in (screen, evaluator)
            )
        return judged[key]

    def spans_ok(partition: list[tuple[str, ...]]) -> bool:
        return not blocked(screen.option("grouped_clusters", partition), list(CROSS_CLUSTER_RULES))

    def score(partition: list[tuple[str, ...]]) -> float:
        return screen.option("grouped_clusters", partition).commit_latency_ms.get("p50", 0.0)

    distance = evaluator.median_rtt_ms

    partition = best_partition(sites, viable_group, spans_ok, score, distance)
    if partition is None and len(sites) >= 3:
        # Nothing groups cleanly: show the most natural grouping, so the report says why.
        partition = _nearest_pair_merged(sites, distance)
    if partition is not None:
        options.append(evaluator.option("grouped_clusters", partition))
    return options


def _nearest_pair_merged(
    sites: list[str], distance: Callable[[str, str], float]
) -> list[tuple[str, ...]]:
    a, b = min(
        ((a, b) for i, a in enumerate(sites) for b in sites[i + 1 :]),
        key=lambda pair: (distance(*pair), pair),
    )
    return [(a, b), *((s,) for s in sites if s not in (a, b))]


def writeset_sizes(loaded: LoadedTopology) -> tuple[float, float]:
    """Write-set p50 and p99 [bytes]; 2 KB and 64 KB when the workload does not say."""
    given = loaded.topology.workload.writeset_bytes
    if given is None:
        return 2048.0, 65536.0
    dist = RttDistribution.from_percentiles(given.given())
    return float(dist.quantile(0.5)), float(dist.quantile(0.99))


def report(analysis: Analysis) -> Recommendation:
    """The output contract of an analysis."""
    topology = analysis.loaded.topology
    chosen, options, findings = analysis.chosen, analysis.options, analysis.findings
    sizes = writeset_sizes(analysis.loaded)
    inter = [
        link
        for link in analysis.links
        if link.sites[0] in analysis.evaluator.data_sites
        and link.sites[1] in analysis.evaluator.data_sites
    ]
    worst_p50 = max((float(link.rtt.quantile(0.5)) for link in inter), default=0.0)
    lan = [
        float(np.median(analysis.evaluator.cluster([s]).commit_ms[s]))
        for s in analysis.evaluator.writing
    ] or [0.0]
    return Recommendation(
        topology=topology.name,
        architecture=chosen.architecture,
        groups=[list(g) for g in _with_arbitrators(chosen)],
        arbitrators=_arbitrators(chosen),
        summary=verdict.summary(chosen, options, findings, analysis.rules),
        findings=findings,
        links=[link_report(link, sizes) for link in analysis.links],
        hot_rows=_hot_rows(options),
        options=[_option_report(o, findings) for o in options],
        what_would_change=verdict.what_would_change(
            topology, options, findings, max(lan), worst_p50
        ),
    )


def _with_arbitrators(option: Option) -> list[tuple[str, ...]]:
    return [c.members for c in option.clusters]


def _arbitrators(option: Option) -> list[str]:
    return [c.arbitrator for c in option.clusters if c.arbitrator and c.arbitrator not in c.sites]


def _option_report(option: Option, findings: list[Finding]) -> OptionReport:
    blocking = verdict.blockers(option, findings)
    throughput = None
    if option.throughput is not None:
        rate, txn, limited = option.throughput
        throughput = Throughput(
            commits_per_s=round(rate, 2), txn_latency_ms=txn, limited_by=limited
        )
    conflicts = sum(row.conflicts_per_s for row in option.hot_rows) if option.hot_rows else None
    survives = not any(c.site_failures or c.node_failures for c in option.clusters)
    return OptionReport(
        architecture=option.architecture,
        groups=[list(g) for g in _with_arbitrators(option)],
        arbitrators=_arbitrators(option),
        viable=not blocking,
        commit_latency_ms=option.commit_latency_ms,
        commit_latency_by_site_ms={
            s: c.commit_percentiles(s) for c in option.clusters for s in c.writers
        },
        throughput=throughput,
        survives_site_loss=survives,
        data_at_risk_s=None if option.data_at_risk_s is None else round(option.data_at_risk_s, 4),
        conflicts_per_s=None if conflicts is None else round(conflicts, 3),
        clusters=len(option.clusters),
        blockers=sorted({f.rule for f in blocking}),
        operations=_OPERATIONS[option.architecture],
    )


def _hot_rows(options: list[Option]) -> list[HotRowReport]:
    rows = []
    for index, first in enumerate(options[0].hot_rows if options else []):
        per = {o.architecture: o.hot_rows[index] for o in options}
        rows.append(
            HotRowReport(
                name=first.row.name,
                required_updates_per_s=first.row.updates_per_s,
                writer_sites=list(first.writer_sites),
                max_updates_per_s={a: round(r.bound_p50_per_s, 2) for a, r in per.items()},
                max_updates_per_s_p99={a: round(r.bound_p99_per_s, 2) for a, r in per.items()},
                utilisation={
                    a: round(first.row.updates_per_s / r.bound_p50_per_s, 4) for a, r in per.items()
                },
            )
        )
    return rows


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
        sites=link.sites,
        distance_km=_round(link.distance_km, 1),
        distance_source=link.distance_source,
        route_km=link.route_km,
        medium=link.medium,
        bandwidth_mbps=link.bandwidth_mbps,
        floor_rtt_ms=_round(link.floor_rtt_ms, 3),
        rtt_ms=rtt_summary(link.rtt),
        rtt_source=link.rtt_source,
        light_speed_fraction=_round(link.light_speed_fraction, 3),
        loss=_round(link.rtt.loss, 6) if link.rtt_source == "measured" else None,
        measurements=[
            MeasurementReport(
                method=m.method,
                payload_bytes=(m.spec.payload_bytes or 56) if m.method == "icmp" else None,
                request_bytes=m.request_bytes,
                response_bytes=m.response_bytes,
                samples=m.distribution.n_samples,
                rtt_ms=_measured_summary(m.distribution),
                loss=_round(m.distribution.loss, 6),
                source=m.source,
                tool=m.tool,
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
