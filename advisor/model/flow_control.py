"""The slowest member: apply capacity and Galera flow control.

Every member of a Galera cluster receives, certifies and applies every write set. A commit
waits for the write set's total-order delivery to every member, not for its apply there, so a
member slow to apply does not slow one commit: its receive queue grows instead. Once the queue
passes the flow-control limit the member sends FC_STOP and every member stops replicating new
write sets until its queue drains below the lower limit (FC_CONT). A member whose appliers
cannot keep up with the cluster's commit rate therefore caps that rate at what it applies;
the rest of the time the cluster is paused (``wsrep_flow_control_paused``).

Sources: Galera's group communication, ``gcs/src/gcs.cpp`` of github.com/codership/galera
(commit f47405c8b849): ``_set_fc_limits`` (lines 833-844: upper = ``gcs.fc_limit`` x
sqrt(members) + 0.5 unless ``gcs.fc_master_slave`` / ``gcs.fc_single_primary``, lower =
upper x ``gcs.fc_factor`` + 0.5), ``gcs_fc_stop_begin`` (lines 410-427: FC_STOP once the
receive queue exceeds the upper limit) and ``gcs_fc_cont_begin`` (lines 473-492: FC_CONT once
it is at or below the lower limit). The appliers: ``wsrep_slave_threads`` (MariaDB) /
``wsrep_applier_threads`` (PXC 8.0.26+), of which no more than ``wsrep_cert_deps_distance``
run in parallel usefully (Codership docs, wsrep_slave_threads:
https://galeracluster.com/library/documentation/mysql-wsrep-options.html#wsrep-slave-threads).
"""

from __future__ import annotations

__all__ = [
    "MIN_APPLIERS",
    "ONE_WRITER_FC_FACTOR",
    "ONE_WRITER_FC_LIMIT",
    "ApplyQueue",
    "SlowMember",
    "appliers_at_work",
    "apply_capacity_per_s",
    "design_applier_threads",
    "design_flow_control",
    "fc_limits",
    "pause_share",
    "useful_applier_threads",
]

import math
from collections.abc import Mapping
from dataclasses import dataclass

from advisor.model import replication
from advisor.model.provider_options import OptionValue

# Appliers: at least this many, so independent write sets apply in parallel from the start
# unless the dependencies allow fewer (design choice; Codership: never more than
# wsrep_cert_deps_distance shows useful, :func:`useful_applier_threads`, Codership
# docs, MySQL wsrep Options, wsrep_slave_threads:
# https://galeracluster.com/library/documentation/mysql-wsrep-options.html). The generated
# my.cnf sets wsrep_slave_threads by :func:`design_applier_threads` (advisor/config/galera.py).
MIN_APPLIERS = 4

# The flow control every design sets: one writer per cluster (ProxySQL max_writers=1), deep
# receive queues not scaled by the member count, resumed at 99 % of the limit (Codership KB,
# Single Master Setup: https://galeracluster.com/library/kb/single-master-setup.html).
ONE_WRITER_FC_LIMIT = 256
ONE_WRITER_FC_FACTOR = 0.99
_SINGLE_PRIMARY_KEYS = ("gcs.fc_single_primary", "gcs.fc_master_slave")


def design_flow_control(given: Mapping[str, OptionValue]) -> dict[str, OptionValue]:
    """The flow-control options a design sets, for the keys topology.yaml does not pin.

    Parameters
    ----------
    given : mapping
        ``galera.provider_options`` as topology.yaml gives them.

    Returns
    -------
    dict
        ``gcs.fc_limit`` 256 [write sets], ``gcs.fc_factor`` 0.99 [fraction] and
        ``gcs.fc_single_primary`` true (:data:`ONE_WRITER_FC_LIMIT`), each left out where
        ``given`` pins it (``gcs.fc_master_slave``, its name before Galera 4.10, pins the
        last). What the configuration writes and the model evaluates alike.

    >>> design_flow_control({"gcs.fc_limit": 16})
    {'gcs.fc_factor': 0.99, 'gcs.fc_single_primary': True}
    """
    design: dict[str, OptionValue] = {
        "gcs.fc_limit": ONE_WRITER_FC_LIMIT,
        "gcs.fc_factor": ONE_WRITER_FC_FACTOR,
    }
    if not any(key in given for key in _SINGLE_PRIMARY_KEYS):
        design["gcs.fc_single_primary"] = True
    return {key: value for key, value in design.items() if key not in given}


