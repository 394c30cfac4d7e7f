"""The comparisons of ``advisor check``: what one node showed against what the design
predicts, each a finding with a stable id and the reason for its tolerance.

Pure functions over :class:`~advisor.collect.api.CollectedEvidence` and
:class:`~advisor.check.design.Expectation`; they print nothing and read no server.
"""

from __future__ import annotations

__all__ = [
    "cert_failure_findings",
    "channel_findings",
    "cluster_size_findings",
    "commit_latency_findings",
    "flow_control_findings",
    "option_values_equal",
    "settings_findings",
]


from advisor.check.design import ChannelExpectation, Expectation
from advisor.check.result import CheckFinding, Number
from advisor.collect.api import CollectedEvidence
from advisor.collect.apply_cost import ApplyCost, apply_cost
from advisor.collect.channels import ChannelStatus
from advisor.collect.server import applier_threads_setting, parse_provider_options
from advisor.config.alerts import PAUSE_TOLERANCE
from advisor.model.provider_options import parse_duration_s
from advisor.units import ms_text

# Fewest messages whose average latency is judged: one message that waited for a busy core
# makes the average of a handful exceed any p99 (seen on the integration cluster, idle but
# for Galera's own messages); the average of 30 or more carries the distribution, not one
# message (design choice).
MIN_REPL_LATENCY_SAMPLES = 30

_TRUE = {"yes", "true", "on"}
_FALSE = {"no", "false", "off"}


def _canonical(value: object) -> object:
    """A provider option's value in one spelling: numbers as floats, ISO 8601 durations
    (``PT1S``, ``PT7.5S``, ``P1D``) as seconds, yes/no words as booleans, else lower case."""
    text = str(value).strip()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return parse_duration_s(text)  # the provider options' own reading of a duration
    except ValueError:
        pass
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    return text.lower()


def option_values_equal(a: object, b: object) -> bool:
    """Whether two spellings of an option's value mean the same (``PT5S`` and ``PT5.0S``,
    ``YES`` and ``yes``, ``1`` and ``1.0``).

    >>> option_values_equal("PT5S", "PT5.000S"), option_values_equal(4, "4")
    (True, True)
    >>> option_values_equal("YES", "no")
    False
    """
    return _canonical(a) == _canonical(b)


def settings_findings(evidence: CollectedEvidence, expect: Expectation) -> list[CheckFinding]:
    """CHECK-SETTINGS: each provider option, the applier threads and read_only in effect
    against the design's value. No tolerance: a setting is the design's or it is not."""
    keys = tuple(expect.provider_options)
    running = parse_provider_options(evidence.variables.get("wsrep_provider_options", ""), keys)
    tolerance = "exact: the design's value (config plan), numbers and durations compared by value"
    findings = []
    for key in keys:
        if key not in running:
            continue
        want = expect.provider_options[key]
        if option_values_equal(running[key], want):
            continue
        findings.append(
            CheckFinding(
                id="CHECK-SETTINGS",
                severity="warning",
                subject=key,
                message=(
                    f"{key} is {running[key]} on this node; the design sets {want} (its "
                    f"predictions hold at that value): set it back in wsrep_provider_options "
                    f"or judge the change with advisor recommend"
                ),
                observed={key: running[key]},
                expected={key: want},
                tolerance=tolerance,
            )
        )
    variables = evidence.variables
    threads = applier_threads_setting(variables)
    if expect.applier_threads is not None and threads is not None:
        threads_name, have = threads
        if not option_values_equal(have, expect.applier_threads):
            findings.append(
                CheckFinding(
                    id="CHECK-SETTINGS",
                    severity="warning",
                    subject=threads_name,
                    message=(
                        f"{threads_name} is {have} on this node; the design sets "
                        f"{expect.applier_threads} (the appliers its flow-control prediction "
                        "counts)"
                    ),
                    observed={threads_name: have},
                    expected={threads_name: expect.applier_threads},
                    tolerance=tolerance,
                )
            )
    if "read_only" in variables:
        have_ro = option_values_equal(variables["read_only"], "ON")
        if have_ro != expect.read_only:
            findings.append(
                CheckFinding(
                    id="CHECK-SETTINGS",
                    severity="warning",
                    subject="read_only",
                    message=(
                        f"read_only is {variables['read_only']} on this node; the design sets "
                        f"{'ON' if expect.read_only else 'OFF'} (ProxySQL never makes a "
                        "read_only node a writer)"
                    ),
                    observed={"read_only": variables["read_only"]},
                    expected={"read_only": "ON" if expect.read_only else "OFF"},
                    tolerance=tolerance,
                )
            )
    return findings


