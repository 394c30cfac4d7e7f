"""Predicates over evaluated options: one small function per rule, hits out.

Each yields :class:`~advisor.rules.RuleHit` with ``option`` set; the rule's YAML file holds
its severity, thresholds and message. See :mod:`advisor.checks` for the registry.
"""

from __future__ import annotations

__all__ = [
    "arbitrator_placed",
    "async_data_loss",
    "async_ownership",
    "bandwidth",
    "commit_latency_slo",
    "hot_row_conflicts",
    "hot_row_queue",
    "hot_row_rate",
    "multi_site_writes_async",
    "quorum_node_loss",
    "quorum_site_loss",
    "rtt_tail_instability",
    "send_window",
]

import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from advisor import galera
from advisor.provider_options import format_duration
from advisor.rules import RuleHit

if TYPE_CHECKING:
    from advisor.checks import Context

Params = Mapping[str, float]
_PROB = {"p50": 0.5, "p95": 0.95, "p99": 0.99, "p999": 0.999, "max": 1.0}


def _keys(values: Mapping[str, float]) -> str:
    return ", ".join(f"{k} {v:.1f} ms" for k, v in values.items())


def _clusters(ctx: Context) -> Iterator[tuple[Any, Any]]:
    """Every (option, cluster) pair under judgement."""
    for option in ctx.options:
        for cluster in option.clusters:
            yield option, cluster


def _cluster_hit(option: Any, cluster: Any, subject: str = "", **values: Any) -> RuleHit:
    sites = ", ".join(cluster.sites)
    values = {"option": option.architecture, "cluster": sites, **values}
    return RuleHit(subject or sites, values, option.architecture)


