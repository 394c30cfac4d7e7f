"""The configuration plan as plain data, and the names it gives hosts, clusters and files.

Models only (see :mod:`advisor.config.plan` for how a plan is computed). Every value is a
:class:`Setting` with a ``reason``. Host names are placeholders made from site names
(``paris-1-db1``); file names go through :func:`advisor.names.safe_name`.
"""

from __future__ import annotations

__all__ = [
    "AsyncChannel",
    "AsyncLinkPlan",
    "CertificatePlan",
    "ClusterPlan",
    "ConfigPlan",
    "ExpectationsPlan",
    "FailoverFiles",
    "Flavor",
    "GarbdPlan",
    "HeartbeatFile",
    "HeartbeatPlan",
    "OsPlan",
    "PlanContext",
    "ProxySQLPlan",
    "RegionalChannel",
    "RegionalFailover",
    "Row",
    "Setting",
    "SitePlan",
    "TransferTime",
    "cluster_labels",
    "hosts",
    "short_name",
]

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from advisor.names import distinct_names, safe_name

if TYPE_CHECKING:
    from advisor.analysis import Analysis
    from advisor.engine.metrics import Option
    from advisor.result import Finding

Value = str | int | float
Flavor = Literal["mariadb", "pxc", "codership"]


class _Plan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Setting(_Plan):
    """One value to set and why; ``raw`` values are SQL keywords, written unquoted."""

    name: str
    value: Value
    reason: str
    raw: bool = False


class Row(_Plan):
    """One row of a ProxySQL table: its columns in order, and why the row exists."""

    columns: list[Setting]
    reason: str
    active: bool = True  # False: written commented out, for the operator to adapt


class SitePlan(_Plan):
    """The Galera settings of one site's nodes (one file, a drop-in for every node there)."""

    site: str
    segment: int
    hosts: list[str]
    file: str
    provider_options: list[Setting]  # the whole wsrep_provider_options of this site's nodes
    per_node: dict[str, list[Setting]] = {}  # host -> settings that differ between nodes
    server: list[Setting] = []  # [mysqld] settings of this site only (SST donors, read_only)
    notes: list[str] = []  # said in the site's file as comments (why read_only is not set)


class GarbdPlan(_Plan):
    site: str
    host: str
    file: str
    settings: list[Setting]  # GALERA_NODES, GALERA_GROUP, GALERA_OPTIONS
    reason: str


class ClusterPlan(_Plan):
    name: str  # wsrep_cluster_name, also the cluster's label in file names
    index: int
    sites: list[str]
    spans_sites: bool
    writer_site: str
    writer_host: str
    server: list[Setting]  # [mysqld] settings, the same on every node of the cluster
    provider_options: list[Setting]  # the part of wsrep_provider_options common to all sites
    site_plans: list[SitePlan]
    garbd: GarbdPlan | None = None
    hostgroups: dict[str, int] = {}  # writer, backup_writer, reader, offline
    # Every node read_only by design: a cluster of `writes: false` sites (a disaster-recovery
    # cluster), in ProxySQL's reader hostgroup only until a regional failover lifts it.
    read_only: bool = False

    @property
    def data_nodes(self) -> int:
        """The cluster's data nodes: every site's hosts."""
        return sum(len(s.hosts) for s in self.site_plans)

    @property
    def members(self) -> int:
        """What ``wsrep_cluster_size`` reads with every member up: the data nodes and garbd."""
        return self.data_nodes + (1 if self.garbd is not None else 0)


class AsyncChannel(_Plan):
    name: str
    source_cluster: str
    replica_cluster: str
    source_host: str
    replica_host: str
    options: list[Setting]  # CHANGE MASTER / CHANGE REPLICATION SOURCE options, in order
    failover_sources: list[Setting] = []  # MySQL: source host -> weight
    reason: str
    # The replica's parallel appliers (MariaDB slave_parallel_*, MySQL replica_parallel_*),
    # set before the channel starts, each with why.
    appliers: list[Setting] = []


class AsyncLinkPlan(_Plan):
    clusters: tuple[str, str]
    sites: tuple[str, str]
    file: str
    variant: Literal["mariadb", "mysql"]
    rtt_p50_ms: float
    lag_p99_ms: float
    channels: list[AsyncChannel]
    user: list[Setting]  # the replication account, created on each source cluster
    notes: list[str]


class ProxySQLPlan(_Plan):
    file: str
    servers: list[Row]
    galera_hostgroups: list[Row]
    query_rules: list[Row]
    users: list[Row]
    variables: list[Setting]
    notes: list[str]


class OsPlan(_Plan):
    file: str
    settings: list[Setting]  # minimums: a host already higher keeps its value
    exact: list[Setting] = []  # switches set to this value (tcp_slow_start_after_idle)
    notes: list[str]
    conf_path: str = "/etc/sysctl.d/90-advisor.conf"


class CertificatePlan(_Plan):
    """The CA and a certificate per host, made by ``file`` (a shell script)."""

    file: str
    ssl_dir: str
    ca_cert: str
    server_cert: str
    server_key: str
    days: int
    hosts: list[str]


