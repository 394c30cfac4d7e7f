"""The verdict: which option to recommend, in plain words, and what would change it.

Recommend the viable option (no blocker) whose loss on a failure is bounded (no channel that
falls behind without bound, :func:`unbounded_loss`), then that needs the fewest failovers,
then the fewest clusters, then the lowest commit latency. When none is viable, recommend the
least bad: the one whose blockers are the cheapest to remove, then the same; and say what
would have to change.
:func:`rank` is that ordering, vectorised, so that a sweep asks the same question at every
point of its grid.

A failover is a single failure (of those ``requirements.survive`` names) that a cluster
survives only by handing its writes to another cluster across an asynchronous channel
(advisor.engine.failover): survived, but losing the channel's lag of commits and stopping those
writes for a while. Counting them before clusters keeps a cluster spanning two sites without a
tie-breaker behind per-site clusters where it fails over more often; the design weights such a
cluster's writer site (advisor.engine.clusters), so only that site's loss stops it.

What removing a blocker costs (:data:`REMEDIES`), cheapest first: a design decision, or a node
or a garbd in a site the topology already has (1); a new witness site, a third site for a
garbd, which is a decision plus a site to rent and link (1.5); a new network path, more
bandwidth or a shorter route (2); moving sites, the distance itself (3); and, where nothing
built removes it, a looser requirement (4). A rule file's ``remedy_cost`` (1 a design
decision, 2 more capacity, 3 physics) is the cost of its findings; a finding that knows which
remedy it needs (its ``remedy``: a QUORUM finding that a garbd at an existing
site fixes, or one that needs a new witness site) costs at least that remedy.

What would change the answer (:func:`levers`) is read from the blockers, never a fixed
phrase: for a latency blocker (the commit SLO, a hot row's bound) the quantity that binds and
the value at which it flips: the send windows a finding advises, the write-set size, the
garbd's round trip, every RTT scaled alike; a hot row split into N rows, batched, given one
owner site; a link's bandwidth. The cheapest remedy that alone lifts every latency limit comes
first, and the summary names it.
"""

from __future__ import annotations

__all__ = [
    "LAB_LOCAL_COMMIT_MS",
    "LARGE_WRITESET_BYTES",
    "REMEDIES",
    "Lever",
    "LeverInputs",
    "Remedy",
    "RemedyKind",
    "blockers",
    "choose",
    "failovers",
    "lab_local_commit_ms",
    "lever_subjects",
    "levers",
    "local_commit_note",
    "rank",
    "remedy_cost",
    "remedy_of",
    "scale_at_limit",
    "scaled_latency_ms",
    "summary",
    "unbounded_loss",
    "what_would_change",
]

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, cast

import numpy as np
import numpy.typing as npt

from advisor.engine.evidence import LinkEvidence
from advisor.engine.metrics import ClusterEval, HotRowEval, Option, Percentiles
from advisor.inputs.topology import Topology
from advisor.model import galera, physics, pipeline
from advisor.model.provider_options import OptionValue
from advisor.result import Finding, WhatIf
from advisor.rules.asynchronous import appliers_why
from advisor.rules.pack import Rule
from advisor.units import ms_text
from advisor.vocabulary import ARCHITECTURES, Architecture


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
    unbounded: npt.ArrayLike | None = None,
) -> npt.NDArray[np.intp]:
    """The chosen option's index at each point: the lowest remedy cost (0: viable), then a
    bounded loss on a failure before an unbounded one (:func:`unbounded_loss`), then the
    fewest failovers (single failures survived only by handing the writes to another cluster,
    :func:`failovers`), then the fewest clusters, then the lowest commit p50; the first option
    on a tie.

    Every argument has one row per option; ``cost`` and ``commit_p50_ms`` one column per point
    (or none, for a single point), ``clusters`` and ``failovers`` one value per option,
    ``unbounded`` one per option or, as ``cost``, per option and point (None: none anywhere).
    """
    cost_a = np.asarray(cost, dtype=float)
    commit_a = np.broadcast_to(np.asarray(commit_p50_ms, dtype=float), cost_a.shape)

    def per_option(values: npt.ArrayLike) -> npt.NDArray[np.float64]:
        column = np.asarray(values, dtype=float).reshape((-1,) + (1,) * (cost_a.ndim - 1))
        return np.broadcast_to(column, cost_a.shape)

    clusters_a = per_option(clusters)
    failovers_a = per_option(np.zeros(cost_a.shape[0]) if failovers is None else failovers)
    unbounded_v = np.zeros(cost_a.shape[0]) if unbounded is None else np.asarray(unbounded)
    # per option, or per option and point as ``cost``
    unbounded_a = (
        np.broadcast_to(unbounded_v.astype(float), cost_a.shape)
        if unbounded_v.ndim == cost_a.ndim and cost_a.ndim > 1
        else per_option(unbounded_v)
    )
    # lexsort sorts by the last key first and is stable, along the last axis: options last.
    order = np.lexsort((commit_a.T, clusters_a.T, failovers_a.T, unbounded_a.T, cost_a.T))
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
        [bool(unbounded_loss(o)) for o in options],
    )
    return options[int(index)]


def _groups(option: Option) -> str:
    """``a+b+garbd@c; d``: the clusters, with where an arbitrator runs."""
    return "; ".join(
        "+".join([*c.sites, *([f"garbd@{c.arbitrator}"] if c.arbitrator else [])])
        for c in option.clusters
    )


def _estimate_flip(findings: Sequence[Finding]) -> str:
    """The sentence that puts measuring first when the recommendation changes within the
    range of an estimated round trip (ESTIMATE-FLIPS-VERDICT), else empty."""
    flip = next((f for f in findings if f.rule == "ESTIMATE-FLIPS-VERDICT"), None)
    if flip is None:
        return ""
    values = {key: str(value) for key, value in flip.values.items()}
    other = next(
        (values[end] for end in ("low", "high") if values.get(end) != values.get("estimate")), ""
    )
    return (
        f"Measure {flip.subject} first: the recommendation rests on round trips nobody "
        f"measured ({values.get('pairs', '')}), and within their range it would be {other}."
    )


