"""Prometheus alerting rules from the model's predictions for the deployed design.

``advisor doc`` writes ``config/prometheus-alerts.yml``: one rule group per Galera cluster of
the plan, for the metric names of mysqld_exporter (Debian's ``prometheus-mysqld-exporter``
0.14.0; source github.com/prometheus/mysqld_exporter, ``collector/global_status.go`` and
``collector/slave_status.go``). Every threshold is a number of the model or of the generated
configuration, and each rule's ``description`` says which, where it comes from, and the
generated file that is its runbook:

- flow control: the share of time paused (``rate`` of the counter
  ``mysql_global_status_wsrep_flow_control_paused_ns``, nanoseconds paused) above the share
  the model predicts at the peak (:func:`advisor.model.flow_control.pause_share`) plus
  :data:`PAUSE_TOLERANCE`;
- the receive queue (``mysql_global_status_wsrep_local_recv_queue``) at the flow-control
  interval that the design's ``gcs.fc_limit`` gives (:func:`advisor.model.flow_control.fc_limits`);
- the cluster size (``mysql_global_status_wsrep_cluster_size``) below the design's members;
- a non-Primary component (``mysql_global_status_wsrep_cluster_status``: the exporter's
  ``parseStatus`` reads ``Primary`` as 1, ``non-Primary`` and ``Disconnected`` as 0);
- each asynchronous channel's lag (``mysql_slave_status_seconds_behind_master``, needs
  ``--collect.slave_status``) against ``requirements.max_data_loss_s``, else the channel's
  predicted p99 lag, and the channel stopped or missing;
- certification conflicts (``wsrep_local_cert_failures`` and ``wsrep_local_bf_aborts``):
  any, since the design's one writer per cluster predicts none;
- the server down (``mysql_up``).

Why not the heartbeat the design installs: the exporter's ``--collect.heartbeat`` reads
pt-heartbeat's table, one row per ``server_id`` (``collector/heartbeat.go``: ``SELECT
UNIX_TIMESTAMP(ts), UNIX_TIMESTAMP(NOW(6)), server_id``), and exposes one series per
``server_id``. The design's ``advisor.heartbeat`` has a row per node (every node of a cluster
writes its own, so that losing one node does not stop the heartbeat:
advisor/config/failover.py), so a cluster's nodes give the same ``server_id`` twice and the
exporter answers the whole scrape with HTTP 500 ("was collected before with the same name and
label values", tests/integration/test_alerts_exporter.py). The lag rules therefore read
Seconds_Behind_Master, in whole seconds.

Selecting a cluster: the exporter's series carry no cluster name, so each rule selects the
target label :data:`TARGET_LABEL` that the scrape configuration gives every node of the
cluster (the file's header shows it). Names from user text reach the file only as YAML
strings (``yaml.safe_dump``), PromQL string literals (:func:`promql_string`) and text with
Prometheus's template braces neutralised (:func:`template_text`).
"""

from __future__ import annotations

__all__ = [
    "ALERTS_FILE",
    "PAUSE_TOLERANCE",
    "SURVIVED",
    "TARGET_LABEL",
    "AlertGroup",
    "AlertRule",
    "AlertsPlan",
    "alerts_plan",
    "promql_string",
    "render_alerts",
    "template_text",
    "template_text_keeping_values",
]

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import yaml

from advisor.model import flow_control as fc
from advisor.model.provider_options import OptionValue, parse_duration_s

if TYPE_CHECKING:
    from advisor.analysis import Analysis
    from advisor.config.model import AsyncChannel, AsyncLinkPlan, ClusterPlan, ConfigPlan
    from advisor.engine.metrics import ClusterEval

