"""The pipeline: loading -> evidence per link -> options evaluated -> rules -> verdict.

:func:`analyse` runs every stage and returns an :class:`Analysis`: frozen, plain data that
carries what every consumer needs (the recommendation, configuration, documents, sweeps), so
none of them evaluates clusters again.

Where a pair nobody measured can enter an option, the stages after the evidence run twice
more, with every estimated link at the low and at the high end of its range
(:class:`~advisor.engine.evidence.RttEstimate`), to say whether the verdict holds over the
range (rule ESTIMATE-FLIPS-VERDICT). Only the verdict is kept from those runs, and they use
the first ``SCREEN_DRAWS`` Monte Carlo draws (the grouping search's screen): an end whose
verdict sits within Monte Carlo noise of a threshold may go either way.
"""

from __future__ import annotations

__all__ = [
    "AFTER_VERDICT",
    "SCREEN_DRAWS",
    "Analysis",
    "analyse",
    "design_windows",
    "verdict_label",
]

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from advisor import verdict
from advisor.engine.evaluator import Evaluator
from advisor.engine.evidence import LinkEvidence, RttEstimate, gather_links
from advisor.engine.grouping import best_partition
from advisor.engine.memo import Memo
from advisor.engine.metrics import ClusterEval, Option, Percentiles
from advisor.engine.workload import WritesetSizes, writeset_sizes
from advisor.errors import AdvisorError
from advisor.inputs.loading import LoadedTopology, load_topology
from advisor.inputs.topology import Topology
from advisor.model import pipeline
from advisor.model.provider_options import MAX_WINDOW, OptionValue
from advisor.result import Finding
from advisor.rules import cluster as cluster_rules
from advisor.rules.context import Context
from advisor.rules.pack import Rule, RulesDirs, Scope, load_rules
from advisor.rules.registry import blocks, evaluate, rule_ids
from advisor.vocabulary import Architecture

# The grouping search judges many candidate groups on the first SCREEN_DRAWS of the same
# Monte Carlo draws; what it accepts is confirmed on all of them.
SCREEN_DRAWS = 2_000
# The scopes of the rules that judge one candidate group as a cluster on its own.
LOCAL_SCOPES: tuple[Scope, ...] = ("cluster", "hot_row")
CROSS_SCOPES: tuple[Scope, ...] = ("cross_cluster",)
# The scopes whose findings can block an option: all the verdict of a range's end needs.
OPTION_SCOPES: tuple[Scope, ...] = (*LOCAL_SCOPES, *CROSS_SCOPES)
# Rules that read the verdict at the ends of the estimates (Context.estimate_ends): judged
# after the verdict, which they cannot change (link findings belong to no option).
AFTER_VERDICT = ("ESTIMATE-FLIPS-VERDICT",)