def fc_limits(
    fc_limit: float, fc_factor: float, members: int, single_primary: bool = False
) -> tuple[int, int]:
    """The receive-queue lengths at which a member resumes and pauses replication.

    Parameters
    ----------
    fc_limit : float
        ``gcs.fc_limit`` [write sets] (16 Codership and MariaDB, 100 PXC).
    fc_factor : float
        ``gcs.fc_factor`` [fraction] (1.0 by default).
    members : int
        Members of the cluster (garbd included upstream; PXC leaves it out since PXC-694).
    single_primary : bool
        ``gcs.fc_single_primary`` (``gcs.fc_master_slave`` before 4.10): no sqrt scaling.

    Returns
    -------
    tuple of int
        (lower, upper) [write sets]: FC_CONT at or below lower, FC_STOP above upper
        (gcs/src/gcs.cpp ``_set_fc_limits``, lines 833-844).

    Examples
    --------
    >>> fc_limits(16, 1.0, 3)
    (28, 28)
    >>> fc_limits(16, 1.0, 4)
    (32, 32)
    """
    scale = 1.0 if single_primary else math.sqrt(max(members, 1))
    upper = int(fc_limit * scale + 0.5)
    lower = int(upper * fc_factor + 0.5)
    return lower, upper


def useful_applier_threads(cert_deps_distance: float | None) -> int | None:
    """The most applier threads that add capacity, given the write sets' dependencies.

    ``wsrep_cert_deps_distance`` is the average distance between the highest and the lowest
    seqno that can be applied in parallel, "the potential degree of parallelization"
    (MariaDB, Galera Cluster Status Variables:
    https://mariadb.com/kb/en/galera-cluster-status-variables/#wsrep_cert_deps_distance);
    Codership's wsrep_slave_threads advice names it as the most appliers worth running
    (https://galeracluster.com/library/documentation/mysql-wsrep-options.html#wsrep-slave-threads).
    Threads beyond it wait for the write sets they depend on and add no capacity. A mean of
    ``d`` needs ``ceil(d)`` threads to be reached at all, so that many are useful.

    Parameters
    ----------
    cert_deps_distance : float or None
        ``wsrep_cert_deps_distance`` [write sets] (``workload.cert_deps_distance``, measured
        by ``advisor collect``); None: not known.

    Returns
    -------
    int or None
        The useful applier threads [threads], at least 1; None when not known (no bound).

    Examples
    --------
    >>> useful_applier_threads(2.3)
    3
    >>> useful_applier_threads(1.0)
    1
    >>> useful_applier_threads(None) is None
    True
    """
    if cert_deps_distance is None:
        return None
    return max(1, math.ceil(cert_deps_distance))


def design_applier_threads(
    peak_per_s: float | None, local_commit_ms: float, cert_deps_distance: float | None = None
) -> int:
    """The applier threads the generated configuration sets: Little's law on the peak commit
    rate and the workload's local commit, doubled for bursts, at least :data:`MIN_APPLIERS`,
    and no more than the write sets' dependencies let work at once
    (:func:`useful_applier_threads`; advisor/config/galera.py ``_appliers`` writes it into
    the cnf, and the flow-control cap counts these threads).

    Parameters
    ----------
    peak_per_s : float or None
        The workload's peak commit rate [1/s]; None: not given.
    local_commit_ms : float
        The workload's local commit [ms].
    cert_deps_distance : float or None
        ``wsrep_cert_deps_distance`` [write sets]; None: not known, no bound.

    Returns
    -------
    int
        ``wsrep_slave_threads`` [threads].

    Examples
    --------
    >>> design_applier_threads(1500, 1.0)
    4
    >>> design_applier_threads(5000, 1.0)
    10
    >>> design_applier_threads(5000, 1.0, cert_deps_distance=6.4)
    7
    >>> design_applier_threads(1500, 1.0, cert_deps_distance=1.0)
    1
    """
    wanted = MIN_APPLIERS
    if peak_per_s is not None:
        wanted = max(MIN_APPLIERS, math.ceil(2.0 * peak_per_s * local_commit_ms / 1000.0))
    useful = useful_applier_threads(cert_deps_distance)
    return wanted if useful is None else min(wanted, useful)


