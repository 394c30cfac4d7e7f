"""The verdict: which option to recommend, in plain words, and what would change it.

Recommend the viable option (no blocker) that needs the fewest failovers, then the fewest
clusters, then the lowest commit latency. When none is viable, recommend the least bad: the one
whose blockers are the cheapest to remove, then the same; and say what would have to change.
:func:`rank` is that ordering, vectorised, so that a sweep asks the same question at every
point of its grid.

A failover is a single failure (of those ``requirements.survive`` names) that a cluster
survives only by handing its writes to another cluster across an asynchronous channel
(advisor.engine.failover): survived, but losing the channel's lag of commits and stopping those
writes for a while. Counting them before clusters keeps a cluster spanning two sites without a
tie-breaker, which fails over on the loss of either site or the cut between them, behind
per-site clusters that fail over only when a site itself is lost.

What removing a blocker costs (:data:`REMEDIES`), cheapest first: a design decision, or a node
or a garbd in a site the topology already has (1); a new witness site, a third site for a
garbd, which is a decision plus a site to rent and link (1.5); a new network path, more
bandwidth or a shorter route (2); moving sites, the distance itself (3); and, where nothing
built removes it, a looser requirement (4). A rule file's ``remedy_cost`` (1 a design
decision, 2 more capacity, 3 physics) is the cost of its findings; a finding that knows which
remedy it needs (its ``remedy``: a QUORUM finding that a garbd at an existing
site fixes, or one that needs a new witness site) costs at least that remedy.
"""

from __future__ import annotations

__all__ = [
    "REMEDIES",
    "Remedy",
    "RemedyKind",
    "blockers",
    "choose",
    "failovers",
    "rank",
    "remedy_cost",
    "remedy_of",
    "scale_at_limit",
    "scaled_latency_ms",
    "summary",
    "what_would_change",
]

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from advisor.engine.metrics import Option
from advisor.inputs.topology import Topology
from advisor.model import physics
from advisor.result import Finding, WhatIf
from advisor.rules.pack import Rule
from advisor.vocabulary import ARCHITECTURES


def blockers(option: Option, findings: Sequence[Finding]) -> list[Finding]:
    """The findings of severity blocker under ``option``."""
    return [f for f in findings if f.option == option.architecture and f.severity == "blocker"]


RemedyKind = Literal[
    "decision", "node", "witness_site", "network_path", "move_sites", "requirement"
]
# What each remedy costs, and what it is in words (module docstring).
REMEDIES: dict[RemedyKind, tuple[float, str]] = {
    "decision": (1.0, "a design decision"),
    "node": (1.0, "a node or a garbd in a site the topology already has"),
    "witness_site": (1.5, "a new witness site (a third site with a garbd)"),
    "network_path": (2.0, "a new network path (more bandwidth or a shorter route)"),
    "move_sites": (3.0, "moving sites closer"),
    "requirement": (4.0, "a looser requirement"),
}
_KINDS: dict[str, RemedyKind] = {kind: kind for kind in REMEDIES}
# A rule file's remedy_cost, for a finding that does not name its remedy.
_KIND_OF_RULE_COST: dict[int, RemedyKind] = {1: "decision", 2: "network_path", 3: "move_sites"}


@dataclass(frozen=True)
class Remedy:
    """What removing one blocking finding takes: its kind, its cost and the rule's words."""

    kind: RemedyKind | None  # None: a rule file's own remedy_cost outside the 1-3 scale
    cost: float
    text: str


def remedy_of(finding: Finding, rules: Mapping[str, Rule]) -> Remedy:
    """The remedy a blocking finding needs: the kind it names, at least its rule's cost."""
    rule = rules.get(finding.rule)
    rule_cost = float(rule.remedy_cost) if rule else 1.0
    named = _KINDS.get(finding.remedy or "")
    if named is not None:
        return Remedy(named, max(rule_cost, REMEDIES[named][0]), _remedy_text(finding, rule))
    return Remedy(_KIND_OF_RULE_COST.get(int(rule_cost)), rule_cost, _remedy_text(finding, rule))