def commit_latency_slo(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A writer site's predicted commit latency breaks requirements.commit_latency_ms."""
    slo = ctx.topology.requirements.commit_latency_ms
    if slo is None:
        return
    limits = slo.given()
    for option, cluster in _clusters(ctx):
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


def _hot_rows(ctx: Context) -> Iterator[tuple[Any, Any]]:
    for option in ctx.options:
        for row in option.hot_rows:
            yield option, row


def hot_row_rate(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A hot row needs more updates per second than one per commit allows."""
    for option, row in _hot_rows(ctx):
        rho, _ = galera.hot_row_queue_ms(row.row.updates_per_s, row.commit_ms["p50"])
        if rho >= p["max_utilisation"]:
            yield RuleHit(row.row.name, _row_values(option, row, rho), option.architecture)


def hot_row_queue(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A hot row fits under its bound but waits in a queue for its lock."""
    for option, row in _hot_rows(ctx):
        rho, wait = galera.hot_row_queue_ms(row.row.updates_per_s, row.commit_ms["p50"])
        if p["min_utilisation"] <= rho < p["max_utilisation"]:
            values = {**_row_values(option, row, rho), "wait_ms": wait}
            yield RuleHit(row.row.name, values, option.architecture)


def _row_values(option: Any, row: Any, rho: float) -> dict[str, Any]:
    return {
        "row": row.row.name,
        "option": option.architecture,
        "owner": row.owner,
        "required_per_s": row.row.updates_per_s,
        "commit_p50_ms": row.commit_ms["p50"],
        "commit_p99_ms": row.commit_ms["p99"],
        "bound_p50_per_s": row.bound_p50_per_s,
        "bound_p99_per_s": row.bound_p99_per_s,
        "utilisation": rho,
    }


def hot_row_conflicts(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A row written on members at several sites of one cluster fails certification."""
    for option, row in _hot_rows(ctx):
        if row.conflicts_per_s > p["min_conflicts_per_s"]:
            writers = [w for w in row.writer_sites if w in option.clusters[row.cluster].sites]
            yield RuleHit(
                row.row.name,
                {
                    "row": row.row.name,
                    "option": option.architecture,
                    "writers": ", ".join(writers),
                    "conflicts_per_s": row.conflicts_per_s,
                    "required_per_s": row.row.updates_per_s,
                    "share": row.conflicts_per_s / row.row.updates_per_s,
                    "commit_p50_ms": row.commit_ms["p50"],
                },
                option.architecture,
            )


def multi_site_writes_async(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A row written at sites in different clusters would diverge over async replication."""
    for option, row in _hot_rows(ctx):
        if row.spans_clusters:
            routed = ", ".join(f"{site} +{rtt:.1f} ms" for site, rtt in row.routed_rtt_ms.items())
            yield RuleHit(
                row.row.name,
                {
                    "row": row.row.name,
                    "option": option.architecture,
                    "owner": row.owner,
                    "writers": ", ".join(row.writer_sites),
                    "routed": routed,
                },
                option.architecture,
            )


def async_ownership(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """Applications write in several clusters: every row needs one owner cluster."""
    for option in ctx.options:
        writing = [i for i, c in enumerate(option.clusters) if c.writers]
        if len(writing) > 1:
            groups = "; ".join(", ".join(option.clusters[i].sites) for i in writing)
            yield RuleHit(
                option.architecture,
                {
                    "option": option.architecture,
                    "clusters": len(writing),
                    "groups": groups,
                },
                option.architecture,
            )


def quorum_site_loss(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """Losing one site or link leaves the writers of a cluster without a primary component."""
    for option, cluster in _clusters(ctx):
        if cluster.site_failures:
            failures = "; ".join(f.describe() for f in cluster.site_failures)
            yield _cluster_hit(option, cluster, failures=failures, fix=_arbitrator_advice(ctx))


def quorum_node_loss(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """Losing a single node leaves no majority: a cluster needs three votes."""
    for option, cluster in _clusters(ctx):
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
    for option, cluster in _clusters(ctx):
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
    for option, cluster in _clusters(ctx):
        limit = cluster.window_limit_commits_per_s
        if len(cluster.members) < 2 or limit >= peak * p["headroom"]:
            continue
        needed = peak * p["headroom"] * cluster.safe_period_ms / 1000.0
        needed *= galera.writesets_per_message(ctx.writeset_p50_bytes)
        user = int(max(p["min_window"], 2 ** math.ceil(math.log2(max(needed, 1.0)))))
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


def async_data_loss(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """Losing a site loses what the asynchronous links had not shipped yet."""
    allowed = ctx.topology.requirements.max_data_loss_s
    for option in ctx.options:
        at_risk = option.data_at_risk_s
        if allowed is None or at_risk is None or at_risk <= allowed:
            continue
        worst = max(option.async_links, key=lambda link: link.lag_ms["p99"])
        yield RuleHit(
            option.architecture,
            {
                "option": option.architecture,
                "at_risk_s": at_risk,
                "allowed_s": allowed,
                "sites": "-".join(worst.sites),
                "lag_p50_ms": worst.lag_ms["p50"],
            },
            option.architecture,
        )


def rtt_tail_instability(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A link inside a cluster has a tail or loss that threatens membership or commits."""
    opts = ctx.provider_options
    keepalive_s = float(opts["evs.keepalive_period"])
    delayed_s = keepalive_s + float(opts["evs.delay_margin"])
    suspect_s = float(opts["evs.suspect_timeout"])
    for option in ctx.options:
        for link in {frozenset(x.sites): x for c in option.clusters for x in c.links}.values():
            rtt = link.rtt
            p50 = float(rtt.quantile(0.5))
            top = float(rtt.quantile(0.999 if rtt.basis == "samples" else 1.0))
            per_day = 86400 / keepalive_s
            delayed, delayed_bound = galera.silence_probability(rtt, delayed_s)
            suspect, _ = galera.silence_probability(rtt, suspect_s)
            delayed_per_day, suspect_per_day = delayed * per_day, suspect * per_day
            reasons = []
            if rtt.loss > p["max_loss"]:
                reasons.append(f"loss {rtt.loss:.2%}")
            if rtt.basis == "samples" and p50 > 0 and top / p50 > p["max_tail_ratio"]:
                reasons.append(f"p99.9 {top:.1f} ms is {top / p50:.1f}x the median")
            if delayed_per_day > p["max_delayed_per_day"]:
                reasons.append(
                    f"about {delayed_per_day:.2g} silences a day beyond "
                    f"keepalive + delay_margin ({delayed_s:g} s)"
                )
            if float(rtt.quantile(1.0)) >= keepalive_s * 1000:
                reasons.append("round trips beyond evs.keepalive_period")
            if reasons:
                yield RuleHit(
                    "-".join(link.sites),
                    {
                        "option": option.architecture,
                        "sites": "-".join(link.sites),
                        "reasons": "; ".join(reasons),
                        "rtt_p50_ms": p50,
                        "rtt_top_ms": top,
                        "loss": rtt.loss,
                        "delayed_per_day": delayed_per_day,
                        "suspect_per_day": suspect_per_day,
                        "delayed_bound_per_day": delayed_bound * per_day,
                        "keepalive": format_duration(max(keepalive_s, 3.0)),
                        "suspect": format_duration(max(suspect_s, 30.0)),
                        "inactive": format_duration(max(float(opts["evs.inactive_timeout"]), 60.0)),
                        "install": format_duration(max(float(opts["evs.install_timeout"]), 60.0)),
                    },
                    option.architecture,
                )