ALERTS_FILE = "config/prometheus-alerts.yml"
# The label every scrape target of a cluster carries (set in the scrape configuration).
TARGET_LABEL = "galera_cluster"
# mysqld_exporter's default port (its --web.listen-address default, :9104).
EXPORTER_PORT = 9104
# The window of every rate: long enough that a 15 s or 60 s scrape interval gives several
# samples (rate needs two), short enough that a lasting change shows within minutes
# (design choice).
WINDOW = "5m"
WINDOW_S = 300
# Paused share above the prediction that is not drift: a cluster whose appliers keep up still
# pauses in bursts; the project's lab measured up to 0.036 of the time over 20 s runs without
# a slow applier (benchmarks/calibration/lab-runs.yaml, flow-control-slow-node: 0.025 at 16
# threads on equal nodes, 0.027 and 0.036 with a CPU-starved node), and MariaDB calls 0.2
# and above trouble (mariadb-docs, flow-control-in-galera-cluster.md). 0.05 lies above the
# first and well under the second.
PAUSE_TOLERANCE = 0.05
# MASTER_CONNECT_RETRY when a channel does not set it [s] (MariaDB, CHANGE MASTER TO:
# https://mariadb.com/kb/en/change-master-to/#master_connect_retry; MySQL's
# SOURCE_CONNECT_RETRY has the same default).
DEFAULT_CONNECT_RETRY_S = 60
# Advisor's severities as Prometheus labels (the conventional critical / warning / info).
SEVERITY = {"blocker": "critical", "warning": "warning", "info": "info"}
# The rule each alert watches: its severity is that rule's, overrides included.
ALERT_RULES = {
    "GaleraFlowControlPaused": "FLOW-CONTROL",
    "GaleraRecvQueueAtFlowControlLimit": "FLOW-CONTROL",
    "GaleraClusterSizeBelowDesign": "QUORUM-NODE-LOSS",
    "GaleraNotPrimary": "QUORUM-SITE-LOSS",
    "MySQLDown": "QUORUM-NODE-LOSS",
    "GaleraConflictsAboveModel": "HOT-ROW-CONFLICTS",
    "ReplicationChannelLag": "ASYNC-DATA-LOSS",
    "ReplicationChannelStopped": "ASYNC-DATA-LOSS",
}
# Alerts of a loss the design survives (QUORUM-NODE-LOSS held for it): the margin is spent,
# not the service, so they warn at most; a node restart should not page like a lost quorum.
SURVIVED = {"GaleraClusterSizeBelowDesign", "MySQLDown"}
_BRACES = re.compile(r"\{\{|\}\}")


@dataclass(frozen=True)
class AlertRule:
    """One alerting rule: its PromQL, how long it must hold and why, and its reasons."""

    alert: str
    expr: str
    for_s: int
    for_reason: str
    rule: str  # the advisor rule whose severity it carries
    severity: str  # Prometheus severity label
    threshold: float  # in the unit the expression compares
    summary: str
    description: str
    runbook: str  # generated file(s) to act on, relative to the documents' folder
    metrics: tuple[str, ...]  # the exporter's metric names the expression reads
    labels: Mapping[str, str] = field(default_factory=dict)  # extra labels (channel)


@dataclass(frozen=True)
class AlertGroup:
    """The rules of one Galera cluster."""

    name: str
    cluster: str
    hosts: tuple[str, ...]
    rules: tuple[AlertRule, ...]


@dataclass(frozen=True)
class AlertsPlan:
    """Every rule group of the design and the file they are written to."""

    file: str
    topology: str
    architecture: str
    groups: tuple[AlertGroup, ...]

    @property
    def metrics(self) -> set[str]:
        """Every metric name a rule reads."""
        return {m for g in self.groups for r in g.rules for m in r.metrics}


def promql_string(text: str) -> str:
    """``text`` as a PromQL double-quoted string literal (Go escapes: backslash, quote and
    control characters escaped, everything else kept).

    >>> promql_string('a"b\\\\c')
    '"a\\\\"b\\\\\\\\c"'
    """
    return json.dumps(text, ensure_ascii=False)


def template_text(text: str) -> str:
    """``text`` safe inside an alert's labels and annotations, which Prometheus expands as
    Go templates: each ``{{`` and ``}}`` becomes a template printing it.

    >>> template_text("row {{ x }}")
    'row {{ "{{" }} x {{ "}}" }}'
    """
    return _BRACES.sub(lambda m: '{{ "' + m.group(0) + '" }}', text)


