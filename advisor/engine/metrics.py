"""What the engine computes for each candidate architecture, as plain frozen data.

An :class:`Option` is a partition of the data sites into Galera clusters, evaluated: per
cluster (:class:`ClusterEval`) the commit latency draws at every writer site, quorum under
failures, the arbitrator placed and the send-window limit; per option the hot rows
(:class:`HotRowEval`), the asynchronous links between clusters (:class:`AsyncLink`) and the
closed-loop throughput (:class:`Throughput`). No judgement: the rules judge these.

Glossary: ``*_ms`` latencies [ms], ``*_per_s`` rates [1/s]; a ``Percentiles`` maps FORMAT.md's
keys (``p50``, ``p95``, ``p99``, ``p999``, ``max``) to values of Monte Carlo draws.
"""

from __future__ import annotations

__all__ = [
    "REPORTED",
    "REPORTED_PERCENTS",
    "AsyncLink",
    "ClusterEval",
    "HotRowEval",
    "LimitedBy",
    "Option",
    "Percentiles",
    "Throughput",
    "summarise",
    "writer_messages_per_s",
]

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from advisor.engine.evidence import LinkEvidence
from advisor.engine.failover import FailoverPlan
from advisor.inputs.topology import HotRow
from advisor.model import flow_control, galera, pipeline, quorum, replication
from advisor.model.cpu_quota import CpuQuota
from advisor.model.flow_control import SlowMember
from advisor.vocabulary import Architecture

FloatArray = npt.NDArray[np.float64]
LimitedBy = Literal["send window", "commit latency", "row locks", "flow control", "CPU limit"]
Percentiles = dict[str, float]
REPORTED = ("p50", "p95", "p99", "p999", "max")
# Each reported key as a percent of the draws.
REPORTED_PERCENTS = {"p50": 50, "p95": 95, "p99": 99, "p999": 99.9, "max": 100}


def summarise(draws: FloatArray, keys: Sequence[str] = REPORTED) -> Percentiles:
    """Percentiles of Monte Carlo draws [ms], keys as in FORMAT.md, rounded to 0.1 us."""
    values = np.percentile(np.asarray(draws, dtype=float), [REPORTED_PERCENTS[k] for k in keys])
    return {k: round(v, 4) for k, v in zip(keys, values.tolist(), strict=True)}


def worst(per_site: Sequence[Mapping[str, float]]) -> Percentiles:
    """Key by key, the worst of several percentile maps (empty when there are none)."""
    return {k: max(p[k] for p in per_site) for k in REPORTED} if per_site else {}


def writer_messages_per_s(
    user_window: int, path_ms: Mapping[str, FloatArray], writer_site: str | None
) -> float:
    """The most messages a second a cluster's writer sends (:func:`pipeline.most_messages_per_s`
    over its mean commit path) [1/s]; infinite without a writer."""
    if writer_site is None:
        return math.inf
    return pipeline.most_messages_per_s(user_window, float(np.mean(path_ms[writer_site])))


