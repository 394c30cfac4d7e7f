"""One apply's cost on a node that fell behind: what ``advisor collect`` suggests as its site's
``sites[].local_commit_ms``, and what ``advisor check`` judges the design's value against
(issue 23).

A node whose receive queue passes ``gcs.fc_limit`` sends FC_STOP (gcs/src/gcs.cpp,
``gcs_fc_stop_begin``): in the sampling intervals in which it sent one, its appliers were
busy, so the write sets they committed a second then are about the most they carry. One
apply then costs the appliers at work (``wsrep_slave_threads``, no more than
``wsrep_cert_deps_distance`` lets work at once) over that rate: an upper bound, as the
appliers may have idled for part of an interval. Lab case collect-apply-cost: 4.25 and
4.27 ms against the 4.18 ms that flow-control-applier-threads' rate gives.
"""

from __future__ import annotations

__all__ = ["ApplyCost", "apply_cost"]

from collections.abc import Mapping
from dataclasses import dataclass

from advisor.collect.server import applier_threads_setting
from advisor.collect.status import StatusSummary
from advisor.model.flow_control import appliers_at_work


@dataclass(frozen=True)
class ApplyCost:
    """A node's apply cost as its own counters show it (measured)."""

    fc_sent: int  # FC_STOP messages this node sent (wsrep_flow_control_sent)
    fc_received: int  # FC_STOP messages it received, its own included (wsrep_flow_control_recv)
    applied_per_s: float  # other nodes' write sets it committed a second while sending [1/s]
    threads: int  # wsrep_slave_threads (wsrep_applier_threads on PXC 8.0.26+)
    at_work: float  # of those, as many as the dependencies let work at once [threads]

    @property
    def apply_ms(self) -> float:
        """One apply [ms], at most: the appliers at work over the rate they kept."""
        return self.at_work * 1000.0 / self.applied_per_s

    @property
    def appliers_text(self) -> str:
        """The appliers in words, with the dependencies' bound where it holds them back."""
        text = f"{self.threads} applier{'' if self.threads == 1 else 's'}"
        if self.at_work < self.threads:
            text += f", {self.at_work:.3g} of them at work as wsrep_cert_deps_distance allows"
        return text


def apply_cost(status: StatusSummary, variables: Mapping[str, str]) -> ApplyCost | None:
    """The node's apply cost when it sent at least half the flow-control pauses it saw (it,
    not another member, fell behind); None otherwise, or when it reports no appliers.
    With 4 appliers, ``wsrep_cert_deps_distance`` 1.6 and 400 write sets a second applied
    while sending, one apply costs at most 1.6 x 1000 / 400 = 4 ms.
    """
    rate = status.applied_per_s_while_sending
    sent, received = status.flow_control_sent or 0, status.flow_control_recv or 0
    setting = applier_threads_setting(variables)
    threads = _int(setting[1]) if setting else None
    if rate is None or rate <= 0 or threads is None or threads < 1 or 2 * sent < received:
        return None
    # Galera reports 0 until it has certified a write set: that is no measurement.
    deps = status.cert_deps_distance
    at_work = appliers_at_work(threads, deps if deps is not None and deps >= 1 else None)
    return ApplyCost(sent, received, rate, threads, at_work)


def _int(text: str) -> int | None:
    """A whole number as a server variable gives it; None when not one."""
    try:
        return int(text)
    except ValueError:
        return None
