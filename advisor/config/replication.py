"""The asynchronous channels between clusters: which node replicates from which, with
which options, the replication account, and notes on running them.

Sources: MariaDB docs, Configuring MariaDB Replication between Two MariaDB Galera Clusters
(https://mariadb.com/kb/en/configuring-mariadb-replication-between-two-mariadb-galera-clusters/);
Percona, Replication manager for Percona XtraDB Cluster (MySQL/PXC channels between clusters):
https://docs.percona.com/percona-distribution-for-mysql/8.0/replication-manager/replication-manager-for-pxc.html
and MySQL asynchronous connection failover
(https://dev.mysql.com/doc/refman/8.0/en/replication-asynchronous-connection-failover-source.html).
"""

from __future__ import annotations

__all__ = ["REPL_PASSWORD", "Variant", "async_links", "channel_hosts"]

from typing import TYPE_CHECKING, Literal

from advisor.config.model import (
    AsyncChannel,
    AsyncLinkPlan,
    PlanContext,
    Setting,
    short_name,
)
from advisor.config.tls import CA_CERT
from advisor.names import joined_names
from advisor.units import ms_text

if TYPE_CHECKING:
    from advisor.engine.metrics import AsyncLink

Variant = Literal["mariadb", "mysql"]
# The replication account's secret: a placeholder, the same in every file that needs it.
REPL_PASSWORD = "<repl-password>"


def async_links(ctx: PlanContext) -> list[AsyncLinkPlan]:
    """One plan per asynchronous link of the option, both directions where both write."""
    option = ctx.option
    variant: Variant = "mariadb" if ctx.flavor == "mariadb" else "mysql"
    plans = []
    files = joined_names(tuple(ctx.labels[c] for c in link.clusters) for link in option.async_links)
    built = [(link, _directions(ctx, link, variant)) for link in option.async_links]
    pools = _applier_pools(variant, [(ch, link) for link, chs in built for ch in chs])
    for link, directions in built:
        channels = [
            ch.model_copy(update={"appliers": _appliers(variant, link, pools[ch.replica_host])})
            for ch in directions
        ]
        a, b = (ctx.labels[c] for c in link.clusters)
        plans.append(
            AsyncLinkPlan(
                clusters=(a, b),
                sites=link.sites,
                variant=variant,
                file=f"config/async-replication-{files[(a, b)]}.sql",
                rtt_p50_ms=round(link.rtt_ms["p50"], 3),
                lag_p99_ms=round(link.lag_ms["p99"], 3),
                channels=channels,
                user=_replication_user(variant),
                notes=_async_notes(ctx, variant, len(directions) == 2),
            )
        )
    return plans


def _directions(ctx: PlanContext, link: AsyncLink, variant: Variant) -> list[AsyncChannel]:
    """The channels of ``link``: one into each cluster from each writing cluster."""
    option = ctx.option
    i, j = link.clusters
    writing = [(s, d) for s, d in ((i, j), (j, i)) if option.clusters[s].writers]
    site_of = {i: link.sites[0], j: link.sites[1]}
    return [_channel(ctx, s, d, site_of[s], site_of[d], variant) for s, d in writing or [(i, j)]]


def _applier_pools(
    variant: Variant, channels: list[tuple[AsyncChannel, AsyncLink]]
) -> dict[str, int]:
    """The appliers each replica node runs: MariaDB's ``slave_parallel_threads`` is one pool
    for every channel of the node (MariaDB docs, Parallel Replication), so the channels'
    workers add up; MySQL's ``replica_parallel_workers`` is read by each channel at START
    REPLICA, so a node needs the most any of its channels does."""
    pools: dict[str, int] = {}
    for ch, link in channels:
        have = pools.get(ch.replica_host, 0)
        want = link.applier_threads
        pools[ch.replica_host] = have + want if variant == "mariadb" else max(have, want)
    return pools