@dataclass(frozen=True)
class ClusterEval:
    """One Galera cluster of an option, evaluated."""

    sites: tuple[str, ...]  # sites with data nodes
    arbitrator: str | None  # where garbd runs, if the plan needs one
    writers: tuple[str, ...]  # sites whose applications write into this cluster
    commit_ms: Mapping[str, FloatArray]  # writer site -> commit latency draws [ms]
    commit_by_site_ms: Mapping[str, Percentiles]  # writer site -> percentiles of those draws
    site_failures: tuple[quorum.Failure, ...]
    node_failures: tuple[quorum.Failure, ...]
    links: tuple[LinkEvidence, ...]  # inter-site links inside the cluster (garbd's included)
    send_window: int  # evs.send_window: what drains queued messages under load
    user_window: int  # evs.user_send_window: a message sent into an empty queue
    fragment_bytes: int  # write-set bytes one EVS message carries
    writesets_per_message: float  # queued write sets one EVS message carries (mean size)
    local_commit_ms: float
    window_limit_commits_per_s: float
    arbitrator_cost_ms: float = 0.0  # what the garbd adds to the worst commit p50
    unfixable_by_arbitrator: bool = False
    # pc.weight per node where the design raises it: two sites and no garbd that fixes their
    # tie; the writer's site then outweighs the other (advisor.engine.clusters).
    weights: Mapping[str, int] = field(default_factory=dict)
    # The cluster's writer site -> draws of the commit path's network part, before the send
    # windows, and of the round trip to its nearest fellow member [ms]: what a closed loop of
    # clients replays (every commit runs at the writer).
    path_ms: Mapping[str, FloatArray] = field(default_factory=dict, repr=False)
    first_reply_draws_ms: Mapping[str, FloatArray] = field(default_factory=dict, repr=False)
    # The site of ProxySQL's one writer, where every commit runs (None: nobody writes).
    writer_site: str | None = None
    # The member site whose appliers keep up least (None: no node applies, a lone writer
    # node), one apply there [ms], the design's applier threads,
    # and the write sets it applies a second [1/s]: above that rate it sends flow control and
    # the cluster commits no faster (advisor.model.flow_control).
    apply_site: str | None = None
    apply_ms: float = 0.0
    applier_threads: int = 0
    apply_capacity_per_s: float = math.inf
    # Every member site whose nodes apply, and its appliers' write sets a second [1/s]: the
    # sites below the peak are all to fix, not only the slowest.
    apply_capacities_per_s: Mapping[str, float] = field(default_factory=dict)
    # That member as the clients' closed loop meets it (its appliers at work and its
    # flow-control limits), None when no node applies (a lone writer node); and the
    # members the flow-control limits scale with.
    slow_member: SlowMember | None = None
    fc_members: int = 0
    # Whether the flow-control limit is taken as it is, not scaled by the members
    # (gcs.fc_single_primary, which every design sets: flow_control.design_flow_control).
    fc_single_primary: bool = False
    # The member site held to a CPU quota that keeps up least (sites[].cpu_limit_cores), and
    # its quota: every commit waits while it is throttled (advisor.model.cpu_quota).
    quota_site: str | None = None
    cpu_quota: CpuQuota | None = None

    @property
    def writer_messages_per_s(self) -> float:
        """The most messages a second its writer sends [1/s] (:func:`writer_messages_per_s`)."""
        return writer_messages_per_s(self.user_window, self.path_ms, self.writer_site)

    @property
    def quota_capacity_per_s(self) -> float:
        """Write sets a second the member held to a CPU limit keeps up with, its writer
        sending at most :attr:`writer_messages_per_s` messages [1/s]; infinite without one."""
        if self.cpu_quota is None:
            return math.inf
        return self.cpu_quota.capacity_at(self.writer_messages_per_s)

    @property
    def bootstrap_sites(self) -> tuple[str, ...]:
        """Where an operator may bootstrap a new primary component once the weighted site is
        lost (after fencing it): the other sites of a weighted cluster; none otherwise."""
        return tuple(s for s in self.sites if s not in self.weights) if self.weights else ()

    @property
    def members(self) -> tuple[str, ...]:
        """The data sites, then the arbitrator's site when it holds no data node."""
        extra = self.arbitrator if self.arbitrator and self.arbitrator not in self.sites else None
        return self.sites + ((extra,) if extra else ())

    def commit_percentiles(self, site: str | None = None) -> Percentiles:
        """Commit latency at ``site`` or, by default, the worst writer site for each key."""
        if site is not None:
            return dict(self.commit_by_site_ms[site])
        return worst(list(self.commit_by_site_ms.values()))

    @property
    def first_reply_ms(self) -> dict[str, float]:
        """The writer site -> the median round trip to its nearest fellow member [ms];
        computed when read (a rule and a lever read it, the grouping search's clusters
        never)."""
        return {w: float(np.median(d)) for w, d in self.first_reply_draws_ms.items()}

    @property
    def safe_period_ms(self) -> float:
        """How often safe_seq advances: the writer's commit p50 less local work."""
        writer = self.commit_by_site_ms.get(self.writer_site or "", {})
        return safe_period_ms(writer, self.local_commit_ms)


