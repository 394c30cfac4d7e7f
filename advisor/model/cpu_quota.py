"""A member held to a CPU quota: every commit waits out its throttled time.

Under a CFS bandwidth limit (cgroup ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``; a
Kubernetes CPU limit, ``docker --cpus``) a process may use ``limit_cores x period`` of CPU in
each period; once that is spent, every thread of it waits for the next period (Linux kernel
documentation, CFS Bandwidth Control:
https://docs.kernel.org/scheduler/sched-bwc.html). Kubernetes sets the period to 100 ms
(https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/).

A Galera member so throttled neither receives nor acknowledges. gcs sends every write set
for safe delivery (``O_SAFE``, gcs/src/gcs_gcomm.cpp line 546 of github.com/codership/galera,
commit f47405c8b849) and EVS delivers such a message only once every member has acknowledged
it (``Proto::deliver``, gcomm/src/evs_proto.cpp: ``is_safe``), so every commit of the
cluster waits until the member runs again. Flow control does not show it: the
member's receive queue stays short. Measured in the project's lab
(benchmarks/calibration/lab-runs.yaml, flow-control-slow-node): n3 held to 10 % and 5 % of
one CPU paused the cluster 0.027 and 0.036 of the time while the clients' transactions
reached a p95 of 80 and 103 ms at RTT 2 ms, and n1 committed no faster with n3 desynced.

The member spends ``cpu_ms_per_message`` on every message the writer sends (receiving it,
acknowledging it, reading the other members' acknowledgements) and ``cpu_ms_per_writeset``
on every write set the message carries (certify, apply, commit). Measured in the project's
lab (lab-runs.yaml, cpu-cost-split): n3 held to 10 and 5 % of a CPU spent 0.18 ms a message
and 0.06 ms a write set of 1.8 KB (fitted over 30 runs at RTT 2 ms), so with one write set a
message most of what a throttled member spends goes on the message, and it keeps up with
more write sets when more of them share one. The same runs repeated minutes apart spent
0.21 to 0.34 ms a write set at the same write sets a message: measure more than once. Above
what its budget keeps up with the cluster commits in bursts that end when the period's
budget is spent.

The whole quota is the budget here, as for a member whose threads run on one CPU. The
kernel hands the quota to each CPU's run queue a slice at a time
(``kernel.sched_cfs_bandwidth_slice_us``, 5 ms by default; Documentation/scheduler/
sched-bwc.rst), so a budget of fewer than two slices a period cannot give two CPUs a slice
each: while one CPU's run queue holds the period's slice, the member's threads woken on
another find the pool empty and wait for the next period, and the slice's rest is left
unspent. Measured in the project's lab on a 2-CPU host (lab-runs.yaml cpu-cost-split and
cpu-quota-slice-pinned): n3 held to one 5 ms slice a period used 41 to 46 of its 50 ms a
second; pinned to one CPU it used 49 to 50 where it was throttled in every period (46 to 50
with 1 ms slices) and the product's rate fits; held to two slices it used 96 to 99 of 100.
Its commits held past one period with the 5 ms slice, pinned or not (COMMIT p99 about 200
ms; 115 with 1 ms slices), where :class:`Throttle` holds one at most the rest of a period.
Below two slices the estimates here are optimistic (CPU-QUOTA-SLICE), and a limit of two
slices a period (:attr:`CpuQuota.two_slices_cores`) is the least that spends as modelled.
"""

from __future__ import annotations

__all__ = ["DEFAULT_PERIOD_MS", "KERNEL_SLICE_MS", "CpuQuota", "Stalls", "Throttle"]

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where used: the input models import this module
    import numpy as np
    import numpy.typing as npt

# The CFS period Kubernetes sets and the kernel's default (cpu.cfs_period_us = 100000):
# https://docs.kernel.org/scheduler/sched-bwc.html.
DEFAULT_PERIOD_MS = 100.0

