"""Galera settings of a plan: ``wsrep_provider_options``, server variables, garbd.

Sizing: send windows as the analysis chose them (advisor.analysis: the windows the rules'
sizing functions ask for, which the predictions also use), EVS timers by the function
RTT-TAIL-INSTABILITY uses (each lengthened only where a link's silence reaches it), flow
control from Codership's single-writer recipe (every cluster of a plan has one ProxySQL
writer). Sources: Codership docs, Galera Parameters
(https://galeracluster.com/library/documentation/galera-parameters.html), the pages named at
each constant below, and for the binary log settings MariaDB's "Configuring MariaDB
Replication between Two MariaDB Galera Clusters"
(https://mariadb.com/kb/en/configuring-mariadb-replication-between-two-mariadb-galera-clusters/).
"""

from __future__ import annotations

__all__ = [
    "IST_COVER_S",
    "PROVIDER_PATHS",
    "async_server_settings",
    "garbd_plan",
    "option_text",
    "per_node_settings",
    "provider_options",
    "read_only_settings",
    "server_settings",
    "site_options",
    "site_server_settings",
    "voters_of",
]

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from advisor.config import tls
from advisor.config.model import GarbdPlan, PlanContext, Setting
from advisor.model import flow_control
from advisor.model.provider_options import (
    FLAVOR_DEFAULTS,
    OptionValue,
    format_duration,
    option_text,
)
from advisor.rules.cluster import TimerAdvice, cluster_timers, link_tail_risk

if TYPE_CHECKING:
    from advisor.engine.metrics import ClusterEval

# socket.recv_buf_size stayed at 212,992 bytes before these releases (codership/galera#552:
# https://github.com/mariadb-corporation/galera/issues/552).
_AUTO_RECV_BUF_SINCE = {3: 29, 4: 5}
# Where Debian and Ubuntu packages put the Galera 4 library: MariaDB's galera-4 package
# installs /usr/lib/galera/libgalera_smm.so (`dpkg -S` on Debian 12's galera-4 26.4.x; MariaDB
# docs, Configuring MariaDB Galera Cluster:
# https://mariadb.com/kb/en/configuring-mariadb-galera-cluster/), Percona XtraDB Cluster 8.0
# ships /usr/lib/galera4/libgalera_smm.so (PXC docs, Configure nodes for write-set
# replication: https://docs.percona.com/percona-xtradb-cluster/8.0/configure-nodes.html),
# Codership's galera-4 package /usr/lib/galera/libgalera_smm.so (Codership docs, Installing
# Galera Cluster: https://galeracluster.com/library/documentation/install-mysql.html).
# Debian's packaged my.cnf leaves wsrep_provider unset: the server then runs with
# wsrep_provider=none, accepts writes and replicates nothing.
PROVIDER_PATHS = {
    "mariadb": "/usr/lib/galera/libgalera_smm.so",
    "pxc": "/usr/lib/galera4/libgalera_smm.so",
    "codership": "/usr/lib/galera/libgalera_smm.so",
}
# SST methods that copy a running donor without blocking it, per flavour: MariaDB's
# mariabackup (MariaDB docs, Mariabackup SST Method:
# https://mariadb.com/kb/en/mariabackup-sst-method/), Percona XtraBackup for PXC 8.0, its
# default and only supported non-preview method (PXC docs, State snapshot transfer:
# https://docs.percona.com/percona-xtradb-cluster/8.0/state-snapshot-transfer.html; clone is a
# tech preview from 8.0.41) and for Codership's MySQL-wsrep 8.0 (Codership docs, State
# Snapshot Transfers: https://galeracluster.com/library/documentation/sst.html). rsync blocks
# the donor for the whole copy.
_SST_METHODS = {"mariadb": "mariabackup", "pxc": "xtrabackup-v2", "codership": "xtrabackup-v2"}
# Galera's default gcache.size, 128 MB (Galera parameters: gcache.size).
_GCACHE_DEFAULT_BYTES = 128 * 2**20
# The outage an incremental state transfer (IST) should cover: a node restarted for an hour's
# maintenance, or a cut link repaired within the hour. A design assumption, stated in the
# reason together with the hours the chosen size buys at the average and the peak rate.
IST_COVER_S = 3600.0


def _galera_version(ctx: PlanContext) -> tuple[int, int] | None:
    """(major, minor) of the Galera library: "26.4.23" is 4.23, "4.10" is 4.10."""
    text = ctx.analysis.loaded.topology.galera.version
    if not text:
        return None
    numbers = [int(n) for n in text.split(".")]
    if numbers[0] >= 25 and len(numbers) >= 3:  # wsrep API prefix: 25 = Galera 3, 26 = 4
        return numbers[1], numbers[2]
    return (numbers[0], numbers[1]) if len(numbers) >= 2 else None


def voters_of(ctx: PlanContext, index: int) -> int:
    """Data nodes of cluster ``index``."""
    cluster = ctx.option.clusters[index]
    return sum(ctx.analysis.loaded.topology.site(s).nodes for s in cluster.sites)


