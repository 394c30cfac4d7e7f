"""The work the engine skips gives the answers the full work gives.

The grouping search asks only whether a candidate blocks (``registry.blocks``), the ends of
an estimate's range only for the verdict (blocker rules alone). Each shortcut is checked
here against the full computation on topologies where the answers differ between
candidates.
"""

from __future__ import annotations

import dataclasses
import itertools
import textwrap
from functools import cache
from pathlib import Path

from advisor import analysis as analysis_module
from advisor.analysis import Analysis, analyse, verdict_label
from advisor.engine.evaluator import Evaluator
from advisor.engine.evidence import gather_links
from advisor.engine.memo import Memo
from advisor.engine.workload import writeset_sizes
from advisor.inputs.loading import LoadedTopology, load_topology, parse_topology
from advisor.rules.context import Context
from advisor.rules.pack import Rule, load_rules
from advisor.rules.registry import blocks, evaluate, rule_ids

REPO = Path(__file__).resolve().parent.parent

# Five sites of benchmarks/speed.py's fleet (topology 85), every link estimated: the verdict
# differs at all three points of the range (grouped with warsaw at the low end, grouped
# without it at the estimate, per-site clusters at the high end).
FIVE_SITES = """
name: fleet-85
requirements: {commit_latency_ms: {p99: 100}, survive: site, max_data_loss_s: 1}
sites:
  - {name: london, location: {lat: 51.5074, lon: -0.1278}, nodes: 3}
  - {name: paris, location: {lat: 48.8566, lon: 2.3522}, nodes: 3}
  - {name: frankfurt, location: {lat: 50.1109, lon: 8.6821}, nodes: 3}
  - {name: johannesburg, location: {lat: -26.2041, lon: 28.0473}, nodes: 3}
  - {name: warsaw, location: {lat: 52.2297, lon: 21.0122}, nodes: 3}
workload:
  commits_per_s: {avg: 400, peak: 1500}
  writeset_bytes: {p50: 2048, p99: 65536}
  hot_rows: [{name: row, updates_per_s: 20, writer_sites: [london]}]
"""


@cache
def five_sites() -> LoadedTopology:
    return parse_topology(textwrap.dedent(FIVE_SITES))


@cache
def five_sites_analysis() -> Analysis:
    return analyse(five_sites())


def _contexts(loaded: LoadedTopology) -> list[tuple[Context, str]]:
    """One context per candidate group of the grouping search (every subset of the data
    sites, as one cluster) and per partition into two groups, on the screen's draws."""
    links = tuple(gather_links(loaded))
    sizes = writeset_sizes(loaded.topology)
    ev = Evaluator(loaded.topology, links, writeset_bytes=sizes, draws=2_000)
    base = Context(topology=loaded.topology, links=links, provider_options=ev.provider_options)
    sites = ev.data_sites
    found = []
    for size in range(1, len(sites) + 1):
        for group in itertools.combinations(sites, size):
            option = ev.option("grouped_clusters", [group])
            found.append((dataclasses.replace(base, options=(option,)), "local"))
            rest = [s for s in sites if s not in group]
            if rest:
                option = ev.option("grouped_clusters", [group, tuple(rest)])
                found.append((dataclasses.replace(base, options=(option,)), "cross"))
    return found


def _severities(rules: dict[str, Rule], severity: str) -> dict[str, Rule]:
    return {k: dataclasses.replace(r, severity=severity) for k, r in rules.items()}


def test_blocks_answers_as_the_findings_do() -> None:
    shipped = load_rules()
    packs = [shipped, _severities(shipped, "blocker"), _severities(shipped, "warning")]
    answers = set()
    for loaded in (five_sites(), load_topology(REPO / "examples/us-eu/topology.yaml")):
        for ctx, kind in _contexts(loaded):
            scopes = ("cluster", "hot_row") if kind == "local" else ("cross_cluster",)
            for rules in packs:
                ids = rule_ids(rules, scopes)
                full = any(f.severity == "blocker" for f in evaluate(rules, ctx, ids))
                assert blocks(rules, ctx, ids) == full
                answers.add(full)
    assert answers == {True, False}  # both answers were asked for


def test_the_ends_verdict_with_blocker_rules_alone_is_the_verdict_with_every_rule() -> None:
    loaded = five_sites()
    result = five_sites_analysis()
    rules = load_rules()
    sizes = writeset_sizes(loaded.topology)
    for end in ("low", "high"):
        at_end = tuple(
            link.at_rtt_p50(getattr(link.estimate, f"{end}_ms")) if link.estimate else link
            for link in result.links
        )
        runs = [
            analysis_module._analyse_links(
                loaded,
                rules,
                at_end,
                sizes,
                Memo(loaded.topology),
                draws=analysis_module.SCREEN_DRAWS,
                verdict_only=only,
            )
            for only in (True, False)
        ]
        assert verdict_label(runs[0].chosen) == verdict_label(runs[1].chosen)
        assert verdict_label(runs[0].chosen) == result.estimate_ends[end]
        assert {f.severity for f in runs[0].findings} == {"blocker"}


def test_a_verdict_that_differs_at_each_point_of_the_range_is_still_reported() -> None:
    result = five_sites_analysis()
    assert dict(result.estimate_ends) == {
        "estimate": "grouped_clusters (london+paris+frankfurt; johannesburg; warsaw)",
        "low": "grouped_clusters (london+paris+frankfurt+warsaw; johannesburg)",
        "high": "per_site_clusters",
    }
    (finding,) = [f for f in result.findings if f.rule == "ESTIMATE-FLIPS-VERDICT"]
    assert "at the high end, per_site_clusters" in finding.message
