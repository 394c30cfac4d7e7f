"""What the document templates read: plain data built from an analysis, charts included.

Templates only read this dictionary (ARCHITECTURE.md: "templates read a finished
result"): the Recommendation with measurement sources relative to the topology's
folder (no machine-specific paths in a document), the configuration plan, the rules'
rationale and references, the findings grouped by rule, the SVG charts and a Mermaid
diagram, the pros and cons of each option, and ``estimate_ends``: the recommendation with
every estimated round trip at the ``low`` end, the ``estimate`` and the ``high`` end of its
range (empty when no estimated link counts; ``Analysis.estimate_ends``), and
``multi_writer_rows``: whether some hot row has a bound for writer sites on their own nodes,
``headline``: the first screen (:func:`advisor.documents.headline.headline`) and
``survives``: per option, how it lives through the failure the requirement names, in the
terminal report's words, and ``slowest_members``: each cluster whose members differ in apply
cost, with its slowest member and the cap it puts on the cluster (:func:`slowest_members`;
empty when every site costs the same).
"""

from __future__ import annotations

__all__ = ["chart_files", "document_context", "pros_and_cons", "slowest_members"]

import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from advisor.config.alerts import alerts_plan
from advisor.config.model import ConfigPlan
from advisor.config.plan import plan_configuration
from advisor.documents import charts
from advisor.documents.filters import arch, ms, rate
from advisor.documents.headline import headline
from advisor.model import flow_control
from advisor.model.galera import LOCAL_COMMIT_MS
from advisor.model.provider_options import parse_duration_s
from advisor.names import joined_names
from advisor.result import Finding, OptionReport, Recommendation
from advisor.text.report import survives_text
from advisor.vocabulary import ARCHITECTURES, severity_rank

if TYPE_CHECKING:
    from advisor.analysis import Analysis
    from advisor.engine.evidence import LinkEvidence
    from advisor.engine.metrics import ClusterEval

# Above this many site pairs, only the links the chosen plan uses get an RTT chart.
MAX_LINK_CHARTS = 12


def _short(architecture: str) -> str:
    words = ARCHITECTURES.get(architecture)  # type: ignore[call-overload]
    return words.short if words else architecture


def document_context(analysis: Analysis) -> dict[str, Any]:
    """Everything a document template may read (see the module docstring).

    Rules come from the analysis, so the documents explain the same (possibly overridden)
    rules that produced the findings.
    """
    from advisor.recommendation import build_recommendation

    rec = _portable(build_recommendation(analysis), analysis)
    plan = plan_configuration(analysis)
    rules = analysis.rules
    topology = analysis.loaded.topology
    chosen = next(o for o in rec.options if o.architecture == rec.architecture)
    context: dict[str, Any] = {
        "rec": rec,
        "plan": plan,
        "chosen": chosen,
        "topology": _topology_view(analysis),
        "findings_by_rule": _findings_by_rule(rec.findings, rules),
        "rules": {
            rid: {
                "title": r.title,
                "rationale": r.rationale,
                "references": list(r.references),
                "severity": r.severity,
            }
            for rid, r in sorted(rules.items())
        },
        "pros_cons": {o.architecture: pros_and_cons(o, rec) for o in rec.options},
        "sources": _sources(analysis, rec),
        "mermaid": _mermaid(plan, analysis),
        "galera": {"flavor": topology.galera.flavor, "version": topology.galera.version},
        "estimate_ends": dict(analysis.estimate_ends),
        # Whether some hot row has a bound for writers on their own nodes (writers in step).
        "multi_writer_rows": any(r.max_updates_per_s_multi_writer for r in rec.hot_rows),
    }
    context["headline"] = headline(analysis, rec, chosen)
    context["survives"] = {o.architecture: survives_text(o) for o in rec.options}
    context["charts"] = _charts(analysis, rec, plan)
    context["slowest_members"] = slowest_members(analysis, rec)
    context["alerts"] = alerts_plan(analysis, plan)
    return context