def summary(
    chosen: Option,
    options: Sequence[Option],
    findings: Sequence[Finding],
    rules: Mapping[str, Rule],
    inputs: LeverInputs | None = None,
) -> str:
    """One paragraph in plain words: the decision, its main number, why not the others.

    With ``inputs`` (what :func:`levers` reads), a verdict resting on estimated round trips
    alone says so first; a ruled-out option says what would change it by its levers (the
    quantity that binds and its flip value) where its blockers are about latency; large write
    sets without a measured local commit say what was assumed (:func:`local_commit_note`).
    """
    viable = not blockers(chosen, findings)
    commit = chosen.commit_latency_ms
    parts = []
    if inputs is not None and _estimated_only(inputs):
        parts.append(
            "Every round trip here is estimated from distance, none measured: the verdict "
            "rests on estimates alone; measure the links before deciding."
        )
    flip = _estimate_flip(findings)
    if flip:
        parts.append(flip)
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
        remedies = _remedies(chosen, findings, rules, inputs)
        if remedies:
            parts.append(f"To make it viable: {'; '.join(remedies)}.")
    if commit:
        parts.append(
            f"Commits take about {ms_text(commit['p50'])} at the median and "
            f"{ms_text(commit['p99'])} at p99 at the slowest writing site."
        )
    for other in options:
        if other is chosen:
            continue
        reasons = blockers(other, findings)
        if reasons:
            rule_ids = sorted({f.rule for f in reasons})
            needs = " and ".join(_needs(other, findings, rules, inputs))
            parts.append(
                f"{other.architecture} is ruled out by {', '.join(rule_ids)}; "
                f"it would take {needs}."
            )
        elif unbounded_loss(other):
            parts.append(
                f"{other.architecture} keeps writing on every failure only by losing an "
                f"unbounded backlog: {unbounded_loss(other)}."
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
            f"about {ms_text(chosen.data_at_risk_s * 1000)}"
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
    if inputs is not None:
        note = local_commit_note(chosen, inputs)
        if note:
            parts.append(note)
    return " ".join(parts)


def _estimated_only(inputs: LeverInputs) -> bool:
    """Whether every inter-site round trip the analysis read is an estimate."""
    return bool(inputs.links) and all(link.rtt_source == "estimated" for link in inputs.links)


def _needs(
    option: Option,
    findings: Sequence[Finding],
    rules: Mapping[str, Rule],
    inputs: LeverInputs | None = None,
) -> list[str]:
    """What the option's blockers need, in words, cheapest first: for its latency blockers
    the levers that lift them (the quantity that binds, with its flip value), else the
    distinct kinds of remedy (a rule's own remedy where its cost is outside the scale)."""
    lifted = _lever_phrases(option, findings, rules, inputs)
    needs: list[str] = []
    for remedy, finding in _ranked_blockers(option, findings, rules):
        if lifted and _is_latency(finding, rules):
            need = lifted
        else:
            need = REMEDIES[remedy.kind][1] if remedy.kind else remedy.text
        if need not in needs:
            needs.append(need)
    return needs


def _ranked_blockers(
    option: Option, findings: Sequence[Finding], rules: Mapping[str, Rule]
) -> list[tuple[Remedy, Finding]]:
    """The option's blockers with their remedies, cheapest first (stable on ties)."""
    pairs = [(remedy_of(f, rules), f) for f in blockers(option, findings)]
    return sorted(pairs, key=lambda pair: pair[0].cost)


def _lever_phrases(
    option: Option,
    findings: Sequence[Finding],
    rules: Mapping[str, Rule],
    inputs: LeverInputs | None,
) -> str:
    """The levers that lift the option's latency blockers, in words: the two cheapest ways
    to lift every latency limit at once ("or"); '' when none is known."""
    if inputs is None:
        return ""
    found = _levers_of(option, findings, rules, inputs)
    if not blockers(option, findings):
        return ""
    limits = _limits(option, inputs.topology, inputs.max_utilisation)
    if not limits or _excess_ms(limits) <= 0:
        return ""
    # (cost, change, words): each way of lifting every latency limit at once.
    ways = [(lever.cost, lever.change, lever.phrase) for lever in found if lever.whole]
    broken = [limit.row for limit in limits if limit.predicted_ms > limit.limit_ms]
    if broken and all(broken):  # only hot rows break: splitting each of them lifts them all
        splits = [
            lever for lever in found if lever.quantity in {f"hot_row_split:{row}" for row in broken}
        ]
        if len(splits) > 1:
            words = " and ".join(lever.phrase for lever in splits)
            ways.append((splits[0].cost, max(lever.change for lever in splits), words))
    ways.sort(key=lambda way: (way[0], way[1]))
    return ", or ".join(words for _, _, words in ways[:2])


def _remedies(
    option: Option,
    findings: Sequence[Finding],
    rules: Mapping[str, Rule],
    inputs: LeverInputs | None = None,
) -> list[str]:
    """What would remove each blocker, in words, cheapest first, each once: the levers for
    latency blockers where they are known, else the rule's remedy."""
    lifted = _lever_phrases(option, findings, rules, inputs)
    found: list[str] = []
    for remedy, finding in _ranked_blockers(option, findings, rules):
        text = lifted if lifted and _is_latency(finding, rules) else remedy.text
        if text not in found:
            found.append(text)
    return found


# -- what would change the answer: the levers --------------------------------------------

# Write sets from this size up are "large" [bytes]: their local work (certification, binlog,
# InnoDB) is no longer the 1 ms of a small commit, and their size may bind before distance.
LARGE_WRITESET_BYTES = 256 * 1024
# The lab's local work per write-set size with no delay added [bytes, ms]: the p50 commit of
# benchmarks/calibration/lab-runs.yaml, case large-writeset-local-rtt0 (a real 3-node MariaDB
# 10.11 / Galera 26.4 cluster at RTT 0), less the serialisation at the lab path's 1 Gbit/s
# that the model adds itself (as benchmarks/cases.py reads it for the fidelity rows).
LAB_LOCAL_COMMIT_MS: tuple[tuple[float, float], ...] = (
    (3_384, 0.85 - 3_384 * 8e-6),
    (198_631, 11.17 - 198_631 * 8e-6),
    (793_042, 41.80 - 793_042 * 8e-6),
    (3_163_002, 148.92 - 3_163_002 * 8e-6),
)
# An option's clusters evaluated again with every write-set percentile times a factor and
# these provider options: cluster index -> writer site -> commit percentiles [ms].
CommitAt = Callable[
    [Option, float, Mapping[str, OptionValue]], Mapping[int, Mapping[str, Percentiles]]
]
# Bisection steps on the write-set factor (log scale): 2^-9 of the searched span, under 2 %
# from a 2 KB floor to 5 MB (the flip is said to two significant digits, rounded down).
_SIZE_STEPS = 9


@dataclass(frozen=True)
class LeverInputs:
    """What the levers read beyond the options and findings.

    ``lan_commit_p50_ms`` is single_cluster's LAN base (:meth:`Analysis.lan_base_ms`, what
    the first-order RTT scaling keeps fixed); ``worst_link_p50_ms`` the worst small-message
    RTT p50 between data sites; the utilisations are the rules' parameters (HOT-ROW-RATE's
    ``max_utilisation``, HOT-ROW-QUEUE's ``min_utilisation``, BANDWIDTH's
    ``max_utilisation``); ``commit_at`` re-evaluates one cluster under other write-set sizes
    or provider options (None: those levers are not tried).
    """

    topology: Topology
    links: Sequence[LinkEvidence] = ()
    lan_commit_p50_ms: float = 0.0
    worst_link_p50_ms: float = 0.0
    writeset_p50_bytes: float = 2048.0
    writeset_p99_bytes: float = 65536.0
    max_utilisation: float = 1.0
    queue_utilisation: float = 0.5
    bandwidth_utilisation: float = 0.7
    commit_at: CommitAt | None = None
    # Each option's levers by architecture, computed once (:func:`lever_subjects`) for the
    # summary and what_would_change; an option not in it has its levers computed when asked.
    found: Mapping[str, list[Lever]] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Lever:
    """One quantity that would change an option's verdict, and where it flips.

    ``phrase`` is its short form for the summary ("write sets below 3.2 MB at p99 (now
    5.0 MB)"); ``change`` the relative change it needs (what orders the levers of one
    option: the smallest binds first, after the cheapest ``cost``, on :data:`REMEDIES`'
    scale); ``whole`` whether it alone lifts every latency limit of the option (an RTT, a
    garbd link, the write-set size, the windows; a row's split when that row alone breaks
    one; a slow or CPU-limited site's figure when its finding is the option's only blocker),
    or says one row's, one link's or one site's figure.
    """

    option: str
    quantity: str
    value: float
    unit: str
    current: float | None
    message: str
    phrase: str
    change: float
    whole: bool = True
    example: str | None = None
    cost: float = 1.0

    def what_if(self) -> WhatIf:
        return WhatIf(
            quantity=self.quantity,
            value=self.value,
            unit=self.unit,
            current=self.current,
            message=self.message,
            option=cast(Architecture, self.option),
            example=self.example,
        )


@dataclass(frozen=True)
class _Limit:
    """A latency limit of an option: a commit percentile at a writer site under the SLO, or
    a hot row's commit p50 under its Callaghan limit [ms]."""

    cluster: int
    sites: tuple[str, ...]  # the writer sites whose worst commit it reads
    key: str
    limit_ms: float
    predicted_ms: float
    reason: str
    row: str | None = None  # the hot row whose Callaghan limit it is (None: the SLO)


def _limits(option: Option, topology: Topology, max_utilisation: float) -> list[_Limit]:
    """Every latency limit of the option (COMMIT-LATENCY-SLO's and HOT-ROW-RATE's)."""
    limits: list[_Limit] = []
    slo = topology.requirements.commit_latency_ms
    given = slo.given() if slo else {}
    for index, cluster in enumerate(option.clusters):
        for site in cluster.writers:
            for key, limit in given.items():
                predicted = cluster.commit_by_site_ms[site][key]
                limits.append(
                    _Limit(index, (site,), key, limit, predicted, f"commit {key} {limit:g} ms")
                )
    for row in option.hot_rows:
        cluster = option.clusters[row.cluster]
        writers = tuple(w for w in row.writer_sites if w in cluster.commit_by_site_ms)
        limits.append(
            _Limit(
                row.cluster,
                writers,
                "p50",
                max_utilisation * 1000.0 / row.row.updates_per_s,
                row.commit_ms["p50"],
                f'hot row "{row.row.name}" at {row.row.updates_per_s:g}/s',
                row.row.name,
            )
        )
    return limits


def _excess_ms(
    limits: Sequence[_Limit], commits: Mapping[int, Mapping[str, Percentiles]] | None = None
) -> float:
    """How far the worst limit is exceeded [ms] (<= 0: every limit holds), at the predicted
    commits or, for the clusters ``commits`` gives, at those."""
    worst_ms = -math.inf
    for limit in limits:
        predicted = limit.predicted_ms
        if commits is not None and limit.cluster in commits:
            by_site = commits[limit.cluster]
            sites = [s for s in limit.sites if s in by_site] or list(by_site)
            predicted = max((by_site[s][limit.key] for s in sites), default=predicted)
        worst_ms = max(worst_ms, predicted - limit.limit_ms)
    return worst_ms


def _latency_blocked(
    option: Option, findings: Sequence[Finding], rules: Mapping[str, Rule]
) -> bool:
    """Whether a latency rule (the commit SLO, a hot row's) blocks the option."""
    return any(_is_latency(f, rules) for f in blockers(option, findings))


def _is_latency(finding: Finding, rules: Mapping[str, Rule]) -> bool:
    rule = rules.get(finding.rule)
    return finding.rule == "COMMIT-LATENCY-SLO" or (
        rule is not None and rule.applies_to == "hot_row"
    )


def levers(
    option: Option,
    findings: Sequence[Finding],
    rules: Mapping[str, Rule],
    inputs: LeverInputs,
) -> list[Lever]:
    """The quantities that would change the option's verdict, each with its flip value.

    Read from the option's blockers (which rule blocks, on what figure), never a fixed
    phrase. Whole-option levers first, the smallest change first: the send windows a finding
    advises and the write-set size (the cluster evaluated again at them, when
    ``inputs.commit_at`` is given), the garbd's round trip (first order: the garbd's legs of
    the longest commit path move 1:1 with its links), every inter-site RTT scaled
    (:func:`scale_at_limit`, single_cluster only). Then per row: its rate, split into N rows,
    batched; and per BANDWIDTH blocker the bandwidth that carries the peak.
    """
    limits = _limits(option, inputs.topology, inputs.max_utilisation)
    excess = _excess_ms(limits) if limits else -math.inf
    blocked = bool(blockers(option, findings))
    whole: list[Lever] = []
    if excess > 0 and _latency_blocked(option, findings, rules):
        whole += _window_lever(option, findings, limits, inputs)
        whole += _garbd_lever(option, limits, excess)
        whole += _size_lever(option, findings, limits, inputs)
    if option.architecture == "single_cluster":
        whole += _rtt_lever(option, limits, inputs)
    per_row = [
        lever
        for row in option.hot_rows
        for lever in _row_levers(option, row, findings, rules, inputs, blocked)
    ]
    broken = [limit.row for limit in limits if limit.predicted_ms > limit.limit_ms]
    if len(broken) == 1 and broken[0] is not None:  # one row alone breaks: its remedies flip it
        per_row = [
            replace(lever, whole=True)
            if lever.quantity in (f"hot_row_split:{broken[0]}", f"hot_row_batch_ms:{broken[0]}")
            else lever
            for lever in per_row
        ]
    found = sorted(
        [
            *whole,
            *per_row,
            *_bandwidth_levers(option, findings, inputs),
            *_member_levers(option, findings),
        ],
        # Whole levers by cost, then change; the rows' and links' figures in their order.
        key=lambda lever: (False, lever.cost, lever.change) if lever.whole else (True, 0, 0),
    )
    return found


def lever_subjects(options: Sequence[Option], findings: Sequence[Finding]) -> list[Option]:
    """The options whose levers the summary and what_would_change read: every option with a
    blocker, and single_cluster over several sites with commits (where it would become
    viable, or stop being so)."""
    return [
        o
        for o in options
        if blockers(o, findings)
        or (o.architecture == "single_cluster" and len(o.groups[0]) >= 2 and o.commit_latency_ms)
    ]


def _levers_of(
    option: Option, findings: Sequence[Finding], rules: Mapping[str, Rule], inputs: LeverInputs
) -> list[Lever]:
    """The option's levers as computed once (``inputs.found``), else now."""
    kept = inputs.found.get(option.architecture)
    return kept if kept is not None else levers(option, findings, rules, inputs)


def _rtt_lever(option: Option, limits: Sequence[_Limit], inputs: LeverInputs) -> list[Lever]:
    """Every inter-site RTT scaled alike: where the tightest latency limit is reached.

    Commit latency beyond the LAN part scales about linearly with the inter-site round trips
    (:func:`scaled_latency_ms`), so each limit translates into a scale factor on every RTT,
    hence into a worst-link RTT and a distance; the garbd's links scale with them.
    """
    if len(option.groups[0]) < 2 or not option.commit_latency_ms:
        return []
    lan_ms, worst_ms = inputs.lan_commit_p50_ms, inputs.worst_link_p50_ms
    factors = [
        (scale_at_limit(limit.limit_ms, limit.predicted_ms, lan_ms), limit.reason)
        for limit in limits
    ]
    factors = [(f, reason) for f, reason in factors if math.isfinite(f)]
    if not factors:  # no WAN part (a LAN slower than the WAN): nothing to say
        return []
    factor, reason = min(factors)
    rtt = worst_ms * factor
    now_ok = factor >= 1.0
    if not now_ok and rtt < 0.05:  # no round trip meets it: the RTT is not the lever
        return []
    change = (
        "stops being viable for latency when the worst inter-site RTT (p50) rises above"
        if now_ok
        else "becomes viable for latency when the worst inter-site RTT (p50) drops below"
    )
    garbd = _garbd_link(option.clusters[0])
    with_garbd = (
        f", the garbd link {garbd[0]} ({garbd[1]:.1f} ms now) scaling with it to "
        f"{garbd[1] * factor:.1f} ms"
        if garbd is not None and garbd[1] > worst_ms
        else ""
    )
    phrase = f"moving sites closer (worst round trip below {rtt:.1f} ms, now {worst_ms:.1f})"
    measure = ""
    estimated = [link for link in option.clusters[0].links if link.estimate is not None]
    if estimated:
        low = min(link.estimate.low_ms for link in estimated if link.estimate is not None)
        high = max(link.estimate.high_ms for link in estimated if link.estimate is not None)
        names = ", ".join(" - ".join(link.sites) for link in estimated)
        action = "before moving anything" if not now_ok else "before relying on it"
        measure = (
            f" The round trips of {names} are estimates, anywhere from {low:.2f} to "
            f"{high:.1f} ms: measure them {action}."
        )
        if not now_ok and low < rtt:  # the flip lies inside the estimates' range
            phrase = (
                f"measured round trips below {rtt:.1f} ms where {worst_ms:.1f} ms is estimated, "
                f"or moving sites closer"
            )
    return [
        Lever(
            option=option.architecture,
            quantity="worst_link_rtt_ms",
            value=round(rtt, 2),
            unit="ms",
            current=round(worst_ms, 2),
            message=(
                f"{option.architecture} {change} {rtt:.1f} ms (now {worst_ms:.1f} ms){with_garbd}, "
                f"limited by {reason}; {_distance_for(rtt)}.{measure}"
            ),
            phrase=phrase,
            change=abs(1.0 - factor),
            cost=REMEDIES["move_sites"][0],
        )
    ]


def _garbd_link(cluster: ClusterEval) -> tuple[str, float] | None:
    """The garbd's longest link, ``a-w``, and its RTT p50 [ms], when the cluster's garbd runs
    in a site without data nodes (it then sits in every commit's round trip)."""
    arbitrator = cluster.arbitrator
    if arbitrator is None or arbitrator in cluster.sites:
        return None
    garbd = [link for link in cluster.links if arbitrator in link.sites]
    if not garbd:
        return None
    link = max(garbd, key=lambda item: float(item.rtt.quantile(0.5)))
    return " - ".join(link.sites), float(link.rtt.quantile(0.5))


def _garbd_lever(option: Option, limits: Sequence[_Limit], excess_ms: float) -> list[Lever]:
    """A garbd site nearer the data sites: its legs of the longest commit path move 1:1 with
    its round trips, and at most by what it adds (``arbitrator_cost_ms``)."""
    found = []
    for index, cluster in enumerate(option.clusters):
        garbd = _garbd_link(cluster)
        if garbd is None or cluster.arbitrator_cost_ms <= 0:
            continue
        elsewhere = [limit for limit in limits if limit.cluster != index]
        if elsewhere and _excess_ms(elsewhere) > 0:
            continue  # another cluster's limit binds: no garbd here lifts it
        if excess_ms > cluster.arbitrator_cost_ms:
            continue  # even without its cost the limits break
        name, rtt_ms = garbd
        flip_ms = rtt_ms - excess_ms
        if flip_ms <= 0:
            continue
        found.append(
            Lever(
                option=option.architecture,
                quantity=f"garbd_link_rtt_ms:{cluster.arbitrator}",
                value=round(flip_ms, 2),
                unit="ms",
                current=round(rtt_ms, 2),
                message=(
                    f"{option.architecture} becomes viable for latency when the garbd at "
                    f"{cluster.arbitrator} is within {flip_ms:.1f} ms (RTT p50) of every data "
                    f"site (now {rtt_ms:.1f} ms, link {name}): it sits in every commit's round "
                    f"trip and adds {cluster.arbitrator_cost_ms:.1f} ms to the median commit, "
                    f"{excess_ms:.1f} ms of which break the limit. Place it in a nearer site "
                    f"(first order: the commit moves 1:1 with the garbd's round trips)."
                ),
                phrase=(
                    f"the garbd at {cluster.arbitrator} within {flip_ms:.1f} ms of every data "
                    f"site (now {rtt_ms:.1f} ms)"
                ),
                change=excess_ms / rtt_ms,
                cost=REMEDIES["witness_site"][0],
            )
        )
    return found


def _advised_windows(option: Option, findings: Sequence[Finding]) -> tuple[int, int] | None:
    """The widest (user, send) windows a finding under the option advises, if any."""
    advised = [
        (int(user), int(send))
        for f in findings
        if f.option == option.architecture
        and f.rule in ("WRITESET-ROUNDS", "SEND-WINDOW")
        and isinstance(user := f.values.get("user_send_window"), int | float)
        and isinstance(send := f.values.get("send_window"), int | float)
    ]
    return max(advised, key=lambda w: w[1]) if advised else None


def _rounds_saving_ms(option: Option, writeset_bytes: float) -> float:
    """At most what a commit of a write set of this size spends in the send windows' extra
    rounds, in any cluster of the option [ms]: each extra round one commit path (bounded by
    the commit less local work), the wait for a first reply the nearest member's RTT."""
    saving = 0.0
    for cluster in option.clusters:
        if not cluster.commit_by_site_ms:
            continue
        fragments = pipeline.fragment_count(writeset_bytes, cluster.fragment_bytes)
        rounds, reply = pipeline.send_rounds(fragments, cluster.user_window, cluster.send_window)
        path_ms = cluster.commit_percentiles()["max"] - cluster.local_commit_ms
        first_ms = max(cluster.first_reply_ms.values(), default=0.0)
        saving = max(saving, int(rounds.max()) * path_ms + bool(reply.any()) * first_ms)
    return saving


def _transfer_ms(option: Option, writeset_bytes: float) -> float:
    """What a write set of this size adds to the median round trip of the option's longest
    link (serialisation, TCP's window) [ms]: what smaller write sets save beyond the rounds."""
    extra = 0.0
    for cluster in option.clusters:
        for link in cluster.links:
            sized, _ = link.writeset_rtt(writeset_bytes)
            extra = max(extra, float(sized.quantile(0.5)) - float(link.rtt.quantile(0.5)))
    return extra


def _window_lever(
    option: Option, findings: Sequence[Finding], limits: Sequence[_Limit], inputs: LeverInputs
) -> list[Lever]:
    """The send windows a finding advises, when the option's clusters evaluated with them
    meet every latency limit."""
    windows = _advised_windows(option, findings)
    if inputs.commit_at is None or windows is None:
        return []
    if _rounds_saving_ms(option, inputs.writeset_p99_bytes) < _excess_ms(limits):
        return []  # even a commit in one round breaks the limits: not worth an evaluation
    user, send = windows
    settings = {"evs.user_send_window": user, "evs.send_window": send}
    try:
        commits = inputs.commit_at(option, 1.0, settings)
    except ValueError:  # advised beyond what Galera accepts: no setting to name
        return []
    if _excess_ms(limits, commits) > 0:
        return []
    cluster = option.clusters[0]
    now = f"{cluster.user_window}/{cluster.send_window}"
    example = f"evs.user_send_window={user}; evs.send_window={send}"
    return [
        Lever(
            option=option.architecture,
            quantity="evs.send_window",
            value=float(send),
            unit="messages",
            current=float(cluster.send_window),
            message=(
                f"{option.architecture} becomes viable for latency with {example} (now {now}): "
                f"its {_size(inputs.writeset_p99_bytes)} write sets at p99 then cross the send "
                f"windows in one round instead of several; the distance is not what binds."
            ),
            phrase=f"wider send windows ({example}, now {now})",
            change=0.0,  # a setting, the cheapest change
            example=example,
        )
    ]


def _size_lever(
    option: Option, findings: Sequence[Finding], limits: Sequence[_Limit], inputs: LeverInputs
) -> list[Lever]:
    """Smaller write sets: the largest p99 (every percentile scaled alike) at which the
    option's clusters, evaluated again, meet every latency limit. Tried only for large write
    sets or where WRITESET-ROUNDS fires under the option."""
    p99 = inputs.writeset_p99_bytes
    rounds = any(f.rule == "WRITESET-ROUNDS" and f.option == option.architecture for f in findings)
    if inputs.commit_at is None or not (p99 >= LARGE_WRITESET_BYTES or rounds):
        return []
    saving_ms = _rounds_saving_ms(option, p99) + _transfer_ms(option, p99)
    if p99 < LARGE_WRITESET_BYTES and saving_ms < _excess_ms(limits):
        return []  # all the size costs is less than the excess: not worth an evaluation
    low = min(1.0, 2048.0 / p99)  # a few rows changed: a small write set
    if low >= 1.0 or _excess_ms(limits, inputs.commit_at(option, low, {})) > 0:
        return []  # even small write sets break the limits: the size is not the lever
    fits, breaks = math.log(low), 0.0
    for _ in range(_SIZE_STEPS):
        middle = (fits + breaks) / 2
        if _excess_ms(limits, inputs.commit_at(option, math.exp(middle), {})) > 0:
            breaks = middle
        else:
            fits = middle
    factor = math.exp(fits)
    flip = _round_down(p99 * factor)  # the figure said everywhere, on its safe side
    return [
        Lever(
            option=option.architecture,
            quantity="writeset_p99_bytes",
            value=flip,
            unit="bytes",
            current=p99,
            message=(
                f"{option.architecture} becomes viable for latency when write sets shrink to "
                f"{_size(flip)} at p99 (now {_size(p99)}; every percentile scaled alike): the "
                f"write-set size binds, not the distance (worst round trip "
                f"{inputs.worst_link_p50_ms:.2f} ms). Keep transactions small: commit large "
                f"batches in chunks, keep large BLOBs out of replicated tables."
            ),
            phrase=f"write sets below {_size(flip)} at p99 (now {_size(p99)})",
            change=1.0 - factor,
        )
    ]


def _round_down(value: float) -> float:
    """Two significant digits, rounded down (a limit stays on its safe side)."""
    if value <= 0:
        return 0.0
    scale = 10.0 ** (math.floor(math.log10(value)) - 1)
    return float(math.floor(value / scale) * scale)


def _size(value: float) -> str:
    """Bytes as people say them: ``850 KB``, ``3.2 MB`` (10^3 steps)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if value >= scale:
            return (
                f"{value / scale:.2g} {unit}"
                if value < 10 * scale
                else f"{value / scale:.0f} {unit}"
            )
    return f"{value:.0f} bytes"


def _row_levers(
    option: Option,
    row: HotRowEval,
    findings: Sequence[Finding],
    rules: Mapping[str, Rule],
    inputs: LeverInputs,
    option_blocked: bool,
) -> list[Lever]:
    """One hot row's levers: its rate (single_cluster's bound, always), and where it binds
    (a hot-row blocker on it, or a utilisation from HOT-ROW-QUEUE's on) the application's
    remedies: split into N rows, batched updates, one owner site."""
    name, rate = row.row.name, row.row.updates_per_s
    commit_ms = row.commit_ms["p50"]
    bound = row.bound_p50_per_s
    found = []
    if option.architecture == "single_cluster":
        found.append(
            Lever(
                option=option.architecture,
                quantity=f"hot_row_rate:{name}",
                value=round(bound, 2),
                unit="1/s",
                current=rate,
                message=(
                    f'{option.architecture} carries "{name}" up to {bound:.1f} updates/s '
                    f"(one per {commit_ms:.1f} ms commit); it needs {rate:g}/s."
                ),
                phrase=f'fewer updates of "{name}" (below {bound:.1f}/s, now {rate:g}/s)',
                change=max(1.0 - bound / rate, 0.0),
                whole=False,
                cost=REMEDIES["requirement"][0],
            )
        )
    row_blocked = any(
        f.subject == name and _is_latency(f, rules) and f.rule != "COMMIT-LATENCY-SLO"
        for f in blockers(option, findings)
    )
    utilisation = rate / bound
    # A row's remedies change the answer where a hot-row blocker is on it, or where the row
    # queues for its lock (HOT-ROW-QUEUE's utilisation) and the option stands or only latency
    # blocks it (a row's wait for its lock may be what breaks the commit SLO).
    latency_only = all(_is_latency(f, rules) for f in blockers(option, findings))
    queues = utilisation >= inputs.queue_utilisation and (not option_blocked or latency_only)
    if not (row_blocked or queues):
        return found
    calm = max(math.ceil(rate / (bound * inputs.queue_utilisation)), 1)
    split = max(_split_rows(rate, commit_ms, inputs), 2 if queues else 1)
    owner = (
        f" Its writes come from {', '.join(row.writer_sites)}: give it one owner site "
        f"({row.owner}) and route them there (ProxySQL query rule), so one node takes them "
        "and none fails certification."
        if len(row.writer_sites) > 1
        else ""
    )
    sql = (
        f"UPDATE counters SET n = n + ? WHERE id = ? AND slot = ?  -- slot: a random integer "
        f"in [0, {split}) chosen by the application (or SET @slot = FLOOR(RAND() * {split}) "
        f"first: RAND() inside the WHERE is drawn again for every row scanned); "
        f"SELECT SUM(n) FROM counters WHERE id = ?"
    )
    found.append(
        Lever(
            option=option.architecture,
            quantity=f"hot_row_split:{name}",
            value=float(split),
            unit="rows",
            current=1.0,
            message=(
                f'Under {option.architecture}, "{name}" at {rate:g} updates/s uses '
                f"{utilisation:.0%} of its {bound:.1f}/s bound (one update per {commit_ms:.1f} "
                f"ms commit). Split into {split} rows (slots) it fits"
                f"{_split_why(inputs, commit_ms)}; {calm} rows keep each under "
                f"{inputs.queue_utilisation:.0%} of the bound, waiting at most half a commit for "
                f"the lock. Write a random slot and read the sum: {sql}.{owner}"
            ),
            phrase=f'"{name}" split into {split} rows',
            change=1.0 - 1.0 / split,
            whole=False,
            example=sql,
        )
    )
    interval_ms = commit_ms / inputs.max_utilisation
    calm_interval_ms = commit_ms / inputs.queue_utilisation
    found.append(
        Lever(
            option=option.architecture,
            quantity=f"hot_row_batch_ms:{name}",
            value=round(calm_interval_ms, 1),
            unit="ms",
            current=round(1000.0 / rate, 2),
            message=(
                f'Or batch the updates of "{name}": gather its increments in the application '
                f"(or a queue table) and apply them in one UPDATE every {calm_interval_ms:.0f} "
                f"ms or more (now one every {1000.0 / rate:.1f} ms; above one every "
                f"{interval_ms:.1f} ms the row can no longer keep up)."
            ),
            phrase=(
                f'"{name}" updated in batches (one UPDATE per {calm_interval_ms:.0f} ms or more)'
            ),
            change=1.0 - (1000.0 / rate) / calm_interval_ms,
            whole=False,
        )
    )
    return found


def _split_rows(rate_per_s: float, commit_ms: float, inputs: LeverInputs) -> int:
    """The fewest rows a counter at ``rate_per_s`` splits into so that each slot stays under
    Callaghan's limit (``max_utilisation`` of one update per commit) and, with a commit SLO,
    each update's commit plus its mean wait for the lock (M/D/1:
    :func:`galera.hot_row_queue_ms`) stays within the tightest bound of the SLO."""
    tightest_ms = _tightest_slo_ms(inputs)
    if commit_ms > tightest_ms:  # the commit alone breaks it: no split helps there
        tightest_ms = math.inf
    for rows in range(1, 10_001):
        rho, wait_ms = galera.hot_row_queue_ms(rate_per_s / rows, commit_ms)
        if rho < inputs.max_utilisation and commit_ms + wait_ms <= tightest_ms:
            return rows
    return 10_000


def _tightest_slo_ms(inputs: LeverInputs) -> float:
    """The tightest bound of the commit SLO [ms] (infinite without one)."""
    slo = inputs.topology.requirements.commit_latency_ms
    given = slo.given() if slo else {}
    return min(given.values()) if given else math.inf


def _split_why(inputs: LeverInputs, commit_ms: float) -> str:
    tightest_ms = _tightest_slo_ms(inputs)
    if commit_ms <= tightest_ms < math.inf:
        return (
            f" under its bound with each update's commit and wait for the lock within "
            f"{tightest_ms:g} ms"
        )
    return " under its bound"


def _bandwidth_levers(
    option: Option, findings: Sequence[Finding], inputs: LeverInputs
) -> list[Lever]:
    """Per BANDWIDTH blocker: the bandwidth that carries the peak at the rule's share."""
    found = []
    for f in blockers(option, findings):
        traffic, bandwidth = f.values.get("traffic_mbps"), f.values.get("bandwidth_mbps")
        if f.rule != "BANDWIDTH" or not isinstance(traffic, int | float):
            continue
        if not isinstance(bandwidth, int | float):
            continue
        need = float(traffic) / inputs.bandwidth_utilisation
        found.append(
            Lever(
                option=option.architecture,
                quantity=f"bandwidth_mbps:{f.subject}",
                value=round(need, 1),
                unit="Mbit/s",
                current=float(bandwidth),
                message=(
                    f"{option.architecture}: link {f.subject} carries the peak replication of "
                    f"about {traffic:.0f} Mbit/s from {need:.0f} Mbit/s of bandwidth (now "
                    f"{bandwidth:g})."
                ),
                phrase=f"{need:.0f} Mbit/s on {f.subject} (now {bandwidth:g})",
                change=max(need / float(bandwidth) - 1.0, 0.0),
                whole=False,
                cost=REMEDIES["network_path"][0],
            )
        )
    return found