def _replicated_bytes_per_s(ctx: PlanContext) -> tuple[float, float, str] | None:
    """(average, peak) replicated bytes per second and where they come from."""
    workload = ctx.analysis.topology.workload
    given = workload.replicated_bytes_per_s
    if given is not None:
        avg = given.avg if given.avg is not None else given.design_value
        return avg, given.design_value, "workload.replicated_bytes_per_s in topology.yaml"
    commits = workload.commits_per_s
    if commits is None:
        return None
    mean = ctx.analysis.writeset_bytes.mean_bytes
    avg = commits.avg if commits.avg is not None else commits.design_value
    return (
        avg * mean,
        commits.design_value * mean,
        f"commits per second x the mean write set of {mean:,.0f} bytes (modelled)",
    )


def _size_text(size: int) -> str:
    mb = size // 2**20
    return f"{mb // 1024}G" if mb >= 1024 and mb % 1024 == 0 else f"{mb}M"


def gcache_bytes(avg_bytes_per_s: float) -> int:
    """The ring buffer that holds :data:`IST_COVER_S` of replication at the average rate:
    a power of two megabytes up to 1 GB (never below Galera's 128 MB default), whole
    gigabytes above.

    >>> gcache_bytes(10_000) // 2**20, gcache_bytes(2_500_000) // 2**30
    (128, 9)
    """
    need = avg_bytes_per_s * IST_COVER_S
    if need > 2**30:
        return math.ceil(need / 2**30) * 2**30
    size = _GCACHE_DEFAULT_BYTES
    while size < need:
        size *= 2
    return size


def _gcache(ctx: PlanContext, index: int) -> list[Setting]:
    rates = _replicated_bytes_per_s(ctx)
    if rates is None or "gcache.size" in ctx.analysis.loaded.topology.galera.provider_options:
        return []  # nothing to size it from, or the user's own value, kept by _kept
    avg, peak, source = rates
    size = gcache_bytes(avg)
    dataset = ctx.analysis.loaded.topology.workload.dataset_bytes
    # Replaying more than the dataset by IST costs more than copying it (SST): cap there.
    capped = dataset is not None and size > max(dataset, _GCACHE_DEFAULT_BYTES)
    if capped and dataset is not None:
        size = gcache_bytes(dataset / IST_COVER_S)
    hours_avg = size / avg / 3600.0 if avg > 0 else math.inf
    hours_peak = size / peak / 3600.0 if peak > 0 else math.inf
    cap = (
        f"; capped near the dataset ({dataset:,.0f} bytes): replaying more than that by IST "
        "costs more than a full copy"
        if capped
        else "; never above the dataset's size (give workload.dataset_bytes): beyond it a full "
        "copy is cheaper"
        if dataset is None
        else ""
    )
    return [
        Setting(
            name="gcache.size",
            value=_size_text(size),
            reason=(
                f"a node away for up to {IST_COVER_S / 3600.0:g} h rejoins by incremental "
                "state transfer (IST) from this ring buffer instead of a full copy (SST); "
                f"{avg:,.0f} bytes/s on average ({source}) x {IST_COVER_S:,.0f} s, rounded up"
                f"{cap}: it holds about {hours_avg:.1f} h at the average rate and "
                f"{hours_peak:.1f} h at the peak of {peak:,.0f} bytes/s; a file of this size "
                "in the data directory (Galera parameters: gcache.size, default 128M)"
            )
            + _was(ctx, "gcache.size"),
        )
    ]


def site_options(ctx: PlanContext, site: str, segment: int, spans: bool) -> list[Setting]:
    """gmcast.segment (clusters over several sites) and pc.weight (when not 1) of a site."""
    options = []
    if spans:
        options.append(
            Setting(
                name="gmcast.segment",
                value=segment,
                reason=(
                    f"one segment per site ({site} is segment {segment}): a write set crosses "
                    "the WAN once per remote segment and is relayed inside it, at the cost of "
                    "up to two LAN hops per commit (Galera parameters: gmcast.segment)"
                )
                + _was(ctx, "gmcast.segment"),
            )
        )
    raised = next((c.weights[site] for c in ctx.option.clusters if site in c.weights), None)
    if raised is not None:
        others = [s for c in ctx.option.clusters if site in c.weights for s in c.sites if s != site]
        options.append(
            Setting(
                name="pc.weight",
                value=raised,
                reason=(
                    f"{site}, the writer's site, outweighs {', '.join(others)}: no garbd can "
                    f"break their tie, so with equal weights losing either site or the link "
                    f"stops the cluster; with {raised} a node here, losing {', '.join(others)} "
                    f"or the link leaves {site} running, and losing {site} needs the bootstrap "
                    "runbook (Galera docs, Weighted Quorum: "
                    "https://galeracluster.com/library/documentation/weighted-quorum.html)"
                ),
            )
        )
        return options
    weight = ctx.analysis.loaded.topology.site(site).weight
    if weight != 1:
        options.append(
            Setting(
                name="pc.weight",
                value=weight,
                reason=(
                    f"weight of site {site} in topology.yaml: quorum counts each node here "
                    f"{weight} times (Galera parameters: pc.weight)"
                ),
            )
        )
    return options