def alerts_plan(analysis: Analysis, plan: ConfigPlan) -> AlertsPlan:
    """The alerting rules of the design ``plan`` describes (the option it was planned for).

    Parameters
    ----------
    analysis
        What :func:`advisor.analysis.analyse` returned.
    plan
        :func:`advisor.config.plan.plan_configuration` of that analysis.

    Returns
    -------
    AlertsPlan
        One group per cluster of the plan; channel rules in the group of the replica's cluster.
    """
    option = analysis.option(plan.architecture)
    groups = []
    for cluster in plan.clusters:
        evaluated = option.clusters[cluster.index]
        rules = [
            _flow_control_paused(analysis, cluster, evaluated),
            _recv_queue(analysis, plan, cluster),
            _cluster_size(analysis, plan, cluster),
            _not_primary(analysis, plan, cluster),
            _mysql_down(analysis, plan, cluster),
            _conflicts(analysis, plan, cluster),
        ]
        for link in plan.async_links:
            for channel in link.channels:
                if channel.replica_cluster == cluster.name:
                    rules += _channel_rules(analysis, plan, link, channel)
        groups.append(
            AlertGroup(
                name=f"advisor.{cluster.name}",
                cluster=cluster.name,
                hosts=tuple(h for s in cluster.site_plans for h in s.hosts),
                rules=tuple(rules),
            )
        )
    return AlertsPlan(
        file=ALERTS_FILE,
        topology=plan.topology,
        architecture=plan.architecture,
        groups=tuple(groups),
    )


# -- the rules ------------------------------------------------------------------------------


def _severity(analysis: Analysis, alert: str) -> tuple[str, str]:
    rule = ALERT_RULES[alert]
    severity = analysis.rules[rule].severity
    if alert in SURVIVED and severity == "blocker":
        severity = "warning"
    return rule, SEVERITY[severity]


def _selector(cluster: str, **labels: str) -> str:
    pairs = {TARGET_LABEL: cluster, **labels}
    return "{" + ", ".join(f"{k}={promql_string(v)}" for k, v in pairs.items()) + "}"


def _provider_options(analysis: Analysis, cluster: ClusterPlan) -> dict[str, OptionValue]:
    """The provider options the design writes for the cluster's first site, over the options
    in force (the flavour's defaults with topology.yaml's)."""
    options: dict[str, OptionValue] = dict(analysis.provider_options)
    options.update({s.name: s.value for s in cluster.site_plans[0].provider_options})
    return options


def _cnf_files(cluster: ClusterPlan) -> str:
    return ", ".join(s.file for s in cluster.site_plans)


def _flow_control_paused(
    analysis: Analysis, cluster: ClusterPlan, evaluated: ClusterEval
) -> AlertRule:
    alert = "GaleraFlowControlPaused"
    rule, severity = _severity(analysis, alert)
    commits = analysis.topology.workload.commits_per_s
    peak = None if commits is None else commits.design_value
    capacity = evaluated.apply_capacity_per_s
    predicted = 0.0 if peak is None else fc.pause_share(peak, capacity)
    if peak is None:
        source = "the topology gives no commit rate, so the model predicts no pause"
    elif evaluated.apply_site is None or not math.isfinite(capacity):
        source = (
            f"no member applies the write sets, so at the peak of {peak:g} commits/s "
            "the model (advisor.model.flow_control.pause_share) predicts no pause"
        )
    elif predicted == 0.0:
        source = (
            f"the nodes slowest to apply (at {evaluated.apply_site}) apply up to "
            f"{capacity:.0f} write sets/s, above the peak of {peak:g} commits/s, so the model "
            "(advisor.model.flow_control.pause_share) predicts no pause"
        )
    else:
        source = (
            f"the nodes at {evaluated.apply_site} apply at most {capacity:.0f} write sets/s "
            f"against the peak of {peak:g} commits/s, so the model "
            f"(advisor.model.flow_control.pause_share, 1 - capacity / peak) predicts "
            f"{predicted:.3f}, a floor (the lab measured 0.30 where it gave 0.09 to 0.23)"
        )
    threshold = round(predicted + PAUSE_TOLERANCE, 4)
    metric = "mysql_global_status_wsrep_flow_control_paused_ns"
    expr = (
        f"max by ({TARGET_LABEL}) (rate({metric}{_selector(cluster.name)}[{WINDOW}])) / 1e9 "
        f"> {threshold:g}"
    )
    return AlertRule(
        alert=alert,
        expr=expr,
        for_s=WINDOW_S,
        for_reason=(
            f"held {WINDOW} beyond the {WINDOW} rate: a backup or a state transfer pauses a "
            "cluster for a while without any drift in the design"
        ),
        rule=rule,
        severity=severity,
        threshold=threshold,
        summary=(
            f"cluster {cluster.name} paused by flow control more than {threshold:g} of the time "
            f"over {WINDOW}"
        ),
        description=(
            f"Predicted paused share at the peak: {predicted:.3f}: {source}. The alert fires "
            f"above {threshold:g} (the prediction plus {PAUSE_TOLERANCE:g}: bursts pause a "
            "cluster whose appliers keep up, the project's lab saw up to 0.036; MariaDB "
            "calls 0.2 trouble). The share is the rate of wsrep_flow_control_paused_ns, "
            "which unlike wsrep_flow_control_paused does not depend on when FLUSH STATUS ran. "
            "Find the node that sends it (GaleraRecvQueueAtFlowControlLimit, "
            "mysql_global_status_wsrep_flow_control_sent) and compare its appliers and "
            f"gcs.fc_limit with {_cnf_files(cluster)}."
        ),
        runbook=_cnf_files(cluster),
        metrics=(metric,),
    )


