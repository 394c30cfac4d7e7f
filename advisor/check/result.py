"""What ``advisor check`` returns: the drift findings and the figures behind them.

Pydantic models, frozen, as the output contract of ``advisor check --format json`` (FORMAT.md,
"advisor check"). Every number carries its unit in its name; a quantity nobody observed is
``null``.
"""

from __future__ import annotations

__all__ = ["CHECK_IDS", "CheckFinding", "CheckResult", "Reassessment"]

from pydantic import BaseModel, ConfigDict

from advisor.vocabulary import Architecture, Severity

#: The finding ids scripts may rely on, each with what it compares.
CHECK_IDS: dict[str, str] = {
    "CHECK-COMMIT-LATENCY": "wsrep_evs_repl_latency against the predicted commit's network part",
    "CHECK-FLOW-CONTROL": "the flow-control paused share against the predicted pause",
    "CHECK-CERT-FAILURES": "certification failures and brute-force aborts against the "
    "predicted conflict rate",
    "CHECK-SETTINGS": "provider options, applier threads and read_only against the design",
    "CHECK-CLUSTER-SIZE": "wsrep_cluster_size against the design's members",
    "CHECK-CHANNEL-STOPPED": "an asynchronous channel of the design whose IO or SQL thread "
    "is not running",
    "CHECK-CHANNEL-LAG": "a channel's lag (heartbeat, Seconds_Behind_Master) against its "
    "predicted data at risk",
    "CHECK-WORKLOAD-MOVED": "the observed workload past what the topology assumed, and the "
    "verdict the new figures give",
}

Number = float | int | str | bool | None


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CheckFinding(_Out):
    """One drift between what the node showed and what the design predicts."""

    id: str  # one of CHECK_IDS
    severity: Severity
    subject: str  # what it is about: a setting, a channel, the cluster
    message: str
    observed: dict[str, Number] = {}
    expected: dict[str, Number] = {}
    tolerance: str  # where the threshold comes from, in words


class Reassessment(_Out):
    """The topology judged again with the observed workload (CHECK-WORKLOAD-MOVED)."""

    changed: dict[str, Number]  # workload key -> the observed value put in its place
    architecture: Architecture  # what the new figures recommend
    deployed_viable: bool  # whether the deployed option still meets every requirement
    blockers: list[str]  # the deployed option's blocker rule ids under the new figures
    summary: str


class CheckResult(_Out):
    """The outcome of one ``advisor check`` run against one node."""

    format_version: int = 1
    topology: str
    architecture: Architecture  # the deployed option judged against
    cluster: str  # the design's cluster the node belongs to
    site: str | None  # the design's site of the node (None: not told apart)
    node: str  # the node as connected to, user@host:port; never the password
    node_name: str | None  # its wsrep_node_name
    duration_s: float
    samples: int
    findings: list[CheckFinding]
    observed: dict[str, Number]  # the figures read, by name with unit
    predicted: dict[str, Number]  # what the design predicts for them
    reassessment: Reassessment | None = None
    notes: list[str] = []

    @property
    def worst(self) -> Severity | None:
        """The most severe finding's severity; None without findings."""
        from advisor.vocabulary import SEVERITIES

        present = [s for s in SEVERITIES if any(f.severity == s for f in self.findings)]
        return present[0] if present else None