# The kernel's default slice of a quota handed to one CPU's run queue at a time
# (/proc/sys/kernel/sched_cfs_bandwidth_slice_us = 5000): the same documentation.
KERNEL_SLICE_MS = 5.0


@dataclass(frozen=True)
class CpuQuota:
    """A member's CPU limit and what each message and write set costs it.

    ``limit_cores`` [CPUs] of CPU time a wall-clock second, granted ``period_ms`` [ms] at a
    time; ``cpu_ms_per_writeset`` [ms of CPU] spent on each write set it receives, and
    ``cpu_ms_per_message`` [ms of CPU] on each message that carries write sets;
    ``slice_ms`` [ms], the part of the budget the kernel hands one CPU's run queue at a time.

    Examples
    --------
    >>> quota = CpuQuota(limit_cores=0.1, cpu_ms_per_writeset=0.2)
    >>> quota.budget_ms, quota.capacity_per_s
    (10.0, 500.0)
    >>> split = CpuQuota(limit_cores=0.1, cpu_ms_per_writeset=0.05, cpu_ms_per_message=0.35)
    >>> round(split.capacity_per_s), split.cpu_ms_per_s(1000.0, messages_per_s=100.0)
    (250, 85.0)
    """

    limit_cores: float
    cpu_ms_per_writeset: float
    period_ms: float = DEFAULT_PERIOD_MS
    cpu_ms_per_message: float = 0.0
    slice_ms: float = KERNEL_SLICE_MS

    @property
    def budget_ms(self) -> float:
        """CPU time the member may use in one period [ms]."""
        return self.limit_cores * self.period_ms

    @property
    def slices(self) -> float:
        """The kernel's slices one period's budget makes [count]: below two, one CPU's run
        queue holds it at a time (the module docstring)."""
        return self.budget_ms / self.slice_ms

    @property
    def two_slices_cores(self) -> float:
        """The least limit whose budget makes two slices a period [CPUs]: the least the lab
        measured spent as modelled, on a host of two CPUs.

        >>> CpuQuota(limit_cores=0.05, cpu_ms_per_writeset=0.2).two_slices_cores
        0.1
        """
        return 2.0 * self.slice_ms / self.period_ms

    @property
    def capacity_per_s(self) -> float:
        """Write sets the member keeps up with a second when each comes in a message of its
        own [1/s]: the least it keeps up with (more share a message under load)."""
        return self.limit_cores * 1000.0 / self.message_cpu_ms(1)

    def capacity_at(self, most_messages_per_s: float) -> float:
        """Write sets the member keeps up with a second [1/s] when the writer sends at most
        ``most_messages_per_s`` [1/s] messages: one write set a message up to that, more
        sharing each beyond it (the writer's queue aggregates them).

        >>> CpuQuota(0.1, cpu_ms_per_writeset=0.05, cpu_ms_per_message=0.35).capacity_at(100.0)
        1300.0
        """
        lone = self.capacity_per_s
        if lone <= most_messages_per_s:
            return lone
        budget_ms_per_s = self.limit_cores * 1000.0
        return (budget_ms_per_s - self.cpu_ms_per_message * most_messages_per_s) / (
            self.cpu_ms_per_writeset
        )

    def message_cpu_ms(self, writesets: int) -> float:
        """CPU one message carrying ``writesets`` [count] costs the member [ms of CPU]."""
        return self.cpu_ms_per_message + writesets * self.cpu_ms_per_writeset

    def cpu_ms_per_s(self, writesets_per_s: float, messages_per_s: float) -> float:
        """CPU the member needs a second for ``writesets_per_s`` [1/s] in ``messages_per_s``
        [1/s] messages [ms of CPU a second; above ``limit_cores x 1000`` it is throttled]."""
        return messages_per_s * self.cpu_ms_per_message + writesets_per_s * self.cpu_ms_per_writeset

    @property
    def stall_ms(self) -> float:
        """The rest of a period once the budget is spent [ms], for a member that works one
        CPU at a time: the longest a commit waits for it (a limit of a CPU or more: none)."""
        return self.period_ms * max(0.0, 1.0 - self.limit_cores)

    def stalls(self, writesets_per_s: float, most_messages_per_s: float = math.inf) -> Stalls:
        """What the limit costs write sets arriving at random at ``writesets_per_s`` [1/s],
        below what it keeps up with on average (:meth:`capacity_at`): in a period that
        brings more than its budget takes in, the rest wait for the next period.

        Arrivals are a Poisson process, the usual model of many independent clients: a
        period brings ``N ~ Poisson(rate x period)`` write sets, spread uniformly over it,
        and the budget takes in the first ``B`` (:meth:`writesets_per_period`, whole). The
        ``N - B`` later ones wait from their arrival to the period's end: given ``N = n``,
        the ``i``-th of ``n`` uniform arrivals comes at ``period x i / (n + 1)`` on
        average, so they wait ``period x (n - B)(n - B + 1) / (2 (n + 1))`` in all. The
        member is taken to work instantly until its budget is spent and a period's
        stragglers not to crowd the next one (both hold well below the capacity), and the
        clients not to slow down when stalled, as clients of an open rate do not: an
        estimate from the quota and the rate, for a member that works one CPU at a time, so
        a limit of one CPU or more stalls nothing (as :attr:`stall_ms` says).

        >>> quota = CpuQuota(limit_cores=0.1, cpu_ms_per_writeset=0.5)  # 20 a period
        >>> calm = quota.stalls(100.0)                                  # 10 a period
        >>> round(calm.stalled_share, 4), round(calm.throttled_share, 4)
        (0.0003, 0.0016)
        >>> busy = quota.stalls(180.0)                                  # 18 a period
        >>> round(busy.stalled_share, 3), round(busy.mean_wait_ms, 1)
        (0.05, 11.1)
        """
        import numpy as np

        budget, mean = self._period_load(writesets_per_s, most_messages_per_s)
        if mean <= 0.0 or self.stall_ms <= 0.0:
            return Stalls(0.0, 0.0, 0.0)
        # Poisson probabilities to 12 standard deviations above the mean, by the ratio of
        # consecutive terms in logs: log p(n) = log p(n - 1) + log(mean) - log(n).
        top = int(mean + 12.0 * math.sqrt(mean) + 30.0)
        n = np.arange(top + 1, dtype=float)
        steps = np.log(mean) - np.log(np.maximum(n, 1.0))
        steps[0] = -mean
        probability = np.exp(np.cumsum(steps))
        over = np.maximum(n - budget, 0.0)
        late = float(np.sum(probability * over))
        wait_periods = float(np.sum(probability * over * (over + 1.0) / (2.0 * (n + 1.0))))
        throttled = float(np.sum(probability[n > budget]))
        mean_wait_ms = wait_periods * self.period_ms / late if late > 0.0 else 0.0
        return Stalls(late / mean, throttled, mean_wait_ms)

    def stall_draws(
        self,
        writesets_per_s: float,
        most_messages_per_s: float,
        rng: np.random.Generator,
        draws: int,
    ) -> npt.NDArray[np.float64]:
        """What the budget's running out adds to each of ``draws`` commits [ms], at the rate
        and under the model of :meth:`stalls`: a commit comes at a uniform point ``u`` of its
        period, after a Poisson number of the period's others with mean ``rate x period x
        u``; when those fill the budget's whole write sets it waits the rest of the period,
        ``period x (1 - u)``; otherwise nothing, and nothing under a limit of one CPU or
        more. ``rng`` gives the draws (the same seed, the same draws).

        >>> import numpy as np
        >>> quota = CpuQuota(limit_cores=0.1, cpu_ms_per_writeset=0.5)  # 20 a period
        >>> extra = quota.stall_draws(180.0, math.inf, np.random.default_rng(1), 200_000)
        >>> round(float(np.mean(extra > 0)), 2), round(float(np.mean(extra[extra > 0])))
        (0.05, 11)
        """
        import numpy as np

        if self.stall_ms <= 0.0:
            return np.zeros(draws)
        budget, mean = self._period_load(writesets_per_s, most_messages_per_s)
        at = rng.random(draws)
        before = rng.poisson(mean * at)
        return np.where(before >= budget, self.period_ms * (1.0 - at), 0.0)

    def _period_load(self, writesets_per_s: float, most_messages_per_s: float) -> tuple[int, float]:
        """The whole write sets one period's budget takes in, and the write sets a period
        brings on average at ``writesets_per_s`` [1/s]."""
        budget = math.floor(self.writesets_per_period(most_messages_per_s))
        return budget, writesets_per_s * self.period_ms / 1000.0

    def writesets_per_period(self, most_messages_per_s: float = math.inf) -> float:
        """Write sets one period's budget processes [count], the writer sending at most
        ``most_messages_per_s`` [1/s] messages (:meth:`capacity_at`; by default each write
        set in a message of its own)."""
        return self.capacity_at(most_messages_per_s) * self.period_ms / 1000.0