class HeartbeatFile(_Plan):
    """The heartbeat event of one cluster, named after its server_id, created on each of its
    ``hosts`` (a replicated event is disabled where it arrives)."""

    cluster: str
    server_id: int
    event: str
    file: str
    hosts: list[str]  # every node of the cluster: the file runs on each


class HeartbeatPlan(_Plan):
    """A row per node written every ``interval_ms``, read on the other clusters as lag."""

    files: list[HeartbeatFile]
    interval_ms: int
    writes_per_event: int  # the event runs every second and writes this many times
    expected_ms: dict[str, float]  # channel name -> modelled p99 lag + one interval [ms]
    variant: Literal["mariadb", "mysql"]


class FailoverFiles(_Plan):
    """Moving the writes of cluster ``lost`` to cluster ``taker``, and back; the planned
    switchover between the same two clusters."""

    lost: str
    taker: str
    events: list[str]  # the single failures this failover answers
    rpo_ms: float  # commits at risk: the channel's modelled p99 lag
    rto_s: float  # detection + promotion + drain, with this plan's health checks
    detection_s: float
    promotion_s: float
    channel: str  # the channel on the taker that replicates from the lost cluster
    replica_host: str  # the taker's node that runs it
    source_host: str  # the lost cluster's node that channel reads from
    back_channel: str | None  # the channel on the lost cluster that replicates from the taker
    back_replica_host: str | None
    lost_hosts: list[str]
    taker_hosts: list[str]
    lost_hostgroups: dict[str, int]
    taker_hostgroups: dict[str, int]
    taker_writer_host: str
    lost_rule_ids: list[int]  # the query rules that route the lost cluster's rows
    lost_domain_id: int  # the lost cluster's GTID domain (MariaDB wsrep_gtid_domain_id)
    taker_domain_id: int  # the taker's own GTID domain, never applied by its channels
    lost_heartbeat_file: str  # run again on the lost cluster's nodes at the end of the return
    healthcheck_timeout_ms: float
    drain_timeout_s: int  # the longest the promotion waits for the relay log to be applied
    variant: Literal["mariadb", "mysql"]
    promote_file: str  # shell script, against replica_host
    proxysql_file: str  # ProxySQL admin, on every ProxySQL
    fence_file: str  # MySQL client, on every node of the lost cluster when it is back
    reconcile_file: str  # shell script: keeps the lost commits aside, rebuilds, re-points
    return_file: str  # ProxySQL admin, when the lost cluster has caught up
    switchover_file: str  # shell script: the planned move of the writes, and back
    taker_read_only: bool = False  # the taker is read-only by design: the promotion lifts it
    # Nodes of the lost cluster that are read_only by design (its `writes: false` sites): the
    # return and the switchover leave them read_only.
    lost_read_only_hosts: list[str] = []

    def artifacts(self) -> list[tuple[str, str]]:
        """``(file, template)`` of every file of this failover, in runbook order."""
        return [
            (self.promote_file, "config/failover-promote.sql.j2"),
            (self.proxysql_file, "config/failover-proxysql.sql.j2"),
            (self.fence_file, "config/failover-fence.sql.j2"),
            (self.reconcile_file, "config/failover-reconcile.sh.j2"),
            (self.return_file, "config/failover-return.sql.j2"),
            (self.switchover_file, "config/switchover.sh.j2"),
        ]


class BootstrapFiles(_Plan):
    """Making the survivors of a weighted two-site cluster primary after its weighted site is
    lost (advisor.config.bootstrap)."""

    cluster: str
    lost: str  # the weighted site
    survivors: list[str]  # the sites an operator bootstraps
    weight: int  # pc.weight of each node at the lost site
    lost_hosts: list[str]
    survivor_hosts: list[str]
    hostgroups: dict[str, int]  # the cluster's ProxySQL hostgroups
    variant: Literal["mariadb", "mysql"]
    file: str  # MySQL client, on the survivor that applied the most


class RegionalChannel(_Plan):
    """A channel into the disaster-recovery cluster from a cluster of the primary region."""

    name: str
    source_cluster: str
    replica_host: str  # the DR node that runs it: where the drain runs
    lag_p99_ms: float | None  # modelled p99 lag; None: unbounded (the channel cannot keep up)
    lost_hostgroups: dict[str, int]  # the source cluster's ProxySQL hostgroups
    lost_rule_ids: list[int]  # the query rules that send writes to the source cluster
    domain_id: int  # the source cluster's GTID domain (MariaDB wsrep_gtid_domain_id)
    file: str  # the channel's SQL (config/async-replication-*.sql): its options, reversed