def _member_levers(option: Option, findings: Sequence[Finding]) -> list[Lever]:
    """Per FLOW-CONTROL blocker, the apply cost at which the slow site carries the peak with
    its appliers at work; per CPU-QUOTA blocker, the CPU limit that carries it: each one
    site's figure, read from the finding (which states both); whole when that finding is the
    option's only blocker, since the figure then makes the option viable alone."""
    blocking = blockers(option, findings)
    alone = len(blocking) == 1
    found = []
    for f in blocking:
        if f.rule == "FLOW-CONTROL":
            # the slowest site's figure alone lifts the blocker only if no other is below
            only = f.values.get("capped_sites", f.subject) == f.subject
            found.append(_apply_lever(option, f, alone and only))
        elif f.rule == "CPU-QUOTA":
            found.append(_cpu_limit_lever(option, f, alone))
    return found


def _figure(finding: Finding, key: str) -> float:
    """A number the finding states (its rule always states it)."""
    value = finding.values[key]
    assert isinstance(value, int | float), (finding.rule, key)
    return float(value)


def _apply_lever(option: Option, finding: Finding, alone: bool) -> Lever:
    """FLOW-CONTROL's site: the apply cost [ms] at which its appliers at work carry the peak."""
    site = finding.subject
    at_work = _figure(finding, "appliers_at_work")
    peak, now = _figure(finding, "peak_per_s"), _figure(finding, "apply_ms")
    flip = _figure(finding, "max_apply_ms")  # the apply at which those appliers carry the peak
    return Lever(
        option=option.architecture,
        quantity=f"local_commit_ms:{site}",
        value=round(flip, 2),
        unit="ms",
        current=now,
        message=(
            f"{option.architecture}: the nodes at {site} apply the peak of {peak:g} commits/s "
            f"without pausing the cluster by flow control when one apply takes at most "
            f"{flip:.2f} ms with {at_work:g} appliers at work (now {now:g} ms: FLOW-CONTROL "
            f"ranks the remedies){_also_capped(finding)}."
        ),
        phrase=f"an apply at {site} within {flip:.2f} ms (now {now:g})",
        change=max(now / flip - 1.0, 0.0),
        whole=alone,
        example=str(finding.values["remedy_short"]),  # what brings the apply down
        cost=REMEDIES["decision"][0],
    )


