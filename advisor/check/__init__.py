"""``advisor check``: one node of a running cluster against what its design predicts.

:func:`check` watches the node as ``advisor collect`` does (read-only, bounded) and returns a
:class:`CheckResult` whose findings (stable ``CHECK-*`` ids, FORMAT.md) say where the cluster
drifted from the design: settings, cluster size, replication latency, flow control,
conflicts, channels, and a workload that moved past the topology's. The command is
:mod:`advisor.cli.check`; this package prints nothing. Names are imported on first use.
"""

from typing import TYPE_CHECKING

from advisor._lazy import attach

if TYPE_CHECKING:
    from advisor.check.api import check, time_limit_s
    from advisor.check.render import render_check
    from advisor.check.result import CHECK_IDS, CheckFinding, CheckResult, Reassessment

__all__ = [
    "CHECK_IDS",
    "CheckFinding",
    "CheckResult",
    "Reassessment",
    "check",
    "render_check",
    "time_limit_s",
]

__getattr__, __dir__ = attach(
    __name__,
    attributes={
        "check": "api",
        "time_limit_s": "api",
        "render_check": "render",
        "CHECK_IDS": "result",
        "CheckFinding": "result",
        "CheckResult": "result",
        "Reassessment": "result",
    },
)