def provider_options(ctx: PlanContext, index: int) -> list[Setting]:
    """The provider options every member of cluster ``index`` shares."""
    cluster = ctx.option.clusters[index]
    settings: list[Setting] = []
    settings += _windows(ctx, cluster)
    if len(cluster.members) > 1:
        settings += _timeouts(ctx, cluster) + _recv_buffer(ctx, cluster)
    if voters_of(ctx, index) > 1:
        settings += _gcache(ctx, index)
    settings += tls.provider_options(ctx)
    if voters_of(ctx, index) > 1:
        settings += _flow_control(ctx)
    return settings + _kept(ctx, {s.name for s in settings})


def _was(ctx: PlanContext, key: str) -> str:
    given = ctx.analysis.loaded.topology.galera.provider_options
    return f" (topology.yaml sets {option_text(given[key])})" if key in given else ""


def _windows(ctx: PlanContext, cluster: ClusterEval) -> list[Setting]:
    """The send windows of the design: the cluster's as the analysis evaluated the option
    (advisor.analysis.design_windows), the ones its findings advise and its predictions used;
    topology.yaml's kept as given."""
    user, send = cluster.user_window, cluster.send_window
    given = ctx.analysis.loaded.topology.galera.provider_options
    sized = ctx.analysis.option_reasons.get(ctx.option.architecture, {})
    default = FLAVOR_DEFAULTS[ctx.flavor]
    commits = ctx.analysis.topology.workload.commits_per_s

    def why(key: str) -> str:
        if key in given:
            return (
                "from galera.provider_options in topology.yaml, kept as given; the predictions "
                "use it"
            )
        if key in sized:
            return f"{sized[key]}; the predictions use it"
        if commits is None:
            return (
                f"the {ctx.flavor} default, which the predictions use: with no peak commit rate "
                "in topology.yaml SEND-WINDOW cannot size it (the vendors' WAN advice, "
                "'considerably higher, e.g. 512', is for a window that binds: give "
                "workload.commits_per_s)"
            )
        return (
            f"the {ctx.flavor} default, which the predictions use: it carries "
            f"{cluster.window_limit_commits_per_s:.0f} commits/s at this cluster's "
            f"{cluster.safe_period_ms:.1f} ms commit round, enough for the peak "
            f"{commits.design_value:g}/s (SEND-WINDOW and WRITESET-ROUNDS are quiet)"
        )

    if len(cluster.members) < 2 and (user, send) == (
        default["evs.user_send_window"],
        default["evs.send_window"],
    ):
        return []  # inside one site at the defaults: nothing to say
    return [
        Setting(
            name="evs.send_window",
            value=send,
            reason="drains the backlog; Codership advises user_send_window about half of it "
            f"(Galera parameters: evs.send_window): {why('evs.send_window')}",
        ),
        Setting(
            name="evs.user_send_window",
            value=user,
            reason="messages a node may send into an empty queue beyond what every member "
            "acknowledged (Galera parameters: evs.user_send_window): "
            + why("evs.user_send_window"),
        ),
    ]


def _timeouts(ctx: PlanContext, cluster: ClusterEval) -> list[Setting]:
    """The EVS timers RTT-TAIL-INSTABILITY advises for the cluster (the rule's own function,
    so the configuration and the finding agree: each lengthened only where a link's silence
    reaches it), and the periods that must exceed the highest RTT. Longer timers also mean a
    node that really died stalls every commit for suspect_timeout instead of PT5S, so a link
    whose silences reach no timer keeps the defaults."""
    current = ctx.analysis.provider_options
    user = ctx.analysis.loaded.topology.galera.provider_options
    limit = ctx.analysis.rules["RTT-TAIL-INSTABILITY"].parameters["max_silences_per_day"]
    advice = cluster_timers(current, user, cluster, limit)
    settings = _timer_settings(ctx, cluster, advice, limit)
    worst = max(cluster.links, key=lambda link: float(link.rtt.quantile(1.0)))
    top_ms = float(worst.rtt.quantile(1.0))
    above_rtt_s = math.floor(top_ms / 1000.0) + 1.0  # whole seconds above the highest RTT
    for key in ("evs.delay_margin", "evs.join_retrans_period"):
        if key in {s.name for s in settings} or key in user:
            continue
        if float(current[key]) * 1000.0 <= top_ms:
            settings.append(
                Setting(
                    name=key,
                    value=format_duration(above_rtt_s),
                    reason=f"must exceed the highest RTT, {top_ms:.1f} ms (Codership KB 'WAN "
                    "Latency')",
                )
            )
    return settings


