"""The bootstrap runbook of a weighted two-site cluster: what an operator does when the site
that outweighs the other is lost (:class:`advisor.engine.metrics.ClusterEval.weights`).

With no garbd to break their tie, the design gives the writer's site the larger ``pc.weight``:
losing the other site, or the link, leaves it running. Losing the weighted site leaves the
survivors without a majority: they stop taking writes (non-Primary) and wait. They hold
every commit the lost site acknowledged, but for, rarely, one acknowledged in the instant
before the loss (advisor.engine.failover, from this project's lab), so a person may make them
a primary component again with
``pc.bootstrap=YES`` (Codership docs, Resetting the Quorum:
https://galeracluster.com/library/documentation/quorum-reset.html), on the survivor that has
applied the most (``wsrep_last_committed``), and only after fencing the lost site: a weighted
site that is alive but cut off is still a primary component that takes writes, and a second
primary would diverge from it for good. When the lost site comes back it must join, never
bootstrap itself: a started node joins the primary component it finds through
``wsrep_cluster_address`` by state transfer (IST or SST).
"""

from __future__ import annotations

__all__ = ["bootstrap_files"]

from typing import TYPE_CHECKING

from advisor.config.model import BootstrapFiles, ClusterPlan

if TYPE_CHECKING:
    from advisor.config.model import PlanContext


def bootstrap_files(ctx: PlanContext, clusters: list[ClusterPlan]) -> list[BootstrapFiles]:
    """One runbook file per weighted cluster whose weighted site's loss the model lists."""
    plan = ctx.option.failover
    if plan is None:
        return []
    out = []
    for survival in plan.bootstraps:
        label = ctx.labels[survival.cluster]  # distinct, already in the cluster's file names
        cluster = ctx.option.clusters[survival.cluster]
        ((weighted, weight),) = cluster.weights.items()
        cluster_plan = clusters[survival.cluster]
        out.append(
            BootstrapFiles(
                cluster=label,
                lost=weighted,
                survivors=list(survival.taker_sites),
                weight=weight,
                lost_hosts=ctx.hosts(weighted),
                survivor_hosts=[h for s in survival.taker_sites for h in ctx.hosts(s)],
                hostgroups=dict(cluster_plan.hostgroups),
                variant="mariadb" if ctx.flavor == "mariadb" else "mysql",
                file=f"config/bootstrap-{label}.sql",
            )
        )
    return out
