"""A check's result as text for a terminal, or as its JSON contract."""

from __future__ import annotations

__all__ = ["render_check"]

from typing import Literal

from advisor.check.result import CheckResult
from advisor.text.escape import terminal


def _text(result: CheckResult) -> str:
    head = (
        f"{result.topology}: {result.node}"
        + (f" ({result.node_name})" if result.node_name else "")
        + f", cluster {result.cluster}"
        + (f", site {result.site}" if result.site else "")
        + f", judged as {result.architecture}"
    )
    lines = [
        head,
        f"watched {result.duration_s:.0f}s, {result.samples} samples",
        "",
    ]
    if not result.findings:
        lines.append("no drift: what the node showed is within the design's predictions")
    for finding in result.findings:
        lines.append(f"{finding.severity:<8} {finding.id}  {finding.subject}")
        lines.append(f"         {finding.message}")
        lines.append(f"         tolerance: {finding.tolerance}")
    if result.reassessment is not None:
        lines += ["", f"judged again with the observed workload: {result.reassessment.summary}"]
    if result.notes:
        lines += ["", "notes:"] + [f"- {note}" for note in result.notes]
    return terminal("\n".join(lines))


def render_check(result: CheckResult, output_format: Literal["text", "json"] = "text") -> str:
    """``text``: the findings for a terminal (names escaped); ``json``: the contract."""
    if output_format == "json":
        return result.model_dump_json(indent=2)
    return _text(result)