_TIMER_REASONS = {
    "evs.keepalive_period": "keepalives on an idle link; must exceed the highest RTT "
    "(Codership KB 'WAN Latency')",
    "evs.delay_margin": "a peer silent beyond keepalive_period + this goes on the delayed list "
    "(evicted when evs.auto_evict is set)",
    "evs.suspect_timeout": "a member silent this long is suspected and dropped if all agree",
    "evs.inactive_timeout": "declared dead without consensus; must exceed suspect_timeout",
    "evs.install_timeout": "time to install a new view; within [keepalive_period, "
    "inactive_timeout] (Galera's range check)",
}


def _timer_settings(
    ctx: PlanContext, cluster: ClusterEval, advice: TimerAdvice, limit: float
) -> list[Setting]:
    changed = advice.changed()
    if not changed:
        return []
    notes = []
    for link in cluster.links:
        _, reasons = link_tail_risk(link, advice.given, limit)
        if reasons:
            notes.append(f"{'-'.join(link.sites)}: {'; '.join(reasons)}")
    found = (
        f"RTT-TAIL-INSTABILITY found {'; '.join(notes)}"
        if notes
        else "Galera's range checks after the other timers moved"
    )
    settings = []
    for key, seconds in changed.items():
        reason = f"{_TIMER_REASONS[key]}; {found}; lengthened only as far as the silences ask"
        if key == "evs.suspect_timeout":
            reason += (
                f"; the price: commits wait up to {format_duration(seconds)} instead of "
                f"{format_duration(float(advice.given.suspect_s))} when a node really dies "
                "(MariaDB docs: wsrep_provider_options)"
            )
        settings.append(Setting(name=key, value=format_duration(seconds), reason=reason))
    return settings


def _recv_buffer(ctx: PlanContext, cluster: ClusterEval) -> list[Setting]:
    from advisor.model import tcp

    version = _galera_version(ctx)
    if version is None or version[0] not in _AUTO_RECV_BUF_SINCE:
        return []
    if version[1] >= _AUTO_RECV_BUF_SINCE[version[0]]:
        return []
    worst = max(
        cluster.links,
        key=lambda link: link.effective_bandwidth_mbps * float(link.rtt.quantile(0.99)),
    )
    rtt = float(worst.rtt.quantile(0.99))
    size = int(tcp.socket_buffer_bytes_for(worst.effective_bandwidth_mbps, rtt))
    return [
        Setting(
            name="socket.recv_buf_size",
            value=max(size, 212_992),
            reason=(
                f"Galera {version[0]}.{version[1]} pins the receive buffer at 212992 bytes "
                "(automatic from 25.3.29 / 26.4.5, codership/galera#552); this covers the "
                "bandwidth-"
                f"delay product of {worst.sites[0]}-{worst.sites[1]} "
                f"({worst.effective_bandwidth_mbps:g} Mbit/s x {rtt:.1f} ms p99) with Linux "
                "advertising half the buffer"
            ),
        )
    ]


def _flow_control(ctx: PlanContext) -> list[Setting]:
    """The flow control of one writer per cluster (:func:`flow_control.design_flow_control`),
    the values topology.yaml pins kept as given: the model evaluated the design with the
    same values (advisor.engine.evaluator), so its pauses and queues are this file's."""
    version = _galera_version(ctx)
    modern = version is None or version >= (4, 10)
    given = ctx.analysis.loaded.topology.galera.provider_options
    one_writer = (
        "one writer per cluster (ProxySQL max_writers=1): Codership KB 'Single Master "
        f"Setup' recipe {flow_control.ONE_WRITER_FC_LIMIT} / "
        f"{flow_control.ONE_WRITER_FC_FACTOR:g} / YES"
    )
    single = next((k for k in ("gcs.fc_single_primary", "gcs.fc_master_slave") if k in given), "")
    name = single or ("gcs.fc_single_primary" if modern else "gcs.fc_master_slave")
    return [
        _fc_setting(
            "gcs.fc_limit",
            flow_control.ONE_WRITER_FC_LIMIT,
            f"a deeper receive queue before flow control pauses the cluster; {one_writer}",
            given,
        ),
        _fc_setting(
            "gcs.fc_factor",
            flow_control.ONE_WRITER_FC_FACTOR,
            f"resume as soon as the queue drops below 99 % of the limit; {one_writer}",
            given,
        ),
        _fc_setting(
            name,
            "YES",
            "the limit is not scaled by the square root of the member count"
            + ("" if modern else "; gcs.fc_single_primary replaced this in Galera 4.10")
            + ("; before Galera 4.10 the option is gcs.fc_master_slave" if version is None else ""),
            given,
        ),
    ]


def _fc_setting(
    key: str, design: float | str, why: str, given: Mapping[str, OptionValue]
) -> Setting:
    """One flow-control option: the design's, or topology.yaml's kept as given (as the send
    windows and the applier threads are), which the predictions then use."""
    if key not in given:
        return Setting(name=key, value=design, reason=why)
    return Setting(
        name=key,
        value=option_text(given[key]),
        reason=f"kept as given in topology.yaml; the design would set {option_text(design)} "
        f"({why}), and the predictions use the value given",
    )