# -- the slowest member (issue 23) -------------------------------------------------------

# FLOW-CONTROL's ranked remedies are one text, "(1) ...; (2) ...": split before each number.
_RANKED = re.compile(r"; (?=\(\d+\) )")


def slowest_members(analysis: Analysis, rec: Recommendation) -> list[dict[str, Any]]:
    """Each cluster whose members differ in apply cost, once however many options hold it:
    its members' costs, its slowest member and that member's apply capacity
    (:mod:`advisor.model.flow_control`, as the engine counts it), the cap on the cluster
    against the peak, the pause share (a floor: :func:`flow_control.pause_share`) and the
    remedies FLOW-CONTROL ranks where it fires. Empty when every site costs the same."""
    topology = analysis.loaded.topology
    given_ms = topology.workload.local_commit_ms
    default_ms = LOCAL_COMMIT_MS if given_ms is None else given_ms
    cost_ms = {
        s.name: default_ms if s.local_commit_ms is None else s.local_commit_ms
        for s in topology.sites
        if s.nodes > 0
    }
    commits = topology.workload.commits_per_s
    peak = None if commits is None else commits.design_value
    verdicts = {o.architecture: o.viable for o in rec.options}
    found: dict[tuple[str, ...], dict[str, Any]] = {}
    for option in analysis.options:
        for cluster in option.clusters:
            members = [site for site in cluster.sites if site in cost_ms]
            if len({cost_ms[site] for site in members}) < 2 and cluster.cpu_quota is None:
                continue
            entry = found.get(cluster.sites)
            if entry is None:
                entry = found[cluster.sites] = _slowest_entry(cluster, members, cost_ms, peak)
            entry["options"].append(option.architecture)
            entry["viable"][option.architecture] = verdicts.get(option.architecture, False)
            remedies = _flow_control_remedies(rec, option.architecture, cluster.sites)
            if remedies and not entry["remedies"]:
                entry["remedies"] = remedies
    return list(found.values())


def _slowest_entry(
    cluster: ClusterEval, members: list[str], cost_ms: Mapping[str, float], peak: float | None
) -> dict[str, Any]:
    capacity = cluster.apply_capacity_per_s
    capped = cluster.apply_site is not None and math.isfinite(capacity)
    return {
        "cluster": ", ".join(cluster.sites),
        "costs_ms": {site: cost_ms[site] for site in members},
        "writer": cluster.writer_site,
        "site": cluster.apply_site,
        "apply_ms": cluster.apply_ms if capped else None,
        "applier_threads": cluster.applier_threads,
        "capacity_per_s": capacity if capped else None,
        "peak_per_s": peak,
        "caps_peak": capped and peak is not None and capacity < peak,
        "pause_share": (
            flow_control.pause_share(peak, capacity) if capped and peak is not None else None
        ),
        "quota": _quota_entry(cluster, peak),
        "options": [],
        "viable": {},
        "remedies": [],
    }


def _quota_entry(cluster: ClusterEval, peak: float | None) -> dict[str, Any] | None:
    """The member held to a CPU limit that keeps up least (:mod:`advisor.model.cpu_quota`),
    what it keeps up with, and the stall a commit may meet; None without one."""
    quota = cluster.cpu_quota
    if quota is None:
        return None
    return {
        "site": cluster.quota_site,
        "limit_cores": quota.limit_cores,
        "period_ms": quota.period_ms,
        "cpu_ms_per_writeset": quota.cpu_ms_per_writeset,
        "cpu_ms_per_message": quota.cpu_ms_per_message,
        "capacity_per_s": cluster.quota_capacity_per_s,
        "caps_peak": peak is not None and cluster.quota_capacity_per_s < peak,
        "stall_ms": quota.stall_ms,
    }