def _also_capped(finding: Finding) -> str:
    """The other sites FLOW-CONTROL finds below the peak, which must keep up too ('' else)."""
    capped = str(finding.values.get("capped_sites", finding.subject)).split(", ")
    others = [site for site in capped if site != finding.subject]
    return f"; so must {', '.join(others)}, also below the peak" if others else ""


def _cpu_limit_lever(option: Option, finding: Finding, alone: bool) -> Lever:
    """CPU-QUOTA's site: the CPU limit [CPUs] that carries the peak, as the finding advises."""
    site = finding.subject
    needed, now = _figure(finding, "limit_to_set_cores"), _figure(finding, "limit_cores")
    return Lever(
        option=option.architecture,
        quantity=f"cpu_limit_cores:{site}",
        # up to the hundredth, not past it on a float's last digit
        value=math.ceil(needed * 100.0 - 1e-9) / 100.0,
        unit="CPUs",
        current=now,
        message=(
            f"{option.architecture}: the nodes at {site} keep up with the peak under a CPU "
            f"limit of at least {needed:.2f} CPUs (now {now:g}: CPU-QUOTA), or none."
        ),
        phrase=f"a CPU limit of at least {needed:.2f} at {site} (now {now:g})",
        change=max(needed / now - 1.0, 0.0),
        whole=alone,
        cost=REMEDIES["decision"][0],
    )