def cluster_size_findings(evidence: CollectedEvidence, expect: Expectation) -> list[CheckFinding]:
    """CHECK-CLUSTER-SIZE: wsrep_cluster_size below the design's members (data nodes and
    garbd) during the run: a member is gone and the quorum margins the design counted with it."""
    low = evidence.status.cluster_size_min
    if low is None or low >= expect.members:
        return []
    return [
        CheckFinding(
            id="CHECK-CLUSTER-SIZE",
            severity="warning",
            subject=expect.cluster.name,
            message=(
                f"wsrep_cluster_size fell to {low} during the run; the design has "
                f"{expect.members} members (data nodes and garbd): a failure the design "
                "survives may now stop the writes"
            ),
            observed={
                "cluster_size_min": low,
                "cluster_size_max": evidence.status.cluster_size_max,
            },
            expected={"members": expect.members},
            tolerance="exact: every member the design places",
        )
    ]


def commit_latency_findings(evidence: CollectedEvidence, expect: Expectation) -> list[CheckFinding]:
    """CHECK-COMMIT-LATENCY: ``wsrep_evs_repl_latency`` (the group communication's latency
    from sending a message to its delivery, measured by Galera on this node; MariaDB docs,
    Galera status variables: https://mariadb.com/kb/en/galera-cluster-status-variables/,
    ``min/avg/max/stddev/sample_size`` in seconds) against the network part of the predicted
    commit at the cluster's writer (the commit less its local work, which the model adds to
    every draw). An average above the predicted p99 cannot come from the predicted
    distribution (a warning). The maximum is reported but not judged: the slowest of
    thousands of messages on a busy host is the host's tail, not the design's (the
    integration cluster, healthy, showed 4.7-7.7 ms against a largest draw of 4.4 ms)."""
    seen = evidence.status.repl_latency
    if seen is None or not expect.commit_ms:
        return []
    local = expect.local_commit_ms
    net = {k: max(v - local, 0.0) for k, v in expect.commit_ms.items()}
    observed = {
        "repl_latency_avg_ms": round(seen.avg_ms, 4),
        "repl_latency_max_ms": round(seen.max_ms, 4),
    }
    expected = {
        f"network_{k}_ms": round(v, 4) for k, v in net.items() if k in ("p50", "p99", "max")
    }
    findings = []
    if "p99" in net and seen.samples >= MIN_REPL_LATENCY_SAMPLES and seen.avg_ms > net["p99"]:
        findings.append(
            CheckFinding(
                id="CHECK-COMMIT-LATENCY",
                severity="warning",
                subject=expect.cluster.name,
                message=(
                    f"replication latency averaged {ms_text(seen.avg_ms)} over "
                    f"{seen.samples} messages; the design predicts {ms_text(net['p50'])} at "
                    f"the median and {ms_text(net['p99'])} at p99 (commit less "
                    f"{ms_text(local)} of local work): the links are slower than measured, or "
                    "a member is slow to acknowledge"
                ),
                observed=observed,
                expected=expected,
                tolerance="the observed average against the predicted p99: an average beyond "
                "p99 is outside the predicted distribution",
            )
        )
    return findings


