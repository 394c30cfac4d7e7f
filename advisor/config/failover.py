"""Failover between clusters as configuration: the heartbeat that shows each channel's lag,
and per failover of the model (:mod:`advisor.engine.failover`) the files that promote the
survivor, move the writes in ProxySQL, fence the old writer, bring it back, and switch the
writes over and back on purpose.

The model says which cluster takes a lost cluster's writes, at what recovery point (the
channel's p99 lag) and recovery time (ProxySQL's detection, a promotion within a minute, the
relay log's drain); this module turns each such failover into commands on the plan's own
hosts, hostgroups and channel names, and recomputes the detection with this plan's
``mysql-monitor_galera_healthcheck_timeout`` (:func:`advisor.engine.failover.detection_s`).

The scripts (``FailoverFiles.artifacts``), POSIX shell around the mariadb / mysql client:

- promotion (``*.promote.sh``): the channel's SQL thread started, then a wait until every
  transaction received so far is applied, its IO thread stopped, and a second wait for what
  arrived meanwhile, each bounded by ``drain_timeout_s`` (the model's promotion time): MariaDB
  ``MASTER_GTID_WAIT`` on the connection's ``Gtid_IO_Pos`` less this cluster's own domain
  (MariaDB 10.11 shows the received position only in ``SHOW SLAVE STATUS``, hence a script),
  MySQL/PXC ``WAIT_FOR_EXECUTED_GTID_SET`` on the channel's ``RECEIVED_TRANSACTION_SET``
  (performance_schema.replication_connection_status). On a timeout it stops with ``NOT
  PROMOTED`` and says what to do; otherwise it prints what it applied, stops the channel and
  records the position in ``advisor.failover_log``. The two threads are never both stopped
  while something received is unapplied: MariaDB purges the relay log of a GTID channel that
  starts with both stopped (sql/slave.cc, start_slave_threads; our lab: 0 of 200 received
  transactions applied; https://github.com/openark/orchestrator/pull/1264).
- return (``*.return.sh``): the returning cluster's commits that never crossed (MariaDB: its
  ``gtid_binlog_pos`` in its domain against the recorded ``gtid_slave_pos``; MySQL:
  ``GTID_SUBTRACT``), counted, kept aside by ``mariadb-binlog`` (GTID ``--start-position`` is
  exclusive, ``--stop-position`` inclusive, MariaDB 10.8+) or ``mysqlbinlog --include-gtids``,
  the file's count checked; only then (MariaDB) a rebuild from the survivor's consistent
  ``mariadb-dump --single-transaction --gtid --master-data=2``, the back channel restarted at
  its position, and the taker's channel re-pointed past everything the returning cluster wrote.
- switchover (``switchover-*.sh``): read_only on the old writer's nodes, a GTID wait on the
  taker, read_only off there, ProxySQL moved, the reverse channel checked; ``back`` undoes it.

Sources: MariaDB ``STOP SLAVE 'name' IO_THREAD``, ``SHOW SLAVE STATUS`` (``Gtid_IO_Pos``),
``gtid_slave_pos``, ``gtid_binlog_pos``, ``MASTER_GTID_WAIT`` (returns 0, or -1 on timeout)
(MariaDB docs, GTID: https://mariadb.com/kb/en/gtid/; https://mariadb.com/kb/en/master_gtid_wait/;
SHOW REPLICA STATUS: https://mariadb.com/kb/en/show-replica-status/; STOP SLAVE:
https://mariadb.com/kb/en/stop-replica/; mariadb-binlog GTID positions:
https://mariadb.com/docs/server/ref/mdb/cli/mariadb-binlog/start-position); MySQL ``STOP REPLICA
IO_THREAD FOR CHANNEL``, ``gtid_executed``, ``WAIT_FOR_EXECUTED_GTID_SET`` (returns 0, or 1 on
timeout), ``GTID_SUBTRACT`` (https://dev.mysql.com/doc/refman/8.0/en/stop-replica.html;
https://dev.mysql.com/doc/refman/8.0/en/gtid-functions.html;
https://dev.mysql.com/doc/refman/8.0/en/performance-schema-replication-connection-status-table.html);
ProxySQL's ``mysql_servers.status`` (``OFFLINE_HARD``), ``mysql_galera_hostgroups.active``,
``mysql_query_rules.destination_hostgroup`` and ``mysql_users.default_hostgroup`` (ProxySQL
source, lib/ProxySQL_Admin.cpp, the admin table definitions:
https://github.com/sysown/proxysql/blob/v2.7/lib/ProxySQL_Admin.cpp); a node with
``read_only=1`` is never a writer of a Galera hostgroup (ProxySQL docs, Galera configuration:
https://proxysql.com/documentation/galera-configuration); the heartbeat after Percona's
pt-heartbeat (https://docs.percona.com/percona-toolkit/pt-heartbeat.html), written by an event
(MariaDB docs, CREATE EVENT: https://mariadb.com/kb/en/create-event/).

The heartbeat, observed on a three-node MariaDB 10.11.19 Galera cluster on loopback (galera-4,
tests/integration/galera_cluster.py): an event created on one node reached the other two as
``SLAVESIDE_DISABLED`` and ran only where it was created; when that node was killed, the newest
heartbeat row kept ageing (25 s after, still) although the other two formed a Primary
component: the channel read as dead. Created on every node with ``wsrep_on`` and
``sql_log_bin`` off, each node's event was ``ENABLED`` and wrote its own row; after one node was
killed the newest row was again 1-20 ms old once Galera had evicted it (7.6 s; during those
seconds the cluster itself takes no commits). So the file runs on every node
(:class:`~advisor.config.model.HeartbeatFile` lists them) and the reading takes the newest row of
a cluster.
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
import re
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
from advisor.errors import AdvisorError
from advisor.names import joined_names, safe_name

if TYPE_CHECKING:
    from advisor.engine.failover import Survival

# The heartbeat's period [ms]: a reading is the lag plus up to one period, so 20 ms shows a
# lag of tens of milliseconds; 50 small writes per second per node (pt-heartbeat writes once
# a second by default; its --interval goes below a second the same way).
HEARTBEAT_INTERVAL_MS = 20
# Names written into the generated shell scripts unquoted-safe: site names are
# [A-Za-z0-9_.-] (topology.schema.json), and so are the cluster, host and channel names made
# from them; checked here so that a later change of naming cannot open a script to injection.
_SHELL_SAFE = re.compile(r"^[A-Za-z0-9_.-]+$")


def _variant(ctx: PlanContext) -> Literal["mariadb", "mysql"]:
    return "mariadb" if ctx.flavor == "mariadb" else "mysql"


def heartbeat_plan(ctx: PlanContext, links: list[AsyncLinkPlan]) -> HeartbeatPlan | None:
    """The heartbeat of every writing cluster linked asynchronously (none without such
    links)."""
    if not links:
        return None
    interval = HEARTBEAT_INTERVAL_MS
    expected = {
        c.name: round(link.lag_p99_ms + interval, 1) for link in links for c in link.channels
    }
    # A cluster that takes no writes (a read-only disaster-recovery cluster) sends nothing to
    # measure, and its read_only (super_read_only on MySQL/PXC) would refuse the event's rows.
    linked = sorted(
        {i for a in ctx.option.async_links for i in a.clusters if ctx.option.clusters[i].writers}
    )
    files = [
        HeartbeatFile(
            cluster=ctx.labels[i],
            server_id=i + 1,  # advisor.config.galera.async_server_settings: index + 1
            event=f"heartbeat_{i + 1}",
            file=_heartbeat_file(ctx.labels[i]),
            hosts=[h for site in ctx.option.clusters[i].sites for h in ctx.hosts(site)],
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


def _heartbeat_file(cluster: str) -> str:
    return f"config/heartbeat-{safe_name(cluster)}.sql"


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
        lost_hosts = [h for s in lost.site_plans for h in s.hosts]
        taker_hosts = [h for s in taker.site_plans for h in s.hosts]
        _check_shell_safe(
            [lost.name, taker.name, channel.name, channel.replica_host, channel.source_host]
            + ([back.name, back.replica_host] if back else [])
            + lost_hosts
            + taker_hosts
        )
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
                source_host=channel.source_host,
                back_channel=back.name if back else None,
                back_replica_host=back.replica_host if back else None,
                lost_hosts=lost_hosts,
                taker_hosts=taker_hosts,
                lost_read_only_hosts=[
                    h
                    for sp in lost.site_plans
                    if any(x.name == "read_only" for x in sp.server)
                    for h in sp.hosts
                ],
                lost_hostgroups=dict(lost.hostgroups),
                taker_hostgroups=dict(taker.hostgroups),
                taker_writer_host=taker.writer_host,
                lost_rule_ids=_rules_to(proxysql, lost.hostgroups["writer"]),
                lost_domain_id=lost_i + 1,  # advisor.config.galera: wsrep_gtid_domain_id
                taker_domain_id=taker_i + 1,
                lost_heartbeat_file=_heartbeat_file(lost.name),
                healthcheck_timeout_ms=_healthcheck_timeout_ms(proxysql),
                # The model gives steps 3 and 4 this long (advisor.engine.failover): a drain
                # that needs more has already broken the RTO, which the operator decides on.
                drain_timeout_s=math.ceil(timing.promotion_s),
                variant=_variant(ctx),
                promote_file=f"{stem}.promote.sh",
                proxysql_file=f"{stem}.proxysql.sql",
                fence_file=f"{stem}.fence.sql",
                reconcile_file=f"{stem}.return.sh",
                return_file=f"{stem}.return.proxysql.sql",
                switchover_file=f"config/switchover-{stems[(lost.name, taker.name)]}.sh",
            )
        )
    return out


def _check_shell_safe(names: list[str]) -> None:
    for name in names:
        if not _SHELL_SAFE.match(name):
            raise AdvisorError(
                f"the failover scripts would name {name!r}, which is not made of letters, "
                "digits, '_', '.' and '-' (a bug in advisor's naming; please report it)"
            )


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