def safe_period_ms(commit: Mapping[str, float], local_commit_ms: float) -> float:
    """The commit round a send window waits for [ms]: commit p50 less local work."""
    return max(commit.get("p50", local_commit_ms) - local_commit_ms, 1e-3)


@dataclass(frozen=True)
class AsyncLink:
    """Asynchronous replication between two clusters, over their nearest site pair."""

    clusters: tuple[int, int]
    sites: tuple[str, str]
    rtt_ms: Percentiles
    lag_ms: Percentiles
    # The p99 lag's terms [ms] (advisor.model.replication: one_way, serialisation, queue,
    # apply_queue, apply) and the share of the link's bandwidth the replicated bytes use.
    lag_p99_parts_ms: Mapping[str, float] = field(default_factory=dict)
    utilisation: float = 0.0
    # The replica's appliers: the transactions the channel carries at the peak [1/s], one
    # apply (a commit in the receiving cluster at the replica's site, mean) [ms], the workers
    # in effect (the user's, or the design's) and the fewest that keep the appliers' p99
    # wait within the rest of the lag (None: more than the design's ceiling), their busy
    # share at the peak, and whether the user pinned the workers.
    commits_per_s: float = 0.0
    apply_ms: float = 0.0
    applier_threads: int = 1
    applier_threads_needed: int | None = 1
    apply_utilisation: float = 0.0
    applier_threads_given: bool = False
    # The write sets' dependency distance (workload.cert_deps_distance): no more appliers
    # work at once on average [write sets]; None: not known, no bound.
    cert_deps_distance: float | None = None
    # The hottest row whose updates cross this channel, and its rate [1/s]: they apply in
    # order, one commit of the receiving cluster each.
    in_order_per_s: float = 0.0
    in_order_row: str = ""
    # The link's rate [Mbit/s], and whether it is the default because the topology gives none.
    bandwidth_mbps: float = 0.0
    bandwidth_assumed: bool = True
    # The site of the replica whose direction this channel reports (it lags most).
    apply_site: str = ""

    @property
    def working_threads(self) -> float:
        """The appliers at work at once on average: those it runs, no more than the write
        sets' dependencies allow (as :func:`advisor.model.flow_control.apply_capacity_per_s`
        counts a Galera member's) [threads]."""
        return flow_control.appliers_at_work(self.applier_threads, self.cert_deps_distance)

    @property
    def apply_capacity_per_s(self) -> float:
        """The most transactions the replica applies a second [1/s]."""
        if self.apply_ms <= 0:
            return math.inf
        return float(replication.apply_capacity_per_s(self.working_threads, self.apply_ms))

    @property
    def in_order_busy(self) -> float:
        """The hottest row's share of one applier [fraction]; 1 or more: it falls behind."""
        return self.in_order_per_s * self.apply_ms / 1000.0

    @property
    def offered_appliers(self) -> float:
        """The appliers the peak keeps busy all the time: its commits times one apply
        (Little's law) [threads]."""
        return self.commits_per_s * self.apply_ms / 1000.0

    @property
    def appliers_busy(self) -> float:
        """The appliers' busy share at the peak, all threads together [fraction]."""
        return self.commits_per_s / self.apply_capacity_per_s

    @property
    def unbounded(self) -> bool:
        """Whether the lag grows without bound at the peak: the link's bandwidth or the
        appliers cannot keep up."""
        return not math.isfinite(self.lag_ms["p99"])