def _flow_control_remedies(rec: Recommendation, option: str, sites: tuple[str, ...]) -> list[str]:
    """FLOW-CONTROL's ranked remedies for this cluster under this option; none when it is quiet."""
    cluster = ", ".join(sites)
    for finding in rec.findings:
        ours = finding.option == option and finding.values.get("cluster") == cluster
        if finding.rule == "FLOW-CONTROL" and ours:
            return _RANKED.split(str(finding.values.get("remedies", "")))
    return []


def chart_files(context: dict[str, Any]) -> dict[str, str]:
    """The SVG charts as files beside the Markdown document."""
    return {chart["file"]: chart["svg"] + "\n" for chart in context["charts"]}


# -- portable data ---------------------------------------------------------------------


def _portable(rec: Recommendation, analysis: Analysis) -> Recommendation:
    """The recommendation with file paths relative to the topology file's folder."""
    path = analysis.loaded.path
    if path is None:
        return rec
    base = str(path.parent)
    prefixes = [p for p in {base + os.sep, str(Path(base).resolve()) + os.sep} if p != os.sep]

    def strip(text: str) -> str:
        for prefix in prefixes:
            text = text.replace(prefix, "")
        return text

    links = [
        link.model_copy(
            update={
                "measurements": [
                    m.model_copy(update={"source": strip(m.source)}) for m in link.measurements
                ]
            }
        )
        for link in rec.links
    ]
    findings = [
        f.model_copy(
            update={
                "message": strip(f.message),
                "values": {k: strip(v) if isinstance(v, str) else v for k, v in f.values.items()},
            }
        )
        for f in rec.findings
    ]
    return rec.model_copy(update={"links": links, "findings": findings})


def _topology_view(analysis: Analysis) -> dict[str, Any]:
    topology = analysis.loaded.topology
    workload = topology.workload
    slo = topology.requirements.commit_latency_ms
    return {
        "name": topology.name,
        "description": topology.description or "",
        "survive": topology.requirements.survive,
        "commit_latency_ms": slo.given() if slo else {},
        "max_data_loss_s": topology.requirements.max_data_loss_s,
        "sites": [s.model_dump(mode="json") for s in topology.sites],
        "commits_per_s": workload.commits_per_s.model_dump() if workload.commits_per_s else None,
        "writeset_bytes": workload.writeset_bytes.given() if workload.writeset_bytes else None,
        "replicated_bytes_per_s": (
            workload.replicated_bytes_per_s.model_dump()
            if workload.replicated_bytes_per_s
            else None
        ),
        "hot_rows": [r.model_dump() for r in workload.hot_rows],
        "clients": workload.clients.model_dump() if workload.clients else None,
    }


def _findings_by_rule(findings: list[Finding], rules: Mapping[str, Any]) -> list[dict[str, Any]]:
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(finding.rule, []).append(finding)
    ordered = sorted(groups.items(), key=lambda kv: (severity_rank(kv[1][0].severity), kv[0]))
    result = []
    for rule_id, items in ordered:
        rule = rules.get(rule_id)
        result.append(
            {
                "rule": rule_id,
                "severity": items[0].severity,
                "title": items[0].title or (rule.title if rule else rule_id),
                "rationale": rule.rationale if rule else "",
                "references": list(rule.references) if rule else [],
                "findings": items,
            }
        )
    return result


def _sources(analysis: Analysis, rec: Recommendation) -> dict[str, str]:
    """Per option: whether its commit latency rests on measured or estimated round trips."""
    estimated = {frozenset(link.sites) for link in rec.links if link.rtt_source == "estimated"}
    result: dict[str, str] = {}
    for option in analysis.options:
        used = {frozenset(link.sites) for c in option.clusters for link in c.links}
        result[option.architecture] = (
            "modelled from estimated round trips"
            if used & estimated
            else "modelled from measured round trips"
            if used
            else "modelled from LAN round trips"
        )
    return result


# -- pros and cons -----------------------------------------------------------------------