def appliers_at_work(applier_threads: float, cert_deps_distance: float | None) -> float:
    """The appliers at work at once on average: the threads, no more than the write sets'
    dependencies let apply in parallel (:func:`useful_applier_threads` says why).

    Parameters
    ----------
    applier_threads : float
        ``wsrep_slave_threads``, or a replica's parallel workers [threads].
    cert_deps_distance : float or None
        ``wsrep_cert_deps_distance`` [write sets], taken as at least 1; None: not known, the
        threads alone bound it.

    Returns
    -------
    float
        Appliers at work at once [threads].

    Examples
    --------
    >>> appliers_at_work(4, 2.5), appliers_at_work(4, None), appliers_at_work(2, 16.0)
    (2.5, 4.0, 2.0)
    """
    if cert_deps_distance is None:
        return float(applier_threads)
    return min(float(applier_threads), max(cert_deps_distance, 1.0))


def apply_capacity_per_s(
    applier_threads: int, apply_ms: float, parallel_limit: float | None = None
) -> float:
    """The write sets a member applies per second with every applier busy.

    Each applier applies one write set at a time, for ``apply_ms`` each (a remote write set
    costs its member the local work of a commit there: the network is paid before it queues).
    Write sets that touch the same rows apply in order, so no more appliers work at once than
    the dependencies allow: ``parallel_limit``, what ``wsrep_cert_deps_distance`` measures on a
    running cluster (None: not known, the threads alone bound it). Measured in the project's
    lab (benchmarks/calibration/lab-runs.yaml, flow-control-applier-threads): a node whose
    every apply waited 10 ms applied 194/s with 2 threads and 379, 377 and 379/s with 4, 8
    and 16 at a distance of 4.0 (4 / 10.3 ms = 387/s); with 4 ms applies and a distance of
    16, 1, 2, 4 and 8 threads applied 239, 476, 946 and 1,823/s, in proportion.

    Parameters
    ----------
    applier_threads : int
        ``wsrep_slave_threads`` [threads].
    apply_ms : float
        One write set's apply on that member [ms].
    parallel_limit : float or None
        Write sets that can apply in parallel [write sets], at least 1.

    Returns
    -------
    float
        Apply capacity [write sets/s]; infinite for a zero apply time.

    Examples
    --------
    >>> apply_capacity_per_s(4, 8.0)
    500.0
    >>> apply_capacity_per_s(4, 8.0, parallel_limit=2.0)
    250.0
    """
    if apply_ms <= 0.0:
        return math.inf
    parallel = appliers_at_work(applier_threads, parallel_limit)
    return float(replication.apply_capacity_per_s(parallel, apply_ms))  # workers over one apply


def pause_share(offered_per_s: float, capacity_per_s: float) -> float:
    """The share of time the cluster spends paused by flow control.

    Replication runs at the offered rate while it runs and not at all while paused, so it
    runs ``capacity / offered`` of the time. For a closed loop of clients ``offered`` is the
    rate they reach without flow control. ``wsrep_flow_control_paused`` reports the share.
    A floor for a closed loop: its clients pile up at each pause and commit in a burst
    after it, so replication runs faster than ``offered`` while it runs. The project's lab
    measured 0.30 where this gives 0.09 to 0.23 (benchmarks/calibration/lab-runs.yaml,
    flow-control-slow-node), and the cap itself within -5 to +8 %; the clients simulated
    through the member's queue (:class:`ApplyQueue` in
    :func:`advisor.model.pipeline.closed_loop`) give 0.29.

    Parameters
    ----------
    offered_per_s : float
        Commits per second without flow control [1/s].
    capacity_per_s : float
        The slowest member's apply capacity [1/s].

    Returns
    -------
    float
        Paused share of time [fraction, 0 to 1].

    Examples
    --------
    >>> pause_share(1000.0, 250.0)
    0.75
    >>> pause_share(200.0, 250.0)
    0.0
    """
    if offered_per_s <= 0.0 or capacity_per_s >= offered_per_s:
        return 0.0
    return 1.0 - capacity_per_s / offered_per_s