def _flag(value: OptionValue) -> bool:
    return str(value).strip().upper() in ("YES", "TRUE", "ON", "1")


def _recv_queue(analysis: Analysis, plan: ConfigPlan, cluster: ClusterPlan) -> AlertRule:
    alert = "GaleraRecvQueueAtFlowControlLimit"
    rule, severity = _severity(analysis, alert)
    options = _provider_options(analysis, cluster)
    limit = float(options["gcs.fc_limit"])
    factor = float(options["gcs.fc_factor"])
    single = _flag(options.get("gcs.fc_single_primary", "NO")) or _flag(
        options.get("gcs.fc_master_slave", "NO")
    )
    nodes, view = cluster.data_nodes, cluster.members
    # garbd counts in the flow-control scaling except on PXC (PXC-694).
    members = view if plan.flavor != "pxc" else nodes
    lower, upper = fc.fc_limits(limit, factor, members, single)
    metric = "mysql_global_status_wsrep_local_recv_queue"
    scaling = (
        "not scaled (gcs.fc_single_primary)" if single else f"scaled by sqrt({members} members)"
    )
    return AlertRule(
        alert=alert,
        expr=f"max_over_time({metric}{_selector(cluster.name)}[{WINDOW}]) >= {lower}",
        for_s=WINDOW_S,
        for_reason=(
            f"the queue reached the limit in every {WINDOW} window for {WINDOW} more: the "
            "node keeps flow control on, not one burst it drained"
        ),
        rule=rule,
        severity=severity,
        threshold=float(lower),
        summary=(
            f"{{{{ $labels.instance }}}} of cluster {cluster.name} holds "
            "{{ $value }} write sets in its receive queue, at the flow-control limit"
        ),
        description=(
            f"The design sets gcs.fc_limit={limit:g}, gcs.fc_factor={factor:g}, "
            f"{scaling}: this node sends FC_STOP above {upper} queued write sets and FC_CONT "
            f"at or below {lower} (advisor.model.flow_control.fc_limits, after Galera's "
            "gcs/src/gcs.cpp _set_fc_limits). A queue that reaches it means this node applies "
            "slower than the cluster commits: every member pauses for it. Check its "
            f"appliers (wsrep_slave_threads), its disk and CPU against {_cnf_files(cluster)}."
        ),
        runbook=_cnf_files(cluster),
        metrics=(metric,),
    )


def _membership_runbook(plan: ConfigPlan, cluster: ClusterPlan) -> str:
    files = [b.file for b in plan.bootstraps if b.cluster == cluster.name]
    files += [f.promote_file for f in plan.failovers if f.lost == cluster.name]
    return ", ".join(files) if files else _cnf_files(cluster)


def _inactive_timeout_s(analysis: Analysis, cluster: ClusterPlan) -> int:
    value = _provider_options(analysis, cluster)["evs.inactive_timeout"]
    return max(1, math.ceil(parse_duration_s(value)))


