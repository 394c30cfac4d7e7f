"""What the deployed design predicts for the node a check connects to.

Everything here is read from the finished :class:`~advisor.analysis.Analysis` (the option's
evaluated clusters, hot rows and channels) and from its configuration plan
(:func:`advisor.config.plan_configuration`): no cluster is evaluated again.
"""

from __future__ import annotations

__all__ = ["Expectation", "expectation", "find_option"]

import math
from dataclasses import dataclass, field

from advisor.analysis import Analysis
from advisor.collect.server import MODEL_OPTIONS
from advisor.config.model import ClusterPlan, ConfigPlan
from advisor.engine.draws import site_local_commit_ms
from advisor.engine.metrics import ClusterEval, Option
from advisor.errors import AdvisorError
from advisor.model import flow_control as fc

OptionValue = int | float | str


@dataclass(frozen=True)
class ChannelExpectation:
    """A channel the design runs into the node's cluster."""

    name: str
    source_cluster: str
    replica_host: str
    source_server_id: int | None  # the heartbeat rows of its source cluster
    expected_lag_ms: float  # the channel's modelled p99 lag plus one heartbeat interval


@dataclass(frozen=True)
class Expectation:
    """The design's figures for one node's cluster and site."""

    cluster: ClusterPlan
    evaluated: ClusterEval
    site: str | None
    members: int  # data nodes plus garbd: what wsrep_cluster_size should read
    commit_ms: dict[str, float]  # the writer's predicted commit percentiles [ms]
    local_commit_ms: float  # the local part of each commit, not on the network [ms]
    # One apply at the node's site as the design takes it (sites[].local_commit_ms, else the
    # workload's) [ms]; None when the node's site is not told apart.
    site_local_commit_ms: float | None
    pause_share: float  # predicted flow-control paused share (0: no member slower)
    slow_site: str | None  # the member the model expects to send flow control
    # The cluster's hot rows' conflicts were writes spread over its writer sites [1/s]: a
    # what-if (HOT-ROW-CONFLICTS); under the design's one writer per cluster there are none.
    spread_conflicts_per_s: float
    # The design's value of each provider option the model reads (MODEL_OPTIONS)
    provider_options: dict[str, OptionValue]
    applier_threads: int | None  # wsrep_slave_threads the design sets
    read_only: bool  # whether the design makes this node read-only
    channels: list[ChannelExpectation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def find_option(analysis: Analysis, architecture: str | None) -> Option:
    """The deployed option: the recommended one, or the one ``architecture`` names."""
    if architecture is None:
        return analysis.chosen
    for option in analysis.options:
        if option.architecture == architecture:
            return option
    known = ", ".join(o.architecture for o in analysis.options)
    raise AdvisorError(
        f"--architecture: {architecture!r} is not an option of this topology (options: {known})"
    )


def _cluster_for(
    plan: ConfigPlan, cluster_name: str | None, node_name: str | None, given: str | None
) -> tuple[ClusterPlan, str]:
    """The design's cluster of the node, and how it was told."""
    names = [c.name for c in plan.clusters]
    if given is not None:
        for c in plan.clusters:
            if c.name == given:
                return c, f"--cluster {given}"
        raise AdvisorError(
            f"--cluster: {given!r} is none of the design's clusters ({', '.join(names)})"
        )
    for c in plan.clusters:
        if c.name == cluster_name:
            return c, f"wsrep_cluster_name {cluster_name}"
    for c in plan.clusters:
        if node_name and any(node_name in s.hosts for s in c.site_plans):
            return c, f"wsrep_node_name {node_name}"
    if len(plan.clusters) == 1:
        only = plan.clusters[0]
        return only, (
            f"the design's only cluster (the node's wsrep_cluster_name is {cluster_name!r}, "
            f"the design's {only.name!r})"
        )
    raise AdvisorError(
        f"cannot tell which of the design's clusters ({', '.join(names)}) the node belongs to: "
        f"its wsrep_cluster_name {cluster_name!r} and wsrep_node_name {node_name!r} name none "
        "of them; give --cluster NAME"
    )


def _site_for(cluster: ClusterPlan, node_name: str | None, segment: object) -> str | None:
    for s in cluster.site_plans:
        if node_name and node_name in s.hosts:
            return s.site
    if len(cluster.site_plans) == 1:
        return cluster.site_plans[0].site
    by_segment = [s.site for s in cluster.site_plans if str(s.segment) == str(segment)]
    return by_segment[0] if len(by_segment) == 1 else None


def expectation(
    analysis: Analysis,
    option: Option,
    plan: ConfigPlan,
    *,
    cluster_name: str | None,
    node_name: str | None,
    segment: object,
    given_cluster: str | None = None,
) -> Expectation:
    """What the design predicts for the node: see :class:`Expectation`."""
    cluster, how = _cluster_for(plan, cluster_name, node_name, given_cluster)
    evaluated = option.clusters[cluster.index]
    site = _site_for(cluster, node_name, segment)
    notes = [f"the node is judged as a member of cluster {cluster.name} ({how})"]
    if site is None:
        notes.append(
            "the node's site is not told apart (wsrep_node_name is none of the design's "
            "hosts and gmcast.segment matches no single site): per-site options are judged "
            "against the cluster's common ones"
        )
    topology = analysis.topology
    writer = evaluated.writer_site
    commit = (
        dict(evaluated.commit_by_site_ms[writer])
        if writer is not None and writer in evaluated.commit_by_site_ms
        else {}
    )
    workload = topology.workload
    peak = workload.commits_per_s.design_value if workload.commits_per_s is not None else None
    pause = 0.0
    if (
        peak is not None
        and evaluated.apply_site is not None
        and math.isfinite(evaluated.apply_capacity_per_s)
    ):
        pause = float(fc.pause_share(peak, evaluated.apply_capacity_per_s))
    conflicts = sum(r.conflicts_per_s for r in option.hot_rows if r.cluster == cluster.index)
    options: dict[str, OptionValue] = dict(analysis.provider_options)
    options["evs.send_window"] = evaluated.send_window
    options["evs.user_send_window"] = evaluated.user_window
    site_plans = [s for s in cluster.site_plans if s.site == site] or []
    for setting in cluster.provider_options:
        options[setting.name] = setting.value
    for s in site_plans:
        for setting in s.provider_options:
            options[setting.name] = setting.value
    # The options the model's predictions read (collect parses the same list): a drift in
    # one of them moves a prediction. File paths and sizes (gcache, TLS) are not judged.
    options = {k: v for k, v in options.items() if k in MODEL_OPTIONS}
    if site is None:
        for key in ("gmcast.segment", "pc.weight"):
            options.pop(key, None)
    threads = next(
        (
            int(s.value)
            for s in cluster.server
            if s.name in ("wsrep_slave_threads", "wsrep_applier_threads")
        ),
        None,
    )
    read_only = cluster.read_only or any(
        str(s.value).upper() in ("ON", "1")
        for sp in site_plans
        for s in sp.server
        if s.name == "read_only"
    )
    return Expectation(
        cluster=cluster,
        evaluated=evaluated,
        site=site,
        members=cluster.members,
        commit_ms=commit,
        local_commit_ms=evaluated.local_commit_ms,
        site_local_commit_ms=_site_local_commit_ms(analysis, site),
        pause_share=pause,
        slow_site=evaluated.apply_site if pause > 0 else None,
        spread_conflicts_per_s=conflicts,
        provider_options=options,
        applier_threads=threads,
        read_only=read_only,
        channels=_channels(plan, cluster),
        notes=notes,
    )


def _site_local_commit_ms(analysis: Analysis, site: str | None) -> float | None:
    """One apply at ``site`` as the design takes it [ms] (see :class:`Expectation`)."""
    if site is None:
        return None
    topology = analysis.topology
    return next(site_local_commit_ms(topology, s) for s in topology.sites if s.name == site)


def _channels(plan: ConfigPlan, cluster: ClusterPlan) -> list[ChannelExpectation]:
    server_ids = {b.cluster: b.server_id for b in plan.heartbeat.files} if plan.heartbeat else {}
    expected = plan.heartbeat.expected_ms if plan.heartbeat else {}
    out = []
    for link in plan.async_links:
        for channel in link.channels:
            if channel.replica_cluster != cluster.name:
                continue
            out.append(
                ChannelExpectation(
                    name=channel.name,
                    source_cluster=channel.source_cluster,
                    replica_host=channel.replica_host,
                    source_server_id=server_ids.get(channel.source_cluster),
                    expected_lag_ms=expected.get(channel.name, link.lag_p99_ms),
                )
            )
    return out
