"""The rule layer: the rule pack (rules/*.yaml) and one predicate per rule, grouped by scope
(link, cluster, hot row, asynchronous), turning metrics into findings.
"""

from typing import TYPE_CHECKING

from advisor._lazy import attach

if TYPE_CHECKING:
    from advisor.rules import asynchronous, cluster, context, hot_row, link, pack, registry
    from advisor.rules.context import Context
    from advisor.rules.pack import Rule, RuleHit, default_rules_dir, load_rules, render_message
    from advisor.rules.registry import CHECKS, evaluate, rule_ids

__all__ = [
    "CHECKS",
    "Context",
    "Rule",
    "RuleHit",
    "asynchronous",
    "cluster",
    "context",
    "default_rules_dir",
    "evaluate",
    "hot_row",
    "link",
    "load_rules",
    "pack",
    "registry",
    "render_message",
    "rule_ids",
]

__getattr__, __dir__ = attach(
    __name__,
    ["asynchronous", "cluster", "context", "hot_row", "link", "pack", "registry"],
    {
        "Rule": "pack",
        "RuleHit": "pack",
        "load_rules": "pack",
        "default_rules_dir": "pack",
        "render_message": "pack",
        "Context": "context",
        "CHECKS": "registry",
        "evaluate": "registry",
        "rule_ids": "registry",
    },
)
