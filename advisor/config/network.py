"""The parts of a plan between clusters: async channels, ProxySQL and the OS settings.

Sources: ../shared/reference/galera.md sections 5a (MariaDB and MySQL/PXC asynchronous
replication between Galera clusters), 5b (MySQL asynchronous connection failover) and 5c
(ProxySQL ``mysql_galera_hostgroups``), and ../shared/DOMAIN.md section 2 (TCP slow start,
socket buffers).
"""

from __future__ import annotations

__all__ = ["async_links", "hostgroups", "os_plan", "proxysql_plan"]

import math
import re
from typing import TYPE_CHECKING, Literal

from advisor.config.model import (
    AsyncChannel,
    AsyncLinkPlan,
    ClusterPlan,
    OsPlan,
    PlanContext,
    ProxySQLPlan,
    Row,
    Setting,
    short_name,
)
from advisor.safe_write import safe_name

if TYPE_CHECKING:
    from advisor.engine.evidence import LinkEvidence

Variant = Literal["mariadb", "mysql"]
# Percona proxysql-admin pins the writer with weight 1,000,000 against 1,000 (galera.md 5c).
_WRITER_WEIGHT = 1_000_000
_SAME_SITE_WEIGHT = 100_000
_OTHER_WEIGHT = 1_000
# ProxySQL's mysql-monitor_galera_healthcheck_timeout default [ms] (MySQL_Thread.cpp).
_HEALTHCHECK_TIMEOUT_MS = 800
# A health check on a new connection: TCP handshake, MySQL handshake and login, the query.
_HEALTHCHECK_ROUND_TRIPS = 4
# Linux defaults (DOMAIN.md section 2): net.core.rmem_max/wmem_max 212992, tcp_rmem
# "4096 131072 6291456", tcp_wmem "4096 16384 4194304".
_CORE_MAX_BYTES = 212_992
_TCP_RMEM = (4096, 131_072, 6_291_456)
_TCP_WMEM = (4096, 16_384, 4_194_304)
_ROW_NAME = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s+([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"
                       r"([A-Za-z0-9_.-]+)\s*$")


def hostgroups(index: int) -> dict[str, int]:
    """ProxySQL hostgroups of cluster ``index``: a block of four per cluster, 10, 20..."""
    base = 10 * (index + 1)
    return {"writer": base, "backup_writer": base + 1, "reader": base + 2, "offline": base + 3}


# -- asynchronous channels ----------------------------------------------------------------


def async_links(ctx: PlanContext) -> list[AsyncLinkPlan]:
    """One plan per asynchronous link of the option, both directions where both write."""
    option = ctx.option
    variant: Variant = "mariadb" if ctx.flavor == "mariadb" else "mysql"
    plans = []
    for link in option.async_links:
        i, j = link.clusters
        writing = [(s, d) for s, d in ((i, j), (j, i)) if option.clusters[s].writers]
        directions = writing or [(i, j)]
        site_of = {i: link.sites[0], j: link.sites[1]}
        channels = [_channel(ctx, s, d, site_of[s], site_of[d], variant) for s, d in directions]
        a, b = ctx.labels[i], ctx.labels[j]
        plans.append(AsyncLinkPlan(
            clusters=(a, b), sites=link.sites, variant=variant,
            file=f"config/async-replication-{safe_name(a)}-{safe_name(b)}.sql",
            rtt_p50_ms=round(link.rtt_ms["p50"], 3), lag_p99_ms=round(link.lag_ms["p99"], 3),
            channels=channels, user=_replication_user(variant),
            notes=_async_notes(ctx, variant, len(directions) == 2),
        ))
    return plans


def _node_away_from_writer(ctx: PlanContext, cluster: int, site: str) -> str:
    """A node at ``site`` other than the ProxySQL writer, when the site has one."""
    hosts = ctx.hosts(site)
    writer = ctx.writer_sites[cluster] == site
    return hosts[1] if writer and len(hosts) > 1 else hosts[0]


def _channel(ctx: PlanContext, src: int, dst: int, src_site: str, dst_site: str,
             variant: Variant) -> AsyncChannel:
    source = _node_away_from_writer(ctx, src, src_site)
    replica = _node_away_from_writer(ctx, dst, dst_site)
    name = short_name(f"from_{ctx.labels[src]}", 64)
    host_why = (f"a node at {src_site}, the site of cluster {ctx.labels[src]} nearest to "
                f"{dst_site}, and not the ProxySQL writer, so the binlog dump does not load it "
                "(placeholder)")
    login = [("HOST", source, host_why),
             ("PORT", 3306, "the MySQL port of the source node"),
             ("USER", "repl", "the replication account of step 1"),
             ("PASSWORD", "<password>", "placeholder: the replication account's secret"),
             ("SSL", 1, "the channel crosses a WAN: encrypt it")]
    if variant == "mariadb":
        options = [Setting(name=f"MASTER_{k}", value=v, reason=r) for k, v, r in login]
        options.append(Setting(
            name="MASTER_USE_GTID", value="slave_pos", raw=True,
            reason="start from the last GTID this replica applied, whichever source node it "
                   "connects to (MariaDB docs)"))
        failover: list[Setting] = []
    else:
        options = [Setting(name=f"SOURCE_{k}", value=v, reason=r) for k, v, r in login]
        options += [
            Setting(name="SOURCE_AUTO_POSITION", value=1,
                    reason="GTID auto-positioning: required for connection failover"),
            Setting(name="SOURCE_CONNECTION_AUTO_FAILOVER", value=1,
                    reason="move the channel to another source node when this one fails "
                           "(MySQL 8.0.23+, galera.md 5b)"),
            Setting(name="SOURCE_RETRY_COUNT", value=3,
                    reason="3 tries 10 s apart before failing over (MySQL manual's suggestion; "
                           "the default retries one source for 60 days)"),
            Setting(name="SOURCE_CONNECT_RETRY", value=10, reason="seconds between tries"),
        ]
        failover = _failover_sources(ctx, src, src_site, source)
    return AsyncChannel(
        name=name, source_cluster=ctx.labels[src], replica_cluster=ctx.labels[dst],
        source_host=source, replica_host=replica, options=options, failover_sources=failover,
        reason=(f"cluster {ctx.labels[src]} has writers: its commits reach cluster "
                f"{ctx.labels[dst]} through this channel, run on {replica} (placeholder)"),
    )


def _failover_sources(ctx: PlanContext, src: int, src_site: str, source: str) -> list[Setting]:
    sources = []
    for site in ctx.option.clusters[src].sites:
        for host in ctx.hosts(site):
            if host == source:
                weight, why = 90, "the channel's first source"
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
        Setting(name="password", value="<password>", reason="placeholder: choose a secret"),
        Setting(name="privilege", value=privilege, raw=True,
                reason="reading the binary log is all a replica needs"
                       + (" (MariaDB 10.5+ also calls it REPLICATION REPLICA)"
                          if variant == "mariadb" else "")),
    ]