def _why_that_many(link: AsyncLink) -> str:
    """Why the design runs the replica's appliers it does (advisor.engine.channels)."""
    if link.applier_threads_needed is not None:
        return f"{link.applier_threads} keep the p99 wait for a free one within one p99 apply"
    if link.cert_deps_distance is not None:
        bound = (
            "as many as the write sets' dependencies let work at once "
            f"(workload.cert_deps_distance {link.cert_deps_distance:g})"
        )
    else:
        bound = "the design's most"
    return f"{link.applier_threads} is {bound}, too few to keep up (ASYNC-APPLY-CAPACITY)"


def _appliers(variant: Variant, link: AsyncLink, pool: int) -> list[Setting]:
    """The replica's parallel-apply settings, with why (advisor.engine.channels)."""
    if link.applier_threads_given:
        why = (
            f"{link.applier_threads} per channel, as topology.yaml gives "
            "(replication.applier_threads)"
        )
    else:
        load = (
            f"{link.applier_threads} per channel: {link.commits_per_s:.0f} commits/s at the "
            f"peak, each applied in {ms_text(link.apply_ms)} (a commit in this cluster), keep "
            f"{link.offered_appliers:.1f} busy; "
        )
        why = load + _why_that_many(link)
    if variant == "mariadb":
        total = (
            f"; the node's pool serves all its channels: {pool}"
            if pool != link.applier_threads
            else ""
        )
        return [
            Setting(name="slave_parallel_threads", value=pool, reason=why + total),
            Setting(
                name="slave_parallel_mode",
                value="optimistic",
                reason="apply transactions in parallel and commit them in the source's order, "
                "retrying a conflict (MariaDB docs, Parallel Replication; the default from 10.5)",
            ),
        ]
    return [
        Setting(name="replica_parallel_workers", value=pool, reason=why),
        Setting(
            name="replica_preserve_commit_order",
            value="ON",
            raw=True,
            reason="commit in the source's order, so the replica never shows a state the "
            "source never had (MySQL manual; the default from 8.0.27)",
        ),
    ]


def _node_away_from_writer(ctx: PlanContext, cluster: int, site: str) -> str:
    """A node at ``site`` other than the ProxySQL writer; else one at another site of the
    cluster; the writer itself only in a one-node cluster. ProxySQL gives the node it
    returns the lowest writer weight (advisor.config.proxysql), so it stays off writes."""
    writer = ctx.writer_host(cluster)
    here = [h for h in ctx.hosts(site) if h != writer]
    elsewhere = [h for s in ctx.option.clusters[cluster].sites for h in ctx.hosts(s) if h != writer]
    return (here or elsewhere or [writer])[0]


def channel_hosts(links: list[AsyncLinkPlan]) -> set[str]:
    """Every node that serves an asynchronous channel, as source or as replica."""
    return {h for link in links for c in link.channels for h in (c.source_host, c.replica_host)}


