"""Disaster-recovery regions: a cluster made only of ``writes: false`` sites, fed by
asynchronous channels from the clusters that take the writes, and the regional failover that
hands it the writes when the whole primary region (every writing site at once) is lost.

The single failures of the model (:mod:`advisor.engine.failover`) are a site, a link, a node;
losing every writing site at once is none of them unless the primary region is one site, so
the model gives it no failover and no recovery time. This module gives the design document
what its runbook needs: the channels to drain, the hostgroups to move, and the recovery point
(RPO), the worst modelled p99 lag of those channels (``lag_p99_ms`` of the plan's
asynchronous links, the JSON's ``data_at_risk_s``), or no number where a channel cannot keep
up (the lag grows as long as the peak lasts) or a writing cluster has no channel of its own.
Its recovery time has no number either: a regional failover is a person's decision (is the
region gone, or only cut off from here?), and only ProxySQL's detection is known.

Sources: Galera restores a primary component by itself after a whole cluster lost power
(``pc.recovery``, default true; Codership docs, Galera Parameters:
https://galeracluster.com/library/documentation/galera-parameters.html#pc-recovery), so a
primary region that comes back can take writes again unless it is fenced; on MariaDB with
GTID a channel whose two threads are both stopped discards its relay log at the next start,
so the drain starts the applier before it stops the fetching (this project's lab,
tests/test_config_dr.py; openark/orchestrator#1264:
https://github.com/openark/orchestrator/pull/1264); MariaDB
``MASTER_GTID_WAIT`` and ``Gtid_IO_Pos`` (https://mariadb.com/kb/en/master_gtid_wait/,
https://mariadb.com/kb/en/show-replica-status/); MySQL ``WAIT_FOR_EXECUTED_GTID_SET`` and
``performance_schema.replication_connection_status.RECEIVED_TRANSACTION_SET``
(https://dev.mysql.com/doc/refman/8.0/en/gtid-functions.html,
https://dev.mysql.com/doc/refman/8.0/en/performance-schema-replication-connection-status-table.html).
"""

from __future__ import annotations

__all__ = ["DRAIN_TIMEOUT_S", "regional_failovers", "with_read_only_takers"]

import math
from typing import Literal

from advisor.config.model import (
    AsyncLinkPlan,
    ClusterPlan,
    FailoverFiles,
    PlanContext,
    ProxySQLPlan,
    RegionalChannel,
    RegionalFailover,
)

# How long the drain waits for the DR cluster to apply what it received [s]: a design choice
# for a step a person runs and may run again (the return steps of the runbook wait as long);
# a timeout stops the runbook with a message instead of promoting over unapplied transactions.
DRAIN_TIMEOUT_S = 600


def with_read_only_takers(
    failovers: list[FailoverFiles], clusters: list[ClusterPlan]
) -> list[FailoverFiles]:
    """The model's failovers, each told whether its taker is read-only by design (a
    disaster-recovery cluster that a single failure already hands the writes to: the
    promotion must lift read_only there) and which nodes it has."""
    by_name = {c.name: c for c in clusters}
    return [
        f.model_copy(
            update={
                "taker_read_only": by_name[f.taker].read_only,
                "taker_hosts": [h for s in by_name[f.taker].site_plans for h in s.hosts],
            }
        )
        for f in failovers
    ]


def _variant(ctx: PlanContext) -> Literal["mariadb", "mysql"]:
    return "mariadb" if ctx.flavor == "mariadb" else "mysql"


def _lag_ms(link: AsyncLinkPlan) -> float | None:
    return link.lag_p99_ms if math.isfinite(link.lag_p99_ms) else None


def regional_failovers(
    ctx: PlanContext,
    clusters: list[ClusterPlan],
    links: list[AsyncLinkPlan],
    failovers: list[FailoverFiles],
    proxysql: ProxySQLPlan,
    detection_s: float,
) -> list[RegionalFailover]:
    """One regional failover per disaster-recovery cluster (read-only by design) that a
    channel from a writing cluster feeds; none without writing clusters."""
    writing = [c for c in clusters if ctx.option.clusters[c.index].writers]
    names = {c.name for c in writing}
    out = []
    for dr in clusters:
        if not dr.read_only:
            continue
        feeding = [
            (link, channel)
            for link in links
            for channel in link.channels
            if channel.replica_cluster == dr.name and channel.source_cluster in names
        ]
        if not feeding:
            continue  # nothing replicates to it: no failover to it either
        by_name = {c.name: c for c in writing}
        channels = [
            RegionalChannel(
                name=channel.name,
                source_cluster=channel.source_cluster,
                replica_host=channel.replica_host,
                lag_p99_ms=_lag_ms(link),
                lost_hostgroups=dict(by_name[channel.source_cluster].hostgroups),
                lost_rule_ids=_rules_to(proxysql, by_name[channel.source_cluster]),
                # advisor.config.galera.async_server_settings: wsrep_gtid_domain_id = index + 1
                domain_id=by_name[channel.source_cluster].index + 1,
                file=link.file,
            )
            for link, channel in feeding
        ]
        fed = {c.source_cluster for c in channels}
        unreplicated = [c.name for c in writing if c.name not in fed]
        rpo_ms, note = _rpo(channels, unreplicated)
        out.append(
            RegionalFailover(
                dr_cluster=dr.name,
                dr_sites=list(dr.sites),
                dr_hosts=[h for s in dr.site_plans for h in s.hosts],
                dr_writer_host=dr.writer_host,
                dr_hostgroups=dict(dr.hostgroups),
                dr_files=[s.file for s in dr.site_plans],
                region_sites=list(ctx.analysis.writing_sites),
                lost_clusters=[c.name for c in writing],
                lost_hosts=[h for c in writing for s in c.site_plans for h in s.hosts],
                channels=channels,
                unreplicated=unreplicated,
                rpo_ms=rpo_ms,
                rpo_note=note,
                detection_s=detection_s,
                drain_timeout_s=DRAIN_TIMEOUT_S,
                single_failure_files=[f.promote_file for f in failovers if f.taker == dr.name],
                variant=_variant(ctx),
            )
        )
    return out


def _rules_to(proxysql: ProxySQLPlan, cluster: ClusterPlan) -> list[int]:
    """The query rules that send writes to ``cluster``'s writer hostgroup."""
    ids = []
    for row in proxysql.query_rules:
        values = {c.name: c.value for c in row.columns}
        if values["destination_hostgroup"] == cluster.hostgroups["writer"]:
            ids.append(int(values["rule_id"]))
    return ids


def _rpo(channels: list[RegionalChannel], unreplicated: list[str]) -> tuple[float | None, str]:
    """The worst channel's p99 lag [ms] and where it comes from; None with the reason when
    a channel's lag is unbounded or a writing cluster has no channel into the DR cluster."""
    unbounded = [c.name for c in channels if c.lag_p99_ms is None]
    if unbounded:
        return None, (
            "unbounded: channel " + ", ".join(unbounded) + " cannot keep up "
            "with its share of the peak, so its lag grows as long as the peak lasts (the "
            "JSON's data_at_risk_unbounded)"
        )
    if unreplicated:
        return None, (
            "not modelled: cluster " + ", ".join(unreplicated) + " has no channel into the "
            "disaster-recovery cluster; its commits arrive only relayed through another "
            "cluster (log_slave_updates), two lags in a row"
        )
    worst = max(channels, key=lambda c: c.lag_p99_ms or 0.0)
    return worst.lag_p99_ms, (
        f"the p99 lag of channel {worst.name} (modelled; the JSON's data_at_risk_s)"
    )
