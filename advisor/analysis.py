"""The pipeline: loading -> evidence per link -> options evaluated -> rules -> verdict.

:func:`analyse` runs every stage and returns an :class:`Analysis`: frozen, plain data that
carries what every consumer needs (the recommendation, configuration, documents, sweeps), so
none of them evaluates clusters again.
"""

from __future__ import annotations

__all__ = ["SCREEN_DRAWS", "Analysis", "analyse"]

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from advisor import verdict
from advisor.engine.evaluator import Evaluator
from advisor.engine.evidence import LinkEvidence, gather_links
from advisor.engine.grouping import best_partition
from advisor.engine.metrics import ClusterEval, Option, Percentiles
from advisor.engine.workload import WritesetSizes, writeset_sizes
from advisor.errors import AdvisorError
from advisor.inputs.loading import LoadedTopology, load_topology
from advisor.inputs.topology import Topology
from advisor.model.provider_options import OptionValue
from advisor.result import Finding
from advisor.rules.context import Context
from advisor.rules.pack import Rule, Scope, load_rules
from advisor.rules.registry import evaluate, rule_ids
from advisor.vocabulary import Architecture

# The grouping search judges many candidate groups on the first SCREEN_DRAWS of the same
# Monte Carlo draws; what it accepts is confirmed on all of them.
SCREEN_DRAWS = 2_000
# The scopes of the rules that judge one candidate group as a cluster on its own.
LOCAL_SCOPES: tuple[Scope, ...] = ("cluster", "hot_row")
CROSS_SCOPES: tuple[Scope, ...] = ("cross_cluster",)


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
        The effective Galera provider options: the flavour's defaults with topology.yaml's.
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


def analyse(topology: LoadedTopology | str | Path, *, rules_dirs: Iterable[Path] = ()) -> Analysis:
    """Run the engine and keep its intermediate results (options, evidence, findings).

    ``topology`` is a loaded topology or the path of a ``topology.yaml``; ``rules_dirs`` hold
    rule files that override the shipped pack. Raises :class:`~advisor.errors.AdvisorError`
    for bad input.
    """
    loaded = topology if isinstance(topology, LoadedTopology) else load_topology(topology)
    rules = load_rules(rules_dirs)
    links = tuple(gather_links(loaded))
    sizes = writeset_sizes(loaded.topology)
    evaluator = Evaluator(loaded.topology, links, writeset_bytes=sizes)
    screen = Evaluator(loaded.topology, links, writeset_bytes=sizes, draws=SCREEN_DRAWS)
    base = Context(
        topology=loaded.topology,
        links=links,
        writeset_p50_bytes=sizes.p50_bytes,
        provider_options=evaluator.options,
    )
    options = tuple(_candidates(evaluator, screen, rules, base))
    findings = tuple(evaluate(rules, replace(base, options=options)))
    return Analysis(
        loaded=loaded,
        rules=rules,
        links=links,
        writeset_bytes=sizes,
        provider_options=dict(evaluator.options),
        data_sites=tuple(evaluator.data_sites),
        writing_sites=tuple(evaluator.writing),
        lan_commit_ms={site: evaluator.lan_commit_ms(site) for site in evaluator.data_sites},
        options=options,
        findings=findings,
        chosen=verdict.choose(options, findings, rules),
    )


def _candidates(
    evaluator: Evaluator, screen: Evaluator, rules: Mapping[str, Rule], base: Context
) -> list[Option]:
    sites = evaluator.data_sites
    options = [evaluator.option("single_cluster", [sites])]
    if len(sites) > 1:
        options.append(evaluator.option("per_site_clusters", [[s] for s in sites]))
    local_rules = rule_ids(rules, LOCAL_SCOPES)
    cross_rules = rule_ids(rules, CROSS_SCOPES)

    def blocked(option: Option, ids: list[str]) -> bool:
        ctx = replace(base, options=(option,))
        return any(f.severity == "blocker" for f in evaluate(rules, ctx, ids))

    judged: dict[frozenset[str], bool] = {}

    def viable_group(group: tuple[str, ...]) -> bool:
        # The screen rejects fast; what it accepts is confirmed on the full draws, so that
        # Monte Carlo noise near a threshold cannot let a non-viable group through.
        key = frozenset(group)
        if key not in judged:
            judged[key] = not any(
                blocked(judge.option("grouped_clusters", [group]), local_rules)
                for judge in (screen, evaluator)
            )
        return judged[key]

    def spans_ok(partition: list[tuple[str, ...]]) -> bool:
        return not blocked(screen.option("grouped_clusters", partition), cross_rules)

    def score(partition: list[tuple[str, ...]]) -> float:
        return screen.option("grouped_clusters", partition).commit_latency_ms.get("p50", 0.0)

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