def _kept(ctx: PlanContext, taken: set[str]) -> list[Setting]:
    """The user's own provider options, kept so that applying the plan does not drop them."""
    loaded = ctx.analysis.loaded
    kept = []
    for key, value in loaded.topology.galera.provider_options.items():
        if key in taken or key in ("gmcast.segment", "pc.weight"):
            continue
        text = option_text(value)  # writable: checked at load (provider_options.check_option)
        kept.append(
            Setting(
                name=key, value=text, reason="from galera.provider_options in topology.yaml, kept"
            )
        )
    return kept


def server_settings(
    ctx: PlanContext, index: int, label: str, address: list[str], incoming_channels: int
) -> list[Setting]:
    """The ``[mysqld]`` settings every node of cluster ``index`` shares."""
    settings = [_provider(ctx)]
    if ctx.flavor == "mariadb":
        settings.append(
            Setting(
                name="wsrep_on",
                value="ON",
                reason="MariaDB replicates through Galera only with wsrep_on=ON",
            )
        )
    settings += [
        Setting(
            name="wsrep_cluster_name",
            value=label,
            reason="the same on every node and garbd of this cluster: a node refuses to "
            "join a cluster of another name",
        ),
        Setting(
            name="wsrep_cluster_address",
            value="gcomm://" + ",".join(address),
            reason="every data node of the cluster (placeholders): a starting node joins "
            "through any one it reaches",
        ),
        Setting(
            name="binlog_format",
            value="ROW",
            reason="Galera replicates row events only (Galera, MariaDB and PXC docs)",
        ),
        Setting(
            name="innodb_autoinc_lock_mode",
            value=2,
            reason="interleaved auto-increment locks, required by Galera's parallel apply",
        ),
    ]
    settings += [*_sst(ctx), _appliers(ctx, index), *tls.server_settings(ctx)]
    if any(index in link.clusters for link in ctx.option.async_links):
        settings += async_server_settings(ctx, index, incoming_channels)
    return settings


def _provider(ctx: PlanContext) -> Setting:
    path = PROVIDER_PATHS[ctx.flavor]
    return Setting(
        name="wsrep_provider",
        value=path,
        reason=f"the Galera 4 library where {ctx.flavor} packages put it on Debian and Ubuntu; "
        "unset, the server runs with wsrep_provider=none and replicates nothing, silently. "
        "Find yours with `dpkg -S libgalera_smm.so` (`rpm -qa | grep -i galera` then "
        "`rpm -ql` on RHEL, where it is under /usr/lib64)",
    )


def _sst(ctx: PlanContext) -> list[Setting]:
    method = _SST_METHODS[ctx.flavor]
    tool = (
        "mariabackup (package mariadb-backup)"
        if method == "mariabackup"
        else ("Percona XtraBackup 8.0 (package percona-xtrabackup-80)")
    )
    auth = {
        "mariadb": "no wsrep_sst_auth: mariabackup logs in over the local socket as the OS "
        "user mysql, the account MariaDB 10.4+ creates with unix_socket authentication "
        "(MariaDB docs, Mariabackup SST Method: Authentication and Privileges)",
        "pxc": "no wsrep_sst_auth: PXC 8.0 makes its own SST account (PXC docs)",
        "codership": "give wsrep_sst_auth an account with the backup privileges if the local "
        "socket login does not have them (Codership docs: State Snapshot Transfers)",
    }[ctx.flavor]
    return [
        Setting(
            name="wsrep_sst_method",
            value=method,
            reason=f"a full state transfer copies a running donor without blocking it "
            f"(rsync, the default, blocks the donor for the whole copy); needs {tool} and "
            f"socat on every node; {auth}",
        )
    ]


def _appliers(ctx: PlanContext, index: int) -> Setting:
    """Applier threads: Little's law on the peak commit rate and the writer's site's commit
    time, doubled for bursts, at least :data:`flow_control.MIN_APPLIERS`, at most what
    ``workload.cert_deps_distance`` lets apply at once
    (:func:`advisor.model.flow_control.design_applier_threads`, the number the model's
    flow-control cap assumes)."""
    cluster = ctx.option.clusters[index]
    workload = ctx.analysis.topology.workload
    commits = workload.commits_per_s
    name = "wsrep_slave_threads" if ctx.flavor == "mariadb" else "wsrep_applier_threads"
    spelling = (
        "" if ctx.flavor == "mariadb" else "; wsrep_slave_threads before 8.0.26 (PXC, MySQL-wsrep)"
    )
    writer = cluster.writer_site
    own = ctx.analysis.topology.site(writer).local_commit_ms if writer else None
    local_ms = own if own is not None else cluster.local_commit_ms
    peak = None if commits is None else commits.design_value
    deps = workload.cert_deps_distance
    threads = flow_control.design_applier_threads(peak, local_ms, deps)
    given = ctx.analysis.topology.galera.applier_threads
    if given is not None:
        return _given_appliers(name, given, threads, deps, spelling)
    if peak is None:
        basis = "no commit rate in topology.yaml"
    else:
        busy = peak * local_ms / 1000.0
        basis = (
            f"{peak:g} commits/s at peak x {local_ms:g} ms "
            f"each = {busy:.1f} write sets applying at once (Little's law), doubled for bursts"
        )
    return Setting(
        name=name,
        value=threads,
        reason=f"threads that apply replicated write sets in parallel (default 1): {basis}, "
        f"at least {flow_control.MIN_APPLIERS}; "
        f"{_dependency_bound(deps, flow_control.design_applier_threads(peak, local_ms), threads)}"
        f"{spelling}",
    )