def _remedy_text(finding: Finding, rule: Rule | None) -> str:
    """The rule's ``remedy`` filled with the subject and the finding's values, or its title."""
    if rule is None or not rule.remedy:
        return finding.title
    try:
        return rule.remedy.format_map({**finding.values, "subject": finding.subject}).strip()
    except (KeyError, ValueError, TypeError):
        return finding.title


def remedy_cost(blocking: Iterable[str | Finding], rules: Mapping[str, Rule]) -> float:
    """What it takes to remove these blockers: per distinct rule, its dearest finding's remedy
    (:func:`remedy_of`); a bare rule id costs the rule's ``remedy_cost``."""
    per_rule: dict[str, float] = {}
    for item in blocking:
        if isinstance(item, Finding):
            rule_id, cost = item.rule, remedy_of(item, rules).cost
        else:
            rule_id, cost = item, float(rules[item].remedy_cost)
        per_rule[rule_id] = max(per_rule.get(rule_id, 0.0), cost)
    return sum(per_rule.values())


def rank(
    cost: npt.ArrayLike,
    clusters: npt.ArrayLike,
    commit_p50_ms: npt.ArrayLike,
    failovers: npt.ArrayLike | None = None,
) -> npt.NDArray[np.intp]:
    """The chosen option's index at each point: the lowest remedy cost (0: viable), then the
    fewest failovers (single failures survived only by handing the writes to another cluster,
    :func:`failovers`), then the fewest clusters, then the lowest commit p50; the first option
    on a tie.

    Every argument has one row per option; ``cost`` and ``commit_p50_ms`` one column per point
    (or none, for a single point), ``clusters`` and ``failovers`` one value per option
    (``failovers`` None: none anywhere).
    """
    cost_a = np.asarray(cost, dtype=float)
    commit_a = np.broadcast_to(np.asarray(commit_p50_ms, dtype=float), cost_a.shape)

    def per_option(values: npt.ArrayLike) -> npt.NDArray[np.float64]:
        column = np.asarray(values, dtype=float).reshape((-1,) + (1,) * (cost_a.ndim - 1))
        return np.broadcast_to(column, cost_a.shape)

    clusters_a = per_option(clusters)
    failovers_a = per_option(np.zeros(cost_a.shape[0]) if failovers is None else failovers)
    # lexsort sorts by the last key first and is stable, along the last axis: options last.
    order = np.lexsort((commit_a.T, clusters_a.T, failovers_a.T, cost_a.T))
    return np.asarray(order[..., 0], dtype=np.intp)


def failovers(option: Option) -> int:
    """How many (failure, cluster) pairs of the option's failover plan need a failover: each
    loses the channel's lag of commits and stops writes for a while, where a cluster that
    keeps its quorum loses nothing (0 without a plan)."""
    return len(option.failover.failovers) if option.failover else 0


def choose(
    options: Sequence[Option], findings: Sequence[Finding], rules: Mapping[str, Rule]
) -> Option:
    """The recommended option (see the module docstring)."""
    costs = [remedy_cost(blockers(o, findings), rules) for o in options]
    index = rank(
        costs,
        [len(o.clusters) for o in options],
        [o.commit_latency_ms.get("p50", 0.0) for o in options],
        [failovers(o) for o in options],
    )
    return options[int(index)]


def _groups(option: Option) -> str:
    """``a+b+garbd@c; d``: the clusters, with where an arbitrator runs."""
    return "; ".join(
        "+".join([*c.sites, *([f"garbd@{c.arbitrator}"] if c.arbitrator else [])])
        for c in option.clusters
    )