def pros_and_cons(option: OptionReport, rec: Recommendation) -> dict[str, list[str]]:
    """Good and bad consequences of an option, in plain words with numbers."""
    good: list[str] = []
    bad: list[str] = []
    commit = option.commit_latency_ms
    if commit:
        text = (
            f"commits take about {ms(commit['p50'])} at the median and {ms(commit['p99'])} "
            "at p99 at the slowest writing site"
        )
        (good if commit["p99"] < 10 else bad).append(text)
    # A row a blocker names under this option blocks it, even within its Callaghan bound
    # (its commit, lock queue included, may break the latency bound): never "fits" there.
    blocking = {
        f.subject: f.title or f.rule
        for f in rec.findings
        if f.severity == "blocker" and f.option == option.architecture
    }
    for row in rec.hot_rows:
        bound = row.max_updates_per_s.get(option.architecture)
        if bound is None:
            continue
        numbers = f"{rate(row.required_updates_per_s)} needed, at most {rate(bound)} possible"
        if bound <= row.required_updates_per_s:
            bad.append(f'hot row "{row.name}" cannot keep up: {numbers}')
        elif row.name in blocking:
            bad.append(
                f'hot row "{row.name}" blocks this option although its rate is within its '
                f"bound ({numbers}): {blocking[row.name][:1].lower()}{blocking[row.name][1:]}"
            )
        else:
            good.append(f'hot row "{row.name}" fits: {numbers}')
    bad.extend(_failure_consequences(option, good))
    if option.clusters > 1:
        bad.append(
            "every row needs one owner site; writes from elsewhere pay a WAN round trip "
            "per statement"
        )
    if option.conflicts_per_s:
        bad.append(
            f"about {rate(option.conflicts_per_s)} certification conflicts (deadlock "
            "errors) on hot rows written at several sites of a cluster, unless their "
            "writes go to one writer per cluster as the configuration plan's ProxySQL "
            "does (writes from the other sites then cross to the writer)"
        )
    if option.arbitrators:
        bad.append(
            f"a garbd arbitrator to run at {', '.join(option.arbitrators)}, in every "
            "commit's round trip"
        )
    if option.clusters > 1:
        bad.append(f"{option.clusters} clusters and their asynchronous channels to run and monitor")
    else:
        good.append("one cluster to run")
    if option.blockers:
        bad.append("ruled out by " + ", ".join(option.blockers))
    return {"good": good, "bad": bad}


def _failure_consequences(option: OptionReport, good: list[str]) -> list[str]:
    """What losing a site or link does to writes and data: "writes continue" only where no
    failover is needed; a failover says how long writes stop and how much it loses."""
    bad: list[str] = []
    lost = (
        None
        if option.data_at_risk_s is None
        else f"up to about {ms(option.data_at_risk_s * 1000)} of recent commits "
        "(asynchronous links, p99 lag)"
    )
    if option.data_at_risk_unbounded:
        bad.append(
            "losing a site loses an unbounded backlog: an asynchronous channel cannot keep up "
            "with the peak"
            + (f" ({option.data_at_risk_reason})" if option.data_at_risk_reason else "")
        )
    elif option.manual_recovery:
        bad.extend(
            f"writes wait for a manual bootstrap after the {m}" for m in option.manual_recovery
        )
    elif option.survives_site_loss and option.failover_rto_s is not None:
        bad.append(
            f"when a site or link fails, its writes fail over in about "
            f"{option.failover_rto_s:.0f} s" + (f", losing {lost}" if lost else "")
        )
        lost = None
    elif option.survives_site_loss:
        good.append("writes continue when any one site or inter-site link fails (no failover)")
    elif option.survives_site_loss is False:
        bad.append("losing a site or an inter-site link stops writes somewhere")
    if lost is not None:
        bad.append(f"losing a site loses {lost}")
    elif option.data_at_risk_s is None and not option.data_at_risk_unbounded:
        good.append("no committed transaction is lost when a site fails (synchronous)")
    return bad


# -- charts -----------------------------------------------------------------------------