def flow_control_findings(evidence: CollectedEvidence, expect: Expectation) -> list[CheckFinding]:
    """CHECK-FLOW-CONTROL: the share of the run the cluster was paused
    (``wsrep_flow_control_paused_ns`` over the run) against the predicted pause, and whether
    this node sent the pauses (``wsrep_flow_control_sent``: this node's own FC_STOP messages;
    a check sees one node). When it sent most of them, its apply cost as its counters show it
    (:func:`advisor.collect.apply_cost.apply_cost`) against the design's for its site."""
    s = evidence.status
    paused = s.flow_control_paused.avg
    if paused is None:
        return []
    sent = s.flow_control_sent or 0
    received = s.flow_control_recv or 0
    predicted = expect.pause_share
    # The alert rules' tolerance: one for a pause share, whether Prometheus or a check watches.
    if paused <= predicted + PAUSE_TOLERANCE:
        return []
    tolerance = (
        f"the predicted share plus {PAUSE_TOLERANCE:g}, as the alert rules allow (nodes as fast "
        "as the writer still pause in bursts: the lab measured up to 0.036)"
    )
    who = (
        f"this node sent {sent} of the stop messages (it applies too slowly)"
        if sent
        else "this node sent none (another member applies too slowly; check each node)"
    )
    expected_text = (
        f"about {predicted:.0%} (site {expect.slow_site} applies below the peak)"
        if predicted > 0
        else "none"
    )
    observed: dict[str, Number] = {
        "paused_share": round(paused, 6),
        "fc_sent_by_this_node": sent,
        "fc_received": received,
    }
    expected: dict[str, Number] = {
        "paused_share": round(predicted, 6),
        "slow_site": expect.slow_site,
    }
    cost = apply_cost(s, evidence.variables)
    if cost is not None:
        who += "; " + _apply_cost_text(cost, expect)
        observed["apply_ms"] = round(cost.apply_ms, 3)
        if expect.site_local_commit_ms is not None:
            expected["apply_ms"] = expect.site_local_commit_ms
    return [
        CheckFinding(
            id="CHECK-FLOW-CONTROL",
            severity="warning",
            subject=expect.cluster.name,
            message=(
                f"flow control paused the cluster {paused:.1%} of the run ({received} stop "
                f"messages received); the design predicts {expected_text}; {who}"
            ),
            observed=observed,
            expected=expected,
            tolerance=tolerance,
        )
    ]


def _apply_cost_text(cost: ApplyCost, expect: Expectation) -> str:
    """What one apply costs the node, against the design's value for its site."""
    text = (
        f"while it sent them its appliers committed {cost.applied_per_s:.0f} write sets/s "
        f"({cost.appliers_text}): one apply costs it at most about {cost.apply_ms:.3g} ms"
    )
    if expect.site_local_commit_ms is None:
        return text + " (its site is not told apart: give it as its site's local_commit_ms)"
    return (
        text + f", where the design takes {expect.site_local_commit_ms:.3g} ms at site "
        f"{expect.site} (sites[].local_commit_ms)"
    )


def cert_failure_findings(evidence: CollectedEvidence, expect: Expectation) -> list[CheckFinding]:
    """CHECK-CERT-FAILURES: this node's certification failures and brute-force aborts over
    the run. The design predicts none: ProxySQL sends every write of a cluster to its one
    writer (``max_writers`` 1), so no two members race for a row, and any conflict means
    writes reach a second node. (The spread-writes rate of the cluster's hot rows, which
    HOT-ROW-CONFLICTS judges as a what-if, is named in the message.)"""
    s = evidence.status
    observed_s = s.observed_s
    if observed_s <= 0 or (s.cert_failures_per_s.avg is None and s.bf_aborts_per_s.avg is None):
        return []
    count = round(
        ((s.cert_failures_per_s.avg or 0.0) + (s.bf_aborts_per_s.avg or 0.0)) * observed_s
    )
    if count <= 0:
        return []
    spread = (
        f" (were writes spread over the writer sites, its hot rows would conflict at "
        f"{expect.spread_conflicts_per_s:.3g}/s)"
        if expect.spread_conflicts_per_s > 0
        else ""
    )
    return [
        CheckFinding(
            id="CHECK-CERT-FAILURES",
            severity="warning",
            subject=expect.cluster.name,
            message=(
                f"{count} certification failures and brute-force aborts on this node in "
                f"{observed_s:.0f}s ({count / observed_s:.3g}/s); the design predicts none, "
                f"with one ProxySQL writer per cluster{spread}: writes reach a second node (a "
                "client bypassing ProxySQL, a changed hostgroup, or transactions left on the "
                "old writer after a switch)"
            ),
            observed={
                "conflicts": count,
                "cert_failures_per_s": s.cert_failures_per_s.avg,
                "bf_aborts_per_s": s.bf_aborts_per_s.avg,
            },
            expected={
                "conflicts_max": 0,
                "spread_conflicts_per_s": round(expect.spread_conflicts_per_s, 6),
            },
            tolerance="none: the design's one writer per cluster predicts no conflict",
        )
    ]


