"""Rules as text for ``advisor rules``: the list, and one rule explained."""

from __future__ import annotations

__all__ = ["describe_rule", "list_rules"]

import textwrap
from collections.abc import Mapping

from advisor.rules.pack import Rule
from advisor.text.escape import terminal
from advisor.text.report import table
from advisor.vocabulary import severity_rank


def list_rules(rules: Mapping[str, Rule]) -> str:
    """One line per rule: id, severity, title."""
    ordered = sorted(rules.values(), key=lambda r: (severity_rank(r.severity), r.id))
    rows = [[r.id, r.severity, r.title] for r in ordered]
    return terminal(table(["id", "severity", "title"], rows))  # titles come from rule files


def describe_rule(rule: Rule) -> str:
    """What the rule does, why it matters, its parameters, references and an example."""
    parts = [
        f"{rule.id} ({rule.severity}): {rule.title}",
        "",
        "Why it matters:",
        textwrap.indent(textwrap.fill(" ".join(rule.rationale.split()), 92), "  "),
    ]
    if rule.parameters:
        parts += ["", "Parameters (override with a rule file in --rules DIR):"]
        parts += [f"  {name}: {value:g}" for name, value in rule.parameters.items()]
    if rule.references:
        parts += ["", "References:"] + [f"  - {ref}" for ref in rule.references]
    if "fires" in rule.examples:
        parts += [
            "",
            "Example that fires (a topology.yaml fragment):",
            textwrap.indent(rule.examples["fires"].rstrip(), "  "),
        ]
    parts += ["", f"Defined in {rule.source}"]
    return terminal("\n".join(parts))  # a --rules file's text must not reach the terminal raw