@dataclass(frozen=True)
class SlowMember:
    """The member whose appliers keep up least, as a closed loop of clients meets it
    (:func:`advisor.model.pipeline.closed_loop`): its appliers at work at once, one apply
    each, and the receive-queue lengths of :func:`fc_limits`.

    ``appliers`` [threads] apply in parallel, each write set taking ``apply_ms`` [ms], so
    the member applies ``appliers / apply_ms`` write sets a millisecond; FC_STOP above
    ``upper`` write sets waiting, FC_CONT at or below ``lower``.
    """

    appliers: int
    apply_ms: float
    lower: int
    upper: int

    @classmethod
    def of(cls, capacity_per_s: float, appliers: float, limits: tuple[int, int]) -> SlowMember:
        """The member that applies ``capacity_per_s`` [1/s] with ``appliers`` at work at once.
        A fractional count (the dependencies' mean, ``wsrep_cert_deps_distance``) is taken
        to the nearest whole number of appliers, at least one, each apply then as long as
        keeps the capacity."""
        threads = max(1, math.floor(appliers + 0.5))
        return cls(threads, threads * 1000.0 / capacity_per_s, limits[0], limits[1])

    @property
    def capacity_per_s(self) -> float:
        """Write sets applied a second with every applier busy [1/s]."""
        return self.appliers * 1000.0 / self.apply_ms


class ApplyQueue:
    """A slow member's receive queue, its appliers and the flow control it sends, as Galera's
    group communication runs them (gcs/src/gcs.cpp of github.com/codership/galera, commit
    f47405c8b849):

    - a write set delivered to the member waits in its receive queue (``queue_len``) until
      an applier takes it; an idle applier takes it at once;
    - on each delivery the member sends FC_STOP if its queue is longer than the upper limit,
      no STOP it sent is outstanding and no STOP is in force (``gcs_fc_stop_begin``, lines
      410-427: ``stop_count <= 0 && stop_sent_ <= 0 && queue_len > upper_limit``);
    - each time an applier takes a write set, it sends FC_CONT if a STOP of its own is
      outstanding and the queue is at or below the lower limit (``gcs_fc_cont_begin``, lines
      473-492);
    - the messages pause and resume every member's sending when they are delivered, in total
      order like any other (``gcs_handle_flow_control``, lines 855-866: the first STOP
      pauses the send monitor, the last CONT lets it go on).

    The clock is the caller's: each method says what happens now, the caller schedules the
    applier's end (``apply_ms`` later) and the messages' delivery.
    """

    def __init__(self, member: SlowMember) -> None:
        self.member = member
        self.waiting = 0  # queue_len: delivered, not yet taken by an applier [write sets]
        self.busy = 0  # appliers at work
        self.stop_sent = False  # a STOP of this member's is outstanding (stop_sent_)
        self.stops_in_force = 0  # STOPs delivered less CONTs delivered (stop_count)

    @property
    def paused(self) -> bool:
        """Whether every member's sending is paused now."""
        return self.stops_in_force > 0

    def deliver(self) -> tuple[bool, bool]:
        """A write set delivered to the member: (an applier starts it now, FC_STOP sent)."""
        if self.busy < self.member.appliers:
            self.busy += 1
            return True, False
        self.waiting += 1
        stop = not self.paused and not self.stop_sent and self.waiting > self.member.upper
        self.stop_sent = self.stop_sent or stop
        return False, stop

    def applied(self) -> tuple[bool, bool]:
        """An applier done: (it starts the next write set now, FC_CONT sent)."""
        if self.waiting == 0:
            self.busy -= 1
            return False, False
        self.waiting -= 1
        cont = self.stop_sent and self.waiting <= self.member.lower
        self.stop_sent = self.stop_sent and not cont
        return True, cont

    def delivered(self, stop: bool) -> bool:
        """A STOP (``stop``) or CONT delivered: whether sending is paused after it."""
        self.stops_in_force += 1 if stop else -1
        return self.paused