def _channel(
    ctx: PlanContext, src: int, dst: int, src_site: str, dst_site: str, variant: Variant
) -> AsyncChannel:
    source = _node_away_from_writer(ctx, src, src_site)
    replica = _node_away_from_writer(ctx, dst, dst_site)
    name = short_name(f"from_{ctx.labels[src]}", 64)
    host_why = (
        f"a node at {src_site}, the site of cluster {ctx.labels[src]} nearest to "
        f"{dst_site}, and not the ProxySQL writer, so the binlog dump does not load it "
        "(placeholder)"
    )
    login = [
        ("HOST", source, host_why),
        ("PORT", 3306, "the MySQL port of the source node"),
        ("USER", "repl", "the replication account of step 1"),
        ("PASSWORD", REPL_PASSWORD, "placeholder: the replication account's secret"),
        ("SSL", 1, "the channel crosses a WAN: encrypt it (the account has REQUIRE SSL)"),
        (
            "SSL_CA",
            CA_CERT,
            "the CA of make-certificates.sh, which signed the source's certificate",
        ),
        (
            "SSL_VERIFY_SERVER_CERT",
            1,
            "check that the source's certificate names MASTER_HOST: no one in the path can "
            "pose as the source",
        ),
    ]
    if variant == "mariadb":
        options = [Setting(name=f"MASTER_{k}", value=v, reason=r) for k, v, r in login]
        options.append(
            Setting(
                name="MASTER_USE_GTID",
                value="slave_pos",
                raw=True,
                reason="start from the last GTID this replica applied, whichever source node it "
                "connects to (MariaDB docs)",
            )
        )
        failover: list[Setting] = []
    else:
        options = [Setting(name=f"SOURCE_{k}", value=v, reason=r) for k, v, r in login]
        options += [
            Setting(
                name="SOURCE_AUTO_POSITION",
                value=1,
                reason="GTID auto-positioning: required for connection failover",
            ),
            Setting(
                name="SOURCE_CONNECTION_AUTO_FAILOVER",
                value=1,
                reason="move the channel to another source node when this one fails "
                "(MySQL 8.0.23+, MySQL docs: asynchronous connection failover)",
            ),
            Setting(
                name="SOURCE_RETRY_COUNT",
                value=3,
                reason="3 tries 10 s apart before failing over (MySQL manual's suggestion; "
                "the default retries one source for 60 days)",
            ),
            Setting(name="SOURCE_CONNECT_RETRY", value=10, reason="seconds between tries"),
        ]
        failover = _failover_sources(ctx, src, src_site, source)
    return AsyncChannel(
        name=name,
        source_cluster=ctx.labels[src],
        replica_cluster=ctx.labels[dst],
        source_host=source,
        replica_host=replica,
        options=options,
        failover_sources=failover,
        reason=(
            f"cluster {ctx.labels[src]} has writers: its commits reach cluster "
            f"{ctx.labels[dst]} through this channel, run on {replica} (placeholder)"
        ),
    )


def _failover_sources(ctx: PlanContext, src: int, src_site: str, source: str) -> list[Setting]:
    sources = []
    writer = ctx.writer_host(src)
    for site in ctx.option.clusters[src].sites:
        for host in ctx.hosts(site):
            if host == source:
                weight, why = 90, "the channel's first source"
            elif host == writer:
                weight, why = 40, "the ProxySQL writer: a source only when no other node is up"
            elif site == src_site:
                weight, why = 80, f"same site as the first source ({src_site})"
            else:
                weight, why = 50, f"another site of the source cluster ({site}): farther"
            sources.append(Setting(name=host, value=weight, reason=why + " (placeholder)"))
    return sources


def _replication_user(variant: Variant) -> list[Setting]:
    privilege = "REPLICATION SLAVE"
    return [
        Setting(name="user", value="repl", reason="the account the replicas log in with"),
        Setting(name="password", value=REPL_PASSWORD, reason="placeholder: choose a secret"),
        Setting(
            name="privilege",
            value=privilege,
            raw=True,
            reason="reading the binary log is all a replica needs"
            + (
                " (MariaDB 10.5+ also calls it REPLICATION REPLICA)" if variant == "mariadb" else ""
            ),
        ),
    ]


def _async_notes(ctx: PlanContext, variant: Variant, both_ways: bool) -> list[str]:
    notes = [
        "Seed each replica from a backup of its source cluster taken with GTID "
        "positions (mariabackup or xtrabackup) before starting its channel."
    ]
    if both_ways:
        notes.append(
            "Both clusters take writes: each row must be written in one cluster "
            "only (its owner site), or the clusters diverge silently."
        )
    if variant == "mariadb":
        notes.append(
            "MariaDB has no automatic source failover for a channel: if the source "
            "or the replica node fails, point the channel at another node (by hand, "
            "or with Percona's replication_manager.sh)."
        )
    else:
        notes.append(
            "SOURCE_CONNECTION_AUTO_FAILOVER moves the channel between source nodes; "
            "if the replica node fails, start the channel on another node of its "
            "cluster (skip_replica_start keeps it on one node)."
        )
    if ctx.flavor == "pxc":
        notes.append(
            "PXC before 8.0.34-26: asynchronous_connection_failover_add_source() "
            "creates an errant GTID that can block later failovers (PXC-4238)."
        )
    return notes
