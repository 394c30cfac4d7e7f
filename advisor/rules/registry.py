"""The registry: each rule id to its predicate, and the run that turns hits into findings.

A rule's data (severity, scope, remedy cost, thresholds, message) lives in
``rules/<ID>.yaml`` (:mod:`advisor.rules.pack`); its logic is one predicate in the module of
its scope: :mod:`~advisor.rules.link`, :mod:`~advisor.rules.cluster`,
:mod:`~advisor.rules.hot_row`, :mod:`~advisor.rules.asynchronous`.
"""

from __future__ import annotations

__all__ = ["CHECKS", "Check", "blocks", "evaluate", "rule_ids"]

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any

from advisor.errors import AdvisorError
from advisor.result import Finding
from advisor.rules import asynchronous, cluster, hot_row, link
from advisor.rules.context import Context
from advisor.rules.pack import Rule, RuleHit, Scope, render_message

Check = Callable[[Context, Mapping[str, float]], Iterator[RuleHit]]

CHECKS: dict[str, Check] = {
    "RTT-BELOW-PHYSICS": link.rtt_below_physics,
    "RTT-ESTIMATED": link.rtt_estimated,
    "PING-ONLY": link.ping_only,
    "ESTIMATE-FLIPS-VERDICT": link.estimate_flips_verdict,
    "COMMIT-LATENCY-SLO": cluster.commit_latency_slo,
    "QUORUM-SITE-LOSS": cluster.quorum_site_loss,
    "QUORUM-NODE-LOSS": cluster.quorum_node_loss,
    "FAILOVER-NODE-LOSS": cluster.failover_node_loss,
    "FAILOVER-SITE-LOSS": cluster.failover_site_loss,
    "ARBITRATOR-PLACED": cluster.arbitrator_placed,
    "RTT-TAIL-INSTABILITY": cluster.rtt_tail_instability,
    "SEND-WINDOW": cluster.send_window,
    "WRITESET-ROUNDS": cluster.writeset_rounds,
    "BANDWIDTH": cluster.bandwidth,
    "FLOW-CONTROL": cluster.flow_control,
    "CPU-QUOTA": cluster.cpu_quota,
    "CPU-QUOTA-BURSTS": cluster.cpu_quota_bursts,
    "CPU-QUOTA-SLICE": cluster.cpu_quota_slice,
    "HOT-ROW-RATE": hot_row.hot_row_rate,
    "HOT-ROW-QUEUE": hot_row.hot_row_queue,
    "HOT-ROW-CONFLICTS": hot_row.hot_row_conflicts,
    "MULTI-SITE-WRITES-ASYNC": asynchronous.multi_site_writes_async,
    "ASYNC-OWNERSHIP": asynchronous.async_ownership,
    "ASYNC-DATA-LOSS": asynchronous.async_data_loss,
    "ASYNC-APPLY-CAPACITY": asynchronous.async_apply_capacity,
}


def rule_ids(rules: Mapping[str, Rule], scopes: Collection[Scope]) -> list[str]:
    """The ids of the rules whose ``applies_to`` is one of ``scopes``, sorted."""
    return sorted(rule_id for rule_id, rule in rules.items() if rule.applies_to in scopes)


def evaluate(
    rules: Mapping[str, Rule], ctx: Context, ids: Sequence[str] | None = None
) -> list[Finding]:
    """Run the predicates of ``ids`` (default: every rule) and build the findings."""
    findings = []
    for rule_id in ids if ids is not None else sorted(rules):
        rule = rules[rule_id]
        for hit in _check(rule_id)(ctx, rule.parameters):
            values = {**rule.parameters, **hit.values}
            findings.append(
                Finding(
                    rule=rule.id,
                    severity=rule.severity,
                    subject=hit.subject,
                    option=hit.option,
                    title=rule.title,
                    message=render_message(rule, values),
                    values={k: _plain(v) for k, v in hit.values.items()},
                    remedy=hit.remedy,
                )
            )
    return findings


def blocks(rules: Mapping[str, Rule], ctx: Context, ids: Sequence[str]) -> bool:
    """Whether any rule of ``ids`` raises a blocker on ``ctx``: the answer of ``any(f.severity
    == "blocker" for f in evaluate(rules, ctx, ids))``, for the grouping search's questions.

    A finding's severity is its rule's, so only rules of severity blocker can answer yes, and
    one hit of one of them does: the others' predicates are not run and no finding is built.
    What differs from :func:`evaluate` is only what is never shown: the findings of candidates
    the search judged (the options it returns are judged again by :func:`evaluate`), so a
    user's message template that cannot be filled is reported when a reported finding needs it.
    """
    checks = [(_check(rule_id), rules[rule_id]) for rule_id in ids]
    return any(
        any(True for _ in check(ctx, rule.parameters))
        for check, rule in checks
        if rule.severity == "blocker"
    )


def _check(rule_id: str) -> Check:
    check = CHECKS.get(rule_id)
    if check is None:
        raise AdvisorError(f"rule {rule_id} has no predicate in advisor.rules.registry")
    return check


def _plain(value: Any) -> float | int | str | None:
    if value is None or isinstance(value, int | str):
        return value
    if isinstance(value, float):
        return round(value, 6)
    return str(value)
