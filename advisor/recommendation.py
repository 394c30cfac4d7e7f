"""The one entry point: ``recommend(topology) -> Recommendation``, the output contract of an
analysis (:mod:`advisor.result`, FORMAT.md).
"""

from __future__ import annotations

__all__ = [
    "build_recommendation",
    "lever_inputs",
    "link_report",
    "recommend",
    "rtt_summary",
]

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from advisor import verdict
from advisor.analysis import SCREEN_DRAWS, Analysis, analyse
from advisor.engine.evaluator import Evaluator
from advisor.engine.evidence import LinkEvidence
from advisor.engine.metrics import Option, Percentiles
from advisor.engine.workload import DEFAULT_WRITESET_BYTES, WritesetSizes, writeset_sizes
from advisor.inputs.loading import LoadedTopology
from advisor.inputs.topology import SizePercentiles
from advisor.model.provider_options import OptionValue
from advisor.model.rtt import RttDistribution
from advisor.result import (
    Finding,
    HotRowReport,
    LinkReport,
    MeasurementReport,
    OptionReport,
    Recommendation,
    Throughput,
    finite_or_none,
)
from advisor.rules.pack import RulesDirs
from advisor.vocabulary import ARCHITECTURES


def recommend(
    topology: LoadedTopology | str | Path, *, rules_dirs: RulesDirs = ()
) -> Recommendation:
    """Evaluate a topology and say which architecture fits, why, and with what numbers.

    ``topology`` is a loaded topology or the path of a ``topology.yaml``; ``rules_dirs`` hold
    rule files that override the shipped pack. Raises :class:`~advisor.errors.AdvisorError`
    for bad input.

    >>> result = recommend("examples/us-eu/topology.yaml")
    >>> result.architecture
    'per_site_clusters'
    """
    return build_recommendation(analyse(topology, rules_dirs=rules_dirs))


def build_recommendation(analysis: Analysis) -> Recommendation:
    """The output contract of an analysis."""
    topology = analysis.topology
    chosen, options, findings = analysis.chosen, analysis.options, analysis.findings
    sizes = analysis.writeset_bytes
    inputs = lever_inputs(analysis)
    found: dict[str, list[verdict.Lever]] = {}
    for option in verdict.lever_subjects(options, findings):  # once, for both readers below
        found[option.architecture] = verdict.levers(option, findings, analysis.rules, inputs)
    inputs = replace(inputs, found=found)
    return Recommendation(
        topology=topology.name,
        architecture=chosen.architecture,
        groups=[list(g) for g in _with_arbitrators(chosen)],
        arbitrators=_arbitrators(chosen),
        summary=verdict.summary(chosen, options, findings, analysis.rules, inputs),
        findings=findings,
        links=[link_report(link, sizes) for link in analysis.links],
        hot_rows=_hot_rows(options),
        options=[_option_report(o, findings) for o in options],
        what_would_change=verdict.what_would_change(
            options, findings, analysis.rules, inputs, chosen
        ),
    )


def lever_inputs(analysis: Analysis) -> verdict.LeverInputs:
    """What the verdict's levers read of an analysis (:func:`advisor.verdict.levers`)."""

    def parameter(rule_id: str, name: str, default: float) -> float:
        rule = analysis.rules.get(rule_id)
        return float(rule.parameters.get(name, default)) if rule else default

    sizes = analysis.writeset_bytes
    return verdict.LeverInputs(
        topology=analysis.topology,
        links=analysis.links,
        lan_commit_p50_ms=_single_cluster_lan_p50_ms(analysis),
        worst_link_p50_ms=analysis.worst_link_p50_ms,
        writeset_p50_bytes=sizes.p50_bytes,
        writeset_p99_bytes=sizes.p99_bytes,
        max_utilisation=parameter("HOT-ROW-RATE", "max_utilisation", 1.0),
        queue_utilisation=parameter("HOT-ROW-QUEUE", "min_utilisation", 0.5),
        bandwidth_utilisation=parameter("BANDWIDTH", "max_utilisation", 0.7),
        commit_at=_commit_at(analysis),
    )


def _commit_at(analysis: Analysis) -> verdict.CommitAt:
    """An option's clusters' commit percentiles per writer site [ms] with every write-set
    percentile times ``factor`` and these provider options over the topology's: the engine
    run again on the grouping search's screen of draws, for the levers of the verdict. One
    evaluator serves every cluster of the option."""
    topology = analysis.topology

    def commit_at(
        option: Option, factor: float, provider_options: Mapping[str, OptionValue]
    ) -> dict[int, Mapping[str, Percentiles]]:
        workload = topology.workload
        given = (
            workload.writeset_bytes.given()
            if workload.writeset_bytes
            else {"p50": DEFAULT_WRITESET_BYTES.p50_bytes, "p99": DEFAULT_WRITESET_BYTES.p99_bytes}
        )
        scaled = SizePercentiles(**{k: max(v * factor, 1.0) for k, v in given.items()})
        galera_settings = topology.galera.model_copy(
            update={"provider_options": {**topology.galera.provider_options, **provider_options}}
        )
        changed = topology.model_copy(
            update={
                "workload": workload.model_copy(update={"writeset_bytes": scaled}),
                "galera": galera_settings,
            }
        )
        evaluator = Evaluator(
            changed, analysis.links, writeset_bytes=writeset_sizes(changed), draws=SCREEN_DRAWS
        )
        commits: dict[int, Mapping[str, Percentiles]] = {}
        for index, cluster in enumerate(option.clusters):  # those that commit
            if cluster.commit_ms:
                commits[index] = evaluator.cluster(cluster.sites).commit_by_site_ms
        return commits

    return commit_at