def _cluster_size(analysis: Analysis, plan: ConfigPlan, cluster: ClusterPlan) -> AlertRule:
    alert = "GaleraClusterSizeBelowDesign"
    rule, severity = _severity(analysis, alert)
    nodes, view = cluster.data_nodes, cluster.members
    timeout = _inactive_timeout_s(analysis, cluster)
    metric = "mysql_global_status_wsrep_cluster_size"
    garbd = f" and the arbitrator at {cluster.garbd.site}" if cluster.garbd else ""
    return AlertRule(
        alert=alert,
        expr=f"{metric}{_selector(cluster.name)} < {view}",
        for_s=timeout,
        for_reason=(
            f"evs.inactive_timeout ({timeout} s, the design's): Galera's own time to declare a "
            "member gone; a shorter dip is a view change in progress"
        ),
        rule=rule,
        severity=severity,
        threshold=float(view),
        summary=(
            f"{{{{ $labels.instance }}}} sees {{{{ $value }}}} members in cluster {cluster.name}, "
            f"the design has {view}"
        ),
        description=(
            f"The design has {view} members in cluster {cluster.name}: {nodes} data nodes at "
            f"{', '.join(cluster.sites)}{garbd}. With fewer, the margin the quorum rules "
            f"({rule}) checked is spent: the next loss may stop the cluster. Bring the "
            f"member back; runbook: {_membership_runbook(plan, cluster)}."
        ),
        runbook=_membership_runbook(plan, cluster),
        metrics=(metric,),
    )


def _not_primary(analysis: Analysis, plan: ConfigPlan, cluster: ClusterPlan) -> AlertRule:
    alert = "GaleraNotPrimary"
    rule, severity = _severity(analysis, alert)
    timeout = _inactive_timeout_s(analysis, cluster)
    metric = "mysql_global_status_wsrep_cluster_status"
    return AlertRule(
        alert=alert,
        expr=f"{metric}{_selector(cluster.name)} == 0",
        for_s=timeout,
        for_reason=(
            f"evs.inactive_timeout ({timeout} s, the design's): a partition that lasts longer "
            "is not a view change in progress"
        ),
        rule=rule,
        severity=severity,
        threshold=0.0,
        summary=(
            f"{{{{ $labels.instance }}}} of cluster {cluster.name} is not in the Primary component"
        ),
        description=(
            "wsrep_cluster_status is not Primary (mysqld_exporter reads Primary as 1, "
            "non-Primary and Disconnected as 0): this node refuses queries, its side of a "
            f"partition has no quorum. The design keeps a primary component through the "
            f"failures {rule} checked; past them follow "
            f"{_membership_runbook(plan, cluster)}."
        ),
        runbook=_membership_runbook(plan, cluster),
        metrics=(metric,),
    )


def _mysql_down(analysis: Analysis, plan: ConfigPlan, cluster: ClusterPlan) -> AlertRule:
    alert = "MySQLDown"
    rule, severity = _severity(analysis, alert)
    detection = max(1, math.ceil(plan.detection_s))
    return AlertRule(
        alert=alert,
        expr=f"mysql_up{_selector(cluster.name)} == 0",
        for_s=detection,
        for_reason=(
            f"ProxySQL's detection with the design's checks ({plan.detection_s:g} s, "
            f"{plan.proxysql.file}): by then ProxySQL has taken the node out too"
        ),
        rule=rule,
        severity=severity,
        threshold=0.0,
        summary=f"the exporter cannot reach {{{{ $labels.instance }}}} of cluster {cluster.name}",
        description=(
            "mysqld_exporter's mysql_up is 0: the server is down or refuses the exporter's "
            f"account. Cluster {cluster.name} runs on without it as long as the quorum rules "
            f"({rule}) hold; runbook: {_membership_runbook(plan, cluster)}."
        ),
        runbook=_membership_runbook(plan, cluster),
        metrics=("mysql_up",),
    )


