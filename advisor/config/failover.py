"""Failover between clusters as configuration: the heartbeat that shows each channel's lag,
and per failover of the model (:mod:`advisor.engine.failover`) the files that promote the
survivor, move the writes in ProxySQL, fence the old writer and bring it back.

The model says which cluster takes a lost cluster's writes, at what recovery point (the
channel's p99 lag) and recovery time (ProxySQL's detection, a promotion within a minute, the
relay log's drain); this module turns each such failover into commands on the plan's own
hosts, hostgroups and channel names, and recomputes the detection with this plan's
``mysql-monitor_galera_healthcheck_timeout`` (:func:`advisor.engine.failover.detection_s`).

Sources: MariaDB ``STOP SLAVE 'name' IO_THREAD``, ``gtid_slave_pos``, ``gtid_binlog_pos``,
``MASTER_GTID_WAIT`` (MariaDB docs, GTID: https://mariadb.com/kb/en/gtid/; STOP SLAVE:
https://mariadb.com/kb/en/stop-replica/); MySQL ``STOP REPLICA IO_THREAD FOR CHANNEL``,
``gtid_executed`` (https://dev.mysql.com/doc/refman/8.0/en/stop-replica.html); ProxySQL's
``mysql_servers.status`` (``OFFLINE_HARD``), ``mysql_galera_hostgroups.active``,
``mysql_query_rules.destination_hostgroup`` and ``mysql_users.default_hostgroup`` (ProxySQL
source, lib/ProxySQL_Admin.cpp, the admin table definitions:
https://github.com/sysown/proxysql/blob/v2.7/lib/ProxySQL_Admin.cpp); a node with
``read_only=1`` is never a writer of a Galera hostgroup (ProxySQL docs, Galera configuration:
https://proxysql.com/documentation/galera-configuration); the heartbeat after Percona's
pt-heartbeat (https://docs.percona.com/percona-toolkit/pt-heartbeat.html), written by an event
(MariaDB docs, CREATE EVENT: https://mariadb.com/kb/en/create-event/).
"""

from __future__ import annotations

__all__ = [
    "HEARTBEAT_INTERVAL_MS",
    "failover_files",
    "heartbeat_plan",
    "plan_detection_s",
    "survival_events",
]

import math
from typing import TYPE_CHECKING, Literal

from advisor.config.model import (
    AsyncLinkPlan,
    ClusterPlan,
    FailoverFiles,
    HeartbeatFile,
    HeartbeatPlan,
    PlanContext,
    ProxySQLPlan,
)
from advisor.engine.failover import FailoverTiming, detection_s
from advisor.names import joined_names, safe_name

if TYPE_CHECKING:
    from advisor.engine.failover import Survival

# The heartbeat's period [ms]: a reading is the lag plus up to one period, so 20 ms shows a
# lag of tens of milliseconds; 50 small writes per second per node (pt-heartbeat writes once
# a second by default; its --interval goes below a second the same way).
HEARTBEAT_INTERVAL_MS = 20
# The relay log's drain before the promotion stops the channel [s]: whole seconds above the
# channel's p99 lag, at least one.
_MIN_DRAIN_S = 1


def _variant(ctx: PlanContext) -> Literal["mariadb", "mysql"]:
    return "mariadb" if ctx.flavor == "mariadb" else "mysql"


def heartbeat_plan(ctx: PlanContext, links: list[AsyncLinkPlan]) -> HeartbeatPlan | None:
    """The heartbeat of every cluster linked asynchronously (none without such links)."""
    if not links:
        return None
    interval = HEARTBEAT_INTERVAL_MS
    expected = {
        c.name: round(link.lag_p99_ms + interval, 1) for link in links for c in link.channels
    }
    linked = sorted({i for a in ctx.option.async_links for i in a.clusters})
    files = [
        HeartbeatFile(
            cluster=ctx.labels[i],
            server_id=i + 1,  # advisor.config.galera.async_server_settings: index + 1
            event=f"heartbeat_{i + 1}",
            file=f"config/heartbeat-{safe_name(ctx.labels[i])}.sql",
        )
        for i in linked
    ]
    return HeartbeatPlan(
        files=files,
        interval_ms=interval,
        writes_per_event=1000 // interval - 1,  # one second's worth, less one: no overlap
        expected_ms=expected,
        variant=_variant(ctx),
    )