def _single_cluster_lan_p50_ms(analysis: Analysis) -> float:
    single = next((o for o in analysis.options if o.architecture == "single_cluster"), None)
    return analysis.lan_base_ms(single.clusters[0])["p50"] if single else 0.0


def _with_arbitrators(option: Option) -> list[tuple[str, ...]]:
    return [c.members for c in option.clusters]


def _arbitrators(option: Option) -> list[str]:
    return [c.arbitrator for c in option.clusters if c.arbitrator and c.arbitrator not in c.sites]


def _option_report(option: Option, findings: Sequence[Finding]) -> OptionReport:
    blocking = verdict.blockers(option, findings)
    throughput = None
    if option.throughput is not None:
        throughput = Throughput(
            commits_per_s=round(option.throughput.commits_per_s, 2),
            txn_latency_ms=option.throughput.txn_latency_ms,
            limited_by=option.throughput.limited_by,
            flow_control_paused_share=round(option.throughput.flow_control_paused_share, 4),
            cpu_throttled_share=round(option.throughput.cpu_throttled_share, 4),
        )
    conflicts = sum(row.conflicts_per_s for row in option.hot_rows) if option.hot_rows else None
    # Every single failure the requirement names leaves a cluster that keeps or takes the
    # writes (engine.failover); quorum alone for an option without a failover plan.
    plan = option.failover
    # A failover that loses an ever-growing backlog is no survival: null, with the reason.
    unbounded = verdict.unbounded_loss(option)
    survives: bool | None = (
        None
        if unbounded
        else plan.survives
        if plan is not None
        else not any(c.site_failures or c.node_failures for c in option.clusters)
    )
    rpo_ms = _finite(plan.rpo_ms) if plan is not None else None
    rto_s = _finite(plan.rto_s) if plan is not None else None
    at_risk_s = _finite(option.data_at_risk_s)
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
        data_at_risk_s=None if at_risk_s is None else round(at_risk_s, 7),  # 0.1 us, as ms
        failover_rpo_ms=None if rpo_ms is None else round(rpo_ms, 3),
        failover_rto_s=None if rto_s is None else round(rto_s, 1),
        data_at_risk_unbounded=option.data_at_risk_s is not None and at_risk_s is None,
        data_at_risk_reason=unbounded or None,
        manual_recovery=[
            f"{s.event}: fence it, then bootstrap {', '.join(s.taker_sites)} "
            "(pc.bootstrap=YES); nothing committed is lost but what "
            f"{', '.join(option.clusters[s.cluster].weights)} acknowledged in the instant "
            "before it failed"
            for s in (plan.bootstraps if plan is not None else ())
        ],
        weights={s: w for c in option.clusters for s, w in c.weights.items()},
        conflicts_per_s=None if conflicts is None else round(conflicts, 3),
        clusters=len(option.clusters),
        blockers=sorted({f.rule for f in blocking}),
        operations=ARCHITECTURES[option.architecture].operations,
    )


def _finite(value: float | None) -> float | None:
    """The output stays valid JSON: an unbounded figure (a channel that cannot keep up) is
    null, with OptionReport.data_at_risk_unbounded saying so."""
    return finite_or_none(value)


def _hot_rows(options: Sequence[Option]) -> list[HotRowReport]:
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
                write_latency_ms={a: r.write_ms_by_site for a, r in per.items()},
                max_updates_per_s_multi_writer={
                    a: round(bound, 2)
                    for a, r in per.items()
                    if (bound := r.multi_writer_bound_p50_per_s) is not None
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


def link_report(link: LinkEvidence, writeset_bytes: WritesetSizes) -> LinkReport:
    """The output contract of one site pair's evidence."""
    p50_size, p99_size = writeset_bytes.p50_bytes, writeset_bytes.p99_bytes
    estimate = link.estimate
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
        rtt_estimate_range_ms=(
            {"low": round(estimate.low_ms, 3), "high": round(estimate.high_ms, 3)}
            if estimate is not None
            else None
        ),
        rtt_estimate_basis=estimate.basis if estimate is not None else None,
    )


def _measured_summary(dist: RttDistribution) -> dict[str, float]:
    keys = ["p50", "p99", "max"] if dist.basis != "point" else ["p50"]
    return {k: round(v, 4) for k, v in dist.percentiles_ms(keys).items()}


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)