def _conflicts(analysis: Analysis, plan: ConfigPlan, cluster: ClusterPlan) -> AlertRule:
    """Certification conflicts: none under the design, whose ProxySQL sends every write of a
    cluster to its one writer (``max_writers`` 1), so no two members race for a row. Any
    conflict means writes reach a second node (the routing changed, a client bypasses
    ProxySQL, or a writer switch left transactions running on the old one)."""
    alert = "GaleraConflictsAboveModel"
    rule, severity = _severity(analysis, alert)
    option = analysis.option(plan.architecture)
    rows = [r for r in option.hot_rows if r.cluster == cluster.index]
    named = [f"{r.row.name} {r.conflicts_per_s:.3g}/s" for r in rows if r.conflicts_per_s > 0]
    spread = (
        f" Were writes spread over the cluster's writer sites, its hot rows would conflict at "
        f"{'; '.join(named)} (advisor.model.galera.conflict_rate_per_s)."
        if named
        else ""
    )
    cert = "mysql_global_status_wsrep_local_cert_failures"
    bf = "mysql_global_status_wsrep_local_bf_aborts"
    sel = _selector(cluster.name)
    expr = (
        f"sum by ({TARGET_LABEL}) (increase({cert}{sel}[{WINDOW}])) + "
        f"sum by ({TARGET_LABEL}) (increase({bf}{sel}[{WINDOW}])) > 0"
    )
    return AlertRule(
        alert=alert,
        expr=expr,
        for_s=0,
        for_reason=f"none: any conflict in {WINDOW} is already a departure from the design",
        rule=rule,
        severity=severity,
        threshold=0.0,
        summary=f"cluster {cluster.name}: conflicts in {WINDOW}, where the design has none",
        description=(
            "Predicted conflicts: none. ProxySQL sends every write of the cluster to one node "
            f"(max_writers 1 in {plan.proxysql.file}), so no two members race for a row."
            f"{spread} A conflict shows as a certification failure when the loser had reached "
            "commit and as a brute-force abort while it still ran (Codership KB, multi-master "
            "conflicts), so both are counted. Any: writes reach a second node (a client "
            "bypassing ProxySQL, a changed hostgroup, or transactions left running on the old "
            f"writer after a switch); check the routing in {plan.proxysql.file}."
        ),
        runbook=plan.proxysql.file,
        metrics=(cert, bf),
    )


def _channel_label(link: AsyncLinkPlan) -> str:
    """The exporter's label of a channel: MariaDB's Connection_name, MySQL's Channel_Name
    (collector/slave_status.go)."""
    return "connection_name" if link.variant == "mariadb" else "channel_name"


def _status_names(link: AsyncLinkPlan) -> dict[str, tuple[str, ...]]:
    """The exporter's names of a channel's lag and threads: SHOW SLAVE STATUS's columns
    (MariaDB; MySQL 8.0 and PXC 8.0 with any exporter), and for MySQL also SHOW REPLICA
    STATUS's, which mysqld_exporter 0.16 and later read where SHOW SLAVE STATUS is gone (MySQL
    8.4: collector/slave_status.go, "Support MySQL 8.4 replicas syntax", #837)."""
    old = {
        "lag": "mysql_slave_status_seconds_behind_master",
        "io": "mysql_slave_status_slave_io_running",
        "sql": "mysql_slave_status_slave_sql_running",
    }
    if link.variant == "mariadb":
        return {key: (name,) for key, name in old.items()}
    new = {
        "lag": "mysql_slave_status_seconds_behind_source",
        "io": "mysql_slave_status_replica_io_running",
        "sql": "mysql_slave_status_replica_sql_running",
    }
    return {key: (old[key], new[key]) for key in old}


def _connect_retry_s(channel: AsyncChannel) -> int:
    for setting in channel.options:
        if setting.name in ("MASTER_CONNECT_RETRY", "SOURCE_CONNECT_RETRY"):
            return int(setting.value)
    return DEFAULT_CONNECT_RETRY_S


def _channel_runbook(plan: ConfigPlan, link: AsyncLinkPlan, channel: AsyncChannel) -> str:
    files = [link.file]
    files += [
        f.promote_file
        for f in plan.failovers
        if f.channel == channel.name and f.taker == channel.replica_cluster
    ]
    return ", ".join(files)