def _given_appliers(
    name: str, given: int, designed: int, deps: float | None, spelling: str
) -> Setting:
    """The user's applier threads (``galera.applier_threads``), kept as given: the model's
    flow-control cap counts them (those the dependencies let work)."""
    bound = (
        f"; about {deps:g} of them work at once (wsrep_cert_deps_distance {deps:g})"
        if deps is not None and deps < given
        else ""
    )
    return Setting(
        name=name,
        value=given,
        reason=f"kept as given in topology.yaml (galera.applier_threads){bound}; the design "
        f"would set {designed}, and the predictions count the threads given{spelling}",
    )


def _dependency_bound(cert_deps_distance: float | None, wanted: int, threads: int) -> str:
    """What the write sets' dependencies allow, as the applier setting's reason says it:
    ``wanted`` threads without that bound, ``threads`` with it."""
    cite = "(Codership docs: wsrep_slave_threads)"
    if cert_deps_distance is None:
        return f"more than the status wsrep_cert_deps_distance shows brings nothing {cite}"
    if threads < wanted:
        return (
            f"capped at {threads}: the measured wsrep_cert_deps_distance of "
            f"{cert_deps_distance:g} (workload.cert_deps_distance) lets no more write sets "
            f"apply at once, so more threads would add nothing {cite}"
        )
    return (
        f"within the {cert_deps_distance:g} write sets the measured wsrep_cert_deps_distance "
        f"lets apply at once (workload.cert_deps_distance) {cite}"
    )


def site_server_settings(ctx: PlanContext, site: str, spans: bool) -> list[Setting]:
    """The SST donors of a site's nodes: their own site first (clusters over several sites)."""
    if not spans:
        return []
    hosts = ctx.hosts(site)
    if not hosts:
        return []
    return [
        Setting(
            name="wsrep_sst_donor",
            value=",".join(hosts) + ",",
            reason=f"a node that needs a full copy takes it from a node of its own site "
            f"({site}), never across the WAN while one is up; the trailing comma lets any "
            "other node donate when none is (names are wsrep_node_name; MariaDB docs: "
            "wsrep_sst_donor)",
        )
    ]


# read_only for the nodes of `writes: false` sites. It binds client sessions only: the
# replica threads of an asynchronous channel and Galera's appliers still apply (MariaDB docs,
# Read-Only Replicas: https://mariadb.com/kb/en/read-only-replicas/; MySQL docs, read_only:
# https://dev.mysql.com/doc/refman/8.0/en/server-system-variables.html#sysvar_read_only; PXC:
# super_read_only does not bind the Galera applier since PXC#715,
# https://github.com/percona/percona-xtradb-cluster/pull/327; the wsrep patch's own test that
# read_only does not bind the appliers: mysql-test/suite/galera/t/galera_read_only.test in the
# MariaDB and PXC trees (MariaDB/server, percona/percona-xtradb-cluster); this project's lab:
# a MariaDB 10.11 Galera node with read_only=ON applied its peer's DDL and rows, refused an
# ordinary account's INSERT with ERROR 1290 and accepted root's, tests/test_config_dr.py).
# Not innodb_read_only: it starts InnoDB for read-only media, refusing every change, the
# appliers' and the replica thread's too, and it cannot be changed without a restart, so the
# node could neither follow its cluster nor be promoted (MySQL docs, Configuring InnoDB for
# Read-Only Operation: https://dev.mysql.com/doc/refman/8.0/en/innodb-read-only-instance.html;
# MariaDB docs, innodb_read_only, not dynamic:
# https://mariadb.com/kb/en/innodb-system-variables/#innodb_read_only).
_READ_ONLY_ACCOUNTS = {
    "mariadb": "accounts with READ_ONLY ADMIN can still write (MariaDB 10.5.2+; SUPER before; "
    "GRANT ALL includes it, so give the applications' accounts less): MariaDB has no "
    "super_read_only",
    "pxc": "super_read_only (below) stops the accounts with SUPER or CONNECTION_ADMIN too",
    "codership": "accounts with SUPER or CONNECTION_ADMIN can still write: super_read_only is "
    "not set, as no source says that the Galera applier of Codership's MySQL-wsrep skips it "
    "(PXC had to make its applier skip it, PXC#715)",
}
# A cluster where writing sites and `writes: false` sites meet is one database: read_only on
# the latter only keeps their local clients from writing. It is safe where a writable node
# is left after every single failure the cluster rides out by quorum: a component keeps the
# writes only if it holds a writing site (advisor.model.quorum), which has a node
# (topology: writes need nodes), and the loss of one node removes at most one: two writable
# nodes are enough.
_MIN_WRITABLE_NODES = 2