def _async_notes(ctx: PlanContext, variant: Variant, both_ways: bool) -> list[str]:
    notes = ["Seed each replica from a backup of its source cluster taken with GTID "
             "positions (mariabackup or xtrabackup) before starting its channel."]
    if both_ways:
        notes.append("Both clusters take writes: each row must be written in one cluster "
                     "only (its owner site), or the clusters diverge silently.")
    if variant == "mariadb":
        notes.append("MariaDB has no automatic source failover for a channel: if the source "
                     "or the replica node fails, point the channel at another node (by hand, "
                     "or with Percona's replication_manager.sh, galera.md 5b).")
    else:
        notes.append("SOURCE_CONNECTION_AUTO_FAILOVER moves the channel between source nodes; "
                     "if the replica node fails, start the channel on another node of its "
                     "cluster (skip_replica_start keeps it on one node).")
    if ctx.flavor == "pxc":
        notes.append("PXC before 8.0.34-26: asynchronous_connection_failover_add_source() "
                     "creates an errant GTID that can block later failovers (PXC-4238).")
    return notes


# -- ProxySQL --------------------------------------------------------------------------


def _col(name: str, value: str | int, reason: str) -> Setting:
    return Setting(name=name, value=value, reason=reason)


def proxysql_plan(ctx: PlanContext, clusters: list[ClusterPlan]) -> ProxySQLPlan:
    """mysql_servers, mysql_galera_hostgroups, query rules, users and monitor settings."""
    servers, groups = [], []
    for plan in clusters:
        for site in plan.sites:
            for host in ctx.hosts(site):
                servers.append(_server_row(plan, site, host))
        groups.append(_galera_row(plan))
    return ProxySQLPlan(
        file="config/proxysql.sql", servers=servers, galera_hostgroups=groups,
        query_rules=_query_rules(ctx, clusters), users=_users(ctx, clusters),
        variables=_monitor_variables(ctx),
        notes=[
            "Run this on the admin interface of every ProxySQL instance (one or a pair at each "
            "site with applications); only mysql_users differs between sites.",
            "Create the monitor account on every cluster (USAGE is enough): ProxySQL reads "
            "wsrep_local_state, read_only and wsrep_desync through it.",
        ],
    )


