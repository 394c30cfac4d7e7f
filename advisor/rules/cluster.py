"""Predicates of the cluster rules: one Galera cluster of an option at a time (commit
latency, quorum, the arbitrator, send windows, tail behaviour of its links, bandwidth).

Each predicate takes the :class:`~advisor.rules.context.Context` and the rule's parameters and
yields :class:`~advisor.rules.pack.RuleHit` with ``option`` set, but for CPU-QUOTA-SLICE: a
property of a site's nodes under every option, it is said once, under none.
"""

from __future__ import annotations

__all__ = [
    "arbitrator_placed",
    "bandwidth",
    "cluster_timers",
    "commit_latency_slo",
    "cpu_quota",
    "cpu_quota_bursts",
    "cpu_quota_slice",
    "failover_node_loss",
    "failover_site_loss",
    "flow_control",
    "given_options",
    "link_tail_risk",
    "quorum_node_loss",
    "quorum_site_loss",
    "rounds_need",
    "rtt_tail_instability",
    "send_window",
    "send_window_need",
    "window_advice",
    "writeset_rounds",
]

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from advisor.engine import failover
from advisor.engine.evidence import LinkEvidence
from advisor.engine.failover import EventKind, Survival
from advisor.engine.metrics import ClusterEval, Option
from advisor.model import flow_control as fc
from advisor.model import membership, pipeline, quorum
from advisor.model.cpu_quota import CpuQuota
from advisor.model.provider_options import MAX_WINDOW, effective_options, format_duration
from advisor.model.rtt import RttDistribution
from advisor.rules.context import Context
from advisor.rules.pack import RuleHit

Params = Mapping[str, float]


def _keys(values: Mapping[str, float]) -> str:
    return ", ".join(f"{k} {v:.1f} ms" for k, v in values.items())


def _cluster_hit(
    option: Option,
    cluster: ClusterEval,
    subject: str = "",
    *,
    remedy: str | None = None,
    **values: Any,
) -> RuleHit:
    sites = ", ".join(cluster.sites)
    values = {"option": option.architecture, "cluster": sites, **values}
    return RuleHit(subject or sites, values, option.architecture, remedy)