def _writable_nodes(ctx: PlanContext, index: int) -> int:
    cluster = ctx.option.clusters[index]
    topology = ctx.analysis.loaded.topology
    return sum(topology.site(s).nodes for s in cluster.sites if s in cluster.writers)


def read_only_settings(ctx: PlanContext, index: int, site: str) -> tuple[list[Setting], list[str]]:
    """read_only (and super_read_only on PXC) for the nodes of a ``writes: false`` site of
    cluster ``index``, and notes where it is not set. A cluster of such sites only (a
    disaster-recovery cluster) is read-only until a regional failover lifts it; inside a
    cluster with writing sites it is set only while two writable nodes remain (see
    :data:`_MIN_WRITABLE_NODES`)."""
    spec = ctx.analysis.loaded.topology.site(site)
    if spec.writes or spec.nodes == 0:
        return [], []
    cluster = ctx.option.clusters[index]
    label = ctx.labels[index]
    accounts = _READ_ONLY_ACCOUNTS[ctx.flavor]
    applies = (
        "replication still applies: Galera's appliers and an asynchronous channel's replica "
        "thread are not bound by it"
    )
    if not cluster.writers:
        why = (
            f"site {site} has writes: false and so has every site of cluster {label}: a "
            "disaster-recovery cluster, read-only until the regional failover of the runbook "
            f"lifts it; {applies}; ProxySQL keeps a read_only=1 node out of the writer and "
            "backup-writer hostgroups (ProxySQL docs: mysql_galera_hostgroups); " + accounts
        )
    else:
        writable = _writable_nodes(ctx, index)
        if writable < _MIN_WRITABLE_NODES:
            return [], [
                f"read_only is not set although site {site} has writes: false: cluster "
                f"{label} has {writable} node(s) at its writing sites; once that node is lost "
                "the cluster keeps quorum on its other nodes, which must then take the writes "
                "(ProxySQL moves the writer there): read-only, they would leave it none. A "
                "second node at a writing site would let them be read-only."
            ]
        why = (
            f"site {site} has writes: false inside cluster {label}, one database with its "
            f"writing sites: read_only keeps the local clients here from writing and "
            f"{applies}, so these nodes hold every commit; ProxySQL keeps them in the reader "
            f"hostgroup; {writable} writable nodes at the writing sites leave a writer after "
            f"any single failure the cluster rides out; " + accounts
        )
    settings = [
        Setting(
            name="read_only",
            value="ON",
            reason=why + "; not innodb_read_only, made for read-only media: it refuses the "
            "appliers' changes too and needs a restart to lift (MySQL docs: "
            "https://dev.mysql.com/doc/refman/8.0/en/innodb-read-only-instance.html)",
        )
    ]
    if ctx.flavor == "pxc":
        settings.append(
            Setting(
                name="super_read_only",
                value="ON",
                reason="read_only for the accounts with SUPER or CONNECTION_ADMIN too (MySQL "
                "docs: super_read_only); PXC's Galera applier skips it (PXC#715); a PXC 8.0 "
                "node with it in its configuration could not start before the fix of PXC-3191 "
                "(https://github.com/percona/percona-xtradb-cluster/pull/1273, 2020): use a "
                "later release",
            )
        )
    return settings, []


def async_server_settings(ctx: PlanContext, index: int, incoming: int) -> list[Setting]:
    """Binary log and GTID settings of a cluster linked asynchronously (sources: module doc),
    and, where channels arrive, the restart of a channel when its node rejoins the cluster."""
    cluster_id = index + 1
    restart = _channel_restart(ctx.flavor) if incoming else []
    events = Setting(
        name="event_scheduler",
        value="ON",
        reason="runs the heartbeat event of config/heartbeat-<cluster>.sql, which the other "
        "clusters read as the channel's lag (MariaDB's default is OFF, MySQL 8.0's ON)",
    )
    server_id = Setting(
        name="server_id",
        value=cluster_id,
        reason="the same on every node of a cluster and different between clusters, so a "
        "transaction coming back to its own cluster is skipped (MariaDB docs: Galera and MariaDB "
        "replication)",
    )
    if ctx.flavor == "mariadb":
        settings = [
            server_id,
            events,
            Setting(
                name="log_bin",
                value="mariadb-bin",
                reason="the binary log the other clusters replicate from, at the same path "
                "on every node (MariaDB docs)",
            ),
            Setting(
                name="log_slave_updates",
                value="ON",
                reason="every node writes the write sets it applies to its binary log, so "
                "any node can serve a channel (MariaDB default OFF)",
            ),
            Setting(
                name="wsrep_gtid_mode",
                value="ON",
                reason="one GTID sequence for the whole cluster, so a channel can move "
                "between nodes (MariaDB docs)",
            ),
            Setting(
                name="wsrep_gtid_domain_id",
                value=cluster_id,
                reason="the same within a cluster, different between clusters (MariaDB docs)",
            ),
        ]
        if incoming > 1:
            settings.append(
                Setting(
                    name="gtid_ignore_duplicates",
                    value="ON",
                    reason=f"this cluster receives {incoming} channels, so a transaction can "
                    "arrive by two paths; apply it once (MariaDB multi-source replication)",
                )
            )
        return settings + restart
    return [
        server_id,
        events,
        Setting(
            name="log_bin",
            value="binlog",
            reason="the binary log the other clusters replicate from",
        ),
        Setting(
            name="log_replica_updates",
            value="ON",
            reason="every node logs the write sets it applies, so any node can serve a "
            "channel (log_slave_updates before MySQL 8.0.26)",
        ),
        Setting(
            name="gtid_mode",
            value="ON",
            reason="GTID auto-positioning lets a channel move between source nodes",
        ),
        Setting(name="enforce_gtid_consistency", value="ON", reason="required by gtid_mode=ON"),
        Setting(
            name="skip_replica_start",
            value="ON",
            reason="a restarted node does not start a channel by itself: one node per "
            "cluster replicates each channel (Percona replication manager docs)",
        ),
        *restart,
    ]


