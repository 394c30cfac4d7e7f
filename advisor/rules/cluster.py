"""Predicates of the cluster rules: one Galera cluster of an option at a time (commit
latency, quorum, the arbitrator, send windows, tail behaviour of its links, bandwidth).

Each predicate takes the :class:`~advisor.rules.context.Context` and the rule's parameters and
yields :class:`~advisor.rules.pack.RuleHit` with ``option`` set.
"""

from __future__ import annotations

__all__ = [
    "arbitrator_placed",
    "bandwidth",
    "commit_latency_slo",
    "quorum_node_loss",
    "quorum_site_loss",
    "rtt_tail_instability",
    "send_window",
    "tail_limits",
]

from collections.abc import Iterator, Mapping
from typing import Any

from advisor.engine.metrics import ClusterEval, Option
from advisor.model import galera, membership
from advisor.model.provider_options import format_duration
from advisor.rules.context import Context
from advisor.rules.pack import RuleHit

Params = Mapping[str, float]


def _keys(values: Mapping[str, float]) -> str:
    return ", ".join(f"{k} {v:.1f} ms" for k, v in values.items())


def _cluster_hit(option: Option, cluster: ClusterEval, subject: str = "", **values: Any) -> RuleHit:
    sites = ", ".join(cluster.sites)
    values = {"option": option.architecture, "cluster": sites, **values}
    return RuleHit(subject or sites, values, option.architecture)


def commit_latency_slo(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A writer site's predicted commit latency breaks requirements.commit_latency_ms."""
    slo = ctx.topology.requirements.commit_latency_ms
    if slo is None:
        return
    limits = slo.given()
    for option, cluster in ctx.clusters():
        for site in cluster.writers:
            predicted = cluster.commit_percentiles(site)
            broken = {k: predicted[k] for k, limit in limits.items() if predicted[k] > limit}
            if broken:
                yield RuleHit(
                    site,
                    {
                        "site": site,
                        "option": option.architecture,
                        "predicted": _keys(broken),
                        "required": _keys({k: limits[k] for k in broken}),
                        "commit_p50_ms": predicted["p50"],
                        "commit_p99_ms": predicted["p99"],
                    },
                    option.architecture,
                )


def quorum_site_loss(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """Losing one site or link leaves the writers of a cluster without a primary component."""
    for option, cluster in ctx.clusters():
        if cluster.site_failures:
            failures = "; ".join(f.describe() for f in cluster.site_failures)
            yield _cluster_hit(option, cluster, failures=failures, fix=_arbitrator_advice(ctx))


def quorum_node_loss(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """Losing a single node leaves no majority: a cluster needs three votes."""
    for option, cluster in ctx.clusters():
        if cluster.node_failures:
            failures = "; ".join(f.describe() for f in cluster.node_failures)
            yield _cluster_hit(option, cluster, failures=failures)


def _arbitrator_advice(ctx: Context) -> str:
    if not any(site.arbitrator for site in ctx.topology.sites):
        return (
            "no site may host an arbitrator: mark a third site with arbitrator: true so a "
            "garbd there can break the tie"
        )
    return "no site marked arbitrator: true restores a majority for every single failure"


def arbitrator_placed(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """The plan puts a garbd at a site to keep quorum; say where and what it costs."""
    for option, cluster in ctx.clusters():
        if cluster.arbitrator:
            yield _cluster_hit(
                option,
                cluster,
                cluster.arbitrator,
                site=cluster.arbitrator,
                cost_ms=cluster.arbitrator_cost_ms,
            )


def send_window(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """The send windows cap commits per second below the peak at this round trip."""
    commits = ctx.topology.workload.commits_per_s
    if commits is None:
        return
    peak = commits.design_value
    for option, cluster in ctx.clusters():
        limit = cluster.window_limit_commits_per_s
        if len(cluster.members) < 2 or limit >= peak * p["headroom"]:
            continue
        user = galera.user_send_window_for(
            peak * p["headroom"],
            cluster.safe_period_ms,
            ctx.writeset_p50_bytes,
            int(p["min_window"]),
        )
        yield _cluster_hit(
            option,
            cluster,
            limit_per_s=limit,
            peak_per_s=peak,
            window=cluster.user_send_window,
            safe_period_ms=cluster.safe_period_ms,
            user_send_window=user,
            send_window=2 * user,
        )


def _replicated_mbps(ctx: Context) -> tuple[float, str] | None:
    workload = ctx.topology.workload
    if workload.replicated_bytes_per_s is not None:
        return workload.replicated_bytes_per_s.design_value * 8 / 1e6, "peak replicated bytes"
    if workload.commits_per_s is not None:
        mbps = workload.commits_per_s.design_value * ctx.writeset_p50_bytes * 8 / 1e6
        return mbps, "peak commits x p50 write set (estimated)"
    return None


def bandwidth(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """Peak replication traffic does not fit a link inside a cluster or between clusters."""
    traffic = _replicated_mbps(ctx)
    if traffic is None:
        return
    mbps, basis = traffic
    evaluator_links = {frozenset(link.sites): link for link in ctx.links}
    for option in ctx.options:
        carried = [link for cluster in option.clusters for link in cluster.links]
        carried += [evaluator_links[frozenset(a.sites)] for a in option.async_links]
        for link in carried:
            if link.bandwidth_mbps and mbps > link.bandwidth_mbps * p["max_utilisation"]:
                yield RuleHit(
                    "-".join(link.sites),
                    {
                        "option": option.architecture,
                        "sites": "-".join(link.sites),
                        "traffic_mbps": mbps,
                        "bandwidth_mbps": link.bandwidth_mbps,
                        "basis": basis,
                        "utilisation": mbps / link.bandwidth_mbps,
                    },
                    option.architecture,
                )


def rtt_tail_instability(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A link inside a cluster has a tail or loss that threatens membership or commits."""
    opts = ctx.provider_options
    keepalive_s = float(opts["evs.keepalive_period"])
    suspect_s = float(opts["evs.suspect_timeout"])
    limits = tail_limits(p)
    for option in ctx.options:
        for link in {frozenset(x.sites): x for c in option.clusters for x in c.links}.values():
            risk = membership.tail_risk(
                link.rtt, keepalive_s, float(opts["evs.delay_margin"]), suspect_s, limits
            )
            if risk.reasons:
                yield RuleHit(
                    "-".join(link.sites),
                    {
                        "option": option.architecture,
                        "sites": "-".join(link.sites),
                        "reasons": "; ".join(risk.reasons),
                        "rtt_p50_ms": risk.rtt_p50_ms,
                        "rtt_top_ms": risk.rtt_top_ms,
                        "loss": risk.loss,
                        "delayed_per_day": risk.delayed_per_day,
                        "suspect_per_day": risk.suspect_per_day,
                        "delayed_bound_per_day": risk.delayed_bound_per_day,
                        "keepalive": format_duration(max(keepalive_s, 3.0)),
                        "suspect": format_duration(max(suspect_s, 30.0)),
                        "inactive": format_duration(max(float(opts["evs.inactive_timeout"]), 60.0)),
                        "install": format_duration(max(float(opts["evs.install_timeout"]), 60.0)),
                    },
                    option.architecture,
                )


def tail_limits(p: Params) -> membership.TailLimits:
    """RTT-TAIL-INSTABILITY's parameters as the model's limits."""
    return membership.TailLimits(p["max_loss"], p["max_tail_ratio"], p["max_delayed_per_day"])