class RegionalFailover(_Plan):
    """Losing the primary region, every writing site at once: the disaster-recovery cluster
    takes the writes, by a person's decision (advisor.config.regions)."""

    dr_cluster: str
    dr_sites: list[str]
    dr_hosts: list[str]
    dr_writer_host: str  # the DR node that becomes ProxySQL's writer (read_only lifted first)
    dr_hostgroups: dict[str, int]
    dr_files: list[str]  # the DR cluster's Galera files, where read_only = ON is written
    region_sites: list[str]  # every writing site: the primary region
    lost_clusters: list[str]
    lost_hosts: list[str]
    channels: list[RegionalChannel]
    unreplicated: list[str]  # writing clusters with no channel into the DR cluster
    rpo_ms: float | None  # the worst channel's modelled p99 lag; None: unbounded or not modelled
    rpo_note: str  # where the RPO comes from, or why there is no number
    detection_s: float  # ProxySQL's detection with this plan's checks; the decision is a person's
    drain_timeout_s: int  # how long the drain waits for the received transactions
    single_failure_files: list[str]  # promote files of the model that cover this loss already
    variant: Literal["mariadb", "mysql"]


class TransferTime(_Plan):
    """A full state transfer (or a replica's seeding) of the dataset over one WAN link."""

    sites: tuple[str, str]
    purpose: str  # "SST between segments of cluster x" or "seeding a replica of ..."
    bandwidth_mbps: float
    rtt_p99_ms: float
    rate_mbps: float  # what one TCP stream gets: bandwidth, or the window over the RTT
    seconds: float | None  # None without a dataset size


class ExpectationsPlan(_Plan):
    """What a DBA asks of such a design beyond the settings: state-transfer times, causal
    reads, streaming replication, read-your-writes across asynchronous links."""

    dataset_bytes: float | None
    transfers: list[TransferTime]
    causal_read_ms: dict[str, float]  # cluster -> what wsrep_sync_wait adds to a read, p50
    fragment_bytes: int | None  # wsrep_trx_fragment_size to advise, None when not needed
    fragment_note: str
    read_your_writes: list[str]


class ConfigPlan(_Plan):
    topology: str
    architecture: str
    flavor: Flavor
    placeholder_note: str
    clusters: list[ClusterPlan]
    proxysql: ProxySQLPlan
    async_links: list[AsyncLinkPlan]
    os: OsPlan
    certificates: CertificatePlan
    heartbeat: HeartbeatPlan | None = None
    failovers: list[FailoverFiles] = []
    regional_failovers: list[RegionalFailover] = []  # one per disaster-recovery cluster
    bootstraps: list[BootstrapFiles] = []  # one per weighted two-site cluster
    kept_by_quorum: list[str] = []  # single failures a cluster rides out by itself
    detection_s: float = 0.0  # the longest ProxySQL keeps a dead node, this plan's checks
    unsurvived: list[str] = []  # single failures after which nobody takes the writes
    expectations: ExpectationsPlan | None = None

    def files(self) -> list[str]:
        """Every artifact file the plan describes, in a stable order."""
        names = [s.file for c in self.clusters for s in c.site_plans]
        names += [
            f"config/nodes/{safe_name(h)}.cnf"
            for c in self.clusters
            for s in c.site_plans
            for h in s.per_node
        ]
        names += [c.garbd.file for c in self.clusters if c.garbd]
        names += [self.proxysql.file, *(a.file for a in self.async_links), self.os.file]
        names.append(self.certificates.file)
        if self.heartbeat is not None:
            names += [f.file for f in self.heartbeat.files]
        for f in self.failovers:
            names += [name for name, _ in f.artifacts()]
        names += [b.file for b in self.bootstraps]
        return names


@dataclass(frozen=True)
class PlanContext:
    """What the plan's parts read: the analysis, the option, names and writer sites."""

    analysis: Analysis
    option: Option
    labels: list[str]  # cluster names, by cluster index
    writer_sites: list[str]  # the ProxySQL writer's site, by cluster index

    @property
    def flavor(self) -> Flavor:
        return self.analysis.loaded.topology.galera.flavor

    def findings(self, rule: str) -> list[Finding]:
        """Findings of ``rule`` under this option."""
        return [
            f
            for f in self.analysis.findings
            if f.rule == rule and f.option == self.option.architecture
        ]

    def hosts(self, site: str) -> list[str]:
        return hosts(site, self.analysis.loaded.topology.site(site).nodes)

    def writer_host(self, index: int) -> str:
        """The node ProxySQL weights as cluster ``index``'s writer: the first of its writer
        site ("" for a cluster without data nodes there)."""
        hosts = self.hosts(self.writer_sites[index])
        return hosts[0] if hosts else ""


def short_name(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, a checksum keeping cut names distinct."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 9]}-{zlib.crc32(text.encode()):08x}"


def cluster_labels(groups: Sequence[Sequence[str]]) -> list[str]:
    """A name per cluster (its wsrep_cluster_name): its sites joined by ``_``, cut to 48
    characters, made distinct, also as file names, where two meet (the group ``a, b`` and
    the site ``a_b``): :func:`advisor.names.distinct_names`."""
    proposed = {tuple(group): short_name("_".join(group), 48) for group in groups}
    labels = distinct_names(proposed, fold=lambda label: safe_name(label).casefold())
    return [labels[tuple(group)] for group in groups]


def hosts(site: str, nodes: int) -> list[str]:
    """Placeholder host names of a site's data nodes: ``paris-1-db1``, ``paris-1-db2``..."""
    return [f"{site}-db{n}" for n in range(1, nodes + 1)]