def summary(
    chosen: Option,
    options: Sequence[Option],
    findings: Sequence[Finding],
    rules: Mapping[str, Rule],
) -> str:
    """One paragraph in plain words: the decision, its main number, why not the others."""
    viable = not blockers(chosen, findings)
    commit = chosen.commit_latency_ms
    parts = []
    if viable:
        parts.append(
            f"Recommended: {ARCHITECTURES[chosen.architecture].title} ({_groups(chosen)})."
        )
    else:
        parts.append(
            f"No option meets every requirement. The least bad is "
            f"{ARCHITECTURES[chosen.architecture].title} ({_groups(chosen)}), with "
            f"{len(blockers(chosen, findings))} blocker(s) left to resolve."
        )
        remedies = _remedies(chosen, findings, rules)
        if remedies:
            parts.append(f"To make it viable: {'; '.join(remedies)}.")
    if commit:
        parts.append(
            f"Commits take about {commit['p50']:.1f} ms at the median and "
            f"{commit['p99']:.1f} ms at p99 at the slowest writing site."
        )
    for other in options:
        if other is chosen:
            continue
        reasons = blockers(other, findings)
        if reasons:
            rule_ids = sorted({f.rule for f in reasons})
            needs = " and ".join(_needs(other, findings, rules))
            parts.append(
                f"{other.architecture} is ruled out by {', '.join(rule_ids)}; "
                f"it would take {needs}."
            )
        elif viable and failovers(other) > failovers(chosen):
            parts.append(
                f"{other.architecture} would also work but fails over to another cluster on "
                f"more single failures ({failovers(other)} against {failovers(chosen)})."
            )
        elif viable:
            parts.append(
                f"{other.architecture} would also work but needs "
                f"{len(other.clusters)} cluster(s) or slower commits."
            )
    if chosen.data_at_risk_s is not None:
        at_risk = (
            f"about {chosen.data_at_risk_s * 1000:.0f} ms"
            if math.isfinite(chosen.data_at_risk_s)
            else "an unbounded backlog"
        )
        rto = chosen.failover.rto_s if chosen.failover else None
        took_over = (
            f", and its rows take no writes for up to {rto:.0f} s while another cluster takes over"
            if rto is not None and math.isfinite(rto)
            else ""
        )
        parts.append(
            f"On losing a site, {at_risk} of recent commits may be lost (asynchronous "
            f"links){took_over}."
        )
    return " ".join(parts)


def _ranked_remedies(
    option: Option, findings: Sequence[Finding], rules: Mapping[str, Rule]
) -> list[Remedy]:
    """The remedies of the option's blockers, cheapest first (stable on ties)."""
    remedies = [remedy_of(f, rules) for f in blockers(option, findings)]
    return sorted(remedies, key=lambda r: r.cost)


def _needs(option: Option, findings: Sequence[Finding], rules: Mapping[str, Rule]) -> list[str]:
    """The distinct kinds of remedy the option's blockers need, in words, cheapest first (a
    rule's own remedy where its cost is outside the scale)."""
    needs: list[str] = []
    for remedy in _ranked_remedies(option, findings, rules):
        need = REMEDIES[remedy.kind][1] if remedy.kind else remedy.text
        if need not in needs:
            needs.append(need)
    return needs


def _remedies(option: Option, findings: Sequence[Finding], rules: Mapping[str, Rule]) -> list[str]:
    """What would remove each blocker, in words, cheapest first, each once."""
    found: list[str] = []
    for remedy in _ranked_remedies(option, findings, rules):
        if remedy.text not in found:
            found.append(remedy.text)
    return found