def _charts(analysis: Analysis, rec: Recommendation, plan: ConfigPlan) -> list[dict[str, str]]:
    out = []
    out.append(_topology_chart(analysis, rec, plan))
    charted = _charted_links(analysis, rec)
    files = joined_names(link.sites for link, _ in charted)  # a-b + c and a + b-c differ
    if charted:
        out.append(_links_chart(charted, analysis))
    for n, (link, report) in enumerate(charted, start=1):
        out.append(_rtt_chart(n, link, report, analysis, plan, files[link.sites]))
    for n, row in enumerate(rec.hot_rows, start=1):
        out.append(_hot_row_chart(n, row, rec))
    return out


def _charted_links(analysis: Analysis, rec: Recommendation) -> list[tuple[LinkEvidence, Any]]:
    """Every link, or beyond :data:`MAX_LINK_CHARTS` only those the chosen plan uses."""
    pairs = list(zip(analysis.links, rec.links, strict=True))
    if len(pairs) <= MAX_LINK_CHARTS:
        return pairs
    used = {frozenset(link.sites) for c in analysis.chosen.clusters for link in c.links}
    used |= {frozenset(a.sites) for a in analysis.chosen.async_links}
    return [(link, report) for link, report in pairs if frozenset(link.sites) in used]


def _marks(link: LinkEvidence, analysis: Analysis, plan: ConfigPlan) -> list[charts.Mark]:
    marks = [
        charts.Mark(f"commit SLO {key} {ms(limit)}", limit)
        for key, limit in (
            analysis.loaded.topology.requirements.commit_latency_ms.given()
            if analysis.loaded.topology.requirements.commit_latency_ms
            else {}
        ).items()
    ]
    cluster = next(
        (
            plan.clusters[i]
            for i, c in enumerate(analysis.chosen.clusters)
            if set(link.sites) <= set(c.members)
        ),
        None,
    )
    options = dict(analysis.provider_options)
    where = "current"
    if cluster is not None:
        options.update(
            {
                s.name: parse_duration_s(s.value)
                for s in cluster.provider_options
                if s.name.startswith("evs.") and str(s.value).startswith("PT")
            }
        )
        where = "plan"
    delayed_s = float(options["evs.keepalive_period"]) + float(options["evs.delay_margin"])
    suspect_s = float(options["evs.suspect_timeout"])
    marks.append(charts.Mark(f"delayed list {delayed_s:g} s ({where})", delayed_s * 1000, True))
    marks.append(charts.Mark(f"suspect_timeout {suspect_s:g} s ({where})", suspect_s * 1000, True))
    return marks


def _rtt_chart(
    n: int, link: LinkEvidence, report: Any, analysis: Analysis, plan: ConfigPlan, name: str
) -> dict[str, str]:

    top = np.log10(link.rtt.n_samples) if link.rtt.n_samples else 2.0
    grid = np.linspace(np.log10(2.0), max(min(top, 5.0), 1.0), 49)
    levels = 1.0 - 10.0**-grid
    size = analysis.writeset_bytes.p50_bytes
    writeset, ws_source = link.writeset_rtt(size)
    source = link.rtt_source
    count = f", {link.rtt.n_samples:,} samples" if link.rtt.n_samples else ""
    series = [
        charts.Series(
            f"small messages ({source}{count})",
            grid.round(4).tolist(),
            np.asarray(link.rtt.quantile(levels)).round(4).tolist(),
        ),
        charts.Series(
            f"{size:,.0f}-byte write set ({ws_source if source == 'measured' else source})",
            grid.round(4).tolist(),
            np.asarray(writeset.quantile(levels)).round(4).tolist(),
            dashed=True,
        ),
    ]
    a, b = link.sites
    summary = ", ".join(f"{k} {ms(v)}" for k, v in report.rtt_ms.items())
    loss = f"; loss {report.loss:.2%}" if report.loss else ""
    span = report.rtt_estimate_range_ms
    if span:
        loss += f"; the estimate's range runs from {ms(span['low'])} to {ms(span['high'])}"
    desc = (
        f"Round trip between {a} and {b} by percentile, {source}: {summary}{loss}. "
        "Dashed lines mark the commit SLO and the Galera membership timeouts."
    )
    svg = charts.rtt_chart(
        f"rtt-{n}", f"Round trip {a} - {b}", desc, series, _marks(link, analysis, plan)
    )
    return {
        "kind": "rtt",
        "file": f"charts/rtt-{name}.svg",
        "title": f"Round trip {a} - {b}",
        "desc": desc,
        "svg": svg,
        "sites": f"{a}-{b}",
    }