def _channel_restart(flavor: str) -> list[Setting]:
    """A channel's replica stops when its node, out of the primary component, is given an
    event to apply, and by default stays stopped after the node rejoins; ON restarts it on
    rejoin (MariaDB docs: wsrep_restart_slave; PXC docs: wsrep_restart_replica, the name since
    8.0.26; this project's lab: benchmarks/calibration/lab-runs.yaml
    channel-through-a-partition)."""
    name, docs = (
        ("wsrep_restart_slave", "MariaDB")
        if flavor == "mariadb"
        else ("wsrep_restart_replica", "PXC")
    )
    return [
        Setting(
            name=name,
            value="ON",
            reason="a channel's replica stops when an event reaches this node while it is out "
            "of the primary component (error 1047, node has dropped from cluster) and, by "
            "default (OFF), stays stopped once the node is back: a short partition would end "
            f"the channel; ON restarts it when the node rejoins ({docs} docs: {name})",
        )
    ]


def per_node_settings(ctx: PlanContext, index: int, address: list[str]) -> dict[str, list[Setting]]:
    """Settings that differ between the nodes of cluster ``index``: wsrep_node_name, and on
    MariaDB clusters linked asynchronously gtid_domain_id."""
    linked = any(index in link.clusters for link in ctx.option.async_links)
    names = {
        host: [
            Setting(
                name="wsrep_node_name",
                value=host,
                reason="the node's name in the cluster, the SST donor lists and the heartbeat "
                "table (placeholder: the host name)",
            )
        ]
        for host in address
    }
    if ctx.flavor != "mariadb" or not linked:
        return names
    return {
        host: names[host]
        + [
            Setting(
                name="gtid_domain_id",
                value=100 * (index + 1) + n,
                reason="different on every node and from wsrep_gtid_domain_id, so writes made "
                "outside the cluster (a node started alone) get a domain of their own "
                "(MariaDB docs)",
            )
        ]
        for n, host in enumerate(address, start=1)
    }


def garbd_plan(
    ctx: PlanContext,
    cluster: ClusterEval,
    label: str,
    address: list[str],
    segment: int,
    common: list[Setting],
    file: str,
) -> GarbdPlan:
    """The arbitrator's service settings (Codership ``garb.cnf`` layout)."""
    site = cluster.arbitrator or ""
    options = [
        Setting(
            name="gmcast.segment",
            value=segment,
            reason=f"the arbitrator's own segment at {site} (Galera parameters: gmcast.segment)",
        ),
        *(o for o in common if not o.name.startswith(("repl.", "gcache.", "socket.ssl"))),
        *tls.garbd_options(ctx),
    ]
    text = "; ".join(f"{o.name}={option_text(o.value)}" for o in options)
    settings = [
        Setting(
            name="GALERA_NODES",
            value=",".join(f"{h}:4567" for h in address),
            reason="the cluster's data nodes on the group-communication port 4567 "
            "(placeholders); garbd joins through any of them",
        ),
        Setting(
            name="GALERA_GROUP",
            value=label,
            reason="must equal wsrep_cluster_name of the cluster's nodes",
        ),
        Setting(
            name="GALERA_OPTIONS",
            value=text,
            reason="the nodes' provider options except repl.* and gcache.* (garbd keeps no "
            "state to transfer), with the arbitrator's own segment and TLS files (Galera docs: "
            "Galera Arbitrator)",
        ),
    ]
    why = (
        f"quorum: without a third vote, losing a site or the link leaves no primary "
        f"component; garbd at {site} votes, receives every write set and adds about "
        f"{cluster.arbitrator_cost_ms:.1f} ms to the worst commit p50 (Galera docs: Galera "
        "Arbitrator)"
    )
    return GarbdPlan(site=site, host=f"{site}-garbd", file=file, settings=settings, reason=why)