def what_would_change(
    topology: Topology,
    options: Sequence[Option],
    findings: Sequence[Finding],
    lan_commit_p50_ms: float,
    worst_link_p50_ms: float,
    max_utilisation: float = 1.0,
) -> list[WhatIf]:
    """Thresholds at which single_cluster becomes viable or stops being so.

    Commit latency beyond the LAN part scales about linearly with the inter-site round
    trips (:func:`scaled_latency_ms`), so the limits of the latency rules (commit SLO, a hot
    row's utilisation under HOT-ROW-RATE's ``max_utilisation``) translate into a scale factor
    on every inter-site RTT, hence into a worst-link RTT and a distance. ``lan_commit_p50_ms``
    is the cluster's LAN commit (:meth:`advisor.analysis.Analysis.lan_base_ms`), the same
    base the sweep scales from.
    """
    single = next((o for o in options if o.architecture == "single_cluster"), None)
    if single is None or len(single.groups[0]) < 2 or not single.commit_latency_ms:
        return []
    commit = single.commit_latency_ms
    limits: list[tuple[float, str]] = []
    slo = topology.requirements.commit_latency_ms
    for key, limit in (slo.given() if slo else {}).items():
        factor = scale_at_limit(limit, commit[key], lan_commit_p50_ms)
        limits.append((factor, f"commit {key} {limit:g} ms"))
    for row in single.hot_rows:
        limit_ms = max_utilisation * 1000.0 / row.row.updates_per_s
        limits.append(
            (
                scale_at_limit(limit_ms, row.commit_ms["p50"], lan_commit_p50_ms),
                f'hot row "{row.row.name}" at {row.row.updates_per_s:g}/s',
            )
        )
    changes = []
    limits = [(factor, reason) for factor, reason in limits if math.isfinite(factor)]
    if limits:  # an infinite factor: no WAN part (a LAN slower than the WAN); nothing to say
        factor, reason = min(limits)
        rtt = worst_link_p50_ms * factor
        now_ok = factor >= 1.0
        change = (
            "stops being viable for latency when the worst inter-site RTT (p50) rises above"
            if now_ok
            else "becomes viable for latency when the worst inter-site RTT (p50) drops below"
        )
        changes.append(
            WhatIf(
                quantity="worst_link_rtt_ms",
                value=round(rtt, 2),
                unit="ms",
                current=round(worst_link_p50_ms, 2),
                message=(
                    f"single_cluster {change} {rtt:.1f} ms (now {worst_link_p50_ms:.1f} ms), "
                    f"limited by {reason}; {_distance_for(rtt)}."
                ),
            )
        )
    for row in single.hot_rows:
        bound = row.bound_p50_per_s
        changes.append(
            WhatIf(
                quantity=f"hot_row_rate:{row.row.name}",
                value=round(bound, 2),
                unit="1/s",
                current=row.row.updates_per_s,
                message=(
                    f'single_cluster carries "{row.row.name}" up to {bound:.1f} updates/s '
                    f"(one per {row.commit_ms['p50']:.1f} ms commit); it needs "
                    f"{row.row.updates_per_s:g}/s."
                ),
            )
        )
    return changes


def _distance_for(rtt_ms: float) -> str:
    """How far apart sites may be for a round trip, on a typical path and at best."""
    at_best = float(physics.max_distance_km(rtt_ms, "fiber"))
    typical = (rtt_ms - physics.ESTIMATE_FIXED_OVERHEAD_MS) / physics.ESTIMATE_ROUTE_FACTOR
    if typical <= 0:
        return (
            f"that needs a private metro path: the {physics.ESTIMATE_FIXED_OVERHEAD_MS:g} ms "
            f"overhead of a typical provider path alone exceeds it (physics allows up to "
            f"{at_best:.0f} km of fibre)"
        )
    km = float(physics.max_distance_km(typical, "fiber"))
    return f"on a typical fibre path that is about {km:.0f} km (at best {at_best:.0f} km)"


def scaled_latency_ms(
    predicted_ms: npt.ArrayLike, lan_ms: float, scale: npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """A latency whose part beyond the LAN commit scales with every inter-site RTT [ms].

    The first-order model of :func:`what_would_change` and the sweep: the LAN part (local
    work, relay hops) stays, the rest grows with the scale factor on the round trips.
    """
    predicted = np.asarray(predicted_ms, dtype=float)
    return np.asarray(lan_ms + (predicted - lan_ms) * np.asarray(scale, dtype=float))


def scale_at_limit(limit_ms: float, predicted_ms: float, lan_ms: float) -> float:
    """The RTT scale factor at which :func:`scaled_latency_ms` of ``predicted`` reaches
    ``limit`` (infinite when nothing of it scales)."""
    wan = predicted_ms - lan_ms
    if wan <= 0:
        return float("inf")
    return max(limit_ms - lan_ms, 0.0) / wan