def _links_chart(charted: list[tuple[LinkEvidence, Any]], analysis: Analysis) -> dict[str, str]:
    """Every charted link's small-message round trip by percentile on one axis: the links
    inside a cluster of the recommendation solid, the others dashed, the commit SLO marked.

    The Galera membership timers stay off this chart (they are seconds, and would flatten
    the links onto the foot of a 0.1 ms to 10 s axis); each link's own chart marks them.
    """
    inside = {frozenset(link.sites) for c in analysis.chosen.clusters for link in c.links}
    series = []
    for link, _report in charted:
        top = np.log10(link.rtt.n_samples) if link.rtt.n_samples else 2.0
        grid = np.linspace(np.log10(2.0), max(min(top, 4.0), 1.0), 25)
        a, b = link.sites
        series.append(
            charts.Series(
                f"{a} - {b} ({link.rtt_source})",
                grid.round(4).tolist(),
                np.asarray(link.rtt.quantile(1.0 - 10.0**-grid)).round(4).tolist(),
                dashed=frozenset(link.sites) not in inside,
            )
        )
    slo = analysis.loaded.topology.requirements.commit_latency_ms
    marks = [
        charts.Mark(f"commit SLO {key} {ms(limit)}", limit)
        for key, limit in (slo.given() if slo else {}).items()
    ]
    p99 = {frozenset(link.sites): float(link.rtt.quantile(0.99)) for link, _ in charted}
    inner = [v for k, v in p99.items() if k in inside]
    outer = [
        float(link.rtt.quantile(0.5)) for link, _ in charted if frozenset(link.sites) not in inside
    ]
    see = []
    if inner:
        see.append(
            f"the slowest link inside a cluster of the recommendation (solid) reaches "
            f"{ms(max(inner))} at p99, and every commit there waits for it"
        )
    else:
        see.append("no cluster of the recommendation spans two sites, so no commit crosses a link")
    if outer:
        see.append(
            f"the links between its clusters (dashed, from {ms(min(outer))} at p50) carry only "
            "asynchronous replication: no commit waits for them"
        )
    desc = (
        "The round trip of small messages on each link by percentile, measured or estimated. "
        "What to see: " + "; ".join(see) + ". Dashed horizontal lines mark the commit SLO; "
        "the Galera membership timers, seconds away, are on each link's own chart."
    )
    svg = charts.rtt_chart("rtt-links", "Round trips of every link", desc, series, marks)
    return {
        "kind": "rtt_links",
        "file": "charts/rtt-links.svg",
        "title": "Round trips of every link",
        "desc": desc,
        "svg": svg,
    }


def _hot_row_chart(n: int, row: Any, rec: Recommendation) -> dict[str, str]:
    bars = [
        charts.Bar(_short(a), v, row.max_updates_per_s_p99.get(a))
        for a, v in row.max_updates_per_s.items()
    ]
    desc = (
        f'Most updates per second row "{row.name}" can take under each option (Callaghan '
        f"bound, one per commit), against the {rate(row.required_updates_per_s)} it needs: "
        + "; ".join(f"{_short(a)} {rate(v)}" for a, v in row.max_updates_per_s.items())
        + ". What to see: a red bar, left of the needed rate, is an option whose commits are "
        "too slow for this row; the further right of it a bar ends, the more room is left."
    )
    svg = charts.hot_row_chart(
        f"hot-row-{n}", f'Hot row "{row.name}"', desc, row.required_updates_per_s, bars
    )
    return {
        "kind": "hot_row",
        "file": f"charts/hot-row-{n}.svg",
        "title": f'Hot row "{row.name}"',
        "desc": desc,
        "svg": svg,
        "row": row.name,
    }