def _server_row(plan: ClusterPlan, site: str, host: str) -> Row:
    if host == plan.writer_host:
        weight, why = _WRITER_WEIGHT, "the cluster's one writer: the highest weight wins"
    elif site == plan.writer_site:
        weight, why = _SAME_SITE_WEIGHT, "next writer if the writer fails: same site"
    else:
        weight, why = _OTHER_WEIGHT, "writer only when the writer's site has none left"
    return Row(columns=[
        _col("hostgroup_id", plan.hostgroups["writer"],
             f"start in cluster {plan.name}'s writer hostgroup; ProxySQL moves each node to "
             "its role"),
        _col("hostname", host, "placeholder"),
        _col("port", 3306, "the MySQL port"),
        _col("weight", weight, why + " (ProxySQL orders writers by weight, then hostname, "
             "galera.md 5c; Percona proxysql-admin uses 1,000,000 against 1,000)"),
        _col("comment", f"{plan.name} @ {site}", "cluster and site, for people"),
    ], reason=f"node of cluster {plan.name} at site {site}")


def _galera_row(plan: ClusterPlan) -> Row:
    hg = plan.hostgroups
    return Row(columns=[
        _col("writer_hostgroup", hg["writer"], "a block of four hostgroups per cluster"),
        _col("backup_writer_hostgroup", hg["backup_writer"],
             "writable nodes beyond max_writers wait here"),
        _col("reader_hostgroup", hg["reader"], "nodes that serve reads"),
        _col("offline_hostgroup", hg["offline"],
             "nodes out of the primary component, desynced or not synced"),
        _col("active", 1, "ProxySQL manages these hostgroups from the nodes' wsrep state"),
        _col("max_writers", 1, "one writer per cluster: no certification conflicts between "
             "its nodes, and Codership's single-writer flow control applies (galera.md 5c)"),
        _col("writer_is_also_reader", 2, "only backup writers serve reads, the writer keeps "
             "its capacity for writes (proxysql-admin default; ProxySQL PR #3187 fixed nodes "
             "vanishing in this mode: use a recent ProxySQL)"),
        _col("max_transactions_behind", 100, "proxysql-admin default; ProxySQL 2.7 compares "
             "it with wsrep_local_recv_queue of read_only=1 nodes only"),
        _col("comment", plan.name, "the cluster"),
    ], reason=f"cluster {plan.name}: writer pinned at {plan.writer_host} ({plan.writer_site})")


def _row_pattern(name: str) -> str | None:
    """A write-statement regex for a hot row named like ``table column=value``."""
    match = _ROW_NAME.match(name)
    if match is None:
        return None
    table, column, value = (re.escape(g) for g in match.groups())
    return (rf"^\s*(UPDATE|INSERT|REPLACE|DELETE)\b.*\b{table}\b.*\b{column}\s*=\s*"
            rf"'?{value}\b")


