"""Failover as a way to survive, and data at risk from size, bandwidth and apply time.

The model functions (advisor.model.replication, advisor.engine.failover, the remedies of
advisor.verdict) with values worked by hand, then whole topologies: two data centres without
a third site, a data-loss limit of zero, a 2 + 1 node topology, and the lag against write-set
size and bandwidth. Every link is measured as point round trips, so each percentile of the
RTT is the value given.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field

import numpy as np
import pytest

from advisor import verdict
from advisor.analysis import analyse
from advisor.engine import failover
from advisor.inputs.loading import parse_topology
from advisor.model import quorum, replication
from advisor.recommendation import recommend
from advisor.result import Finding
from advisor.rules.pack import load_rules

RULES = load_rules()
# The failover's time bound with the defaults: 3 x 5 s + 0.8 s of ProxySQL health checks and
# a manager run once a minute.
DETECT_AND_PROMOTE_S = 15.8 + 60.0


# -- the lag of a channel (advisor.model.replication) -------------------------------------


def test_lag_is_one_way_delay_plus_serialisation_plus_apply_on_an_idle_link():
    # RTT 80 ms, a 64,000 B write set at 100 Mbit/s: 40 + 64,000 x 8 / 10^8 s = 5.12 ms, + 1.
    parts = replication.lag_parts_ms(80.0, 64_000, 100.0, 1.0)
    assert parts.one_way_ms == pytest.approx(40.0)
    assert parts.serialisation_ms == pytest.approx(5.12)
    assert parts.queue_ms == 0.0 and parts.apply_ms == 1.0 and parts.utilisation == 0.0
    assert parts.total_ms == pytest.approx(46.12)


def test_lag_grows_with_the_write_set_and_shrinks_with_bandwidth():
    sizes = np.array([2_000.0, 16_000.0, 64_000.0])
    lag = replication.lag_parts_ms(80.0, sizes, 100.0, 1.0).total_ms
    # 40 + 1 + 0.16, 1.28, 5.12 ms of serialisation.
    assert lag == pytest.approx([41.16, 42.28, 46.12])
    rates = np.array([100.0, 1000.0, 10_000.0])
    faster = replication.lag_parts_ms(80.0, 64_000, rates, 1.0).total_ms
    assert faster == pytest.approx([46.12, 41.512, 41.0512])


def test_queueing_under_load_is_the_mm1_waiting_time_quantile():
    # 10 MB/s on 100 Mbit/s: rho = 0.8. Service of a mean 8,000 B write set: 0.64 ms.
    # p99 wait = 0.64 / (1 - 0.8) x ln(0.8 / 0.01) = 3.2 x 4.3820 = 14.0225 ms.
    parts = replication.lag_parts_ms(
        80.0, 64_000, 100.0, 1.0, replicated_bytes_per_s=10e6, mean_writeset_bytes=8_000,
        quantile=0.99,
    )  # fmt: skip
    assert parts.utilisation == pytest.approx(0.8)
    assert parts.queue_ms == pytest.approx(3.2 * math.log(80.0))
    assert parts.total_ms == pytest.approx(46.12 + 14.0225, abs=1e-3)
    # At the median: ln(0.8 / 0.5) x 3.2 = 1.504 ms; below rho = 0.5 nobody waits at p50.
    assert replication.queue_wait_ms(0.8, 0.64, 0.5) == pytest.approx(3.2 * math.log(1.6))
    assert replication.queue_wait_ms(0.4, 0.64, 0.5) == 0.0


def test_a_saturated_link_lags_without_bound():
    assert replication.utilisation(12.5e6, 100.0) == pytest.approx(1.0)
    assert math.isinf(
        replication.lag_parts_ms(10.0, 2_000, 100.0, 1.0, replicated_bytes_per_s=12.5e6).total_ms
    )


def test_the_lag_is_vectorised_over_round_trips_and_loads():
    lag = replication.lag_parts_ms(
        np.array([[10.0], [20.0]]),
        2_000,
        100.0,
        1.0,
        replicated_bytes_per_s=np.array([0.0, 6.25e6]),
    ).total_ms
    assert lag.shape == (2, 2)
    # rho 0.5 at the median: ln(0.5 / 0.5) = 0, no wait; the rows differ by 5 ms of RTT / 2.
    assert lag[1] - lag[0] == pytest.approx([5.0, 5.0])


def test_the_quantile_must_be_below_one():
    with pytest.raises(ValueError, match="quantile"):
        replication.queue_wait_ms(0.5, 1.0, 1.0)


# -- the failover model (advisor.engine.failover) -----------------------------------------


@dataclass(frozen=True)
class Cluster:
    sites: tuple[str, ...]
    writers: tuple[str, ...]
    site_failures: tuple[quorum.Failure, ...] = ()
    node_failures: tuple[quorum.Failure, ...] = ()
    arbitrator: str | None = None
    bootstrap_sites: tuple[str, ...] = ()

    @property
    def members(self) -> tuple[str, ...]:
        extra = (self.arbitrator,) if self.arbitrator and self.arbitrator not in self.sites else ()
        return self.sites + extra


@dataclass(frozen=True)
class Channel:
    clusters: tuple[int, int]
    sites: tuple[str, str]
    lag_ms: dict[str, float] = field(default_factory=dict)


def fails(*events: str) -> tuple[quorum.Failure, ...]:
    return tuple(quorum.Failure(e, 0.5) for e in events)


def test_detection_and_promotion_bounds():
    assert failover.detection_s() == pytest.approx(15.8)
    assert failover.detection_s(1000.0, 600.0, 3) == pytest.approx(3.6)  # the docs' example
    timing = failover.FailoverTiming()
    assert timing.rto_s(40.0) == pytest.approx(DETECT_AND_PROMOTE_S + 0.04)


def test_a_site_of_its_own_fails_over_to_the_other_cluster_at_the_channels_p99_lag():
    a = Cluster(("a",), ("a",))
    b = Cluster(("b",), ("b",), node_failures=fails("loss of one node at b"))
    link = Channel((0, 1), ("a", "b"), {"p50": 41.0, "p99": 42.0})
    plan = failover.assess([a, b], [link], survive_site=True)
    by = {(s.cluster, s.event): s for s in plan.survivals}
    assert by[0, "loss of one node at a"].kept_by == "quorum"
    lost_a = by[0, "loss of site a"]
    assert (lost_a.kept_by, lost_a.taker, lost_a.channel) == ("failover", 1, ("a", "b"))
    assert lost_a.rpo_ms == 42.0 and lost_a.rto_s == pytest.approx(DETECT_AND_PROMOTE_S + 0.042)
    assert by[1, "loss of one node at b"].kept_by == "failover"
    assert plan.survives and plan.rpo_ms == 42.0
    # survive: node names node losses only.
    node_only = failover.assess([a, b], [link], survive_site=False)
    assert {s.kind for s in node_only.survivals} == {"node"}


def test_one_cluster_has_nobody_to_fail_over_to():
    two_sites = Cluster(
        ("a", "b"), ("a", "b"), fails("loss of site a", "loss of site b", "cut of link a-b")
    )
    plan = failover.assess([two_sites], [], survive_site=True)
    assert not plan.survives
    assert {s.event for s in plan.survivals if s.kept_by == "nothing"} == {
        "loss of site a",
        "loss of site b",
        "cut of link a-b",
    }
    assert plan.rpo_ms is None and plan.rto_s is None


def test_the_nearest_running_cluster_takes_over_and_a_shared_site_rules_one_out():
    # Cluster 0 (a, b) has its garbd at c, which also holds cluster 1's data: losing c stops
    # both, so cluster 2, farther, takes over.
    zero = Cluster(("a", "b"), ("a",), fails("loss of site c"), arbitrator="c")
    one, two = Cluster(("c",), ("c",)), Cluster(("d",), ("d",))
    channels = [
        Channel((0, 1), ("a", "c"), {"p99": 5.0}),
        Channel((0, 2), ("b", "d"), {"p99": 30.0}),
        Channel((1, 2), ("c", "d"), {"p99": 30.0}),
    ]
    plan = failover.assess([zero, one, two], channels, survive_site=True)
    lost_c = next(s for s in plan.of(0, ("site",)) if s.event == "loss of site c")
    assert (lost_c.kept_by, lost_c.taker, lost_c.rpo_ms) == ("failover", 2, 30.0)


def test_a_group_judged_alone_may_fail_over_to_the_sites_it_leaves_out():
    group = Cluster(("a", "b"), ("a", "b"), fails("loss of site a", "loss of site b"))
    outside = [Channel((0, 1), ("b", "c"), {"p99": 12.0})]
    plan = failover.assess([group], [], survive_site=True, outside=outside, outside_sites=("c",))
    assert plan.survives
    taken = plan.failovers[0]
    assert (taken.taker, taken.taker_sites, taken.rpo_ms) == (None, ("c",), 12.0)


# -- the remedies and their order (advisor.verdict) ---------------------------------------


def finding(rule, kind=None):
    return Finding(
        rule=rule, severity="blocker", subject="x", option="single_cluster", message="",
        remedy=kind,
    )  # fmt: skip


def test_remedies_rank_a_garbd_before_a_witness_site_before_a_path_before_moving_sites():
    costs = [
        verdict.remedy_of(finding("QUORUM-SITE-LOSS", "node"), RULES).cost,
        verdict.remedy_of(finding("QUORUM-SITE-LOSS", "witness_site"), RULES).cost,
        verdict.remedy_of(finding("BANDWIDTH"), RULES).cost,
        verdict.remedy_of(finding("COMMIT-LATENCY-SLO"), RULES).cost,
        verdict.remedy_of(finding("ASYNC-DATA-LOSS", "requirement"), RULES).cost,
    ]
    assert costs == sorted(costs) and len(set(costs)) == len(costs)
    assert [verdict.remedy_of(finding(r), RULES).kind for r in ("BANDWIDTH", "HOT-ROW-RATE")] == [
        "network_path",
        "move_sites",
    ]


def test_a_finding_costs_at_least_its_rules_cost_and_each_rule_counts_once():
    # Two QUORUM findings (a garbd for one cluster, a witness site for the other) and a
    # bandwidth one: max(1, 1.5) + 2.
    blocking = [
        finding("QUORUM-SITE-LOSS", "node"),
        finding("QUORUM-SITE-LOSS", "witness_site"),
        finding("BANDWIDTH"),
    ]
    assert verdict.remedy_cost(blocking, RULES) == pytest.approx(3.5)
    # A bare rule id costs its rule file's remedy_cost, as the sweep asks for rules it re-judges.
    assert verdict.remedy_cost(["QUORUM-SITE-LOSS", "COMMIT-LATENCY-SLO"], RULES) == 4


# -- whole topologies ---------------------------------------------------------------------


def run(text: str):
    return recommend(parse_topology(textwrap.dedent(text)))


def option(result, architecture):
    return next(o for o in result.options if o.architecture == architecture)


def apply_p99_ms(text: str, site: str) -> float:
    """A commit in the cluster of ``site`` alone at p99 [ms]: what a replica there pays to
    apply one transaction (advisor.engine.channels)."""
    return analyse(parse_topology(textwrap.dedent(text))).lan_commit_ms[site]["p99"]


def found(result, rule, architecture=None):
    return [f for f in result.findings if f.rule == rule and f.option in (architecture, None)]


def two_dcs(a_nodes=3, b_nodes=3, requirements="{survive: site}", link="", extra_sites=""):
    return f"""
        name: two-dcs
        requirements: {requirements}
        sites:
          - {{name: a, nodes: {a_nodes}}}
          - {{name: b, nodes: {b_nodes}}}
          {extra_sites}
        links:
          - {{sites: [a, b], {link} measurements: [{{method: icmp, samples_ms: [10]}}]}}
        """


def test_two_data_centres_without_a_third_site_get_per_site_clusters_and_a_witness_named():
    result = run(two_dcs())
    assert result.architecture == "per_site_clusters"
    per_site, single = option(result, "per_site_clusters"), option(result, "single_cluster")
    assert per_site.viable and per_site.survives_site_loss
    assert not single.viable and not single.survives_site_loss
    (quorum_finding,) = found(result, "QUORUM-SITE-LOSS", "single_cluster")
    assert quorum_finding.remedy == "witness_site"
    assert (
        "single_cluster is ruled out by QUORUM-SITE-LOSS; it would take a new witness site "
        "(a third site with a garbd)."
    ) in result.summary
    # Losing a site fails over at the channel's p99 lag: half the round trip, the p99 write
    # set (64 KiB by default) at the assumed 1 Gbit/s, and the apply, a commit in the
    # receiving three-node cluster at p99 (1 ms of local work and its LAN round trip):
    # 5 + 0.524288 + about 1.76 ms. No peak is given: no one waits for an applier.
    apply_ms = apply_p99_ms(two_dcs(), "b")
    assert 1.5 < apply_ms < 2.0
    assert per_site.failover_rpo_ms == pytest.approx(5 + 0.524288 + apply_ms, abs=2e-3)
    assert per_site.failover_rto_s == pytest.approx(DETECT_AND_PROMOTE_S, abs=0.1)


def test_a_garbd_at_a_site_already_listed_is_the_cheaper_remedy():
    # A third location the topology lists, without nodes and not marked arbitrator.
    text = two_dcs(extra_sites="- {name: w, nodes: 0, writes: false}")
    (quorum_finding,) = found(run(text), "QUORUM-SITE-LOSS", "single_cluster")
    assert quorum_finding.remedy == "node"
    assert "mark site w arbitrator: true" in quorum_finding.message


def test_no_data_loss_allowed_rules_out_every_asynchronous_option():
    result = run(two_dcs(requirements="{survive: site, max_data_loss_s: 0}"))
    per_site = option(result, "per_site_clusters")
    assert not per_site.viable and "ASYNC-DATA-LOSS" in per_site.blockers
    (loss,) = found(result, "ASYNC-DATA-LOSS", "per_site_clusters")
    assert loss.severity == "blocker" and loss.remedy == "requirement"
    assert "about 7.3 ms of commits at p99" in loss.message  # 5 + 0.52 + 1.76
    assert "only one synchronous Galera cluster" in loss.message
    # Nothing is viable; a witness site (1.5) costs less than a looser requirement (4).
    assert result.architecture == "single_cluster"
    assert "a tie-breaker" in result.summary


def test_no_data_loss_allowed_rules_out_grouped_clusters_too():
    text = """
        name: three
        requirements: {survive: site, max_data_loss_s: 0}
        sites: [{name: a}, {name: b}, {name: c}]
        links:
          - {sites: [a, b], measurements: [{method: icmp, samples_ms: [1]}]}
          - {sites: [a, c], measurements: [{method: icmp, samples_ms: [30]}]}
          - {sites: [b, c], measurements: [{method: icmp, samples_ms: [30]}]}
        """
    result = run(text)
    asynchronous = [o for o in result.options if o.clusters > 1]
    assert asynchronous and all("ASYNC-DATA-LOSS" in o.blockers for o in asynchronous)
    assert result.architecture == "single_cluster" and option(result, "single_cluster").viable


def test_two_plus_one_nodes_fail_over_instead_of_a_quorum_blocker():
    result = run(two_dcs(a_nodes=2, b_nodes=1))
    assert result.architecture == "per_site_clusters"
    per_site = option(result, "per_site_clusters")
    assert per_site.viable and per_site.blockers == [] and per_site.survives_site_loss
    assert not found(result, "QUORUM-NODE-LOSS")
    warnings = found(result, "FAILOVER-NODE-LOSS", "per_site_clusters")
    assert [w.values["cluster"] for w in warnings] == ["a", "b"]
    assert all(w.severity == "warning" for w in warnings)
    # RPO: 5 + 0.524288 ms + the apply in a's two-node cluster, the slower way (b's lone
    # node applies in 1 ms); RTO: 15.8 + 60 s + the lag.
    first = warnings[0]
    rpo_ms = 5 + 0.524288 + apply_p99_ms(two_dcs(a_nodes=2, b_nodes=1), "a")
    assert first.values["rpo_ms"] == pytest.approx(rpo_ms, abs=1e-4)  # the LAN p99 in 4 places
    assert first.values["rto_s"] == pytest.approx(75.8 + rpo_ms / 1000, abs=1e-6)
    assert "about 7.0 ms of commits at p99" in first.message and "up to 76 s" in first.message
    # The single cluster still cannot survive losing a (2 of 3 votes).
    assert option(result, "single_cluster").blockers == ["QUORUM-SITE-LOSS"]


def test_a_lone_pair_of_nodes_with_nowhere_to_go_still_blocks():
    result = run("name: one\nsites: [{name: a, nodes: 2}]\n")
    assert [f.rule for f in found(result, "QUORUM-NODE-LOSS", "single_cluster")] == [
        "QUORUM-NODE-LOSS"
    ]


@pytest.mark.parametrize(
    ("p99_bytes", "bandwidth_mbps", "lag_ms"),
    [
        # 80 / 2 + p99 write set x 8 / bandwidth, + the apply (below), no load.
        (16_000, 100, 40 + 1.28),
        (64_000, 100, 40 + 5.12),
        (64_000, 1000, 40 + 0.512),
    ],
)
def test_data_at_risk_grows_with_the_write_set_and_shrinks_with_bandwidth(
    p99_bytes, bandwidth_mbps, lag_ms
):
    text = f"""
        name: lag
        requirements: {{survive: site}}
        sites: [{{name: a}}, {{name: b}}]
        links:
          - {{sites: [a, b], bandwidth_mbps: {bandwidth_mbps},
              measurements: [{{method: icmp, samples_ms: [80]}}]}}
        workload: {{writeset_bytes: {{p50: 2000, p99: {p99_bytes}}}}}
        """
    per_site = analyse(parse_topology(textwrap.dedent(text))).option("per_site_clusters")
    lag_ms += apply_p99_ms(text, "b")
    assert per_site.data_at_risk_s == pytest.approx(lag_ms / 1000, abs=1e-5)


def test_data_at_risk_queues_as_the_replicated_bytes_approach_the_bandwidth():
    # 10 MB/s at 1,250 commits/s (8,000 B on average) on 100 Mbit/s: rho 0.8, the p99 wait
    # 14.0225 ms on top of 40 + 5.12 + 1 (BANDWIDTH blocks it too: 80 % > 70 %).
    text = """
        name: loaded
        requirements: {survive: site}
        sites: [{name: a}, {name: b}]
        links:
          - {sites: [a, b], bandwidth_mbps: 100, measurements: [{method: icmp, samples_ms: [80]}]}
        workload:
          writeset_bytes: {p50: 2000, p99: 64000}
          commits_per_s: {peak: 1250}
          replicated_bytes_per_s: {peak: 10000000}
        """
    analysis = analyse(parse_topology(textwrap.dedent(text)))
    (link,) = analysis.option("per_site_clusters").async_links
    assert link.utilisation == pytest.approx(0.8)
    parts = link.lag_p99_parts_ms
    assert parts["queue"] == pytest.approx(14.0225, abs=1e-4)
    # The appliers: 1,250 commits/s at about 1.42 ms each keep 1.8 busy; MariaDB's SQL thread
    # alone cannot, so the design runs the fewest whose p99 wait stays within a p99 apply.
    assert (link.applier_threads, link.applier_threads_needed) == (5, 5)
    busy = 1250 * link.apply_ms / 1000 / 5
    wait_ms = link.apply_ms / 5 / (1 - busy) * math.log(busy / 0.01)
    assert parts["apply_queue"] == pytest.approx(wait_ms, rel=1e-9)
    assert parts["apply_queue"] <= parts["apply"]
    assert link.lag_ms["p99"] == pytest.approx(
        40 + 5.12 + 14.0225 + wait_ms + parts["apply"], abs=1e-3
    )


def test_a_pair_of_far_sites_without_a_tie_breaker_ranks_behind_per_site_clusters():
    # Three sites 20 ms apart; a's row needs a LAN commit. Grouping b with c (no third vote)
    # is viable, by failover, and has fewer clusters, but fails over on 4 single failures
    # (losing a, b or c, or cutting b-c) where per-site clusters fail over on 3. And its
    # replica of a's commits applies each update of "stock" as a commit in b + c, about
    # 21 ms: at most about 47 a second against 200, so its loss on a failure is unbounded.
    text = """
        name: three-far
        requirements: {survive: site}
        sites: [{name: a}, {name: b}, {name: c}]
        links:
          - {sites: [a, b], measurements: [{method: icmp, samples_ms: [20]}]}
          - {sites: [a, c], measurements: [{method: icmp, samples_ms: [20]}]}
          - {sites: [b, c], measurements: [{method: icmp, samples_ms: [20]}]}
        workload:
          hot_rows: [{name: "stock", updates_per_s: 200, writer_sites: [a]}]
        """
    result = run(text)
    grouped = option(result, "grouped_clusters")
    assert grouped.groups == [["a"], ["b", "c"]] and grouped.viable
    assert [
        f.values["cluster"] for f in found(result, "FAILOVER-SITE-LOSS", "grouped_clusters")
    ] == ["b, c"]
    assert result.architecture == "per_site_clusters"
    assert grouped.survives_site_loss is None and grouped.data_at_risk_unbounded
    assert grouped.data_at_risk_reason.startswith(
        "the asynchronous channel a-b cannot keep up with the peak: row stock is updated 200 "
        "times a second, and its updates apply one after another at 21."
    )
    assert "grouped_clusters keeps writing on every failure only by losing an unbounded " in (
        result.summary
    )
    assert "would also work" not in result.summary
    (capacity,) = found(result, "ASYNC-APPLY-CAPACITY", "grouped_clusters")
    assert capacity.severity == "warning" and "More appliers do not help" in capacity.message
    per_site = option(result, "per_site_clusters")
    assert per_site.survives_site_loss and not per_site.data_at_risk_unbounded