@dataclass(frozen=True)
class HotRowEval:
    """A hot row under one option: its owner cluster, commit latency, bound and conflicts."""

    row: HotRow
    writer_sites: tuple[str, ...]
    owner: str  # the site that owns the row (first writer site)
    cluster: int  # index of the owner's cluster
    commit_ms: Percentiles  # at the owner cluster's writer: how long the row's lock is held
    spans_clusters: bool
    # writer site -> RTT p50 to the owner cluster's writer site, for writer sites elsewhere
    routed_rtt_ms: Mapping[str, float] = field(default_factory=dict)
    conflicts_per_s: float = 0.0
    # Written at several sites of its cluster, each site on its own node (no one writer per
    # cluster): the commit of writers in step (galera.in_step_commit_draws), at the writer
    # site of the highest p50. None for one writer site.
    in_step_commit_ms: Percentiles | None = None
    # One update of the row at its required rate, from the writer site farthest from the
    # cluster's writer: the wait for the row's lock (galera.lock_wait_draws), the commit and
    # the round trip to the writer, key by key (a sum of percentiles). None when the row's
    # queue has no bound (HOT-ROW-RATE).
    write_latency_ms: Percentiles | None = None
    lock_wait_ms: Percentiles | None = None  # the wait for the row's lock alone

    @property
    def write_ms_by_site(self) -> dict[str, float]:
        """One write of the row from each writer site, at the median [ms]: the commit at the
        owner cluster's writer, plus the round trip from a writer site elsewhere, whose
        statement ProxySQL routes to that writer (the lock is held only for the commit)."""
        base = self.commit_ms["p50"]
        return {w: round(base + self.routed_rtt_ms.get(w, 0.0), 4) for w in self.writer_sites}

    @property
    def bound_p50_per_s(self) -> float:
        """Callaghan's bound at the median commit [updates/s]."""
        return float(galera.callaghan_bound_per_s(self.commit_ms["p50"]))

    @property
    def bound_p99_per_s(self) -> float:
        """Callaghan's bound at the p99 commit [updates/s]."""
        return float(galera.callaghan_bound_per_s(self.commit_ms["p99"]))

    @property
    def multi_writer_bound_p50_per_s(self) -> float | None:
        """Callaghan's bound when every writer site writes the row on its own node [updates/s]:
        one update per median commit of writers in step; None for one writer site."""
        if self.in_step_commit_ms is None:
            return None
        return float(galera.callaghan_bound_per_s(self.in_step_commit_ms["p50"]))


@dataclass(frozen=True)
class Throughput:
    """Closed-loop throughput of the workload's clients under an option."""

    commits_per_s: float
    txn_latency_ms: Percentiles  # p50 and p95 of a transaction, think time excluded
    limited_by: LimitedBy
    # The share of time a slow member's flow control paused the cluster, simulated with the
    # clients (advisor.model.pipeline.closed_loop) [fraction].
    flow_control_paused_share: float = 0.0
    # The share of CPU periods a member held to a CPU limit spent its budget in and stopped,
    # simulated with the clients (advisor.model.cpu_quota.Throttle) [fraction].
    cpu_throttled_share: float = 0.0


@dataclass(frozen=True)
class Option:
    """One candidate architecture, evaluated."""

    architecture: Architecture
    groups: tuple[tuple[str, ...], ...]
    clusters: tuple[ClusterEval, ...]
    hot_rows: tuple[HotRowEval, ...] = ()
    async_links: tuple[AsyncLink, ...] = ()
    throughput: Throughput | None = None
    # How each writing cluster goes on after each single failure (advisor.engine.failover);
    # None for an option built without it (then quorum alone says what survives).
    failover: FailoverPlan | None = None

    @property
    def commit_latency_ms(self) -> Percentiles:
        """Key by key, the worst commit latency over every writer site of every cluster."""
        return worst([c.commit_percentiles() for c in self.clusters if c.commit_ms])

    @property
    def data_at_risk_s(self) -> float | None:
        """The p99 lag of the slowest asynchronous link [s]: what a site loss may lose."""
        if not self.async_links:
            return None
        return max(link.lag_ms["p99"] for link in self.async_links) / 1000.0

    def cluster_of(self, site: str) -> int:
        """The index of the cluster holding ``site``."""
        return next(i for i, g in enumerate(self.groups) if site in g)