@dataclass(frozen=True)
class Analysis:
    """Everything the engine computed, for callers who want more than the report.

    Attributes
    ----------
    loaded
        The topology as loaded (models and YAML positions).
    rules
        The rule pack in force, overrides applied.
    links
        The evidence of every site pair, in declaration order.
    writeset_bytes
        The write-set sizes every stage used [bytes].
    provider_options
        The Galera provider options in force before the design: the flavour's defaults with
        topology.yaml's (kept as given by every design).
    option_reasons
        Per architecture, the send windows its design raised above ``provider_options`` and
        why (the rule and cluster that asked: :func:`design_windows`). The option's clusters
        were evaluated with them (``ClusterEval.send_window``, ``user_window``): the windows
        its findings advise, its configuration applies and its predictions use.
    data_sites, writing_sites
        Sites with data nodes, and those among them whose applications write.
    lan_commit_ms
        Per data site, the commit percentiles of a cluster inside that site alone [ms].
    options
        The evaluated candidate architectures.
    findings
        Every rule that fired, under every option.
    chosen
        The recommended option (:func:`advisor.verdict.choose`).
    estimate_ends
        The recommendation (:func:`verdict_label`) with every estimated link at the ``low``
        end, the ``estimate`` and the ``high`` end of its range; empty when no estimated
        link can enter an option.
    """

    loaded: LoadedTopology
    rules: Mapping[str, Rule]
    links: tuple[LinkEvidence, ...]
    writeset_bytes: WritesetSizes
    provider_options: Mapping[str, OptionValue]
    data_sites: tuple[str, ...]
    writing_sites: tuple[str, ...]
    lan_commit_ms: Mapping[str, Percentiles]
    options: tuple[Option, ...]
    findings: tuple[Finding, ...]
    chosen: Option
    estimate_ends: Mapping[str, str] = field(default_factory=dict)
    option_reasons: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    @property
    def topology(self) -> Topology:
        return self.loaded.topology

    @property
    def worst_link_p50_ms(self) -> float:
        """The highest small-message RTT p50 between two data sites [ms] (0 for one site)."""
        data = set(self.data_sites)
        return max(
            (float(link.rtt.quantile(0.5)) for link in self.links if set(link.sites) <= data),
            default=0.0,
        )

    def lan_base_ms(self, cluster: ClusterEval) -> Percentiles:
        """The LAN part of a cluster's commits: a cluster inside its first writing site (its
        first site when none writes) alone. What the first-order RTT scaling keeps fixed."""
        return self.lan_commit_ms[cluster.writers[0] if cluster.writers else cluster.sites[0]]

    def link(self, a: str, b: str) -> LinkEvidence:
        """The evidence of the pair ``a``-``b``, in either order."""
        pair = {a, b}
        return next(link for link in self.links if set(link.sites) == pair)

    def option(self, architecture: Architecture | str) -> Option:
        """The evaluated option of ``architecture``; an error lists the evaluated ones."""
        for option in self.options:
            if option.architecture == architecture:
                return option
        names = ", ".join(o.architecture for o in self.options)
        raise AdvisorError(
            f"no option {architecture!r} in this analysis; evaluated options: {names}"
        )


def analyse(topology: LoadedTopology | str | Path, *, rules_dirs: RulesDirs = ()) -> Analysis:
    """Run the engine and keep its intermediate results (options, evidence, findings).

    ``topology`` is a loaded topology or the path of a ``topology.yaml``; ``rules_dirs`` hold
    rule files that override the shipped pack. Raises :class:`~advisor.errors.AdvisorError`
    for bad input.
    """
    loaded = topology if isinstance(topology, LoadedTopology) else load_topology(topology)
    rules = load_rules(rules_dirs)
    links = tuple(gather_links(loaded))
    sizes = writeset_sizes(loaded.topology)
    memo = Memo(loaded.topology)
    run = _analyse_links(loaded, rules, links, sizes, memo)
    ends: dict[str, str] = {}
    for end, at_end in _links_at_ends(loaded, rules, links).items():
        if at_end is None:  # the same links as the estimate's: the same verdict
            ends[end] = verdict_label(run.chosen)
            continue
        screened = _analyse_links(
            loaded, rules, at_end, sizes, memo, draws=SCREEN_DRAWS, verdict_only=True
        )
        ends[end] = verdict_label(screened.chosen)
    after = [rule_id for rule_id in sorted(rules) if rule_id in AFTER_VERDICT]
    findings = run.findings
    if after:  # in the registry's order: by rule id
        late = evaluate(rules, replace(run.context, estimate_ends=ends), after)
        order = {rule_id: n for n, rule_id in enumerate(sorted(rules))}
        findings = tuple(sorted((*findings, *late), key=lambda f: order[f.rule]))
    evaluator = run.evaluator
    return Analysis(
        loaded=loaded,
        rules=rules,
        links=links,
        writeset_bytes=sizes,
        provider_options=dict(evaluator.provider_options),
        data_sites=tuple(evaluator.data_sites),
        writing_sites=tuple(evaluator.writing),
        lan_commit_ms={site: evaluator.lan_commit_ms(site) for site in evaluator.data_sites},
        options=run.options,
        findings=tuple(findings),
        chosen=run.chosen,
        estimate_ends=ends,
        option_reasons=run.reasons,
    )


# Re-evaluations at most, to settle an option's windows (advisor.analysis._analyse_links): the
# windows that send a p99 write set at once (WRITESET-ROUNDS), then those that carry the peak
# at the commit round those give (SEND-WINDOW). Each step only raises a window.
_DESIGN_PASSES = 2


