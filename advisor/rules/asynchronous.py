"""Predicates of the rules between clusters: rows written in two clusters, ownership,
and what the asynchronous channels may lose.

Each predicate takes the :class:`~advisor.rules.context.Context` and the rule's parameters and
yields :class:`~advisor.rules.pack.RuleHit` with ``option`` set.
"""

from __future__ import annotations

__all__ = [
    "appliers_why",
    "async_apply_capacity",
    "async_data_loss",
    "async_ownership",
    "multi_site_writes_async",
]

import math
from collections.abc import Iterator, Mapping

from advisor.engine.metrics import AsyncLink
from advisor.rules.context import Context
from advisor.rules.pack import RuleHit
from advisor.units import ms_text

Params = Mapping[str, float]


def multi_site_writes_async(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A row written at sites in different clusters would diverge over async replication."""
    for option, row in ctx.hot_rows():
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


def async_data_loss(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """Losing a site loses what the asynchronous links had not shipped yet, more than allowed.

    Which remedy it needs (the hit's ``remedy``, ranked by advisor.verdict): a looser requirement
    when none is allowed, nearer sites when the one-way delay and apply alone are over the
    limit, else a faster path (more bandwidth, less traffic).
    """
    allowed = ctx.topology.requirements.max_data_loss_s
    for option in ctx.options:
        at_risk = option.data_at_risk_s
        if allowed is None or at_risk is None or at_risk <= allowed:
            continue
        worst = max(option.async_links, key=lambda link: link.lag_ms["p99"])
        parts = worst.lag_p99_parts_ms
        floor_ms = parts.get("one_way", worst.rtt_ms["p99"] / 2) + parts.get("apply", 0.0)
        if allowed == 0:
            kind = "requirement"
            fix = (
                "Asynchronous replication always loses what is in flight: only one synchronous "
                "Galera cluster across these sites loses nothing, or allow some loss "
                "(requirements.max_data_loss_s)."
            )
            short = "allow some data loss (max_data_loss_s) or keep one synchronous cluster"
        elif worst.apply_utilisation >= 1.0:
            kind = "decision"
            fix, short = _appliers_fix(worst)
        elif floor_ms / 1000.0 > allowed:
            kind = "move_sites"
            fix = (
                f"The one-way delay and the apply alone take {floor_ms:.1f} ms: only nearer "
                "sites, or one synchronous cluster, can meet the limit."
            )
            short = f"bring the sites of {'-'.join(worst.sites)} closer, or keep one cluster"
        else:
            kind = "network_path"
            fix = (
                f"The one-way delay and the apply take {floor_ms:.1f} ms; more bandwidth on "
                "the link, or less replicated traffic, brings the rest within the limit."
            )
            short = f"raise the bandwidth of link {'-'.join(worst.sites)}"
        yield RuleHit(
            option.architecture,
            {
                "option": option.architecture,
                "at_risk_s": _finite(at_risk),
                "at_risk_ms": _finite(at_risk * 1000.0),
                "at_risk": _ms(at_risk * 1000.0),
                "allowed_s": allowed,
                "sites": "-".join(worst.sites),
                "lag_p50_ms": _finite(worst.lag_ms["p50"]),
                "lag_p50": _ms(worst.lag_ms["p50"]),
                "why": (why := _lag_why(worst, parts)),
                "risk": _risk(at_risk * 1000.0, worst.lag_ms["p50"], why),
                "fix": fix,
                "fix_short": short,
            },
            option.architecture,
            kind,
        )


def _lag_why(link: AsyncLink, parts: Mapping[str, float]) -> str:
    """Why the channel lags as it does: its appliers short of the peak, else the lag's terms."""
    return appliers_why(link) or _why(link.rtt_ms["p99"], parts, link.utilisation)


def _risk(at_risk_ms: float, lag_p50_ms: float, why: str) -> str:
    """What a failover loses, in words: the p99 lag with its terms and the median's, or an
    ever-growing backlog with why (a median of it would say nothing more)."""
    if not math.isfinite(at_risk_ms):
        return f"an ever-growing backlog of commits ({why})"
    return f"{_ms(at_risk_ms)} of commits at p99 ({why}; p50 lag {_ms(lag_p50_ms)})"


def _finite(value: float) -> float | None:
    """A number for the findings' values, which stay valid JSON: None for an unbounded one."""
    return value if math.isfinite(value) else None


def _ms(value_ms: float) -> str:
    return f"about {value_ms:.1f} ms" if math.isfinite(value_ms) else "an ever-growing backlog"


def _why(rtt_p99_ms: float, parts: Mapping[str, float], busy: float) -> str:
    """The p99 lag's terms in words."""
    if not parts:
        return f"about half the {rtt_p99_ms:.1f} ms p99 round trip"
    if busy >= 1.0:
        return (
            f"the replicated bytes need {busy:.0%} of the link's bandwidth: the channel falls "
            "behind without bound"
        )
    queue = (
        f"{parts['queue']:.1f} ms queued behind others, the link {busy:.0%} busy with replication"
        if busy > 0
        else "no queue (the workload gives no replicated load)"
    )
    return (
        f"{parts['one_way']:.1f} ms to cross, half the {rtt_p99_ms:.1f} ms p99 round trip; "
        f"{parts['serialisation']:.1f} ms to serialise a p99 write set; {queue}; "
        f"{parts.get('apply_queue', 0.0):.1f} ms waiting for an applier; "
        f"{parts['apply']:.1f} ms to apply"
    )


def async_apply_capacity(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A channel's replica cannot apply the peak: too few workers, or a row whose updates
    apply in order faster than one commit of the receiving cluster allows."""
    for option in ctx.options:
        for link in option.async_links:
            if link.apply_utilisation < 1.0:
                continue
            fix, short = _appliers_fix(link)
            yield RuleHit(
                "-".join(link.sites),
                {
                    "option": option.architecture,
                    "sites": "-".join(link.sites),
                    "why": appliers_why(link),
                    "fix": fix,
                    "fix_short": short,
                },
                option.architecture,
                "decision",
            )


def appliers_why(link: AsyncLink) -> str:
    """Why the replica of ``link`` falls behind, in words; empty when it keeps up."""
    apply = f"{ms_text(link.apply_ms)} an apply (a commit in the receiving cluster)"
    if link.in_order_busy >= 1.0:
        return (
            f"row {link.in_order_row} is updated {link.in_order_per_s:g} times a second, and "
            f"its updates apply one after another at {apply}: at most "
            f"{1000.0 / link.apply_ms:.0f} a second"
        )
    if link.appliers_busy >= 1.0:
        return (
            f"{link.commits_per_s:.0f} commits/s at {apply} keep "
            f"{link.offered_appliers:.1f} appliers busy all the time; it "
            f"runs {link.applier_threads}{_dependencies_bound(link)}"
        )
    return ""


def _dependencies_bound(link: AsyncLink) -> str:
    """Words on the dependencies' bound when it holds the appliers back; else empty."""
    if link.working_threads >= link.applier_threads:
        return ""
    return (
        f", of which the write sets' dependencies (workload.cert_deps_distance) let about "
        f"{link.working_threads:g} work at once"
    )


def _appliers_fix(link: AsyncLink) -> tuple[str, str]:
    if link.in_order_busy >= 1.0:
        return (
            "More appliers do not help: only a receiving cluster with faster commits (its "
            "nodes in one site), fewer updates of the row, or keeping the row's writers in "
            "one synchronous cluster do.",
            f"keep the writers of row {link.in_order_row} in one Galera cluster",
        )
    if link.applier_threads_needed is None and link.cert_deps_distance is not None:
        return (
            "More appliers do not help: the write sets' dependencies "
            f"(workload.cert_deps_distance) let about {link.cert_deps_distance:g} apply at "
            "once, "
            "whatever the replication; receiving commits must get faster (faster nodes at "
            f"{link.apply_site or 'the replica'}, or a replica cluster in one site) or the "
            "channel carry less.",
            "apply the channel in a cluster with faster commits",
        )
    if link.applier_threads_needed is None:
        return (
            "Even the design's most appliers leave it behind: receiving commits must get "
            "faster (a replica cluster in one site) or the channel carry less.",
            "apply the channel in a cluster with faster commits",
        )
    return (
        f"Run {link.applier_threads_needed} appliers (replication.applier_threads, set in the "
        "generated async-replication file as slave_parallel_threads or "
        "replica_parallel_workers).",
        f"set replication.applier_threads to {link.applier_threads_needed}",
    )
