"""CHECK-WORKLOAD-MOVED: the observed workload against what the topology assumed, and, when it
has moved past, the verdict the observed figures give. The node's own apply cost counts as
workload here: measured when it sent most of the flow-control pauses, it is its site's
``local_commit_ms`` (issue 23).

The variant is made the documented way (README, "The Python API"): the topology's YAML with
the observed figures in place of the assumed ones, parsed again by
:func:`advisor.inputs.loading.parse_topology` with the original as ``source`` (measurement
files stay relative to its folder), then judged by :func:`advisor.recommendation.recommend`.
Only figures above the assumed ones are put in: a workload below the design's is not drift.
"""

from __future__ import annotations

__all__ = ["workload_findings"]

from typing import Any

import yaml

from advisor.check.result import CheckFinding, Reassessment
from advisor.collect.api import CollectedEvidence
from advisor.collect.apply_cost import apply_cost
from advisor.collect.writer import loadable_names
from advisor.inputs.loading import LoadedTopology, parse_topology
from advisor.recommendation import recommend
from advisor.vocabulary import Architecture

_TOLERANCE = (
    "the topology's own figure: the design was judged at that peak (commits, p99 write set, "
    "each named hot row) and at that apply cost of the node's site; a peak is per sampling "
    "interval, so a shorter --interval reads higher"
)


def _moved(
    evidence: CollectedEvidence,
    loaded: LoadedTopology,
    site: str | None,
    site_apply_ms: float | None,
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """(assumed, observed, changed) for every figure the node showed above the topology's:
    the workload's, and one apply at the node's ``site`` (``site_apply_ms`` as the design
    takes it) when the node sent most of the flow-control pauses, which measures it."""
    workload = loaded.topology.workload
    assumed: dict[str, float] = {}
    observed: dict[str, float] = {}
    commits = evidence.commits_per_s or evidence.status.commits_per_s
    if workload.commits_per_s is not None and commits.peak is not None:
        assumed["commits_per_s.peak"] = float(workload.commits_per_s.design_value)
        observed["commits_per_s.peak"] = round(commits.peak, 3)
    sizes = workload.writeset_bytes
    given = sizes.given() if sizes is not None else {}
    if given and evidence.writeset is not None:
        assumed["writeset_bytes.p99"] = float(given.get("p99", max(given.values())))
        observed["writeset_bytes.p99"] = round(evidence.writeset.p99_bytes)
    seen_rows = dict(
        zip(
            loadable_names([r.name for r in evidence.hot_rows]),
            [r.updates_per_s for r in evidence.hot_rows],
            strict=True,
        )
    )
    for row in workload.hot_rows:
        if row.name in seen_rows:
            assumed[f"hot_rows[{row.name}].updates_per_s"] = float(row.updates_per_s)
            observed[f"hot_rows[{row.name}].updates_per_s"] = round(seen_rows[row.name], 3)
    cost = apply_cost(evidence.status, evidence.variables)
    if cost is not None and site is not None and site_apply_ms is not None:
        assumed[f"sites[{site}].local_commit_ms"] = site_apply_ms
        observed[f"sites[{site}].local_commit_ms"] = round(cost.apply_ms, 3)
    changed = {k: v for k, v in observed.items() if v > assumed[k]}
    return assumed, observed, changed


def _variant_text(loaded: LoadedTopology, changed: dict[str, float]) -> str:
    assert loaded.path is not None
    data: Any = yaml.safe_load(loaded.path.read_text(encoding="utf-8"))
    work = data.setdefault("workload", {})
    if "commits_per_s.peak" in changed:
        rate = work.get("commits_per_s")
        peak = changed["commits_per_s.peak"]
        if isinstance(rate, dict):
            rate["peak"] = peak
            if "avg" in rate and rate["avg"] > peak:
                rate["avg"] = peak
        else:
            work["commits_per_s"] = peak
    if "writeset_bytes.p99" in changed:
        sizes = work.get("writeset_bytes")
        p99 = changed["writeset_bytes.p99"]
        if isinstance(sizes, dict):
            sizes["p99"] = p99
            for key in ("p999", "p9999", "max"):  # kept non-decreasing, as the schema asks
                if key in sizes and sizes[key] < p99:
                    sizes[key] = p99
        else:
            work["writeset_bytes"] = p99
    for row in work.get("hot_rows", []) or []:
        key = f"hot_rows[{row.get('name')}].updates_per_s"
        if key in changed:
            row["updates_per_s"] = changed[key]
    for site in data.get("sites", []) or []:
        key = f"sites[{site.get('name')}].local_commit_ms"
        if key in changed:
            site["local_commit_ms"] = changed[key]
    return yaml.safe_dump(data, sort_keys=False)


def workload_findings(
    evidence: CollectedEvidence,
    loaded: LoadedTopology,
    deployed: Architecture,
    *,
    site: str | None = None,
    site_apply_ms: float | None = None,
) -> tuple[list[CheckFinding], Reassessment | None, list[str]]:
    """The finding, the reassessment behind it, and notes (what could not be compared).
    ``site`` is the node's, ``site_apply_ms`` one apply there as the design takes it."""
    assumed, observed, changed = _moved(evidence, loaded, site, site_apply_ms)
    notes = []
    if not assumed:
        notes.append(
            "the workload is not compared: the topology gives no commits_per_s, writeset_bytes "
            "or hot row the node showed, or the run saw no rates"
        )
    if not changed:
        return [], None, notes
    if loaded.path is None:
        notes.append("the workload moved, but the topology has no file to vary: not re-judged")
        return [], None, notes
    variant = parse_topology(_variant_text(loaded, changed), source=loaded.path)
    result = recommend(variant)
    option = next(o for o in result.options if o.architecture == deployed)
    blockers = sorted(
        {f.rule for f in result.findings if f.option == deployed and f.severity == "blocker"}
    )
    moved = ", ".join(f"{k} {observed[k]:g} (assumed {assumed[k]:g})" for k in changed)
    if not option.viable:
        instead = (
            f"the new figures recommend {result.architecture}"
            if any(o.viable for o in result.options)
            else "no option meets them under the new figures (the least bad: "
            f"{result.architecture})"
        )
        severity, verdict = (
            "blocker",
            (
                f"the deployed {deployed} no longer meets the requirements "
                f"({', '.join(blockers) or 'not viable'}); {instead}"
            ),
        )
    elif result.architecture != deployed:
        severity, verdict = (
            "warning",
            (
                f"the deployed {deployed} still meets the requirements, but the new figures "
                f"recommend {result.architecture}"
            ),
        )
    else:
        severity, verdict = "info", f"the deployed {deployed} still fits and is still recommended"
    finding = CheckFinding(
        id="CHECK-WORKLOAD-MOVED",
        severity=severity,
        subject="workload",
        message=f"the workload moved past the topology's: {moved}; judged again, {verdict}",
        observed={k: observed[k] for k in changed},
        expected={k: assumed[k] for k in changed},
        tolerance=_TOLERANCE,
    )
    reassessment = Reassessment(
        changed={k: observed[k] for k in changed},
        architecture=result.architecture,
        deployed_viable=bool(option.viable),
        blockers=blockers,
        summary=result.summary,
    )
    return [finding], reassessment, notes
