"""Recommendations as text for people and JSON for scripts."""

from __future__ import annotations

__all__ = ["render_recommendations", "to_json"]

import json
from collections.abc import Sequence

from advisor.result import Recommendation


def to_json(result: Recommendation) -> str:
    """The FORMAT.md JSON document of one recommendation."""
    return json.dumps(result.model_dump(mode="json"), indent=2)


def render_recommendations(results: Sequence[Recommendation], output_format: str) -> str:
    """All results in one format: a JSON object (one file) or array (several), or text."""
    if output_format == "json":
        if len(results) == 1:
            return to_json(results[0])
        return json.dumps([r.model_dump(mode="json") for r in results], indent=2)
    return "\n\n".join(_text(result) for result in results)


def _text(result: Recommendation) -> str:
    lines = [f"Topology: {result.topology}"]
    if result.architecture:
        lines.append(f"Recommendation: {result.architecture} {result.groups}")
    if result.summary:
        lines.append(result.summary)
    lines.append("")
    lines.append("Links:")
    for link in result.links:
        floor = f"{link.floor_rtt_ms:.2f}" if link.floor_rtt_ms is not None else "?"
        fraction = (f"{link.light_speed_fraction:.0%} of light in fibre"
                    if link.light_speed_fraction is not None else "distance unknown")
        lines.append(
            f"  {link.sites[0]} - {link.sites[1]}: rtt p50 {link.rtt_ms['p50']:.2f} ms "
            f"p99 {link.rtt_ms['p99']:.2f} ms ({link.rtt_source}), floor {floor} ms, {fraction}"
        )
    if result.findings:
        lines.append("")
        lines.append("Findings:")
        for finding in result.findings:
            lines.append(f"  [{finding.severity}] {finding.rule} {finding.subject}: {finding.message}")
    return "\n".join(lines)