def _channel_rules(
    analysis: Analysis, plan: ConfigPlan, link: AsyncLinkPlan, channel: AsyncChannel
) -> list[AlertRule]:
    lag_rule, lag_severity = _severity(analysis, "ReplicationChannelLag")
    stop_rule, stop_severity = _severity(analysis, "ReplicationChannelStopped")
    allowed = analysis.topology.requirements.max_data_loss_s
    if allowed is not None:
        allowance_s = float(allowed)
        source = f"requirements.max_data_loss_s ({allowance_s:g} s)"
    else:
        allowance_s = link.lag_p99_ms / 1000.0
        source = (
            f"the channel's predicted p99 lag, the data at risk ({link.lag_p99_ms:.1f} ms: "
            "advisor.model.replication, the link's one-way delay, serialisation, queue and the "
            "replica's apply)"
        )
    label = _channel_label(link)
    sel = _selector(channel.replica_cluster, **{label: channel.name})
    names = _status_names(link)
    lag_expr = " or ".join(f"{m}{sel}" for m in names["lag"])
    if len(names["lag"]) > 1:
        lag_expr = f"({lag_expr})"
    runbook = _channel_runbook(plan, link, channel)
    extra = {"channel": channel.name}
    stopped = _stopped_rule(channel, names, sel, runbook, extra, stop_rule, stop_severity)
    if not math.isfinite(allowance_s):
        # The design predicts a lag that grows without end (ASYNC-APPLY-CAPACITY) and no
        # requirement bounds it: no threshold follows from the model, so no lag rule.
        return [stopped]
    threshold = float(max(1, math.ceil(allowance_s)))
    lag = AlertRule(
        alert="ReplicationChannelLag",
        expr=f"{lag_expr} > {threshold:g}",
        for_s=60,
        for_reason=(
            "a minute: one large transaction's apply passes; a lag that lasts is data a site "
            "loss would take"
        ),
        rule=lag_rule,
        severity=lag_severity,
        threshold=threshold,
        summary=(
            f"channel {channel.name} on {channel.replica_host} ({channel.source_cluster} to "
            f"{channel.replica_cluster}) is {{{{ $value }}}} s behind"
        ),
        description=(
            f"Allowed: {source}; the model predicts a p99 lag of {link.lag_p99_ms:.1f} ms "
            f"over {link.sites[0]}-{link.sites[1]}. Seconds_Behind_Master counts whole seconds "
            "and reads N+1 only once the lag has reached N s, so the alert fires above "
            f"{threshold:g} s (the allowance rounded up to a whole second, at least 1): every "
            "firing is a lag at or past the allowance. Losing "
            f"{channel.source_cluster} now loses more than allowed; see {runbook}."
        ),
        runbook=runbook,
        metrics=names["lag"],
        labels=extra,
    )
    return [lag, stopped]


def _stopped_rule(
    channel: AsyncChannel,
    names: dict[str, tuple[str, ...]],
    sel: str,
    runbook: str,
    extra: dict[str, str],
    stop_rule: str,
    stop_severity: str,
) -> AlertRule:
    """A channel stopped or missing: nothing of its source reaches the replica."""
    retry = _connect_retry_s(channel)
    stopped_expr = " or ".join(f"{m}{sel} == 0" for m in (*names["io"], *names["sql"]))
    missing = " and ".join(f"absent({m}{sel})" for m in names["sql"])
    stopped_expr += f" or {missing}" if len(names["sql"]) == 1 else f" or ({missing})"
    return AlertRule(
        alert="ReplicationChannelStopped",
        expr=stopped_expr,
        for_s=retry,
        for_reason=(
            f"one reconnection attempt of the channel (its connect retry, {retry} s) did not "
            "bring it back"
        ),
        rule=stop_rule,
        severity=stop_severity,
        threshold=0.0,
        summary=(
            f"channel {channel.name} on {channel.replica_host} ({channel.source_cluster} to "
            f"{channel.replica_cluster}) is stopped or missing"
        ),
        description=(
            "Slave_IO_Running or Slave_SQL_Running is not Yes (mysqld_exporter reads "
            "Connecting as 0), or the replica shows no such channel: nothing of "
            f"{channel.source_cluster} reaches {channel.replica_cluster}, and losing "
            f"{channel.source_cluster} loses everything since the stop. Look at "
            f"Last_IO_Error / Last_SQL_Error on {channel.replica_host}; the channel is "
            f"defined in {runbook}."
        ),
        runbook=runbook,
        metrics=(*names["io"], *names["sql"]),
        labels=extra,
    )