def channel_findings(
    evidence: CollectedEvidence, expect: Expectation, node_name: str | None
) -> tuple[list[CheckFinding], list[str]]:
    """CHECK-CHANNEL-STOPPED (blocker) and CHECK-CHANNEL-LAG for each channel the design runs
    into the node's cluster; and notes for channels that run on another node."""
    findings: list[CheckFinding] = []
    notes: list[str] = []
    readings = evidence.channels
    for want in expect.channels:
        found = [c for r in readings for c in r.channels if c.name == want.name]
        if not found:
            if node_name == want.replica_host:
                findings.append(_stopped(want.name, "no such channel on this node"))
                continue
            notes.append(
                f"channel {want.name} runs on {want.replica_host}, not on this node: check "
                "that node for it"
            )
            continue
        last = found[-1]
        if not last.running:
            findings.append(
                _stopped(
                    want.name,
                    f"IO thread {last.io_running}, SQL thread {last.sql_running}"
                    + (f": {last.last_error}" if last.last_error else ""),
                )
            )
            continue
        findings += _lag(evidence, want, found)
    return findings, notes


def _stopped(name: str, why: str) -> CheckFinding:
    return CheckFinding(
        id="CHECK-CHANNEL-STOPPED",
        severity="blocker",
        subject=name,
        message=(
            f"channel {name} is not replicating ({why}): the other cluster's writes stop "
            "arriving and a failover to this cluster loses everything since"
        ),
        observed={"running": False},
        expected={"running": True},
        tolerance="none: the design's data-at-risk figure assumes the channel runs",
    )


def _lag(
    evidence: CollectedEvidence, want: ChannelExpectation, statuses: list[ChannelStatus]
) -> list[CheckFinding]:
    beats = [
        r.heartbeat_lag_ms[want.source_server_id]
        for r in evidence.channels
        if want.source_server_id is not None and want.source_server_id in r.heartbeat_lag_ms
    ]
    behind = [c.seconds_behind for c in statuses if c.seconds_behind is not None]
    limit = want.expected_lag_ms
    if beats:
        worst, source = max(beats), "the heartbeat's newest row"
        over = worst > limit
        tolerance = "the channel's predicted p99 lag (its data at risk) plus one heartbeat interval"
    elif behind:
        worst, source = max(behind) * 1000.0, "Seconds_Behind_Master"
        # Whole seconds: a reading of 1 s may be any lag below 2 s.
        over = worst > limit + 1000.0
        tolerance = (
            "the predicted p99 lag plus one second, Seconds_Behind_Master's resolution "
            "(no heartbeat readable)"
        )
    else:
        return []
    if not over:
        return []
    return [
        CheckFinding(
            id="CHECK-CHANNEL-LAG",
            severity="warning",
            subject=want.name,
            message=(
                f"channel {want.name} lagged up to {ms_text(worst)} ({source}); the design "
                f"predicts at most {ms_text(limit)} at p99: losing cluster "
                f"{want.source_cluster} now loses more than the design's data at risk"
            ),
            observed={"lag_max_ms": round(worst, 3)},
            expected={"lag_p99_ms": round(limit, 3)},
            tolerance=tolerance,
        )
    ]