def _rules_to(proxysql: ProxySQLPlan, hostgroup: int) -> list[int]:
    ids = []
    for row in proxysql.query_rules:
        values = {c.name: c.value for c in row.columns}
        if values["destination_hostgroup"] == hostgroup:
            ids.append(int(values["rule_id"]))
    return ids


def plan_detection_s(proxysql: ProxySQLPlan) -> float:
    """The longest ProxySQL keeps a dead node in its hostgroups with this plan's checks [s]."""
    return detection_s(timeout_ms=_healthcheck_timeout_ms(proxysql))


def _healthcheck_timeout_ms(proxysql: ProxySQLPlan) -> float:
    values = {s.name: s.value for s in proxysql.variables}
    return float(values["mysql-monitor_galera_healthcheck_timeout"])


def failover_files(
    ctx: PlanContext,
    clusters: list[ClusterPlan],
    links: list[AsyncLinkPlan],
    proxysql: ProxySQLPlan,
) -> list[FailoverFiles]:
    """One set of files per (lost cluster, taker) pair the model fails over between."""
    plan = ctx.option.failover
    if plan is None:
        return []
    timing = FailoverTiming(
        detection_s=plan_detection_s(proxysql),
        promotion_s=plan.timing.promotion_s,
    )
    pairs: dict[tuple[int, int], list[Survival]] = {}
    for survival in plan.failovers:
        if survival.taker is not None:
            pairs.setdefault((survival.cluster, survival.taker), []).append(survival)
    channels = {(c.source_cluster, c.replica_cluster): c for link in links for c in link.channels}
    out = []
    # Distinct even where labels meet: a-to-b + c and a + b-to-c (names.joined_names).
    stems = joined_names(((clusters[i].name, clusters[j].name) for i, j in pairs), "-to-")
    for (lost_i, taker_i), survivals in pairs.items():
        lost, taker = clusters[lost_i], clusters[taker_i]
        channel = channels.get((lost.name, taker.name))
        if channel is None:
            continue  # nothing replicates the lost cluster's writes to the taker
        back = channels.get((taker.name, lost.name))
        rpo_ms = max(s.rpo_ms for s in survivals)
        stem = f"config/failover-{stems[(lost.name, taker.name)]}"
        out.append(
            FailoverFiles(
                lost=lost.name,
                taker=taker.name,
                events=[s.event for s in survivals],
                rpo_ms=round(rpo_ms, 3),
                rto_s=round(timing.rto_s(rpo_ms), 1),
                detection_s=timing.detection_s,
                promotion_s=timing.promotion_s,
                channel=channel.name,
                replica_host=channel.replica_host,
                back_channel=back.name if back else None,
                back_replica_host=back.replica_host if back else None,
                lost_hosts=[h for s in lost.site_plans for h in s.hosts],
                lost_hostgroups=dict(lost.hostgroups),
                taker_hostgroups=dict(taker.hostgroups),
                taker_writer_host=taker.writer_host,
                lost_rule_ids=_rules_to(proxysql, lost.hostgroups["writer"]),
                lost_domain_id=lost_i + 1,  # advisor.config.galera: wsrep_gtid_domain_id
                healthcheck_timeout_ms=_healthcheck_timeout_ms(proxysql),
                drain_s=max(_MIN_DRAIN_S, math.ceil(min(rpo_ms, 1e9) / 1000.0)),
                variant=_variant(ctx),
                promote_file=f"{stem}.promote.sql",
                proxysql_file=f"{stem}.proxysql.sql",
                fence_file=f"{stem}.fence.sql",
                return_file=f"{stem}.return.proxysql.sql",
            )
        )
    return out


def survival_events(ctx: PlanContext) -> tuple[list[str], list[str]]:
    """The single failures a cluster rides out by its own quorum, and those nobody survives,
    worded "loss of site x (cluster y)"."""
    plan = ctx.option.failover
    if plan is None:
        return [], []
    kept = [
        f"{s.event} (cluster {ctx.labels[s.cluster]})"
        for s in plan.survivals
        if s.kept_by == "quorum"
    ]
    lost = [
        f"{s.event} (cluster {ctx.labels[s.cluster]})"
        for s in plan.survivals
        if s.kept_by == "nothing"
    ]
    return kept, lost