def _query_rules(ctx: PlanContext, clusters: list[ClusterPlan]) -> list[Row]:
    if len(clusters) < 2:
        return []
    rules = []
    for n, row in enumerate(ctx.option.hot_rows, start=1):
        plan = clusters[row.cluster]
        pattern = _row_pattern(row.row.name)
        others = ", ".join(f"{s} +{rtt:.1f} ms" for s, rtt in row.routed_rtt_ms.items())
        rules.append(Row(columns=[
            _col("rule_id", 100 + n, "rules for owned rows start at 101"),
            _col("active", 1 if pattern else 0,
                 "on: the pattern names the row's table and key" if pattern
                 else "off until match_pattern is adapted"),
            _col("match_pattern", pattern or f"<writes of {row.row.name}>",
                 "PLACEHOLDER to adapt: writes of this row (by key, tenant or range)"),
            _col("re_modifiers", "CASELESS", "SQL keywords in any case"),
            _col("destination_hostgroup", plan.hostgroups["writer"],
                 f"the writer of cluster {plan.name}, at the owner site {row.owner}"),
            _col("apply", 1, "stop at this rule"),
            _col("comment", f"owned by {row.owner}", "the row's owner site"),
        ], reason=(f'"{row.row.name}" is owned by {row.owner} (its first writer site); '
                   f"writes from elsewhere pay one round trip per statement"
                   + (f" ({others})" if others else "")), active=pattern is not None))
    return rules


def _users(ctx: PlanContext, clusters: list[ClusterPlan]) -> list[Row]:
    """One mysql_users row per cluster that applications write to, active if only one."""
    writing = ctx.analysis.writing_sites
    homes = [c for c in clusters if any(s in c.sites for s in writing)]
    rows = []
    for plan in homes:
        sites = ", ".join(s for s in writing if s in plan.sites)
        rows.append(Row(columns=[
            _col("username", "app", "placeholder: the application's account"),
            _col("password", "<password>", "placeholder"),
            _col("default_hostgroup", plan.hostgroups["writer"],
                 f"applications at {sites} write to their own cluster, {plan.name}"),
            _col("transaction_persistent", 1, "a transaction stays on one hostgroup: query "
                 "rules route a transaction by its first statement"),
        ], reason=f"on the ProxySQL instances at {sites}", active=len(homes) == 1))
    return rows


def _monitor_variables(ctx: PlanContext) -> list[Setting]:
    writing = set(ctx.analysis.writing_sites)
    worst_ms, pair = 0.0, ""
    for link in ctx.analysis.links:
        a, b = link.sites
        if a in writing or b in writing:
            top = float(link.rtt.quantile(1.0))
            if top > worst_ms:
                worst_ms, pair = top, f"{a}-{b}"
    needed = math.ceil(_HEALTHCHECK_ROUND_TRIPS * worst_ms / 100.0) * 100
    timeout = max(_HEALTHCHECK_TIMEOUT_MS, needed)
    why = (f"ProxySQL's default {_HEALTHCHECK_TIMEOUT_MS} ms"
           + (f" kept: a check on a new connection costs about {_HEALTHCHECK_ROUND_TRIPS} "
              f"round trips, {_HEALTHCHECK_ROUND_TRIPS * worst_ms:.0f} ms at the highest RTT "
              f"from a ProxySQL site to a node ({pair}, {worst_ms:.1f} ms)"
              if timeout == _HEALTHCHECK_TIMEOUT_MS else
              f" raised: a check on a new connection costs about {_HEALTHCHECK_ROUND_TRIPS} "
              f"round trips and the highest RTT from a ProxySQL site to a node is "
              f"{worst_ms:.1f} ms ({pair})") if pair else
           f"ProxySQL's default {_HEALTHCHECK_TIMEOUT_MS} ms: every node is local")
    return [
        Setting(name="mysql-monitor_username", value="monitor",
                reason="placeholder: the account ProxySQL's monitor logs in with"),
        Setting(name="mysql-monitor_password", value="<password>", reason="placeholder"),
        Setting(name="mysql-monitor_galera_healthcheck_timeout", value=timeout, reason=why),
    ]


