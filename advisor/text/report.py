"""Recommendations as a terminal report, as Markdown, and as JSON for scripts.

The report reads a finished :class:`~advisor.result.Recommendation` only: the verdict first,
then the options side by side, the findings, the links and what would change the answer.
"""

from __future__ import annotations

__all__ = ["render_recommendations", "survives_text", "table", "to_json"]

import json
import textwrap
from collections.abc import Callable, Sequence

from advisor.result import Finding, OptionReport, Recommendation
from advisor.text.escape import markdown_inline, terminal
from advisor.units import ms_number, ms_text
from advisor.vocabulary import severity_rank


def to_json(result: Recommendation) -> str:
    """The FORMAT.md JSON document of one recommendation."""
    return json.dumps(result.model_dump(mode="json"), indent=2, allow_nan=False)


def render_recommendations(
    results: Sequence[Recommendation], output_format: str, *, width: int = 100
) -> str:
    """All results in one format: JSON (an object, or an array for several), JSON Lines (one
    compact object a line, as ``advisor recommend --format jsonl`` streams them), text,
    markdown."""
    if output_format == "jsonl":
        return "\n".join(json.dumps(r.model_dump(mode="json"), allow_nan=False) for r in results)
    if output_format == "json":
        if len(results) == 1:
            return to_json(results[0])
        return json.dumps([r.model_dump(mode="json") for r in results], indent=2, allow_nan=False)
    markdown = output_format == "markdown"
    # Names, messages and paths come from files: escaped for Markdown, and whatever the
    # format, no control character reaches the terminal (advisor.text.escape).
    return terminal("\n\n".join(_report(result, markdown, width) for result in results))


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, markdown: bool = False) -> str:
    """A plain-text (aligned) or Markdown table."""
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def _text(markdown: bool) -> Callable[[str], str]:
    """How text from the input is written: escaped inline Markdown, or as it is."""
    return markdown_inline if markdown else str


def _report(result: Recommendation, markdown: bool, width: int) -> str:
    esc = _text(markdown)

    def heading(text: str, level: int = 2) -> str:
        if markdown:
            return f"{'#' * level} {text}"
        return f"{text}\n{('=' if level == 1 else '-') * len(text)}"

    def wrap(text: str) -> str:
        if markdown:
            return text
        return textwrap.fill(text, width, break_on_hyphens=False, subsequent_indent="  ")

    verdict = result.architecture or "none"
    groups = " | ".join(
        " + ".join(f"garbd@{s}" if s in result.arbitrators else s for s in g) for g in result.groups
    )
    parts = [
        heading(f"{esc(result.topology)}: {verdict}", 1),
        f"Clusters: {groups}",  # site names are [A-Za-z0-9_.-] (inputs.topology.SiteName)
        wrap(esc(result.summary)),
    ]
    parts += [heading("Options"), _options(result.options, markdown)]
    if result.hot_rows:
        parts += [heading("Hot rows (max updates/s, one per commit)"), _hot_rows(result, markdown)]
    parts += [heading("Findings"), _findings(result.findings, markdown, width)]
    parts += [heading("Links"), _links(result, markdown, width)]
    if result.what_would_change:
        parts += [heading("What would change the answer")]
        parts += [
            ("- " if markdown else "* ") + wrap(esc(w.message)) for w in result.what_would_change
        ]
    return "\n\n".join(parts)


def _ms(values: dict[str, float], key: str) -> str:
    """Milliseconds with the precision that matters: 0.47, 9.76, 15.5, 102."""
    if key not in values:
        return "-"
    return ms_number(values[key])


def _options(options: Sequence[OptionReport], markdown: bool) -> str:
    rows = []
    for o in options:
        throughput = f"{o.throughput.commits_per_s:.0f}" if o.throughput else "-"
        risk = ms_text(o.data_at_risk_s * 1000) if o.data_at_risk_s is not None else "0"
        risk = "unbounded" if o.data_at_risk_unbounded else risk
        rows.append(
            [
                o.architecture,
                str(o.clusters),
                "yes" if o.viable else "no",
                _ms(o.commit_latency_ms, "p50"),
                _ms(o.commit_latency_ms, "p99"),
                throughput,
                survives_text(o),
                risk,
                ", ".join(o.blockers) or "-",
            ]
        )
    headers = [
        "option",
        "clusters",
        "viable",
        "commit p50 ms",
        "p99 ms",
        "commits/s",
        "survives failures",
        "data at risk",
        "blockers",
    ]
    return table(headers, rows, markdown=markdown)