def _with_windows(topology: Topology, windows: tuple[int, int]) -> Topology:
    """``topology`` with its provider options' ``(user, send)`` windows set."""
    options = {**topology.galera.provider_options}
    options.update(zip(cluster_rules.WINDOWS, windows, strict=True))
    galera = topology.galera.model_copy(update={"provider_options": options})
    return topology.model_copy(update={"galera": galera})


def design_windows(
    options: tuple[Option, ...],
    rules: Mapping[str, Rule],
    sizes: WritesetSizes,
    current: Mapping[str, OptionValue],
    loaded: LoadedTopology,
) -> dict[str, tuple[int, str]]:
    """The send windows to raise, with why: first the windows that send the p99 write set in
    one commit path where WRITESET-ROUNDS finds it costs more, else the send window that
    carries the peak where SEND-WINDOW finds the current one short (the rules' own sizing
    functions, over every cluster of the judged options); none that topology.yaml pins."""
    pinned = loaded.topology.galera.provider_options
    user, send = int(current["evs.user_send_window"]), int(current["evs.send_window"])
    wanted: dict[str, tuple[int, str]] = {}

    def ask(key: str, value: int, why: str) -> None:
        if value >= MAX_WINDOW:  # the rules' sizing stops there
            value = MAX_WINDOW
            why = (
                f"{why}; capped at {MAX_WINDOW}, the largest power of two Galera's option "
                "range (1 to 1,000,000) admits"
            )
        if key not in pinned and value > max(int(current[key]), wanted.get(key, (0, ""))[0]):
            wanted[key] = (value, why)

    clusters = [(o, c) for o in options for c in o.clusters]
    if "WRITESET-ROUNDS" in rules:
        for option, cluster in clusters:
            need = cluster_rules.rounds_need(
                cluster, sizes.p99_bytes, user, send, rules["WRITESET-ROUNDS"].parameters
            )
            if need is None:
                continue
            why = (
                f"WRITESET-ROUNDS: under {option.architecture}, the cluster of "
                f"{', '.join(cluster.sites)} sends a p99 write set of {sizes.p99_bytes:,.0f} "
                f"bytes as {need.messages} EVS messages in {need.paths} commit paths at "
                f"evs.user_send_window {user} / evs.send_window {send}; a user window of the "
                "message count rounded up to a power of two sends them at once, the send "
                "window twice that"
            )
            ask("evs.user_send_window", need.user_send_window, why)
            ask("evs.send_window", need.send_window, why)
    commits = loaded.topology.workload.commits_per_s
    if not wanted and commits is not None and "SEND-WINDOW" in rules:
        params = rules["SEND-WINDOW"].parameters
        for option, cluster in clusters:
            window = cluster_rules.send_window_need(cluster, send, commits.design_value, params)
            if window is None:
                continue
            limit = pipeline.window_limit_commits_per_s(
                send, cluster.safe_period_ms, cluster.writesets_per_message
            )
            why = (
                f"SEND-WINDOW: under {option.architecture}, the cluster of "
                f"{', '.join(cluster.sites)} replicates at most {limit:.0f} commits/s from one "
                f"node at evs.send_window {send} (a {cluster.safe_period_ms:.1f} ms commit "
                f"round, {cluster.writesets_per_message:g} write sets per message), short of "
                f"the peak {commits.design_value:g}/s times the rule's headroom "
                f"{params['headroom']:g}; the power of two that carries it, the user window "
                "half of it"
            )
            ask("evs.send_window", window, why)
            ask("evs.user_send_window", max(window // 2, 1), why)
    if "evs.send_window" in pinned and "evs.user_send_window" in wanted:
        # Galera caps the user window at the send window.
        value, why = wanted["evs.user_send_window"]
        capped = min(value, int(current["evs.send_window"]))
        if capped > int(current["evs.user_send_window"]):
            wanted["evs.user_send_window"] = (capped, why)
        else:
            del wanted["evs.user_send_window"]
    return wanted


@dataclass(frozen=True)
class _Run:
    """The stages after the evidence, for one set of links."""

    evaluator: Evaluator
    context: Context  # the options under judgement included
    options: tuple[Option, ...]
    findings: tuple[Finding, ...]  # every rule but those judged after the verdict
    chosen: Option
    reasons: Mapping[str, Mapping[str, str]]  # Analysis.option_reasons


def _analyse_links(
    loaded: LoadedTopology,
    rules: Mapping[str, Rule],
    links: tuple[LinkEvidence, ...],
    sizes: WritesetSizes,
    memo: Memo,
    *,
    draws: int | None = None,
    verdict_only: bool = False,
) -> _Run:
    """Options, findings and the verdict for ``links``: the engine after the evidence.

    ``draws`` (default: the full Monte Carlo) and ``verdict_only`` (default: every rule but
    ``AFTER_VERDICT``) let the ends of the estimates' range ask for the verdict alone: it
    reads only the blockers of the options (:func:`verdict.choose`), so only the rules of
    ``OPTION_SCOPES`` whose severity is blocker are run (a finding has its rule's severity).
    ``memo`` is the analysis's: every evaluation of it shares the pairs and clusters that
    its links leave unchanged. Each option is then evaluated again at the send windows its
    design chooses (:func:`design_windows`), with an evaluator (and memo) per set of windows.
    """
    full = {} if draws is None else {"draws": draws}
    evaluator = Evaluator(loaded.topology, links, writeset_bytes=sizes, memo=memo, **full)
    screen = (
        evaluator
        if draws is not None and draws <= SCREEN_DRAWS
        else Evaluator(loaded.topology, links, writeset_bytes=sizes, draws=SCREEN_DRAWS, memo=memo)
    )
    base = Context(
        topology=loaded.topology,
        links=links,
        writeset_p50_bytes=sizes.p50_bytes,
        writeset_mean_bytes=sizes.mean_bytes,
        writeset_p99_bytes=sizes.p99_bytes,
        provider_options=evaluator.provider_options,
    )
    # Each option again at the send windows its design chooses (design_windows): one set of
    # options per design, what its findings advise, its configuration applies and its
    # predictions use. The windows follow the commit round, which follows the windows (a
    # large write set takes a round per window), so the sizing first sends the p99 write set
    # at once, then carries the peak at the round that gives. An evaluator per set of windows.
    at_windows: dict[tuple[int, int], Evaluator] = {}
    reasons: dict[str, Mapping[str, str]] = {}
    options_list = []
    for designed in _candidates(evaluator, screen, rules, base):
        current, why = dict(evaluator.provider_options), {}
        for _ in range(_DESIGN_PASSES):
            raised = design_windows((designed,), rules, sizes, current, loaded)
            if not raised:
                break
            current.update({key: value for key, (value, _) in raised.items()})
            why.update({key: text for key, (_, text) in raised.items()})
            windows = (int(current["evs.user_send_window"]), int(current["evs.send_window"]))
            if windows not in at_windows:
                topology = _with_windows(loaded.topology, windows)
                # A pair's draws depend on the windows only through the bursts they are
                # anchored at, which their keys hold: shared; clusters are not.
                shared = Memo(
                    topology,
                    pair_draws=memo.pair_draws,
                    lan_draws=memo.lan_draws,
                    writeset_rtts=memo.writeset_rtts,
                )
                at_windows[windows] = Evaluator(
                    topology, links, writeset_bytes=sizes, memo=shared, **full
                )
            designed = at_windows[windows].option(designed.architecture, designed.groups)
        options_list.append(designed)
        if why:
            reasons[designed.architecture] = why
    options = tuple(options_list)
    ids = (
        [
            rule_id
            for rule_id in rule_ids(rules, OPTION_SCOPES)
            if rules[rule_id].severity == "blocker"
        ]
        if verdict_only
        else [rule_id for rule_id in sorted(rules) if rule_id not in AFTER_VERDICT]
    )
    context = replace(base, options=options)
    findings = tuple(evaluate(rules, context, ids))
    chosen = verdict.choose(options, findings, rules)
    return _Run(evaluator, context, options, findings, chosen, reasons)


def verdict_label(option: Option) -> str:
    """An option's architecture, with its groups when grouped: what the ends compare.

    ``grouped_clusters (paris-1+paris-2; frankfurt)``.
    """
    if option.architecture != "grouped_clusters":
        return option.architecture
    return f"{option.architecture} ({'; '.join('+'.join(c.sites) for c in option.clusters)})"


def _links_at_ends(
    loaded: LoadedTopology, rules: Mapping[str, Rule], links: tuple[LinkEvidence, ...]
) -> dict[str, tuple[LinkEvidence, ...] | None]:
    """The links with every estimated link at the ``estimate``, ``low`` and ``high`` points of
    its range (None: the estimate's own links); empty when no estimated link counts.

    An estimated link counts when an option can use it: at least one of its sites holds data
    (a link between two arbitrator rooms carries nothing, as a cluster takes one garbd). An
    end equal to the estimate for every link (the measured path capped both) keeps the
    estimate's verdict rather than re-drawing it.
    """
    data = {s.name for s in loaded.topology.sites if s.nodes > 0}
    counted = [
        link for link in links if link.estimate is not None and data.intersection(link.sites)
    ]
    if not counted or not set(AFTER_VERDICT) & set(rules):
        return {}
    ends: dict[str, tuple[LinkEvidence, ...] | None] = {"estimate": None}
    for end in ("low", "high"):
        moved = tuple(
            link if link.estimate is None else link.at_rtt_p50(_end_ms(link.estimate, end))
            for link in links
        )
        unmoved = all(
            link.estimate is None or _end_ms(link.estimate, end) == link.estimate.p50_ms
            for link in links
        )
        ends[end] = None if unmoved else moved
    return ends


def _end_ms(estimate: RttEstimate, end: str) -> float:
    return estimate.low_ms if end == "low" else estimate.high_ms


def _candidates(
    evaluator: Evaluator, screen: Evaluator, rules: Mapping[str, Rule], base: Context
) -> list[Option]:
    """The options judged: one cluster, a cluster per site, the best grouping. The search
    asks only whether its candidates block (``blocks`` builds no finding), so they leave out
    the commit of writers in step; the options judged have it, as every rule may read it
    (a rule pack may make HOT-ROW-CONFLICTS a blocker)."""
    sites = evaluator.data_sites
    options = [evaluator.option("single_cluster", [sites])]
    if len(sites) > 1:
        options.append(evaluator.option("per_site_clusters", [[s] for s in sites]))
    local_rules = rule_ids(rules, LOCAL_SCOPES)
    cross_rules = rule_ids(rules, CROSS_SCOPES)

    def blocked(option: Option, ids: list[str]) -> bool:
        return blocks(rules, replace(base, options=(option,)), ids)

    judged: dict[frozenset[str], bool] = {}

    # The ends of an estimate's range screen and judge on the same draws: judge once.
    judges = (screen,) if screen is evaluator else (screen, evaluator)

    def viable_group(group: tuple[str, ...]) -> bool:
        # The screen rejects fast; what it accepts is confirmed on the full draws, so that
        # Monte Carlo noise near a threshold cannot let a non-viable group through.
        key = frozenset(group)
        if key not in judged:
            judged[key] = not any(
                blocked(judge.option("grouped_clusters", [group], in_step=False), local_rules)
                for judge in judges
            )
        return judged[key]

    def spans_ok(partition: list[tuple[str, ...]]) -> bool:
        return not blocked(screen.option("grouped_clusters", partition, in_step=False), cross_rules)

    def score(partition: list[tuple[str, ...]]) -> float:
        option = screen.option("grouped_clusters", partition, in_step=False)
        return option.commit_latency_ms.get("p50", 0.0)

    distance = evaluator.median_rtt_ms

    partition = best_partition(sites, viable_group, spans_ok, score, distance)
    if partition is None and len(sites) >= 3:
        # Nothing groups cleanly: show the most natural grouping, so the report says why.
        partition = _nearest_pair_merged(sites, distance)
    if partition is not None:
        options.append(evaluator.option("grouped_clusters", partition))
    return options


def _nearest_pair_merged(
    sites: list[str], distance: Callable[[str, str], float]
) -> list[tuple[str, ...]]:
    a, b = min(
        ((a, b) for i, a in enumerate(sites) for b in sites[i + 1 :]),
        key=lambda pair: (distance(*pair), pair),
    )
    return [(a, b), *((s,) for s in sites if s not in (a, b))]