def what_would_change(
    options: Sequence[Option],
    findings: Sequence[Finding],
    rules: Mapping[str, Rule],
    inputs: LeverInputs,
    chosen: Option | None = None,
) -> list[WhatIf]:
    """Thresholds at which the answer changes: single_cluster's levers (where it becomes
    viable, or stops being so), then those of the chosen option when it is not viable, then
    the local commit assumed for large write sets (:func:`local_commit_note`)."""
    found: list[Lever] = []
    single = next((o for o in options if o.architecture == "single_cluster"), None)
    if single is not None and len(single.groups[0]) >= 2 and single.commit_latency_ms:
        found += _levers_of(single, findings, rules, inputs)
    if chosen is not None and chosen is not single and blockers(chosen, findings):
        found += _levers_of(chosen, findings, rules, inputs)
    local = _local_commit_lever(chosen, inputs) if chosen is not None else None
    if local is not None:
        found.append(local)
    return [lever.what_if() for lever in found]


def lab_local_commit_ms(writeset_bytes: float) -> float:
    """The lab's local work of one commit of this write-set size [ms] (:data:`LAB_LOCAL_COMMIT_MS`):
    interpolated between its sizes on log scales, the smallest's below, in proportion to the
    size beyond the largest."""
    sizes = [math.log(size) for size, _ in LAB_LOCAL_COMMIT_MS]
    costs = [math.log(cost) for _, cost in LAB_LOCAL_COMMIT_MS]
    largest, cost = LAB_LOCAL_COMMIT_MS[-1]
    if writeset_bytes >= largest:
        return cost * writeset_bytes / largest
    return float(math.exp(np.interp(math.log(max(writeset_bytes, 1.0)), sizes, costs)))