# -- the file -------------------------------------------------------------------------------


def _duration(seconds: int) -> str:
    if seconds == 0:
        return "0s"
    if seconds % 60 == 0:
        return f"{seconds // 60}m"
    return f"{seconds}s"


def _rule_document(cluster: str, rule: AlertRule) -> dict[str, object]:
    # The cluster as a label too: the series carry it already, and two groups' rules of one
    # name then differ by their labels (promtool refuses duplicate rules).
    labels = {
        "severity": rule.severity,
        "advisor_rule": rule.rule,
        TARGET_LABEL: cluster,
        **rule.labels,
    }
    return {
        "alert": rule.alert,
        "expr": rule.expr,
        "for": _duration(rule.for_s),
        "labels": {k: template_text(v) for k, v in labels.items()},
        "annotations": {
            "summary": template_text_keeping_values(rule.summary),
            "description": template_text(rule.description) + f" (for: {rule.for_reason}.)",
            "runbook": template_text(rule.runbook),
        },
    }


def template_text_keeping_values(text: str) -> str:
    """A summary: its own ``{{ $value }}`` / ``{{ $labels.x }}`` kept, the user text in
    between made safe by :func:`template_text`.

    >>> template_text_keeping_values("{{ $labels.instance }} of {{ x }}")
    '{{ $labels.instance }} of {{ "{{" }} x {{ "}}" }}'
    """
    parts = re.split(r"(\{\{ \$(?:value|labels\.[a-z_]+) \}\})", text)
    return "".join(p if i % 2 else template_text(p) for i, p in enumerate(parts))


def _comment(text: str) -> str:
    return "\n".join(f"# {line}".rstrip() for line in text.splitlines())


def _scrape_example(alerts: AlertsPlan) -> str:
    config = {
        "scrape_configs": [
            {
                "job_name": "mysqld",
                "static_configs": [
                    {
                        "targets": [f"{h}:{EXPORTER_PORT}" for h in group.hosts],
                        "labels": {TARGET_LABEL: group.cluster},
                    }
                    for group in alerts.groups
                ],
            }
        ]
    }
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=100)


def render_alerts(alerts: AlertsPlan) -> str:
    """The rule file: a header that says how to load it, then the groups as YAML."""
    header = (
        f"{alerts.file}: Prometheus alerting rules for topology {json.dumps(alerts.topology)} "
        f"({alerts.architecture}), written by advisor doc.\n"
        "Every threshold is a figure of the model or of the generated configuration; each "
        "rule's description\nsays which, and the generated file to act on (runbook).\n"
        "Metric names are mysqld_exporter's (Debian prometheus-mysqld-exporter 0.14.0), "
        "one exporter per node, run with\n"
        "  --collect.global_status --collect.slave_status\n"
        "and not --collect.heartbeat: the design's advisor.heartbeat holds a row per node, "
        "the exporter wants one per\nserver_id and then fails the whole scrape "
        "(HTTP 500); the lag rules read Seconds_Behind_Master.\n"
        f"Each node's target needs the label {TARGET_LABEL} (its cluster), e.g. in "
        "prometheus.yml (host names are the\nplan's placeholders):\n\n"
        + _scrape_example(alerts)
        + "\nLoad this file with  rule_files: [prometheus-alerts.yml]  and check it with  "
        "promtool check rules prometheus-alerts.yml"
    )
    body = {
        "groups": [
            {"name": group.name, "rules": [_rule_document(group.cluster, r) for r in group.rules]}
            for group in alerts.groups
        ]
    }
    text = yaml.dump(body, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return _comment(header) + "\n" + text


class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper, writing long texts (expressions, descriptions) folded (``>-``)
    so that they read as paragraphs; the emitter quotes any text a folded scalar cannot
    carry, so every value loads back as written (tests/test_alerts.py checks it)."""


def _folded(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    if len(text) > 80 and "\n" not in text and text == text.strip():
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=">")
    return dumper.represent_str(text)


_Dumper.add_representer(str, _folded)
