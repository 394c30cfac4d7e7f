"""Predicates of the rules between clusters: rows written in two clusters, ownership,
and what the asynchronous channels may lose.

Each predicate takes the :class:`~advisor.rules.context.Context` and the rule's parameters and
yields :class:`~advisor.rules.pack.RuleHit` with ``option`` set.
"""

from __future__ import annotations

__all__ = ["async_data_loss", "async_ownership", "multi_site_writes_async"]

from collections.abc import Iterator, Mapping

from advisor.rules.context import Context
from advisor.rules.pack import RuleHit

Params = Mapping[str, float]


def multi_site_writes_async(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """A row written at sites in different clusters would diverge over async replication."""
    for option, row in ctx.hot_rows():
        if row.spans_clusters:
            routed = ", ".join(f"{site} +{rtt:.1f} ms" for site, rtt in row.routed_rtt_ms.items())
            yield RuleHit(
                row.row.name,
                {
                    "row": row.row.name,
                    "option": option.architecture,
                    "owner": row.owner,
                    "writers": ", ".join(row.writer_sites),
                    "routed": routed,
                },
                option.architecture,
            )


def async_ownership(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """Applications write in several clusters: every row needs one owner cluster."""
    for option in ctx.options:
        writing = [i for i, c in enumerate(option.clusters) if c.writers]
        if len(writing) > 1:
            groups = "; ".join(", ".join(option.clusters[i].sites) for i in writing)
            yield RuleHit(
                option.architecture,
                {
                    "option": option.architecture,
                    "clusters": len(writing),
                    "groups": groups,
                },
                option.architecture,
            )


def async_data_loss(ctx: Context, p: Params) -> Iterator[RuleHit]:
    """Losing a site loses what the asynchronous links had not shipped yet."""
    allowed = ctx.topology.requirements.max_data_loss_s
    for option in ctx.options:
        at_risk = option.data_at_risk_s
        if allowed is None or at_risk is None or at_risk <= allowed:
            continue
        worst = max(option.async_links, key=lambda link: link.lag_ms["p99"])
        yield RuleHit(
            option.architecture,
            {
                "option": option.architecture,
                "at_risk_s": at_risk,
                "allowed_s": allowed,
                "sites": "-".join(worst.sites),
                "lag_p50_ms": worst.lag_ms["p50"],
            },
            option.architecture,
        )