def _assumes_local_commit(inputs: LeverInputs) -> bool:
    return (
        inputs.topology.workload.local_commit_ms is None
        and inputs.writeset_p99_bytes >= LARGE_WRITESET_BYTES
    )


def local_commit_note(chosen: Option, inputs: LeverInputs) -> str:
    """For large write sets without ``workload.local_commit_ms``: what was assumed, and what
    the lab's local work for those sizes would do to the chosen option's commits ('' else):
    the median commit moves by the lab's cost at the p50 size, the p99 by its cost at the p99
    size (less the 1 ms assumed)."""
    if not _assumes_local_commit(inputs):
        return ""
    assumed = galera.LOCAL_COMMIT_MS
    p50, p99 = inputs.writeset_p50_bytes, inputs.writeset_p99_bytes
    lab = lab_local_commit_ms(p99)
    largest = LAB_LOCAL_COMMIT_MS[-1][0]
    beyond = f", in proportion beyond the {_size(largest)} it measured" if p99 > largest else ""
    commit = chosen.commit_latency_ms
    then = ""
    if commit:
        then = (
            f"; at the lab's cost commits would take about "
            f"{commit['p50'] + lab_local_commit_ms(p50) - assumed:.0f} ms at the median and "
            f"{commit['p99'] + lab - assumed:.0f} ms at p99"
        )
        slo = inputs.topology.requirements.commit_latency_ms
        if slo and "p99" in slo.given():
            then += f" (required: {slo.given()['p99']:g} ms)"
    return (
        f"Write sets reach {_size(p99)} at p99 and workload.local_commit_ms is not given, so "
        f"each commit's local work (certification, binlog, InnoDB) is assumed to take "
        f"{assumed:g} ms; the lab measured about {lab:.0f} ms for a write set of that size with "
        f"no network delay{beyond}{then}. Measure it (a commit on one node alone) and give it."
    )


