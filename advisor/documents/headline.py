"""The first screen of the design documents: the verdict in one sentence, the figures that
decide it, what it rests on and what would change it.

Built once from the recommendation, so the Markdown and HTML documents say the same words
with the same numbers; every figure is written by :func:`advisor.units.ms_text` (through the
``ms`` filter) or, for a recovery time, in whole seconds as the terminal report does
(``advisor/text/report.py``). Rule ids stay out of these sentences: the findings table below
names them.
"""

from __future__ import annotations

import math

__all__ = ["headline", "rto_text"]

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from advisor.documents.filters import arch, ms, rate
from advisor.result import HotRowReport, OptionReport, Recommendation

if TYPE_CHECKING:
    from advisor.analysis import Analysis

# At most this many "what would change it" lines on the first screen (the rest are below).
MAX_CHANGES = 3


def rto_text(rto_s: float) -> str:
    """A recovery time in whole seconds, as the terminal report writes it: ``76 s``."""
    return f"{rto_s:.0f} s"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text else text


def _groups(option: OptionReport) -> str:
    parts = []
    for group in option.groups:
        data = [s for s in group if s not in option.arbitrators]
        witness = [s for s in group if s in option.arbitrators]
        parts.append(" + ".join(data) + (f" (garbd at {', '.join(witness)})" if witness else ""))
    return "; ".join(parts)


def _sentence(chosen: OptionReport, rules: Mapping[str, Any]) -> str:
    """The verdict in one plain sentence, with no rule id."""
    design = f"{arch(chosen.architecture)} ({_groups(chosen)})"
    if chosen.viable:
        return f"Run {design}: it meets every stated requirement."
    broken = [
        _lower_first(rules[b].title) if b in rules else b.lower().replace("-", " ")
        for b in chosen.blockers
    ]
    return (
        f"No option meets every requirement; the least bad is {design}, "
        f"which still fails: {'; '.join(broken)}."
    )


def _commit_figure(chosen: OptionReport, slo: Mapping[str, float]) -> str:
    commit = chosen.commit_latency_ms
    if not commit:
        return "none, no site writes (nothing to commit)"
    text = f"p50 {ms(commit['p50'])}, p99 {ms(commit['p99'])}"
    # COMMIT-LATENCY-SLO can fire on a hot row's commit (its lock's queue included) while
    # plain commits meet the bound: say which.
    slo_blocks = "COMMIT-LATENCY-SLO" in chosen.blockers
    bounds = [
        f"{key} at most {ms(limit)}"
        + (
            " (broken)"
            if commit.get(key, 0.0) > limit
            else " (met by plain commits; a hot row's commits break it, see Findings)"
            if slo_blocks
            else " (met)"
        )
        for key, limit in slo.items()
        if key in commit
    ]
    return text + ("; required " + ", ".join(bounds) if bounds else "; no bound required")


def _hot_row_figure(rec: Recommendation, chosen: OptionReport) -> str | None:
    """The hot row closest to its bound under the chosen option, or None without hot rows."""
    rows = [r for r in rec.hot_rows if chosen.architecture in r.max_updates_per_s]
    if not rows:
        return None

    def share(row: HotRowReport) -> float:
        """The row's rate over its bound; a bound that rounds to 0/s (a commit of minutes)
        leaves any rate beyond it."""
        bound = row.max_updates_per_s[chosen.architecture]
        return row.required_updates_per_s / bound if bound > 0 else math.inf

    row = max(rows, key=share)
    bound = row.max_updates_per_s[chosen.architecture]
    used = f"{share(row):.0%} of its bound" if bound > 0 else "beyond any rate it allows"
    return (
        f'"{row.name}" needs {rate(row.required_updates_per_s)}; at most {rate(bound)} under '
        f"this design ({used}, one update per commit)"
    )


