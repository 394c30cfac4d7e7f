"""Failover: how an option's clusters keep taking writes after each single failure.

For every single failure the requirement names (``requirements.survive``: the loss of one
node always; with ``survive: site`` also the loss of each site and the cut of each inter-site
link), each cluster that takes writes either keeps them by its own quorum
(:mod:`advisor.model.quorum`, as the evaluator judged it), or hands them to another cluster
that the same failure left running, across the asynchronous channel between the two, or
stops with nobody to take over. A failure that touches no member of a cluster (a site or a
link outside it, a cut of the asynchronous link itself) leaves it running and is not listed.
A cluster whose only data site is lost is gone: its writes, too, go to another cluster.

A failover costs what the channel had not delivered, its p99 lag
(:func:`advisor.model.replication.lag_parts_ms`, its ``total_ms``: the recovery point, RPO),
and the time without writes for the rows that cluster owned (the recovery time, RTO), bounded by:

- detection: ProxySQL's Galera monitor takes a node out of its hostgroups after
  ``mysql-monitor_galera_healthcheck_max_timeout_count`` (3) checks in a row time out, one
  every ``mysql-monitor_galera_healthcheck_interval`` (5,000 ms), each given
  ``mysql-monitor_galera_healthcheck_timeout`` (800 ms): at most 3 x 5 s + 0.8 s = 15.8 s
  with the defaults (ProxySQL source, lib/MySQL_Thread.cpp, branch v2.7:
  https://github.com/sysown/proxysql/blob/v2.7/lib/MySQL_Thread.cpp; ProxySQL docs, Galera
  configuration: https://proxysql.com/documentation/galera-configuration). A cluster that
  loses quorum answers the checks as non-primary and goes offline at the first one, sooner.
  Where ProxySQL sits far from a node the timeout must cover a check on a new connection
  (about 4 round trips: TCP handshake, MySQL handshake and login, the query):
  :func:`healthcheck_timeout_ms` raises it to that, and the generated proxysql.sql sets the
  same value, so the RTO here and in the design's runbook agree.
- promotion: a manager run from cron once a minute, as Percona's replication manager for
  PXC is (``* * * * *`` in PXC/README.md of https://github.com/y-trudeau/Mysql-tools;
  Percona docs:
  https://docs.percona.com/percona-distribution-for-mysql/8.0/replication-manager/replication-manager-for-pxc.html),
  stops the surviving cluster's channel from the lost one once its relay log is applied and
  points ProxySQL's writer for the lost cluster's rows at the survivor: up to 60 s after
  detection. The channel later restarts without binary-log coordinates, by GTID
  auto-positioning (``SOURCE_AUTO_POSITION=1`` on MySQL / PXC, ``MASTER_USE_GTID=slave_pos``
  on MariaDB: https://dev.mysql.com/doc/refman/8.0/en/replication-gtids-auto-positioning.html,
  https://mariadb.com/kb/en/gtid/).
- and draining the relay log: the channel's lag again, milliseconds.

Both bounds are worst cases of these defaults; :class:`FailoverTiming` holds them, so a
faster manager or shorter health checks are one argument away. A manual failover takes as
long as the operator needs, which no model knows.

A two-site cluster that no garbd can fix weights its writer's site (``ClusterEval.weights``):
the other site's loss and the link's cut leave it running; the loss of the weighted site stops
it, and an operator may then bootstrap the survivors (``pc.bootstrap=YES`` after fencing the
lost site; Codership docs, Resetting the Quorum:
https://galeracluster.com/library/documentation/quorum-reset.html). A write set's commit
returns only once every member has acknowledged it (Galera's "safe" delivery; DOMAIN.md
section 3), so the survivors hold every commit; they apply one, though, only once they learn
it is safe, from the lost site's next message: a commit acknowledged in the instant before
the loss can be missing. This project's lab (a two-node MariaDB 10.11 Galera cluster on
loopback, the weighted node killed right after 20 autocommits, benchmarks/calibration/
lab-bootstrap.yaml) lost the last one in 1 of 8 runs, and none under a steady stream of
writes (2 runs). Writes wait for that person. Such a failure is kept by ``bootstrap``, not
survival by itself.

The inputs are read structurally (:class:`ClusterView`, :class:`ChannelView`): the engine's
``ClusterEval`` and ``AsyncLink`` fit, and this module imports neither.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_TIMING",
    "HEALTHCHECK_ROUND_TRIPS",
    "MANAGER_INTERVAL_S",
    "PROXYSQL_HEALTHCHECK_INTERVAL_MS",
    "PROXYSQL_HEALTHCHECK_MAX_TIMEOUT_COUNT",
    "PROXYSQL_HEALTHCHECK_TIMEOUT_MS",
    "ChannelView",
    "ClusterView",
    "EventKind",
    "FailoverPlan",
    "FailoverTiming",
    "KeptBy",
    "Survival",
    "assess",
    "detection_s",
    "healthcheck_timeout_ms",
]

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from advisor.model import quorum

# ProxySQL's Galera health checks, defaults of lib/MySQL_Thread.cpp (v2.7), module docstring.
PROXYSQL_HEALTHCHECK_INTERVAL_MS = 5000.0
PROXYSQL_HEALTHCHECK_TIMEOUT_MS = 800.0
PROXYSQL_HEALTHCHECK_MAX_TIMEOUT_COUNT = 3
# A health check on a new connection: TCP handshake, MySQL handshake and login, the query.
HEALTHCHECK_ROUND_TRIPS = 4
# A failover manager run from cron every minute (y-trudeau/Mysql-tools PXC/README.md).
MANAGER_INTERVAL_S = 60.0

EventKind = Literal["node", "site", "link"]
# "bootstrap": the cluster stops, and an operator may bootstrap a new primary component at
# its other site after fencing the lost one (a weighted two-site cluster): nothing committed
# is lost, but writes wait for that person.
KeptBy = Literal["quorum", "failover", "bootstrap", "nothing"]


def detection_s(
    interval_ms: float = PROXYSQL_HEALTHCHECK_INTERVAL_MS,
    timeout_ms: float = PROXYSQL_HEALTHCHECK_TIMEOUT_MS,
    max_timeout_count: int = PROXYSQL_HEALTHCHECK_MAX_TIMEOUT_COUNT,
) -> float:
    """The longest a dead node stays in ProxySQL's hostgroups [s]: the failure just after a
    check, then ``max_timeout_count`` checks an interval apart, the last one timing out.

    >>> detection_s()
    15.8
    """
    return (max_timeout_count * interval_ms + timeout_ms) / 1000.0


def healthcheck_timeout_ms(worst_rtt_ms: float) -> int:
    """The health-check timeout for a node ``worst_rtt_ms`` away from ProxySQL [ms]:
    ProxySQL's default, or :data:`HEALTHCHECK_ROUND_TRIPS` round trips rounded up to 100 ms.

    >>> healthcheck_timeout_ms(0.5), healthcheck_timeout_ms(180.0)
    (800, 800)
    >>> healthcheck_timeout_ms(230.0)
    1000
    """
    needed_ms = math.ceil(HEALTHCHECK_ROUND_TRIPS * worst_rtt_ms / 100.0) * 100
    return int(max(PROXYSQL_HEALTHCHECK_TIMEOUT_MS, needed_ms))


@dataclass(frozen=True)
class FailoverTiming:
    """What a failover across an asynchronous channel waits for [s] (module docstring)."""

    detection_s: float = detection_s()
    promotion_s: float = MANAGER_INTERVAL_S

    def rto_s(self, lag_ms: float) -> float:
        """Detection, promotion, then applying what the relay log still holds [s]."""
        return self.detection_s + self.promotion_s + lag_ms / 1000.0


DEFAULT_TIMING = FailoverTiming()


class ClusterView(Protocol):
    """What the failover model reads of a cluster (``ClusterEval`` fits)."""

    @property
    def sites(self) -> tuple[str, ...]: ...

    @property
    def writers(self) -> tuple[str, ...]: ...

    @property
    def members(self) -> tuple[str, ...]: ...

    @property
    def site_failures(self) -> tuple[quorum.Failure, ...]: ...

    @property
    def node_failures(self) -> tuple[quorum.Failure, ...]: ...

    @property
    def bootstrap_sites(self) -> tuple[str, ...]: ...


class ChannelView(Protocol):
    """What the failover model reads of an asynchronous channel (``AsyncLink`` fits)."""

    @property
    def clusters(self) -> tuple[int, int]: ...

    @property
    def sites(self) -> tuple[str, str]: ...

    @property
    def lag_ms(self) -> Mapping[str, float]: ...


@dataclass(frozen=True)
class Survival:
    """What one single failure does to the writes of one cluster it touches."""

    event: str  # "loss of one node at a", "loss of site a", "cut of link a-b"
    kind: EventKind
    cluster: int  # index of the cluster in the option
    kept_by: KeptBy  # its own quorum, a failover to another cluster, or nothing
    taker: int | None = None  # the cluster that takes the writes (None: outside the option)
    taker_sites: tuple[str, ...] = ()
    channel: tuple[str, str] | None = None  # the asynchronous link the failover crosses
    rpo_ms: float = 0.0  # commits at risk: the channel's p99 lag [ms]
    rto_s: float = 0.0  # time without writes, at most [s]


@dataclass(frozen=True)
class FailoverPlan:
    """Every single failure that touches a writing cluster, and how its writes go on."""

    survivals: tuple[Survival, ...] = ()
    timing: FailoverTiming = DEFAULT_TIMING

    @property
    def survives(self) -> bool:
        """Whether every listed failure leaves a cluster that keeps or takes the writes, with
        no one's hand needed."""
        return all(s.kept_by in ("quorum", "failover") for s in self.survivals)

    @property
    def bootstraps(self) -> tuple[Survival, ...]:
        """The failures an operator recovers from by bootstrapping the survivors."""
        return tuple(s for s in self.survivals if s.kept_by == "bootstrap")

    @property
    def failovers(self) -> tuple[Survival, ...]:
        return tuple(s for s in self.survivals if s.kept_by == "failover")

    @property
    def rpo_ms(self) -> float | None:
        """The most a failover loses [ms]; None when no failure needs one."""
        return max((s.rpo_ms for s in self.failovers), default=None)

    @property
    def rto_s(self) -> float | None:
        """The longest a failover leaves writes stopped [s]; None when none is needed."""
        return max((s.rto_s for s in self.failovers), default=None)

    def of(
        self, cluster: int, kinds: Sequence[EventKind] = ("node", "site", "link")
    ) -> list[Survival]:
        """The failures of ``kinds`` that touch ``cluster``."""
        return [s for s in self.survivals if s.cluster == cluster and s.kind in kinds]