def survives_text(option: OptionReport) -> str:
    """How an option lives through the failures the requirement names, as every report and
    document writes it: ``yes`` on its own quorum, ``by failover (76 s)`` with the longest
    failover, ``by manual bootstrap``, ``unbounded loss`` where a failover would lose an
    ever-growing backlog, or ``no``."""
    if option.survives_site_loss is None and option.data_at_risk_unbounded:
        return "unbounded loss"
    if not option.survives_site_loss and option.manual_recovery:
        return "by manual bootstrap"
    if not option.survives_site_loss:
        return "no"
    if option.failover_rto_s is None:
        return "yes"
    return f"by failover ({option.failover_rto_s:.0f} s)"


def _hot_rows(result: Recommendation, markdown: bool) -> str:
    architectures = [o.architecture for o in result.options]
    esc = _text(markdown)
    rows = [
        [
            esc(r.name),
            f"{r.required_updates_per_s:g}",
            *(f"{r.max_updates_per_s.get(a, float('nan')):.1f}" for a in architectures),
            esc(_writes(r.write_latency_ms.get(result.architecture or "", {}))),
        ]
        for r in result.hot_rows
    ]
    headers = ["row", "needs/s", *architectures, f"write ms from ({result.architecture})"]
    return table(headers, rows, markdown=markdown)


def _writes(by_site: dict[str, float]) -> str:
    """``a 1.3, b 21.3``: one write from each writer site, routed to the owner if need be."""
    return ", ".join(f"{site} {ms:.1f}" for site, ms in by_site.items()) or "-"


def _findings(findings: Sequence[Finding], markdown: bool, width: int) -> str:
    if not findings:
        return "None."
    ordered = sorted(findings, key=lambda f: (severity_rank(f.severity), f.option or "", f.rule))
    lines = []
    for f in ordered:
        where = f" [{f.option}]" if f.option else ""
        head = f"{f.severity.upper()} {f.rule}{where}: "
        if markdown:
            rule = markdown_inline(f"{f.severity} {f.rule}")
            lines.append(f"- **{rule}**{where}: {markdown_inline(f.message)}")  # where: an id
        else:
            lines.append(
                textwrap.fill(
                    head + f.message, width, subsequent_indent="    ", break_on_hyphens=False
                )
            )
    return "\n".join(lines)


def _links(result: Recommendation, markdown: bool, width: int) -> str:
    esc = _text(markdown)
    rows = []
    bases = []
    for link in result.links:
        distance = f"{link.distance_km:.0f}" if link.distance_km is not None else "?"
        floor = f"{link.floor_rtt_ms:.2f}" if link.floor_rtt_ms is not None else "?"
        fraction = (
            f"{link.light_speed_fraction:.0%}" if link.light_speed_fraction is not None else "?"
        )
        span = link.rtt_estimate_range_ms
        rows.append(
            [
                esc(f"{link.sites[0]} - {link.sites[1]}"),
                distance,
                floor,
                _ms(link.rtt_ms, "p50"),
                _ms(link.rtt_ms, "p99"),
                fraction,
                esc(link.rtt_source),
                f"{_ms(span, 'low')} - {_ms(span, 'high')}" if span else "-",
            ]
        )
        if link.rtt_estimate_basis:
            bases.append(f"{link.sites[0]} - {link.sites[1]}: {link.rtt_estimate_basis}")
    headers = ["link", "km", "floor ms", "rtt p50 ms", "p99 ms", "of light speed", "source"]
    text = table([*headers, "estimate range ms"], rows, markdown=markdown)
    if not bases:
        return text
    lead = "Estimated round trips, their basis:"
    if markdown:
        return "\n".join([text, "", lead, *(f"- {markdown_inline(b)}" for b in bases)])
    items = [
        textwrap.fill(f"* {b}", width, break_on_hyphens=False, subsequent_indent="    ")
        for b in bases
    ]
    return "\n".join([text, "", lead, *items])