def _local_commit_lever(chosen: Option, inputs: LeverInputs) -> Lever | None:
    """The local commit at which the chosen option breaks a latency limit, for large write
    sets without ``workload.local_commit_ms``: every commit moves 1:1 with it."""
    if not _assumes_local_commit(inputs):
        return None
    limits = _limits(chosen, inputs.topology, inputs.max_utilisation)
    if not limits:
        return None
    assumed = galera.LOCAL_COMMIT_MS
    flip = assumed - _excess_ms(limits)
    if flip <= assumed:
        return None  # already breaking a limit: the local work only adds to it
    lab = lab_local_commit_ms(inputs.writeset_p99_bytes)
    holds = "holds" if lab < flip else "no longer holds"
    return Lever(
        option=chosen.architecture,
        quantity="local_commit_ms",
        value=round(flip, 2),
        unit="ms",
        current=assumed,
        message=(
            f"{chosen.architecture} stops meeting its latency limits when a commit's local "
            f"work exceeds {flip:.1f} ms (assumed {assumed:g} ms: workload.local_commit_ms is "
            f"not given). The lab measured about {lab:.0f} ms for write sets of "
            f"{_size(inputs.writeset_p99_bytes)} with no network delay (benchmarks/calibration/"
            f"lab-runs.yaml, large-writeset-local-rtt0): at that cost the verdict {holds}."
        ),
        phrase=f"a local commit below {flip:.1f} ms",
        change=flip / assumed - 1.0,
    )


def _distance_for(rtt_ms: float) -> str:
    """How far apart sites may be for a round trip, on a typical path and at best."""
    at_best = float(physics.max_distance_km(rtt_ms, "fiber"))
    km = float(physics.typical_distance_km(rtt_ms))
    if km <= 0:
        return (
            f"that needs a private path: no typical path is that fast (physics allows up to "
            f"{at_best:.0f} km of fibre)"
        )
    return f"on a typical path that is about {km:.0f} km (at best {at_best:.0f} km)"


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


def unbounded_loss(option: Option) -> str:
    """Why a failure loses an ever-growing backlog under ``option``: the first channel that
    cannot keep up with the peak, in words; empty when every channel keeps up."""
    for link in option.async_links:
        if not link.unbounded:
            continue
        assumed = (
            " (assumed: the topology gives no bandwidth_mbps)" if link.bandwidth_assumed else ""
        )
        why = appliers_why(link) or (
            f"the replicated bytes need {link.utilisation:.0%} of the link's "
            f"{link.bandwidth_mbps:g} Mbit/s{assumed}"
        )
        return (
            f"the asynchronous channel {'-'.join(link.sites)} cannot keep up with the peak: {why}"
        )
    return ""