def _failure_figure(chosen: OptionReport) -> str:
    """Data at risk and recovery time on the failure the requirement names."""
    if chosen.data_at_risk_unbounded:
        reason = f" ({chosen.data_at_risk_reason})" if chosen.data_at_risk_reason else ""
        return f"unbounded: an asynchronous channel falls behind without end{reason}"
    if chosen.manual_recovery:
        return "nothing committed is lost, but writes wait for a manual bootstrap: " + "; ".join(
            chosen.manual_recovery
        )
    at_risk = (
        "none lost (synchronous)"
        if chosen.data_at_risk_s is None
        else f"up to {ms(chosen.data_at_risk_s * 1000)} of recent commits lost "
        "(asynchronous, p99 lag)"
    )
    if chosen.survives_site_loss is False:
        return f"{at_risk}; writes stop somewhere until the failure is repaired"
    if chosen.failover_rto_s is not None:
        return f"{at_risk}; writes fail over in about {rto_text(chosen.failover_rto_s)}"
    return f"{at_risk}; writes continue on the surviving majority (no failover)"


def _rests_on(analysis: Analysis, rec: Recommendation) -> dict[str, Any]:
    """Whether the chosen option's round trips were measured, and the links to measure."""
    used = {frozenset(link.sites) for c in analysis.chosen.clusters for link in c.links}
    used |= {frozenset(a.sites) for a in analysis.chosen.async_links}
    estimated = [
        link
        for link in rec.links
        if link.rtt_source == "estimated" and frozenset(link.sites) in used
    ]
    ends = dict(analysis.estimate_ends)
    flips = bool(ends) and not (ends.get("low") == ends.get("estimate") == ends.get("high"))
    if not used:
        text = "LAN round trips only (no inter-site link in any cluster)"
    elif estimated:
        names = ", ".join(" - ".join(link.sites) for link in estimated)
        rest = (
            "nothing it uses was measured" if len(estimated) == len(used) else "the rest measured"
        )
        text = f"estimated round trips for {names} (no measurement); {rest}"
    else:
        text = "measured round trips on every link it uses"
    if flips:
        text += (
            f"; a measurement of the estimated links may change it (at the low end of their "
            f"range the answer is {ends.get('low')}, at the high end {ends.get('high')})"
        )
    return {
        "text": text,
        "estimated": bool(estimated) or flips,
        "measure": [" - ".join(link.sites) for link in rec.links if link.rtt_source == "estimated"]
        if flips
        else [" - ".join(link.sites) for link in estimated],
    }


def _changes(rec: Recommendation) -> list[str]:
    """The thresholds that would change the answer, those about the chosen option first."""
    ordered = sorted(rec.what_would_change, key=lambda w: w.option != rec.architecture)
    return [w.message for w in ordered[:MAX_CHANGES]]


def headline(analysis: Analysis, rec: Recommendation, chosen: OptionReport) -> dict[str, Any]:
    """The first screen's content.

    Returns
    -------
    dict
        ``sentence`` (the verdict), ``figures`` (label, text pairs: commit latency against the
        SLO, the binding hot row, data at risk and recovery time), ``rests_on`` (``text``,
        ``estimated``: whether an estimate counts, ``measure``: the links to measure),
        ``changes`` (what would change it, at most :data:`MAX_CHANGES`) and ``more_changes``
        (how many more are listed below).
    """
    topology = analysis.loaded.topology
    slo = topology.requirements.commit_latency_ms
    figures = [
        (
            "Commit latency at the slowest writing site",
            _commit_figure(chosen, slo.given() if slo else {}),
        )
    ]
    hot = _hot_row_figure(rec, chosen)
    if hot is not None:
        figures.append(("Binding hot row", hot))
    figures.append((f"On losing one {topology.requirements.survive}", _failure_figure(chosen)))
    figures.append(("Clusters to run", _clusters(chosen)))
    changes = _changes(rec)
    return {
        "sentence": _sentence(chosen, analysis.rules),
        "figures": figures,
        "rests_on": _rests_on(analysis, rec),
        "changes": changes,
        "more_changes": len(rec.what_would_change) - len(changes),
    }


def _clusters(chosen: OptionReport) -> str:
    text = f"{chosen.clusters}"
    if chosen.arbitrators:
        text += f", with a garbd at {', '.join(chosen.arbitrators)}"
    return text