@dataclass(frozen=True)
class Stalls:
    """Write sets that find their period's budget spent, at a rate below the capacity
    (:meth:`CpuQuota.stalls`)."""

    stalled_share: float  # of the write sets, those that wait for the next period [fraction]
    throttled_share: float  # of the periods, those whose budget runs out [fraction]
    mean_wait_ms: float  # how long a stalled write set waits for the next period [ms]


class Throttle:
    """The throttled member's budget through the periods, as deliveries spend it.

    Deliveries come in time order (EVS delivers in order); each spends the member's CPU on
    the message and its write sets, and one that finds the period's budget spent waits for
    the next period, when the kernel lets the member run again.
    """

    def __init__(self, quota: CpuQuota) -> None:
        self.quota = quota
        self.period = 0  # the period the budget belongs to (time // period_ms)
        self.left_ms = quota.budget_ms  # CPU left in it [ms]
        # The periods whose budget ran out (cpu.stat's nr_throttled), as runs [first, last].
        self.throttled: list[tuple[int, int]] = []

    def admit(self, due_ms: float, writesets: int) -> float:
        """When a message due at ``due_ms`` [ms] is delivered, the member having processed
        its ``writesets`` [count] within its budget [ms]."""
        period = math.floor(due_ms / self.quota.period_ms)
        if period > self.period:
            self.period, self.left_ms = period, self.quota.budget_ms
        need_ms = self.quota.message_cpu_ms(writesets)
        if self.left_ms > 0.0 and need_ms <= self.left_ms:
            self.left_ms -= need_ms
            return due_ms
        # Spend what is left, then whole periods until the rest is done; a member with
        # nothing left acks nothing, not even a message that carries no write set's end.
        # Counted, not looped: a cost far above the budget takes many periods.
        rest_ms = need_ms - max(self.left_ms, 0.0)
        periods = max(1, math.ceil(rest_ms / self.quota.budget_ms))
        self.throttled.append((self.period, self.period + periods - 1))
        self.period += periods
        self.left_ms = periods * self.quota.budget_ms - rest_ms
        due_ms = self.period * self.quota.period_ms
        return due_ms

    def throttled_share(self, start_ms: float, end_ms: float) -> float:
        """The share of the periods from ``start_ms`` to ``end_ms`` [ms] whose budget ran out
        [fraction]: cpu.stat's nr_throttled over nr_periods."""
        first = math.floor(start_ms / self.quota.period_ms)
        last = math.floor(end_ms / self.quota.period_ms)
        hit = sum(max(0, min(b, last) - max(a, first) + 1) for a, b in self.throttled)
        return hit / max(last - first + 1, 1)
