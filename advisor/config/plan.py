"""The configuration plan: what to set on which host, and why, for one analysed option.

:func:`plan_configuration` turns an :class:`~advisor.analysis.Analysis` into a
:class:`~advisor.config.model.ConfigPlan` of plain data that the artifact templates render:
Galera settings per cluster and site (:mod:`advisor.config.galera`), garbd when the plan has
an arbitrator, the asynchronous channels between clusters (:mod:`advisor.config.replication`),
ProxySQL (:mod:`advisor.config.proxysql`) and the OS settings
(:mod:`advisor.config.os_settings`). Every value is a :class:`~advisor.config.model.Setting`
whose ``reason`` says where it comes from: a measured RTT, a rule's finding, a vendor's
default or recipe. Host names (``paris-1-db1``) are placeholders made from site names.

>>> from advisor.analysis import analyse
>>> plan = plan_configuration(analyse("examples/paris-frankfurt/topology.yaml"))
>>> [(s.name, s.value) for s in plan.clusters[0].site_plans[0].provider_options][:1]
[('gmcast.segment', 0)]
"""

from __future__ import annotations

__all__ = [
    "AsyncChannel",
    "AsyncLinkPlan",
    "ClusterPlan",
    "ConfigPlan",
    "GarbdPlan",
    "OsPlan",
    "ProxySQLPlan",
    "Row",
    "Setting",
    "SitePlan",
    "plan_configuration",
]

from typing import TYPE_CHECKING

from advisor.config import (
    bootstrap,
    expectations,
    failover,
    galera,
    os_settings,
    proxysql,
    regions,
    replication,
    tls,
)
from advisor.config.model import (
    AsyncChannel,
    AsyncLinkPlan,
    ClusterPlan,
    ConfigPlan,
    GarbdPlan,
    OsPlan,
    PlanContext,
    ProxySQLPlan,
    Row,
    Setting,
    SitePlan,
    cluster_labels,
)
from advisor.errors import AdvisorError
from advisor.names import distinct_names, safe_name

if TYPE_CHECKING:
    from advisor.analysis import Analysis
    from advisor.engine.metrics import Option

# gmcast.segment is an integer from 0 to 255 (Codership docs, Galera Parameters:
# https://galeracluster.com/library/documentation/galera-parameters.html).
_MAX_SEGMENTS = 256


def plan_configuration(analysis: Analysis, option: Option | str | None = None) -> ConfigPlan:
    """The configuration plan for ``option`` (default: the recommended one).

    Parameters
    ----------
    analysis
        What :func:`advisor.analysis.analyse` returned.
    option
        One of ``analysis.options``, or its architecture name (``"per_site_clusters"``).

    Raises
    ------
    AdvisorError
        An unknown option, a cluster over more than 256 sites (one ``gmcast.segment`` each),
        or a provider option from topology.yaml that cannot be written into the option string.
    """
    chosen = _pick(analysis, option)
    labels = cluster_labels(chosen.groups)
    writers = [_writer_site(chosen, i) for i in range(len(chosen.clusters))]
    ctx = PlanContext(analysis, chosen, labels, writers)
    async_links = replication.async_links(ctx)
    incoming = {
        label: sum(
            1
            for link in async_links
            for channel in link.channels
            if channel.replica_cluster == label
        )
        for label in labels
    }
    garbd_count = sum(1 for c in chosen.clusters if c.arbitrator)
    clusters = [
        _cluster(ctx, i, incoming[labels[i]], garbd_count) for i in range(len(chosen.clusters))
    ]
    topology = analysis.loaded.topology
    example = next((s.hosts[0] for c in clusters for s in c.site_plans if s.hosts), "db1")
    proxy = proxysql.proxysql_plan(ctx, clusters, replication.channel_hosts(async_links))
    os_plan = os_settings.os_plan(ctx)
    kept, unsurvived = failover.survival_events(ctx)
    failovers = regions.with_read_only_takers(
        failover.failover_files(ctx, clusters, async_links, proxy), clusters
    )
    detection_s = failover.plan_detection_s(proxy)
    return ConfigPlan(
        topology=topology.name,
        architecture=chosen.architecture,
        flavor=ctx.flavor,
        placeholder_note=(
            f"Host names such as {example} are placeholders made from site names; "
            f"secrets are placeholders too: {replication.REPL_PASSWORD} (the replication "
            f"account), {proxysql.MONITOR_PASSWORD} (ProxySQL's monitor), "
            f"{proxysql.APP_PASSWORD} (the application): replace each in every file."
        ),
        clusters=clusters,
        proxysql=proxy,
        async_links=async_links,
        os=os_plan,
        certificates=tls.certificate_plan(clusters),
        heartbeat=failover.heartbeat_plan(ctx, async_links),
        failovers=failovers,
        regional_failovers=regions.regional_failovers(
            ctx, clusters, async_links, failovers, proxy, detection_s
        ),
        bootstraps=bootstrap.bootstrap_files(ctx, clusters),
        kept_by_quorum=kept,
        detection_s=detection_s,
        unsurvived=unsurvived,
        expectations=expectations.expectations_plan(ctx, os_plan),
    )