# -- operating system --------------------------------------------------------------------


def os_plan(ctx: PlanContext) -> OsPlan:
    """sysctl settings for every Galera node, garbd host and replica (DOMAIN.md section 2)."""
    from advisor.model import tcp

    carried = {frozenset(link.sites): link for c in ctx.option.clusters for link in c.links}
    for a in ctx.option.async_links:
        link = ctx.analysis.link(*a.sites)
        carried[frozenset(link.sites)] = link
    settings = [_slow_start(ctx, list(carried.values()))]
    if carried:
        worst = max(carried.values(), key=lambda link: link.effective_bandwidth_mbps
                    * float(link.rtt.quantile(0.99)))
        rtt = float(worst.rtt.quantile(0.99))
        bandwidth = worst.effective_bandwidth_mbps
        bdp = float(tcp.bdp_bytes(bandwidth, rtt))
        buffer = int(tcp.socket_buffer_bytes_for(bandwidth, rtt))
        assumed = "" if worst.bandwidth_mbps else " (bandwidth assumed: no bandwidth_mbps given)"
        basis = (f"bandwidth-delay product of the worst WAN link {worst.sites[0]}-"
                 f"{worst.sites[1]}: {bandwidth:g} Mbit/s x {rtt:.1f} ms (RTT p99) = "
                 f"{bdp:,.0f} bytes{assumed}; Linux advertises about half a buffer as window, "
                 f"so {buffer:,} bytes")
        settings += [
            Setting(name="net.core.rmem_max", value=max(buffer, _CORE_MAX_BYTES),
                    reason=f"largest receive buffer a program may ask for: {basis}; "
                           f"Linux default {_CORE_MAX_BYTES:,}"),
            Setting(name="net.core.wmem_max", value=max(buffer, _CORE_MAX_BYTES),
                    reason=f"the same for send buffers ({buffer:,} bytes); Linux default "
                           f"{_CORE_MAX_BYTES:,}"),
        ]
        for name, (low, mid, high), kind in (("net.ipv4.tcp_rmem", _TCP_RMEM, "receive"),
                                             ("net.ipv4.tcp_wmem", _TCP_WMEM, "send")):
            settings.append(Setting(
                name=name, value=f"{low} {mid} {max(buffer, high)}",
                reason=f"autotuned {kind} buffers grow up to the third value: {buffer:,} bytes "
                       f"needed; the Linux default {high:,} is kept when larger, the minimum "
                       "and default too"))
    return OsPlan(file="config/sysctl-advisor.conf", settings=settings, notes=[
        "Install as /etc/sysctl.d/90-advisor.conf on every Galera node, garbd host and "
        "ProxySQL host, then run sysctl --system."])


def _slow_start(ctx: PlanContext, wan: list[LinkEvidence]) -> Setting:
    from advisor.model import tcp

    why = ("Linux restarts a connection idle longer than one RTO from the initial window of "
           "10 segments (DOMAIN.md section 2); Galera links idle between bursts of writes")
    if wan:
        worst = max(wan, key=lambda link: float(link.rtt.quantile(0.5)))
        size = ctx.analysis.writeset_bytes.p99_bytes
        rtt = float(worst.rtt.quantile(0.5))
        bandwidth = worst.effective_bandwidth_mbps
        cold = float(tcp.request_response_ms(size, 128, rtt, bandwidth, window="cold"))
        warm = float(tcp.request_response_ms(size, 128, rtt, bandwidth, window="warm"))
        why += (f": a {size:,.0f}-byte write set (p99) over {worst.sites[0]}-{worst.sites[1]} "
                f"takes {cold:.1f} ms after idling against {warm:.1f} ms with an open window "
                "(TCP model)")
    return Setting(name="net.ipv4.tcp_slow_start_after_idle", value=0, reason=why)