def _events(
    cluster: ClusterView, survive_site: bool
) -> list[tuple[EventKind, str, frozenset[str]]]:
    """The single failures that touch a cluster's members, worded as advisor.model.quorum
    words its failures, with the sites each one removes (none for a cut)."""
    members = list(cluster.members)
    events: list[tuple[EventKind, str, frozenset[str]]] = [
        ("node", f"loss of one node at {site}", frozenset()) for site in members
    ]
    if survive_site:
        events += [("site", f"loss of site {site}", frozenset({site})) for site in members]
        events += [
            ("link", f"cut of link {a}-{b}", frozenset())
            for i, a in enumerate(sorted(members))
            for b in sorted(members)[i + 1 :]
        ]
    return events


def _stops(
    cluster: ClusterView, failed: frozenset[str], kind: EventKind, event: str, lost: frozenset[str]
) -> bool:
    """Whether the failure leaves the cluster without a primary component holding writes;
    ``failed`` are the events of its quorum failures."""
    if kind != "node" and cluster.sites and set(cluster.sites) <= lost:
        return True  # its only data site is gone
    return event in failed


def _failed(cluster: ClusterView) -> frozenset[str]:
    return frozenset(f.event for f in (*cluster.node_failures, *cluster.site_failures))


def assess(
    clusters: Sequence[ClusterView],
    channels: Sequence[ChannelView],
    *,
    survive_site: bool,
    timing: FailoverTiming = DEFAULT_TIMING,
    outside: Sequence[ChannelView] = (),
    outside_sites: tuple[str, ...] = (),
) -> FailoverPlan:
    """How each writing cluster of an option goes on after each single failure.

    ``channels`` are the option's asynchronous links (``clusters`` index ``clusters``).
    For a partial option, a group judged alone by the grouping search, ``outside_sites``
    are the data sites it leaves out, which a full partition puts in other clusters, and
    ``outside`` the channel from each cluster to its nearest outside site (``clusters`` is
    ``(i, len(clusters))``); a failure of a cluster's members leaves them running unless it
    removes every outside site.
    """
    by_pair = {frozenset(c.clusters): c for c in channels}
    to_outside = {c.clusters[0]: c for c in outside}
    failed = [_failed(c) for c in clusters]
    survivals = []
    for index, cluster in enumerate(clusters):
        if not cluster.writers:
            continue  # no writes to keep
        for kind, event, lost in _events(cluster, survive_site):
            if not _stops(cluster, failed[index], kind, event, lost):
                survivals.append(Survival(event, kind, index, "quorum"))
                continue
            options: list[tuple[float, int | None, tuple[str, ...], ChannelView]] = []
            for other, taker in enumerate(clusters):
                channel = by_pair.get(frozenset((index, other)))
                if other == index or channel is None:
                    continue
                # A node belongs to one cluster; a site or a cut may stop another cluster
                # too (a garbd's site that holds another cluster's data nodes).
                if kind != "node" and _stops(taker, failed[other], kind, event, lost):
                    continue
                options.append((channel.lag_ms["p99"], other, taker.sites, channel))
            channel = to_outside.get(index)
            if channel is not None and not set(outside_sites) <= lost:
                options.append((channel.lag_ms["p99"], None, outside_sites, channel))
            if not options:
                survivals.append(_without_taker(cluster, index, kind, event, lost))
                continue
            lag, taker_index, taker_sites, channel = min(options, key=lambda o: o[0])
            survivals.append(
                Survival(
                    event,
                    kind,
                    index,
                    "failover",
                    taker_index,
                    tuple(taker_sites),
                    channel.sites,
                    lag,
                    timing.rto_s(lag),
                )
            )
    return FailoverPlan(tuple(survivals), timing)


def _without_taker(
    cluster: ClusterView, index: int, kind: EventKind, event: str, lost: frozenset[str]
) -> Survival:
    """A failure no other cluster takes over: an operator's bootstrap where the cluster's
    weighted site was lost and another survives, else nothing."""
    survivors = tuple(s for s in cluster.bootstrap_sites if s not in lost)
    if kind == "site" and survivors:
        return Survival(event, kind, index, "bootstrap", index, survivors)
    return Survival(event, kind, index, "nothing")
