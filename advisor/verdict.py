"""The verdict: which option to recommend, in plain words, and what would change it.

Recommend the viable option (no blocker) that needs the fewest clusters, then the lowest
commit latency. When none is viable, recommend the least bad: the one whose blockers are the
cheapest to remove (each rule's ``remedy_cost`` in its YAML file: a routing or witness
decision before bandwidth before physics), then the fewest clusters; and say what would have
to change. :func:`rank` is that ordering, vectorised, so that a sweep asks the same question
at every point of its grid.
"""

from __future__ import annotations

__all__ = [
    "blockers",
    "choose",
    "rank",
    "remedy_cost",
    "scale_at_limit",
    "scaled_latency_ms",
    "summary",
    "what_would_change",
]

import math
from collections.abc import Iterable, Mapping, Sequence

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


def remedy_cost(rule_ids: Iterable[str], rules: Mapping[str, Rule]) -> int:
    """What it takes to remove these blocking rules: each distinct rule's ``remedy_cost``."""
    return sum(rules[rule].remedy_cost for rule in set(rule_ids))


def rank(
    cost: npt.ArrayLike, clusters: npt.ArrayLike, commit_p50_ms: npt.ArrayLike
) -> npt.NDArray[np.intp]:
    """The chosen option's index at each point: the lowest remedy cost (0: viable), then the
    fewest clusters, then the lowest commit p50; the first option on a tie.

    Every argument has one row per option; ``cost`` and ``commit_p50_ms`` one column per point
    (or none, for a single point), ``clusters`` one value per option.
    """
    cost_a = np.asarray(cost, dtype=float)
    commit_a = np.broadcast_to(np.asarray(commit_p50_ms, dtype=float), cost_a.shape)
    clusters_a = np.asarray(clusters, dtype=float).reshape((-1,) + (1,) * (cost_a.ndim - 1))
    clusters_a = np.broadcast_to(clusters_a, cost_a.shape)
    # lexsort sorts by the last key first and is stable, along the last axis: options last.
    order = np.lexsort((commit_a.T, clusters_a.T, cost_a.T))
    return np.asarray(order[..., 0], dtype=np.intp)


def choose(
    options: Sequence[Option], findings: Sequence[Finding], rules: Mapping[str, Rule]
) -> Option:
    """The recommended option (see the module docstring)."""
    costs = [remedy_cost((f.rule for f in blockers(o, findings)), rules) for o in options]
    index = rank(
        costs,
        [len(o.clusters) for o in options],
        [o.commit_latency_ms.get("p50", 0.0) for o in options],
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
            parts.append(f"{other.architecture} is ruled out by {', '.join(rule_ids)}.")
        elif viable:
            parts.append(
                f"{other.architecture} would also work but needs "
                f"{len(other.clusters)} cluster(s) or slower commits."
            )
    if chosen.data_at_risk_s is not None:
        parts.append(
            f"On losing a site, about {chosen.data_at_risk_s * 1000:.0f} ms of recent "
            "commits may be lost (asynchronous links)."
        )
    return " ".join(parts)


def _remedies(option: Option, findings: Sequence[Finding], rules: Mapping[str, Rule]) -> list[str]:
    found = []
    for finding in blockers(option, findings):
        rule = rules.get(finding.rule)
        text = (
            rule.remedy.format(subject=finding.subject) if rule and rule.remedy else finding.title
        )
        if text not in found:
            found.append(text)
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
