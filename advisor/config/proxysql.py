"""ProxySQL in front of the clusters: servers, ``mysql_galera_hostgroups``, the query rules
that route each hot row's writes to its owner, users and monitor variables.

Sources: ProxySQL documentation, Galera configuration (``mysql_galera_hostgroups``):
https://proxysql.com/documentation/galera-configuration; ProxySQL's source, branch v2.7
(``lib/MySQL_HostGroups_Manager.cpp``, ``lib/MySQL_Thread.cpp``):
https://github.com/sysown/proxysql.
"""

from __future__ import annotations

__all__ = ["APP_PASSWORD", "MONITOR_PASSWORD", "hostgroups", "proxysql_plan", "read_only_hosts"]

import re

from advisor.config.model import (
    ClusterPlan,
    PlanContext,
    ProxySQLPlan,
    Row,
    Setting,
)
from advisor.engine import failover

# Percona proxysql-admin pins the writer with weight 1,000,000 against 1,000
# (percona/proxysql-admin-tool-doc, docs/proxysql-admin-tool-v2-config.md:
# https://github.com/percona/proxysql-admin-tool-doc).
_WRITER_WEIGHT = 1_000_000
_SAME_SITE_WEIGHT = 100_000
_OTHER_WEIGHT = 1_000
# A node that serves an asynchronous channel: the writer only when nothing else is left.
_CHANNEL_WEIGHT = 10
# Secrets: placeholders, the same in every file that needs them.
MONITOR_PASSWORD = "<monitor-password>"
APP_PASSWORD = "<app-password>"
# ProxySQL's mysql-monitor_galera_healthcheck_timeout default [ms] and the round trips of a
# check on a new connection (advisor.engine.failover, which computes the RTO from them).
_HEALTHCHECK_TIMEOUT_MS = int(failover.PROXYSQL_HEALTHCHECK_TIMEOUT_MS)
_HEALTHCHECK_ROUND_TRIPS = failover.HEALTHCHECK_ROUND_TRIPS
_ROW_NAME = re.compile(
    r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s+([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"
    r"([A-Za-z0-9_.-]+)\s*$"
)


def hostgroups(index: int) -> dict[str, int]:
    """ProxySQL hostgroups of cluster ``index``: a block of four per cluster, 10, 20..."""
    base = 10 * (index + 1)
    return {"writer": base, "backup_writer": base + 1, "reader": base + 2, "offline": base + 3}


def _col(name: str, value: str | int, reason: str) -> Setting:
    return Setting(name=name, value=value, reason=reason)


def proxysql_plan(
    ctx: PlanContext, clusters: list[ClusterPlan], channel_hosts: set[str]
) -> ProxySQLPlan:
    """mysql_servers, mysql_galera_hostgroups, query rules, users and monitor settings;
    ``channel_hosts`` serve asynchronous channels and get the lowest writer weight."""
    servers, groups = [], []
    for plan in clusters:
        read_only = read_only_hosts(plan)
        for site in plan.sites:
            for host in ctx.hosts(site):
                servers.append(_server_row(plan, site, host, channel_hosts, read_only))
        groups.append(_galera_row(plan))
    return ProxySQLPlan(
        file="config/proxysql.sql",
        servers=servers,
        galera_hostgroups=groups,
        query_rules=_query_rules(ctx, clusters),
        users=_users(ctx, clusters),
        variables=_monitor_variables(ctx),
        notes=[
            "Run this on the admin interface of every ProxySQL instance (one or a pair at each "
            "site with applications); only mysql_users differs between sites.",
            "Create the monitor account on one node of every cluster (Galera copies it), "
            "with the mariadb / mysql client: CREATE USER IF NOT EXISTS 'monitor'@'%' "
            f"IDENTIFIED BY '{MONITOR_PASSWORD}'; (USAGE is enough: ProxySQL reads "
            "wsrep_local_state, read_only and wsrep_desync through it).",
        ],
    )


def read_only_hosts(plan: ClusterPlan) -> set[str]:
    """The nodes of cluster ``plan`` whose configuration sets read_only (``writes: false``
    sites, advisor.config.galera.read_only_settings)."""
    return {
        host
        for site in plan.site_plans
        if any(s.name == "read_only" for s in site.server)
        for host in site.hosts
    }


def _server_row(
    plan: ClusterPlan, site: str, host: str, channel_hosts: set[str], read_only: set[str]
) -> Row:
    if host in read_only:
        return _reader_row(plan, site, host, channel_hosts)
    if host == plan.writer_host:
        weight, why = _WRITER_WEIGHT, "the cluster's one writer: the highest weight wins"
    elif host in channel_hosts:
        weight, why = (
            _CHANNEL_WEIGHT,
            "serves an asynchronous channel (config/async-replication-*.sql): a writer only "
            "when no other node is left",
        )
    elif site == plan.writer_site:
        weight, why = _SAME_SITE_WEIGHT, "next writer if the writer fails: same site"
    else:
        weight, why = _OTHER_WEIGHT, "writer only when the writer's site has none left"
    return Row(
        columns=[
            _col(
                "hostgroup_id",
                plan.hostgroups["writer"],
                f"start in cluster {plan.name}'s writer hostgroup; ProxySQL moves each node to "
                "its role",
            ),
            _col("hostname", host, "placeholder"),
            _col("port", 3306, "the MySQL port"),
            _col(
                "weight",
                weight,
                why + " (ProxySQL orders writers by weight, then hostname, "
                "ProxySQL docs: mysql_galera_hostgroups; Percona proxysql-admin uses 1,000,000 "
                "against 1,000)",
            ),
            _col("comment", f"{plan.name} @ {site}", "cluster and site, for people"),
        ],
        reason=f"node of cluster {plan.name} at site {site}",
    )


def _reader_row(plan: ClusterPlan, site: str, host: str, channel_hosts: set[str]) -> Row:
    """A read_only node: in the reader hostgroup, never a writer nor a backup writer.

    ProxySQL's Galera monitor moves a node with read_only=1 to the reader hostgroup (offline
    when its receive queue exceeds max_transactions_behind) and one with read_only=0 to the
    writers (lib/MySQL_Monitor.cpp, the Galera check); it checks the servers of all four
    hostgroups of an active ``mysql_galera_hostgroups`` row (lib/MySQL_HostGroups_Manager.cpp),
    so a node that starts in the reader hostgroup is watched, and becomes a writer when a
    promotion lifts its read_only."""
    if plan.read_only and host == plan.writer_host:
        weight, why = (
            _WRITER_WEIGHT,
            "the writer once a regional failover lifts read_only (the runbook lifts it here "
            "first); until then a reader",
        )
    elif host in channel_hosts:
        weight, why = _CHANNEL_WEIGHT, "applies an asynchronous channel: few reads here"
    else:
        weight, why = _OTHER_WEIGHT, "a reader"
    where = (
        f"cluster {plan.name} is read-only by design (writes: false sites)"
        if plan.read_only
        else f"site {site} has writes: false: its nodes are read_only"
    )
    return Row(
        columns=[
            _col(
                "hostgroup_id",
                plan.hostgroups["reader"],
                f"{where}: the reader hostgroup only; ProxySQL makes a read_only=1 node neither "
                "writer nor backup writer (ProxySQL docs: mysql_galera_hostgroups)",
            ),
            _col("hostname", host, "placeholder"),
            _col("port", 3306, "the MySQL port"),
            _col("weight", weight, why + " (ProxySQL balances reads by weight)"),
            _col("comment", f"{plan.name} @ {site}", "cluster and site, for people"),
        ],
        reason=f"read_only node of cluster {plan.name} at site {site}",
    )


def _galera_row(plan: ClusterPlan) -> Row:
    hg = plan.hostgroups
    return Row(
        columns=[
            _col("writer_hostgroup", hg["writer"], "a block of four hostgroups per cluster"),
            _col(
                "backup_writer_hostgroup",
                hg["backup_writer"],
                "writable nodes beyond max_writers wait here",
            ),
            _col("reader_hostgroup", hg["reader"], "nodes that serve reads"),
            _col(
                "offline_hostgroup",
                hg["offline"],
                "nodes out of the primary component, desynced or not synced",
            ),
            _col("active", 1, "ProxySQL manages these hostgroups from the nodes' wsrep state"),
            _col(
                "max_writers",
                1,
                "one writer per cluster: no certification conflicts between "
                "its nodes, and Codership's single-writer flow control applies (ProxySQL docs: "
                "mysql_galera_hostgroups)",
            ),
            _col(
                "writer_is_also_reader",
                2,
                "only backup writers serve reads, the writer keeps "
                "its capacity for writes (proxysql-admin default; ProxySQL PR #3187 fixed nodes "
                "vanishing in this mode: use a recent ProxySQL)",
            ),
            _col(
                "max_transactions_behind",
                100,
                "proxysql-admin default; ProxySQL 2.7 compares "
                "it with wsrep_local_recv_queue of read_only=1 nodes only",
            ),
            _col("comment", plan.name, "the cluster"),
        ],
        reason=(
            f"cluster {plan.name}: read-only by design, no writer until a regional failover "
            f"lifts read_only, {plan.writer_host} first"
            if plan.read_only
            else f"cluster {plan.name}: writer pinned at {plan.writer_host} ({plan.writer_site})"
        ),
    )


def _row_pattern(name: str) -> str | None:
    """A write-statement regex for a hot row named like ``table column=value``."""
    match = _ROW_NAME.match(name)
    if match is None:
        return None
    table, column, value = (re.escape(g) for g in match.groups())
    return (
        rf"^\s*(UPDATE|INSERT|REPLACE|DELETE)\b.*\b{table}\b.*\b{column}\s*=\s*"
        rf"'?{value}\b"
    )


def _query_rules(ctx: PlanContext, clusters: list[ClusterPlan]) -> list[Row]:
    if len(clusters) < 2:
        return []
    rules = []
    for n, row in enumerate(ctx.option.hot_rows, start=1):
        plan = clusters[row.cluster]
        pattern = _row_pattern(row.row.name)
        others = ", ".join(f"{s} +{rtt:.1f} ms" for s, rtt in row.routed_rtt_ms.items())
        rules.append(
            Row(
                columns=[
                    _col("rule_id", 100 + n, "rules for owned rows start at 101"),
                    _col(
                        "active",
                        1 if pattern else 0,
                        "on: the pattern names the row's table and key"
                        if pattern
                        else "off until match_pattern is adapted",
                    ),
                    _col(
                        "match_pattern",
                        pattern or f"<writes of {row.row.name}>",
                        "PLACEHOLDER to adapt: writes of this row (by key, tenant or range)",
                    ),
                    _col("re_modifiers", "CASELESS", "SQL keywords in any case"),
                    _col(
                        "destination_hostgroup",
                        plan.hostgroups["writer"],
                        f"the writer of cluster {plan.name}, at the owner site {row.owner}",
                    ),
                    _col("apply", 1, "stop at this rule"),
                    _col("comment", f"owned by {row.owner}", "the row's owner site"),
                ],
                reason=(
                    f'"{row.row.name}" is owned by {row.owner} (its first writer site); '
                    f"writes from elsewhere pay one round trip per statement"
                    + (f" ({others})" if others else "")
                ),
                active=pattern is not None,
            )
        )
    return rules


def _users(ctx: PlanContext, clusters: list[ClusterPlan]) -> list[Row]:
    """One mysql_users row per cluster that applications write to, active if only one."""
    writing = ctx.analysis.writing_sites
    homes = [c for c in clusters if any(s in c.sites for s in writing)]
    rows = []
    for plan in homes:
        sites = ", ".join(s for s in writing if s in plan.sites)
        rows.append(
            Row(
                columns=[
                    _col("username", "app", "placeholder: the application's account"),
                    _col("password", APP_PASSWORD, "placeholder: the application's secret"),
                    _col(
                        "default_hostgroup",
                        plan.hostgroups["writer"],
                        f"applications at {sites} write to their own cluster, {plan.name}",
                    ),
                    _col(
                        "transaction_persistent",
                        1,
                        "a transaction stays on one hostgroup: query "
                        "rules route a transaction by its first statement",
                    ),
                    _col(
                        "comment",
                        plan.name,
                        "the cluster these applications write to: a failover's return "
                        "finds them by it",
                    ),
                ],
                reason=f"on the ProxySQL instances at {sites}",
                active=len(homes) == 1,
            )
        )
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
    timeout = failover.healthcheck_timeout_ms(worst_ms)
    why = (
        f"ProxySQL's default {_HEALTHCHECK_TIMEOUT_MS} ms"
        + (
            f" kept: a check on a new connection costs about {_HEALTHCHECK_ROUND_TRIPS} "
            f"round trips, {_HEALTHCHECK_ROUND_TRIPS * worst_ms:.0f} ms at the highest RTT "
            f"from a ProxySQL site to a node ({pair}, {worst_ms:.1f} ms)"
            if timeout == _HEALTHCHECK_TIMEOUT_MS
            else f" raised: a check on a new connection costs about {_HEALTHCHECK_ROUND_TRIPS} "
            f"round trips and the highest RTT from a ProxySQL site to a node is "
            f"{worst_ms:.1f} ms ({pair})"
        )
        if pair
        else f"ProxySQL's default {_HEALTHCHECK_TIMEOUT_MS} ms: every node is local"
    )
    return [
        Setting(
            name="mysql-monitor_username",
            value="monitor",
            reason="placeholder: the account ProxySQL's monitor logs in with",
        ),
        Setting(
            name="mysql-monitor_password",
            value=MONITOR_PASSWORD,
            reason="placeholder: the monitor account's secret",
        ),
        Setting(name="mysql-monitor_galera_healthcheck_timeout", value=timeout, reason=why),
    ]