def _rtt_p50(analysis: Analysis, a: str, b: str) -> float:
    return float(analysis.link(a, b).rtt.quantile(0.5))


def _topology_chart(analysis: Analysis, rec: Recommendation, plan: ConfigPlan) -> dict[str, str]:
    topology = analysis.loaded.topology
    boxes, edges, where = [], [], {}
    for i, (cluster, option_cluster) in enumerate(
        zip(plan.clusters, analysis.chosen.clusters, strict=True)
    ):
        nodes = []
        for j, site in enumerate(option_cluster.members):
            spec = topology.site(site)
            data = site in option_cluster.sites
            detail = (
                (f"{spec.nodes} nodes" + (", writes" if site in option_cluster.writers else ""))
                if data
                else "garbd"
            )
            nodes.append(charts.Node(site, detail, dashed=not data))
            where[(i, site)] = (i, j)
        boxes.append(charts.Box(f"cluster {cluster.name}", nodes))
        members = list(option_cluster.members)
        for x, a in enumerate(members):
            for b in members[x + 1 :]:
                edges.append(
                    charts.Edge(where[(i, a)], where[(i, b)], ms(_rtt_p50(analysis, a, b)))
                )
    for link in analysis.chosen.async_links:
        i, j = link.clusters
        a, b = link.sites
        edges.append(
            charts.Edge(
                where[(i, a)], where[(j, b)], f"async {ms(link.rtt_ms['p50'])}", dashed=True
            )
        )
    desc = (
        f"{arch(rec.architecture or '')}: "
        + "; ".join(f"cluster {c.name} over {', '.join(c.sites)}" for c in plan.clusters)
        + ". What to see: a commit waits for the slowest line inside its box (round trip "
        "p50); dashed lines are asynchronous channels no commit waits for; a dashed site "
        "holds only a garbd arbitrator."
    )
    svg = charts.topology_chart("topology", f"Topology of {rec.topology}", desc, boxes, edges)
    return {
        "kind": "topology",
        "file": "charts/topology.svg",
        "title": "Topology",
        "desc": desc,
        "svg": svg,
    }


def _mermaid(plan: ConfigPlan, analysis: Analysis) -> str:
    """A Mermaid flowchart of the chosen option: clusters as subgraphs, links labelled."""
    lines = ["flowchart LR"]
    ids: dict[tuple[int, str], str] = {}
    for i, (cluster, option_cluster) in enumerate(
        zip(plan.clusters, analysis.chosen.clusters, strict=True)
    ):
        lines.append(f'  subgraph c{i}["cluster {cluster.name}"]')
        for j, site in enumerate(option_cluster.members):
            node = f"c{i}s{j}"
            ids[(i, site)] = node
            spec = analysis.loaded.topology.site(site)
            label = (
                f"{site}<br/>{spec.nodes} nodes"
                if site in option_cluster.sites
                else f"{site}<br/>garbd"
            )
            lines.append(f'    {node}["{label}"]')
        lines.append("  end")
    for i, option_cluster in enumerate(analysis.chosen.clusters):
        members = list(option_cluster.members)
        for x, a in enumerate(members):
            for b in members[x + 1 :]:
                label = ms(_rtt_p50(analysis, a, b))
                lines.append(f'  {ids[(i, a)]} ---|"{label}"| {ids[(i, b)]}')
    for link in analysis.chosen.async_links:
        i, j = link.clusters
        a, b = link.sites
        lines.append(f'  {ids[(i, a)]} -.-|"async {ms(link.rtt_ms["p50"])}"| {ids[(j, b)]}')
    return "\n".join(lines)