def commit_latency_slo(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A writer site's predicted commit latency breaks requirements.commit_latency_ms: its
    commit at the cluster's writer with the round trip to it, or an update of a hot row,
    which also waits for the row's lock."""
    slo = ctx.topology.requirements.commit_latency_ms
    if slo is None:
        return
    limits = slo.given()
    for option, cluster in ctx.clusters():
        for site in cluster.writers:
            hit = _slo_hit(option, site, site, cluster.commit_percentiles(site), limits)
            if hit is not None:
                yield hit
    for option, row in ctx.hot_rows():
        if row.write_latency_ms is None:
            continue  # an unbounded queue: HOT-ROW-RATE's finding
        far = max(row.routed_rtt_ms, key=lambda w: row.routed_rtt_ms[w], default=row.owner)
        where = f"{far}, updating {row.row.name} (its lock's queue included)"
        hit = _slo_hit(option, row.row.name, where, row.write_latency_ms, limits)
        if hit is not None:
            yield hit


def _slo_hit(
    option: Option,
    subject: str,
    where: str,
    predicted: Mapping[str, float],
    limits: Mapping[str, float],
) -> RuleHit | None:
    broken = {k: predicted[k] for k, limit in limits.items() if predicted[k] > limit}
    if not broken:
        return None
    values = {
        "site": where,
        "option": option.architecture,
        "predicted": _keys(broken),
        "required": _keys({k: limits[k] for k in broken}),
        "commit_p50_ms": predicted["p50"],
        "commit_p99_ms": predicted["p99"],
    }
    return RuleHit(subject, values, option.architecture)


def _unsurvived(
    option: Option, index: int, failures: tuple[quorum.Failure, ...], kinds: tuple[EventKind, ...]
) -> list[quorum.Failure]:
    """The quorum failures of a cluster that no cluster survives: no other cluster can take
    the writes over (engine.failover). Without a failover plan, every one of them."""
    if option.failover is None:
        return list(failures)
    lost = {
        s.event
        for s in option.failover.of(index, kinds)
        if s.kept_by in ("nothing", "bootstrap")  # an operator's bootstrap: writes wait
    }
    return [f for f in failures if f.event in lost]


def _failed_over(
    option: Option, index: int, failures: tuple[quorum.Failure, ...], kinds: tuple[EventKind, ...]
) -> list[tuple[quorum.Failure, Survival]]:
    """The quorum failures of a cluster whose writes another cluster takes over."""
    if option.failover is None:
        return []
    taken = {s.event: s for s in option.failover.of(index, kinds) if s.kept_by == "failover"}
    return [(f, taken[f.event]) for f in failures if f.event in taken]


def quorum_site_loss(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """Losing one site or link leaves the writers of a cluster without a primary component,
    and no other cluster can take the writes over."""
    for option in ctx.options:
        for index, cluster in enumerate(option.clusters):
            unsurvived = _unsurvived(option, index, cluster.site_failures, ("site", "link"))
            if unsurvived:
                fix, kind = _tie_breaker(ctx, cluster)
                yield _cluster_hit(
                    option,
                    cluster,
                    failures="; ".join(f.describe() for f in unsurvived),
                    fix=fix + _manual_recovery(cluster),
                    remedy=kind,
                )


def quorum_node_loss(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """Losing a single node leaves no majority, and no other cluster can take the writes."""
    for option in ctx.options:
        for index, cluster in enumerate(option.clusters):
            unsurvived = _unsurvived(option, index, cluster.node_failures, ("node",))
            if unsurvived:
                failures = "; ".join(f.describe() for f in unsurvived)
                yield _cluster_hit(option, cluster, failures=failures, remedy="node")


def failover_node_loss(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A single node's loss stops a cluster; its writes fail over to another cluster."""
    for option in ctx.options:
        for index, cluster in enumerate(option.clusters):
            taken = _failed_over(option, index, cluster.node_failures, ("node",))
            if taken:
                yield _failover_hit(option, cluster, taken)


def failover_site_loss(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A site's loss or a link's cut stops a cluster spanning sites; its writes fail over."""
    for option in ctx.options:
        for index, cluster in enumerate(option.clusters):
            taken = _failed_over(option, index, cluster.site_failures, ("site", "link"))
            if taken:
                fix, _ = _tie_breaker(ctx, cluster)
                yield _failover_hit(option, cluster, taken, fix=fix)


def _failover_hit(
    option: Option,
    cluster: ClusterEval,
    taken: list[tuple[quorum.Failure, Survival]],
    **extra: Any,
) -> RuleHit:
    worst = max((s for _, s in taken), key=lambda s: s.rpo_ms)
    timing = option.failover.timing if option.failover else failover.DEFAULT_TIMING
    taker = ", ".join(worst.taker_sites)
    return _cluster_hit(
        option,
        cluster,
        failures="; ".join(f.describe() for f, _ in taken),
        taker=taker if worst.taker is not None else f"{taker} (outside this group)",
        channel="-".join(worst.channel or ()),
        rpo_ms=_finite(worst.rpo_ms),
        rto_s=_finite(worst.rto_s),
        rpo=f"about {worst.rpo_ms:.1f} ms" if math.isfinite(worst.rpo_ms) else _UNBOUNDED,
        rto=f"up to {worst.rto_s:.0f} s" if math.isfinite(worst.rto_s) else "until it catches up",
        detection_s=timing.detection_s,
        promotion_s=timing.promotion_s,
        **extra,
    )


_UNBOUNDED = "an ever-growing backlog (the channel cannot keep up with the peak)"


def _finite(value: float) -> float | None:
    """A number for the findings' values, which stay valid JSON: None for an unbounded one."""
    return value if math.isfinite(value) else None


def _manual_recovery(cluster: ClusterEval) -> str:
    """The weighted two-site cluster's other way out, in words: a person's bootstrap."""
    if not cluster.weights:
        return ""
    ((primary, weight),) = cluster.weights.items()
    others = ", ".join(cluster.bootstrap_sites)
    return (
        f". Without one, the design weights {primary} (pc.weight {weight} a node), so losing "
        f"{others} or the link leaves {primary} running; losing {primary} stops writes until "
        f"an operator fences it and bootstraps {others} (pc.bootstrap=YES, the design's "
        f"bootstrap runbook), losing nothing committed but what {primary} acknowledged in the "
        "instant before it failed"
    )


def _tie_breaker(ctx: Context, cluster: ClusterEval) -> tuple[str, str]:
    """What would give the cluster a majority after every single failure, and which remedy
    that is: a garbd at a site the topology already has (``node``), or a new witness site."""
    found = _existing_site_for_garbd(ctx, cluster)
    if found is not None:
        site, rtt_ms = found
        cost = (
            f"; it then joins every commit, {rtt_ms:.1f} ms (RTT p50) from the farthest site"
            if rtt_ms is not None
            else ""
        )
        return (
            f"mark site {site} arbitrator: true, so that a garbd there breaks the tie{cost}",
            "node",
        )
    if not any(s.arbitrator for s in ctx.topology.sites):
        return (
            "no site may host an arbitrator: mark a third site with arbitrator: true (a new "
            "witness site) so that a garbd there can break the tie",
            "witness_site",
        )
    return (
        "no site marked arbitrator: true restores a majority for every single failure, nor "
        "would a garbd at another listed site: a new witness site is needed",
        "witness_site",
    )


def _existing_site_for_garbd(ctx: Context, cluster: ClusterEval) -> tuple[str, float | None] | None:
    """A listed site outside the cluster where one garbd (pc.weight 1) would leave a majority
    after every single failure (advisor.model.quorum), the nearest first (worst RTT p50 to the
    cluster's sites, where the evidence has it), with that RTT [ms]; None if there is none."""
    sites = {s.name: s for s in ctx.topology.sites}
    members = {name: [sites[name].weight] * sites[name].nodes for name in cluster.sites}
    survive_site = ctx.topology.requirements.survive == "site"
    rtt = {frozenset(link.sites): link for link in ctx.links}
    fixes: list[tuple[float, int, str, float | None]] = []
    for order, candidate in enumerate(ctx.topology.sites):
        if candidate.name in members:
            continue
        with_garbd = {**members, candidate.name: [1]}
        weights = {name: float(sum(w)) for name, w in with_garbd.items()}
        site_failures = quorum.site_failures(weights, set(cluster.writers)) if survive_site else []
        if site_failures or quorum.node_loss_failures(with_garbd):
            continue
        pairs = [rtt.get(frozenset((candidate.name, s))) for s in cluster.sites]
        known = [float(link.rtt.quantile(0.5)) for link in pairs if link is not None]
        worst = max(known) if len(known) == len(pairs) else None
        fixes.append((math.inf if worst is None else worst, order, candidate.name, worst))
    if not fixes:
        return None
    _, _, name, worst = min(fixes)
    return name, worst


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


WINDOWS = ("evs.user_send_window", "evs.send_window")


def send_window_need(
    cluster: ClusterEval, send_window: int, peak_per_s: float, p: Params
) -> int | None:
    """SEND-WINDOW's judgement and sizing: the ``evs.send_window`` that carries the peak times
    the rule's headroom at the cluster's commit round (:func:`pipeline.send_window_for`), when
    ``send_window`` does not; None when it does, or the cluster has one site.

    The analysis calls it to choose the windows the design applies and predicts with; the rule,
    to say what the windows in force cost."""
    if len(cluster.members) < 2:
        return None
    wanted = peak_per_s * p["headroom"]
    period = cluster.safe_period_ms
    per_message = cluster.writesets_per_message
    if pipeline.window_limit_commits_per_s(send_window, period, per_message) >= wanted:
        return None
    needed = pipeline.send_window_for(wanted, period, per_message, int(p["min_window"]))
    return min(needed, MAX_WINDOW)  # Galera admits no more; the finding says so


@dataclass(frozen=True)
class Rounds:
    """What a p99 write set costs in commit paths at some windows (WRITESET-ROUNDS)."""

    messages: int  # EVS messages of the p99 write set
    paths: int  # commit paths before its last message leaves, plus the one it travels
    reply_ms: float  # the wait for a first reply, when the last message waits for one [ms]
    path_ms: float  # one commit path [ms]
    extra_ms: float  # beyond one commit path [ms]
    user_send_window: int  # the windows that send every message at once
    send_window: int


def rounds_need(
    cluster: ClusterEval, writeset_bytes: float, user_window: int, send_window: int, p: Params
) -> Rounds | None:
    """WRITESET-ROUNDS' judgement and sizing: a write set of ``writeset_bytes`` at these
    windows costs at least ``min_extra_ms`` beyond one commit path; the windows that send it
    in one (the user window the message count rounded up to a power of two, the send window
    twice that). None when it costs less, or the cluster has one site."""
    if len(cluster.members) < 2:
        return None
    messages = int(pipeline.fragment_count(writeset_bytes, cluster.fragment_bytes))
    rounds, reply = pipeline.send_rounds([messages], user_window, send_window)
    path = cluster.safe_period_ms
    # Beyond one path: the extra paths, and the wait for the nearest member's reply.
    reply_ms = max(cluster.first_reply_ms.values(), default=0.0) if bool(reply[0]) else 0.0
    extra_ms = float(rounds[0]) * path + reply_ms
    if extra_ms < p["min_extra_ms"]:
        return None
    user = 2 ** math.ceil(math.log2(messages))  # every fragment leaves at once
    send = min(2 * user, MAX_WINDOW)  # Galera admits no more
    return Rounds(messages, int(rounds[0]) + 1, reply_ms, path, extra_ms, min(user, send), send)


def given_options(ctx: Context) -> dict[str, Any]:
    """The options in force before the design: the flavour's defaults with topology.yaml's."""
    galera = ctx.topology.galera
    return effective_options(galera.flavor, galera.provider_options)


def window_advice(
    ctx: Context, cluster: ClusterEval, needed: Mapping[str, int]
) -> tuple[dict[str, int], str]:
    """The windows a finding advises and what the design does with them: the design's own
    (the cluster's, which its predictions use: advisor.analysis) where it changed a window, the
    finding's ``needed`` where topology.yaml pins it (kept as given, and said so). Returns
    the windows and the words on the design, `` (the design applies them ...)`` or empty."""
    given = given_options(ctx)
    pinned = ctx.topology.galera.provider_options
    shown: dict[str, int] = {}
    applied, held = [], []
    designed = {"evs.user_send_window": cluster.user_window, "evs.send_window": cluster.send_window}
    for key in WINDOWS:
        design = int(designed[key])
        if key in pinned:
            shown[key] = max(int(needed[key]), int(given[key]))
            if shown[key] != design:
                held.append(f"{key}={design}")
        else:
            shown[key] = design if design != int(given[key]) else int(needed[key])
            if design != int(given[key]):
                applied.append(key)
    shown["evs.user_send_window"] = min(shown["evs.user_send_window"], shown["evs.send_window"])
    notes = []
    if applied:
        them = "them" if len(applied) == 2 else "it"
        notes.append(
            f"this option's configuration applies {'them' if len(applied) == 2 else applied[0]}"
            f" and its predictions use {them}"
        )
    if held:
        notes.append(
            f"galera.provider_options in topology.yaml pins {'; '.join(held)}: the design keeps "
            f"{'it' if len(held) == 1 else 'them'} as given and its predictions use "
            f"{'it' if len(held) == 1 else 'them'}; change {'it' if len(held) == 1 else 'them'} "
            "there"
        )
    return shown, f" ({'; '.join(notes)})" if notes else ""


def send_window(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """The send windows in force (the flavour's defaults, or topology.yaml's) cap commits per
    second below the peak at the commit round of the design."""
    commits = ctx.topology.workload.commits_per_s
    if commits is None:
        return
    peak = commits.design_value
    given = given_options(ctx)
    window = int(given["evs.send_window"])
    for option, cluster in ctx.clusters():
        send = send_window_need(cluster, window, peak, p)
        if send is None:
            continue
        shown, design = window_advice(
            ctx, cluster, {"evs.user_send_window": max(send // 2, 1), "evs.send_window": send}
        )
        if send == MAX_WINDOW:
            at_most = pipeline.window_limit_commits_per_s(
                send, cluster.safe_period_ms, cluster.writesets_per_message
            )
            design += (
                f"; {MAX_WINDOW} is the largest window Galera admits (1 to 1,000,000, a power "
                f"of two), and even it carries only about {at_most:.0f} commits/s: spread the "
                "writes over clusters or shorten the round trip"
            )
        yield _cluster_hit(
            option,
            cluster,
            limit_per_s=pipeline.window_limit_commits_per_s(
                window, cluster.safe_period_ms, cluster.writesets_per_message
            ),
            peak_per_s=peak,
            window=window,
            writesets_per_message=cluster.writesets_per_message,
            safe_period_ms=cluster.safe_period_ms,
            needed_send_window=send,
            user_send_window=shown["evs.user_send_window"],
            send_window=shown["evs.send_window"],
            design=design,
        )


def flow_control(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A member slower to apply than the writer caps the cluster's commits below the peak by
    flow control (:mod:`advisor.model.flow_control`): which site, its capacity, the share of
    time paused at the peak, and the remedies ranked."""
    commits = ctx.topology.workload.commits_per_s
    if commits is None:
        return
    peak = commits.design_value
    for option, cluster in ctx.clusters():
        site = cluster.apply_site
        capacity = cluster.apply_capacity_per_s
        pause = fc.pause_share(peak, capacity)
        if site is None or cluster.writer_site is None or pause <= p["max_pause_share"]:
            continue
        assert cluster.slow_member is not None  # a slower site has one (engine.clusters)
        members, upper = cluster.fc_members, cluster.slow_member.upper
        deps = ctx.topology.workload.cert_deps_distance
        capped = _capped_sites(cluster, peak) or [site]
        # no more apply at once than the dependencies allow (fc.apply_capacity_per_s)
        at_work = fc.appliers_at_work(cluster.applier_threads, deps)
        max_apply_ms = at_work * 1000.0 / peak  # the apply at which they carry the peak
        remedies, short = _flow_control_remedies(cluster, capped, peak, deps, max_apply_ms)
        others = [s for s in capped if s != site]
        yield _cluster_hit(
            option,
            cluster,
            site,
            site=site,
            capacity_per_s=capacity,
            applier_threads=cluster.applier_threads,
            appliers_at_work=at_work,
            apply_ms=cluster.apply_ms,
            peak_per_s=peak,
            pause_share=pause,
            pause_pct=100.0 * pause,
            fc_upper=upper,
            fc_scaling=(
                f", gcs.fc_single_primary: not scaled by its {members} members"
                if cluster.fc_single_primary
                else f" in a cluster of {members} members"
            ),
            lag_ms=upper * 1000.0 / capacity,
            members=members,
            threads_needed=_threads_needed(peak, cluster.apply_ms, deps),
            **_known(cert_deps_distance=deps),
            max_apply_ms=max_apply_ms,
            remedies=remedies,
            remedy_short=short,
            capped_sites=", ".join(capped),  # in site order
            also=f" (as are the nodes at {', '.join(others)})" if others else "",
        )


def _known(**values: float | None) -> dict[str, Any]:
    """The values that are known: a finding's optional inputs left out when not given."""
    return {key: value for key, value in values.items() if value is not None}


def _threads_needed(peak_per_s: float, apply_ms: float, deps: float | None = None) -> int:
    """Appliers that carry the peak at one apply's cost, doubled for bursts as the design
    sizes them, no more than the dependencies let work at once
    (:func:`advisor.model.flow_control.design_applier_threads`)."""
    return fc.design_applier_threads(peak_per_s, apply_ms, deps)


def _more_appliers(cluster: ClusterEval, site: str, peak: float, deps: float | None) -> str:
    """FLOW-CONTROL's first remedy: the applier threads that carry the peak, bounded by
    ``workload.cert_deps_distance`` when it is known (threads beyond it add no capacity:
    :func:`advisor.model.flow_control.useful_applier_threads`)."""
    wanted = _threads_needed(peak, cluster.apply_ms)
    spelling = "wsrep_applier_threads on PXC 8.0.26+"
    where = "only where the apply waits (disk flushes, not a starved CPU)"
    if deps is None:
        return (
            f"more applier threads on {site}: wsrep_slave_threads={wanted} ({spelling}; Little's "
            f"law at {cluster.apply_ms:g} ms, doubled for bursts), useful only up to the "
            f"wsrep_cert_deps_distance the running cluster shows and {where}"
        )
    useful = fc.useful_applier_threads(deps) or 1
    if wanted <= useful:
        return (
            f"more applier threads on {site}: wsrep_slave_threads={wanted} ({spelling}; Little's "
            f"law at {cluster.apply_ms:g} ms, doubled for bursts), within the "
            f"wsrep_cert_deps_distance of {deps:g} (workload.cert_deps_distance), {where}"
        )
    if useful <= cluster.applier_threads:
        return (
            f"no more applier threads: the wsrep_cert_deps_distance of {deps:g} "
            f"(workload.cert_deps_distance) lets about {useful} write sets apply at once and "
            f"the design runs {cluster.applier_threads} already; more add no capacity"
        )
    reach = _dependencies_reach(cluster, deps)
    return (
        f"applier threads on {site} up to wsrep_slave_threads={useful} ({spelling}), the "
        f"most the wsrep_cert_deps_distance of {deps:g} (workload.cert_deps_distance) lets "
        f"work at once: about {reach:.0f} write sets/s against the peak of {peak:g}/s "
        f"({wanted} would be sized without that bound, doubled for bursts), {where}"
    )


def _limited_clusters(
    ctx: Context,
) -> Iterator[tuple[Option, ClusterEval, CpuQuota, str, float]]:
    """Each option's clusters with a member held to a CPU limit: the option, the cluster,
    the limit that binds, its site and the workload's peak [1/s]; none without a peak."""
    commits = ctx.topology.workload.commits_per_s
    if commits is None:
        return
    for option, cluster in ctx.clusters():
        quota, site = cluster.cpu_quota, cluster.quota_site
        if quota is not None and site is not None:
            yield option, cluster, quota, site, commits.design_value


def _quota_values(cluster: ClusterEval, quota: CpuQuota, site: str, peak: float) -> dict[str, Any]:
    """The values CPU-QUOTA and CPU-QUOTA-BURSTS both state: the site, its limit, period and
    stall, the write sets a period's budget takes in and the rate it keeps up with, the
    writer sending at most its messages a second, and the peak."""
    return {
        "site": site,
        "limit_cores": quota.limit_cores,
        "period_ms": quota.period_ms,
        "writesets_per_period": quota.writesets_per_period(cluster.writer_messages_per_s),
        "capacity_per_s": cluster.quota_capacity_per_s,
        "peak_per_s": peak,
        "stall_ms": quota.stall_ms,
    }


def cpu_quota(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A member held to a CPU limit keeps up with fewer write sets than the peak: every
    commit of its cluster waits while the member is throttled (:mod:`advisor.model.cpu_quota`):
    which site, its limit and cost, the rate it keeps up with, and the remedies ranked."""
    for option, cluster, quota, site, peak in _limited_clusters(ctx):
        capacity = cluster.quota_capacity_per_s
        if peak <= p["max_quota_share"] * capacity:
            continue
        messages = min(peak, cluster.writer_messages_per_s)
        spends = f"{quota.cpu_ms_per_writeset:g} ms of CPU on each write set"
        if quota.cpu_ms_per_message > 0:
            spends += (
                f" and {quota.cpu_ms_per_message:g} ms on each of the writer's messages "
                f"(about {messages:.0f}/s at the peak)"
            )
        needed = quota.cpu_ms_per_s(peak, messages) / 1000.0
        yield _cluster_hit(
            option,
            cluster,
            site,
            **_quota_values(cluster, quota, site, peak),
            **_limit_to_set(quota, needed, "its write sets and messages need"),
            cpu_ms_per_writeset=quota.cpu_ms_per_writeset,
            cpu_ms_per_message=quota.cpu_ms_per_message,
            messages_per_s=messages,
            spends=spends,
            budget_ms=quota.budget_ms,
            needed_cores=needed,
        )


def cpu_quota_bursts(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """Below what a member's CPU limit keeps up with on average, the periods that bring more
    write sets than its budget takes in stall the rest: a warning when more than
    ``max_stalled_share`` of the commits at the peak wait for the next period
    (:meth:`advisor.model.cpu_quota.CpuQuota.stalls`), with the limit that brings the share
    under it."""
    for option, cluster, quota, site, peak in _limited_clusters(ctx):
        capacity = cluster.quota_capacity_per_s
        if peak > capacity:
            continue  # CPU-QUOTA: the limit cannot carry the peak at all
        messages = cluster.writer_messages_per_s
        stalls = quota.stalls(peak, messages)
        if stalls.stalled_share <= p["max_stalled_share"]:
            continue
        needed = _limit_for_stalls(quota, peak, messages, p["max_stalled_share"])
        yield _cluster_hit(
            option,
            cluster,
            site,
            **_quota_values(cluster, quota, site, peak),
            **_limit_to_set(quota, needed, "the stalls alone ask"),
            load_share=peak / capacity,
            stalled_share=stalls.stalled_share,
            stalled_pct=100.0 * stalls.stalled_share,
            throttled_share=stalls.throttled_share,
            throttled_pct=100.0 * stalls.throttled_share,
            mean_wait_ms=stalls.mean_wait_ms,
            max_stalled_pct=100.0 * p["max_stalled_share"],
            needed_cores=needed,
        )


def _limit_to_set(quota: CpuQuota, needed_cores: float, need: str) -> dict[str, Any]:
    """The limit to advise [CPUs]: ``needed_cores``, or two of the kernel's slices a period
    when that is more, since a budget of fewer is not all usable (CPU-QUOTA-SLICE); and the
    words that say so (empty when the need binds), ``need`` saying whose need it is."""
    floor = quota.two_slices_cores
    if needed_cores >= floor:
        return {"limit_to_set_cores": needed_cores, "slice_cores": floor, "slice_note": ""}
    note = (
        f" ({need} {needed_cores:.2f}, but a budget of fewer than two of the kernel's "
        f"{quota.slice_ms:g} ms slices a period is not all usable: CPU-QUOTA-SLICE)"
    )
    return {"limit_to_set_cores": floor, "slice_cores": floor, "slice_note": note}


def cpu_quota_slice(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A site held to a CPU limit whose budget makes fewer than two of the kernel's slices a
    period: while one CPU's run queue holds the slice, the node's threads woken on another
    wait for the next period, so the budget is not all spent and the estimates of
    :mod:`advisor.model.cpu_quota` are optimistic. A property of the site's nodes, whatever
    the architecture: one hit a site, under no option."""
    for site in ctx.topology.sites:
        quota = site.cpu_quota
        if not site.nodes or quota is None or quota.limit_cores >= quota.two_slices_cores:
            continue
        yield RuleHit(
            site.name,
            {
                "site": site.name,
                "limit_cores": quota.limit_cores,
                "period_ms": quota.period_ms,
                "budget_ms": quota.budget_ms,
                "slice_ms": quota.slice_ms,
                "slices": quota.slices,
                "slice_cores": quota.two_slices_cores,
            },
        )


def _limit_for_stalls(
    quota: CpuQuota, peak: float, messages_per_s: float, max_stalled_share: float
) -> float:
    """The least CPU limit [CPUs], to a hundredth, at which at most ``max_stalled_share`` of
    the write sets at ``peak`` [1/s] wait for the next period (the share falls as the limit
    grows); one CPU at most, where a node working one CPU at a time stalls no more."""
    low, high = quota.limit_cores, 1.0
    while high - low > 0.005:
        mid = (low + high) / 2.0
        stalls = replace(quota, limit_cores=mid).stalls(peak, messages_per_s)
        low, high = (low, mid) if stalls.stalled_share <= max_stalled_share else (mid, high)
    return math.ceil(high * 100.0) / 100.0


def _capped_sites(cluster: ClusterEval, peak: float) -> list[str]:
    """Every member site whose appliers take in fewer write sets than the peak, in site
    order: raising only the slowest would leave the next to pause the cluster."""
    return [site for site, capacity in cluster.apply_capacities_per_s.items() if capacity < peak]


def _where(cluster: ClusterEval, capped: Sequence[str]) -> str:
    """The capped sites in words, to follow "at" or "on": every site, when every site that
    applies is capped."""
    named = ", ".join(capped)
    if len(capped) > 1 and len(capped) == len(cluster.apply_capacities_per_s):
        return f"every site ({named})"
    return named


def _flow_control_remedies(
    cluster: ClusterEval,
    capped: Sequence[str],
    peak: float,
    deps: float | None,
    max_apply_ms: float,
) -> tuple[str, str]:
    """FLOW-CONTROL's remedies, cheapest first, with their numbers; and the short one.

    They name every site below the peak, ``capped`` (:func:`_capped_sites`). Copying the writer's
    durability settings, or taking the sites out as replicas, helps only where they apply
    more slowly than the writer commits; a site no slower than the writer's (its threads
    cap it, or it is the writer's own) needs a cheaper apply instead. ``max_apply_ms`` is
    the finding's: the apply at which the appliers at work carry the peak [ms]."""
    where = _where(cluster, capped)
    slower = cluster.apply_ms > cluster.local_commit_ms and cluster.writer_site not in capped
    threads = _threads_needed(peak, cluster.apply_ms, deps)
    caveat = _replica_caveat(cluster, peak, deps)
    ranked = [
        f"(1) {_more_appliers(cluster, where, peak, deps)}",
        f"(2) the same durability settings on every node (innodb_flush_log_at_trx_commit, "
        f"sync_binlog as on {cluster.writer_site})"
        if slower
        else _cheaper_apply(cluster, where),
        f"(3) faster nodes at {where}: one apply within {max_apply_ms:.2f} ms at "
        f"{cluster.applier_threads} threads",
    ]
    if slower:
        ranked.append(
            f"(4) {where} out of the cluster, as an asynchronous replica (per_site_clusters or "
            f"grouped_clusters){caveat}"
        )
    # The short remedy lists what restores the option by itself: threads that the
    # dependencies hold below the peak do not, nor does a replica no faster than the member.
    carries = deps is None or _dependencies_reach(cluster, deps) >= peak
    more = (
        f"wsrep_slave_threads={threads} on {where}, "
        if threads > cluster.applier_threads and carries
        else ""
    )
    if not slower:
        short = f"{more}a cheaper apply at {where} (faster disks or nodes, or lighter durability)"
    else:
        short = f"{more}the writer's durability settings at {where}" + (
            ", or a faster node"
            if caveat
            else f", a faster node, or {where} as an asynchronous replica"
        )
    return "; ".join(ranked), short


def _cheaper_apply(cluster: ClusterEval, where: str) -> str:
    """FLOW-CONTROL's second remedy where the capped nodes apply no more slowly than the
    writer commits (their threads cap them, or theirs is the writer's site): a cheaper apply
    there, since no faster node's settings are there to copy. innodb_flush_log_at_trx_commit=2
    writes the redo log at each commit and flushes it once a second, so a node that loses
    power loses up to that second (MariaDB docs, innodb_flush_log_at_trx_commit); a cluster
    of one site can lose it whole."""
    whole = (
        f"; with every member at {where}, a power loss there can lose it for the cluster"
        if len(cluster.sites) == 1
        else ""
    )
    return (
        f"(2) a cheaper apply at {where}, whose nodes spend no longer on a write set than the "
        f"writer does (their appliers are too few, or theirs are the writer's settings): "
        f"disks that flush the redo log and binlog faster, or innodb_flush_log_at_trx_commit=2 and "
        f"sync_binlog=0 there, which flush them about once a second instead of at every "
        f"commit (a node that loses power loses up to that second of commits{whole})"
    )


def _dependencies_reach(cluster: ClusterEval, deps: float) -> float:
    """The most write sets a second [1/s] the slow site applies with as many appliers as the
    dependencies let work at once (:func:`advisor.model.flow_control.apply_capacity_per_s`):
    as a member, and as a replica, whose workers the same dependencies hold."""
    useful = fc.useful_applier_threads(deps) or 1
    return fc.apply_capacity_per_s(useful, cluster.apply_ms, deps)


def _replica_caveat(cluster: ClusterEval, peak: float, deps: float | None) -> str:
    """What FLOW-CONTROL's fourth remedy leaves: a replica's workers are held to the same
    dependencies (ASYNC-APPLY-CAPACITY), so a site that cannot apply the peak with as many
    appliers as they let work at once lags as a replica instead of pausing the cluster."""
    if deps is None or (reach := _dependencies_reach(cluster, deps)) >= peak:
        return ""
    return (
        f": the cluster stops waiting for it, but as a replica it applies no faster (about "
        f"{reach:.0f} write sets/s, no more than the wsrep_cert_deps_distance of {deps:g} "
        "applying at once), so its lag grows while the peak lasts (ASYNC-APPLY-CAPACITY)"
    )


def _replicated_mbps(ctx: Context) -> tuple[float, str] | None:
    workload = ctx.topology.workload
    if workload.replicated_bytes_per_s is not None:
        return workload.replicated_bytes_per_s.design_value * 8 / 1e6, "peak replicated bytes"
    if workload.commits_per_s is not None:
        mbps = workload.commits_per_s.design_value * ctx.writeset_mean_bytes * 8 / 1e6
        return mbps, "peak commits x mean write set (estimated)"
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
    """A link inside a cluster goes silent long enough, often enough, to reach an EVS timer:
    its small-message round trips, or a sized tcp_rr measurement's (a write set's round
    trip), in absolute time, loss bursts' retransmission timeouts included."""
    limit = p["max_silences_per_day"]
    for option in ctx.options:
        seen: set[frozenset[str]] = set()
        for cluster in option.clusters:
            advice = cluster_timers(
                ctx.provider_options, ctx.topology.galera.provider_options, cluster, limit
            )
            for link in cluster.links:
                if frozenset(link.sites) in seen:
                    continue
                seen.add(frozenset(link.sites))
                risk, reasons = link_tail_risk(link, advice.given, limit)
                if not reasons:
                    continue
                yield RuleHit(
                    "-".join(link.sites),
                    {
                        "option": option.architecture,
                        "sites": "-".join(link.sites),
                        "cluster": ", ".join(cluster.sites),
                        "reasons": "; ".join(reasons),
                        "rtt_p50_ms": risk.rtt_p50_ms,
                        "rtt_top_ms": risk.rtt_top_ms,
                        "loss": risk.loss,
                        "delayed_per_day": risk.delayed_per_day,
                        "suspect_per_day": risk.suspect_per_day,
                        "inactive_per_day": risk.inactive_per_day,
                        "delayed_bound_per_day": risk.delayed_bound_per_day,
                        "keepalive": format_duration(advice.applied.keepalive_s),
                        "suspect": format_duration(advice.applied.suspect_s),
                        "inactive": format_duration(advice.applied.inactive_s),
                        "install": format_duration(advice.applied.install_s),
                        "advice": advice.text(),
                    },
                    option.architecture,
                )


# EvsTimers' fields and the provider options they stand for.
TIMER_OPTIONS = {
    "keepalive_s": "evs.keepalive_period",
    "delay_margin_s": "evs.delay_margin",
    "suspect_s": "evs.suspect_timeout",
    "inactive_s": "evs.inactive_timeout",
    "install_s": "evs.install_timeout",
}


@dataclass(frozen=True)
class TimerAdvice:
    """A cluster's EVS timers: in force, to apply, and those topology.yaml pins."""

    given: membership.EvsTimers
    applied: membership.EvsTimers
    wanted: membership.EvsTimers  # what the silences ask for, pins aside
    pinned: frozenset[str]  # provider option names

    def changed(self) -> dict[str, float]:
        """Option -> seconds, for the timers the design lengthens."""
        return {
            option: getattr(self.applied, field_name)
            for field_name, option in TIMER_OPTIONS.items()
            if getattr(self.applied, field_name) != getattr(self.given, field_name)
        }

    def text(self) -> str:
        """The advice in the findings' words: what to set, what topology.yaml pins, and
        whether the longest timer rides the silences out."""
        changed = self.changed()
        parts = []
        if changed:
            settings = "; ".join(f"{k}={format_duration(v)}" for k, v in changed.items())
            parts.append(f"set {settings} (this option's configuration applies them)")
        held = [
            f"{option}={format_duration(getattr(self.given, field_name))}"
            for field_name, option in TIMER_OPTIONS.items()
            if option in self.pinned
            and getattr(self.wanted, field_name) != getattr(self.given, field_name)
        ]
        if held:
            parts.append(
                f"topology.yaml pins {'; '.join(held)} (galera.provider_options), kept as "
                "given: the silences ask for more"
            )
        if self.wanted.inactive_s >= membership.LONGEST_TIMER_S:
            parts.append(
                f"silences outlast even {format_duration(membership.LONGEST_TIMER_S)}: no timer "
                "rides them out"
            )
        return "; ".join(parts) if parts else "the timers in force already ride them out"


def cluster_timers(
    options: Mapping[str, Any], user_options: Mapping[str, Any], cluster: ClusterEval, limit: float
) -> TimerAdvice:
    """The EVS timers that ride out the silences of a cluster's links
    (:func:`membership.timers_for`), each lengthened only where a silence reaches it, the
    user's own (``user_options``: topology.yaml ``galera.provider_options``) kept as given,
    against the effective ``options``. What RTT-TAIL-INSTABILITY advises and the generated
    configuration applies."""
    given = membership.EvsTimers.of(options)
    pinned = frozenset(user_options) & set(TIMER_OPTIONS.values())
    rtts = [rtt for link in cluster.links for rtt, _ in _link_distributions(link)]
    wanted = membership.timers_for(rtts, given, limit)
    pins = {f for f, option in TIMER_OPTIONS.items() if option in pinned}
    applied = membership.timers_for(rtts, given, limit, pinned=frozenset(pins))
    return TimerAdvice(given, applied, wanted, pinned)


def _link_distributions(link: LinkEvidence) -> list[tuple[RttDistribution, str]]:
    """A link's small-message round trips, then each sized tcp_rr measurement's (what a write
    set of that size sees), with the prefix of their reasons."""
    found = [(link.rtt, "")]
    for measured in link.measurements:
        if measured.method == "tcp_rr" and measured.request_bytes:
            size = f"{measured.request_bytes / 1024:g} KB"
            found.append((measured.distribution, f"tcp_rr at {size}: "))
    return found


def link_tail_risk(
    link: LinkEvidence, timers: membership.EvsTimers, limit: float
) -> tuple[membership.TailRisk, list[str]]:
    """A link's silences against the EVS timers (:func:`membership.tail_risk`): its
    small-message round trips' figures, and the reasons of every distribution measured on it."""
    (small, _), *sized = _link_distributions(link)
    risk = membership.tail_risk(small, timers, limit)
    reasons = list(risk.reasons)
    for rtt, prefix in sized:
        reasons += [prefix + reason for reason in membership.tail_risk(rtt, timers, limit).reasons]
    return risk, reasons


def writeset_rounds(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A large write set crosses the send windows in force in several commit paths, not one."""
    size = ctx.writeset_p99_bytes
    given = given_options(ctx)
    user, window = int(given["evs.user_send_window"]), int(given["evs.send_window"])
    for option, cluster in ctx.clusters():
        need = rounds_need(cluster, size, user, window, p)
        if need is None:
            continue
        shown, design = window_advice(
            ctx,
            cluster,
            {"evs.user_send_window": need.user_send_window, "evs.send_window": need.send_window},
        )
        yield _cluster_hit(
            option,
            cluster,
            writeset_bytes=size,
            messages=need.messages,
            fragment_bytes=cluster.fragment_bytes,
            paths=need.paths,
            waits_reply=(
                "" if not need.reply_ms else f" and waits {need.reply_ms:.1f} ms for a first reply"
            ),
            path_ms=need.path_ms,
            extra_ms=need.extra_ms,
            window=window,
            user_window=user,
            user_send_window=shown["evs.user_send_window"],
            send_window=shown["evs.send_window"],
            design=design,
        )