def _pick(analysis: Analysis, option: Option | str | None) -> Option:
    if option is None:
        return analysis.chosen
    if not isinstance(option, str):
        return option
    return analysis.option(option)


def _writer_site(option: Option, index: int) -> str:
    """The site of the cluster's one writer: where the engine ran its commits
    (``ClusterEval.writer_site``: the owner of most hot rows, else the first writing site),
    else the cluster's first site."""
    cluster = option.clusters[index]
    return cluster.writer_site or cluster.sites[0]


def _cluster(ctx: PlanContext, index: int, incoming: int, garbd_count: int) -> ClusterPlan:
    cluster = ctx.option.clusters[index]
    label = ctx.labels[index]
    if len(cluster.members) > _MAX_SEGMENTS:
        raise AdvisorError(
            f"cluster {label} spans {len(cluster.members)} sites but gmcast.segment allows "
            f"{_MAX_SEGMENTS} segments (0 to 255): split it into several clusters"
        )
    hosts = {site: ctx.hosts(site) for site in cluster.sites}
    address = [host for site in cluster.sites for host in hosts[site]]
    files = _galera_files(ctx)
    segments = {site: n for n, site in enumerate(cluster.members)}
    spans = len(cluster.members) > 1
    common = galera.provider_options(ctx, index)
    per_node = galera.per_node_settings(ctx, index, address)
    read_only = {site: galera.read_only_settings(ctx, index, site) for site in cluster.sites}
    sites = [
        SitePlan(
            site=site,
            segment=segments[site],
            hosts=hosts[site],
            file=files[(label, site)],
            provider_options=galera.site_options(ctx, site, segments[site], spans) + common,
            per_node={h: per_node[h] for h in hosts[site] if h in per_node},
            server=galera.site_server_settings(ctx, site, spans) + read_only[site][0],
            notes=read_only[site][1],
        )
        for site in cluster.sites
    ]
    garbd = None
    if cluster.arbitrator:
        file = "config/garbd.conf" if garbd_count == 1 else f"config/garbd-{safe_name(label)}.conf"
        garbd = galera.garbd_plan(
            ctx, cluster, label, address, segments[cluster.arbitrator], common, file
        )
    writer = ctx.writer_sites[index]
    return ClusterPlan(
        name=label,
        index=index,
        sites=list(cluster.sites),
        spans_sites=spans,
        writer_site=writer,
        writer_host=ctx.writer_host(index),
        server=galera.server_settings(ctx, index, label, address, incoming),
        provider_options=common,
        site_plans=sites,
        garbd=garbd,
        hostgroups=proxysql.hostgroups(index),
        read_only=bool(sites) and all(read_only[s.site][0] for s in sites),
    )


def _galera_files(ctx: PlanContext) -> dict[tuple[str, str], str]:
    """(cluster, site) -> ``config/galera-<cluster>.cnf``, or one file per site when the
    cluster spans sites (``galera-<cluster>.<site>.cnf``); distinct even where a cluster of
    one site ``a_b.c`` meets the site ``c`` of cluster ``a_b``
    (:func:`advisor.names.distinct_names`)."""
    proposed: dict[tuple[str, ...], str] = {}
    for label, cluster in zip(ctx.labels, ctx.option.clusters, strict=True):
        for site in cluster.sites:
            one = len(cluster.sites) == 1
            proposed[(label, site)] = safe_name(label) + ("" if one else f".{safe_name(site)}")
    stems = distinct_names(proposed)
    return {(key[0], key[1]): f"config/galera-{stem}.cnf" for key, stem in stems.items()}
