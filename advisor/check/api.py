"""``advisor check``: watch one node of a running cluster and compare it with the design.

The watching is :func:`advisor.collect.collect` itself (read-only statements only, every wait
bounded: :func:`advisor.collect.api.time_limit_s`), with the channels read where the design
runs some into the node's cluster. The predictions are the deployed option's, read from
:func:`advisor.analysis.analyse` and the configuration plan; nothing is evaluated again
except, when the workload has moved past the topology's, the topology with the observed
figures (:mod:`advisor.check.workload`).
"""

from __future__ import annotations

__all__ = ["check", "time_limit_s"]

import threading
from collections.abc import Callable
from pathlib import Path

from advisor.analysis import Analysis, analyse
from advisor.check.design import Expectation, expectation, find_option
from advisor.check.drift import (
    cert_failure_findings,
    channel_findings,
    cluster_size_findings,
    commit_latency_findings,
    flow_control_findings,
    settings_findings,
)
from advisor.check.result import CheckFinding, CheckResult, Number
from advisor.check.workload import workload_findings
from advisor.collect.api import CollectedEvidence, collect
from advisor.collect.api import time_limit_s as collect_time_limit_s
from advisor.collect.connection import ConnectionSettings
from advisor.config.plan import plan_configuration
from advisor.inputs.loading import LoadedTopology
from advisor.vocabulary import severity_rank


def time_limit_s(settings: ConnectionSettings, duration_s: float) -> float:
    """The longest :func:`check`'s watching can take [s]: collect's bound with the channels
    read (the analysis before it reads no server).

    >>> time_limit_s(ConnectionSettings(), 300)
    596.0
    """
    return collect_time_limit_s(settings, duration_s, channels=True)


def _observed(evidence: CollectedEvidence) -> dict[str, Number]:
    s = evidence.status
    latency = s.repl_latency
    commits = evidence.commits_per_s or s.commits_per_s
    return {
        "commits_per_s_avg": commits.avg,
        "commits_per_s_peak": commits.peak,
        "writeset_bytes_p50": evidence.writeset.p50_bytes if evidence.writeset else None,
        "writeset_bytes_p99": evidence.writeset.p99_bytes if evidence.writeset else None,
        "repl_latency_avg_ms": latency.avg_ms if latency else None,
        "repl_latency_max_ms": latency.max_ms if latency else None,
        "flow_control_paused_share": s.flow_control_paused.avg,
        "flow_control_sent_by_this_node": s.flow_control_sent,
        "cert_failures_per_s": s.cert_failures_per_s.avg,
        "bf_aborts_per_s": s.bf_aborts_per_s.avg,
        "cluster_size_min": s.cluster_size_min,
        "cluster_size_max": s.cluster_size_max,
    }


def _predicted(expect: Expectation) -> dict[str, Number]:
    out: dict[str, Number] = {
        f"commit_{k}_ms": round(v, 4) for k, v in expect.commit_ms.items() if k in ("p50", "p99")
    }
    out |= {
        "local_commit_ms": expect.local_commit_ms,
        "flow_control_paused_share": round(expect.pause_share, 6),
        "conflicts_per_s": 0.0,
        "spread_conflicts_per_s": round(expect.spread_conflicts_per_s, 6),
        "cluster_size": expect.members,
        "wsrep_slave_threads": expect.applier_threads,
        "read_only": expect.read_only,
    }
    out |= {f"channel_lag_p99_ms:{c.name}": c.expected_lag_ms for c in expect.channels}
    return out


def check(
    topology: LoadedTopology | str | Path | Analysis,
    settings: ConnectionSettings,
    duration_s: float,
    *,
    architecture: str | None = None,
    cluster: str | None = None,
    interval_s: float | None = None,
    rules_dirs: tuple[Path, ...] = (),
    progress: Callable[[float], None] | None = None,
    stop: threading.Event | None = None,
) -> CheckResult:
    """Watch the node ``settings`` names for ``duration_s`` and report drift from the design.

    Parameters
    ----------
    topology : LoadedTopology, path or Analysis
        The topology the cluster was built from (or its analysis).
    settings : ConnectionSettings
        The node to watch; the password never appears in the result.
    duration_s : float
        How long to watch [s]; the run ends within :func:`time_limit_s`.
    architecture : str, optional
        The option that runs; by default the recommended one. An architecture the topology
        has no option for is an error.
    cluster : str, optional
        The design's cluster the node belongs to, when its ``wsrep_cluster_name`` does not
        say (the configuration plan's cluster names).
    interval_s : float, optional
        Time between two status samples [s]; by default a tenth of the duration, at most
        10 s and at least 1 s (rates need at least two samples).
    rules_dirs : tuple of Path
        Rule overrides, as for ``advisor recommend``.
    progress, stop
        As for :func:`advisor.collect.collect`.

    Returns
    -------
    CheckResult
        The findings (``CHECK-*`` ids), most severe first, with the figures behind them.

    Raises
    ------
    AdvisorError
        Bad input, an unknown ``architecture``, a node that cannot be reached, refuses the
        user or a privilege, or that is not a Galera member.
    """
    analysis = (
        topology if isinstance(topology, Analysis) else analyse(topology, rules_dirs=rules_dirs)
    )
    option = find_option(analysis, architecture)
    plan = plan_configuration(analysis, option)
    interval = interval_s if interval_s is not None else min(10.0, max(1.0, duration_s / 10))
    evidence = collect(
        settings,
        interval_s=min(interval, duration_s),
        duration_s=duration_s,
        progress=progress,
        stop=stop,
        channels=bool(plan.async_links),
    )
    info = evidence.server
    expect = expectation(
        analysis,
        option,
        plan,
        cluster_name=info.cluster_name,
        node_name=info.node_name,
        segment=info.provider_options.get("gmcast.segment"),
        given_cluster=cluster,
    )
    findings: list[CheckFinding] = []
    findings += settings_findings(evidence, expect)
    findings += cluster_size_findings(evidence, expect)
    findings += commit_latency_findings(evidence, expect)
    findings += flow_control_findings(evidence, expect)
    findings += cert_failure_findings(evidence, expect)
    channel_hits, channel_notes = channel_findings(evidence, expect, info.node_name)
    findings += channel_hits
    moved, reassessment, workload_notes = workload_findings(
        evidence,
        analysis.loaded,
        option.architecture,
        site=expect.site,
        site_apply_ms=expect.site_local_commit_ms,
    )
    findings += moved
    notes = [*expect.notes, *evidence.notes, *channel_notes, *workload_notes]
    if evidence.status.repl_latency is None:
        notes.append(
            "wsrep_evs_repl_latency had no samples (no message sent in a report period, or "
            "the server does not report it): commit latency not compared"
        )
    return CheckResult(
        topology=analysis.topology.name,
        architecture=option.architecture,
        cluster=expect.cluster.name,
        site=expect.site,
        node=evidence.target,
        node_name=info.node_name,
        duration_s=round(evidence.duration_s, 3),
        samples=evidence.status.samples,
        findings=sorted(findings, key=lambda f: severity_rank(f.severity)),
        observed=_observed(evidence),
        predicted=_predicted(expect),
        reassessment=reassessment,
        notes=notes,
    )
