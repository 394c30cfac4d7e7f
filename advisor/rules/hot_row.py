"""Predicates of the hot-row rules: Callaghan's bound, the queue for a row's lock, and
certification conflicts when a row is written at several sites of one cluster.

Each predicate takes the :class:`~advisor.rules.context.Context` and the rule's parameters and
yields :class:`~advisor.rules.pack.RuleHit` with ``option`` set.
"""

from __future__ import annotations

__all__ = ["hot_row_conflicts", "hot_row_queue", "hot_row_rate"]

from collections.abc import Iterator, Mapping
from typing import Any

from advisor.engine.metrics import HotRowEval, Option
from advisor.model import galera
from advisor.rules.context import Context
from advisor.rules.pack import RuleHit

Params = Mapping[str, float]


def hot_row_rate(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A hot row needs more updates per second than one per commit allows."""
    for option, row in ctx.hot_rows():
        rho, _ = galera.hot_row_queue_ms(row.row.updates_per_s, row.commit_ms["p50"])
        if rho >= p["max_utilisation"]:
            yield RuleHit(row.row.name, _row_values(option, row, rho), option.architecture)


def hot_row_queue(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A hot row fits under its bound but waits in a queue for its lock."""
    for option, row in ctx.hot_rows():
        rho, wait = galera.hot_row_queue_ms(row.row.updates_per_s, row.commit_ms["p50"])
        if p["min_utilisation"] <= rho < p["max_utilisation"]:
            values = {**_row_values(option, row, rho), "wait_ms": wait}
            yield RuleHit(row.row.name, values, option.architecture)


def _row_values(option: Option, row: HotRowEval, rho: float) -> dict[str, Any]:
    return {
        "row": row.row.name,
        "option": option.architecture,
        "owner": row.owner,
        "required_per_s": row.row.updates_per_s,
        "commit_p50_ms": row.commit_ms["p50"],
        "commit_p99_ms": row.commit_ms["p99"],
        "bound_p50_per_s": row.bound_p50_per_s,
        "bound_p99_per_s": row.bound_p99_per_s,
        "utilisation": rho,
    }


def hot_row_conflicts(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A row written on members at several sites of one cluster fails certification."""
    for option, row in ctx.hot_rows():
        if row.conflicts_per_s > p["min_conflicts_per_s"]:
            writers = [w for w in row.writer_sites if w in option.clusters[row.cluster].sites]
            yield RuleHit(
                row.row.name,
                {
                    "row": row.row.name,
                    "option": option.architecture,
                    "writers": ", ".join(writers),
                    "conflicts_per_s": row.conflicts_per_s,
                    "required_per_s": row.row.updates_per_s,
                    "share": row.conflicts_per_s / row.row.updates_per_s,
                    "commit_p50_ms": row.commit_ms["p50"],
                    "multi_writer_bound_per_s": row.multi_writer_bound_p50_per_s,
                    "in_step_commit_p50_ms": (row.in_step_commit_ms or row.commit_ms)["p50"],
                },
                option.architecture,
            )
