"""The text layer: a Recommendation rendered for the terminal or as Markdown, and the rules
explained.
"""

from typing import TYPE_CHECKING

from advisor._lazy import attach

if TYPE_CHECKING:
    from advisor.text import escape, report, rules
    from advisor.text.report import render_recommendations, table, to_json
    from advisor.text.rules import describe_rule, list_rules

__all__ = [
    "describe_rule",
    "escape",
    "list_rules",
    "render_recommendations",
    "report",
    "rules",
    "table",
    "to_json",
]

__getattr__, __dir__ = attach(
    __name__,
    ["escape", "report", "rules"],
    {
        "render_recommendations": "report",
        "to_json": "report",
        "table": "report",
        "describe_rule": "rules",
        "list_rules": "rules",
    },
)
