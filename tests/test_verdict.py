"""advisor.verdict: the ranking, remedy costs, the choice, its summary and what would change it.

Most tests build options by hand (one writer per cluster, constant commit draws), so each
number in a summary is one written here; ``what_would_change`` runs a whole topology.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from advisor import verdict
from advisor.engine.metrics import AsyncLink, ClusterEval, Option
from advisor.inputs.loading import parse_topology
from advisor.recommendation import recommend
from advisor.result import Finding
from advisor.rules.pack import Rule, load_rules


def cluster(sites, p50, p99, *, arbitrator=None):
    writer = sites[0]
    percentiles = {"p50": p50, "p95": p99, "p99": p99, "p999": p99, "max": p99}
    return ClusterEval(
        sites=tuple(sites),
        arbitrator=arbitrator,
        writers=(writer,),
        commit_ms={writer: np.full(4, p50)},
        commit_by_site_ms={writer: percentiles},
        site_failures=(),
        node_failures=(),
        links=(),
        send_window=4,
        user_window=2,
        fragment_bytes=32_728,
        first_reply_draws_ms={writer: np.full(4, p50 - 1.0)},
        writesets_per_message=1.0,
        local_commit_ms=1.0,
        window_limit_commits_per_s=1e6,
    )


SINGLE = Option(
    "single_cluster", (("a", "b"),), (cluster(["a", "b"], 11.1174, 12.04, arbitrator="w"),)
)
PER_SITE = Option(
    "per_site_clusters",
    (("a",), ("b",)),
    (cluster(["a"], 1.3017, 1.75), cluster(["b"], 1.3017, 1.75)),
    async_links=(
        AsyncLink((0, 1), ("a", "b"), {"p50": 80.0, "p99": 80.0}, {"p50": 41.0, "p99": 41.0}),
    ),
)


def blocker(rule, option, subject="a"):
    return Finding(rule=rule, severity="blocker", subject=subject, option=option, message="...")


def rule(rule_id, cost):
    return Rule(rule_id, rule_id.title(), "blocker", "...", "...", remedy_cost=cost)


# Remedy costs written here so that the arithmetic below does not follow the shipped pack.
PACK = {"QUORUM-SITE-LOSS": rule("QUORUM-SITE-LOSS", 1), "SLO": rule("SLO", 3)}


# -- rank ----------------------------------------------------------------------------------


def test_rank_puts_a_viable_option_first():
    # Costs 3, 0, 0: the first viable is index 1, though index 0 has fewer clusters.
    assert verdict.rank([3, 0, 0], [1, 2, 3], [10.0, 5.0, 1.0]) == 1


def test_rank_prefers_the_fewest_clusters_among_the_viable():
    assert verdict.rank([0, 0, 0], [3, 1, 2], [1.0, 50.0, 5.0]) == 1


def test_rank_breaks_equal_clusters_by_the_lowest_commit():
    assert verdict.rank([0, 0], [2, 2], [10.0, 5.0]) == 1


def test_rank_ties_go_to_the_first_option():
    assert verdict.rank([0, 0, 0], [2, 2, 2], [5.0, 5.0, 5.0]) == 0


def test_rank_prefers_the_cheapest_remedy_when_nothing_is_viable():
    # Cost 1 with 3 clusters beats cost 3 with 1 cluster.
    assert verdict.rank([3, 1], [1, 3], [1.0, 9.0]) == 1


def test_rank_prefers_fewer_failovers_before_fewer_clusters():
    # Both viable: 2 clusters failing over on 4 failures lose to 3 failing over on 3.
    assert verdict.rank([0, 0], [2, 3], [20.0, 1.0], [4, 3]) == 1
    # Without failovers given, none anywhere: the fewest clusters again.
    assert verdict.rank([0, 0], [2, 3], [20.0, 1.0]) == 0
    # Cost still comes first: a viable option with failovers beats a blocked one without.
    assert verdict.rank([1, 0], [1, 2], [5.0, 1.0], [0, 2]) == 1


def test_rank_is_vectorised_over_points():
    # Options in rows, points in columns. Point 0: both viable, option 0 has 1 cluster.
    # Point 1: option 0 costs 3, option 1 is viable. Point 2: both cost 3: fewer clusters.
    cost = [[0, 3, 3], [0, 0, 3]]
    commit = [[10.0, 30.0, 50.0], [2.0, 2.0, 2.0]]
    assert verdict.rank(cost, [1, 2], commit).tolist() == [0, 1, 0]


# -- remedy cost and choice ----------------------------------------------------------------


def test_remedy_cost_adds_each_distinct_rule_once():
    # SLO twice (two sites) counts once: 3 + 1 = 4.
    assert verdict.remedy_cost(["SLO", "QUORUM-SITE-LOSS", "SLO"], PACK) == 4
    assert verdict.remedy_cost([], PACK) == 0


def test_remedy_cost_reads_the_shipped_rule_files():
    # A witness decision (1) before bandwidth (2) before physics (3): DESIGN of verdict.py.
    rules = load_rules()
    assert verdict.remedy_cost(["QUORUM-SITE-LOSS"], rules) == 1
    assert verdict.remedy_cost(["BANDWIDTH"], rules) == 2
    assert verdict.remedy_cost(["COMMIT-LATENCY-SLO"], rules) == 3
    assert verdict.remedy_cost(["QUORUM-SITE-LOSS", "COMMIT-LATENCY-SLO"], rules) == 4


def test_blockers_are_the_options_blocking_findings_only():
    warning = Finding(
        rule="X", severity="warning", subject="a", option="single_cluster", message=""
    )
    findings = [blocker("SLO", "single_cluster"), blocker("SLO", "per_site_clusters"), warning]
    assert verdict.blockers(SINGLE, findings) == [findings[0]]


def test_choose_the_fewest_clusters_when_all_are_viable():
    assert verdict.choose([PER_SITE, SINGLE], [], PACK) is SINGLE


def test_choose_the_cheapest_blockers_when_none_is_viable():
    # single: SLO (3); per_site: quorum (1). The cheaper remedy wins over fewer clusters.
    findings = [blocker("SLO", "single_cluster"), blocker("QUORUM-SITE-LOSS", "per_site_clusters")]
    assert verdict.choose([SINGLE, PER_SITE], findings, PACK) is PER_SITE


# -- summary -------------------------------------------------------------------------------


def test_summary_of_a_viable_choice():
    rules = load_rules()
    text = verdict.summary(SINGLE, [SINGLE, PER_SITE], [], rules)
    assert text == (
        "Recommended: one Galera cluster spanning every site (a+b+garbd@w). "
        "Commits take about 11.1 ms at the median and 12.0 ms at p99 at the slowest writing "
        "site. per_site_clusters would also work but needs 2 cluster(s) or slower commits."
    )


def test_summary_of_a_non_viable_choice_says_what_would_make_it_viable():
    rules = load_rules()
    findings = [
        blocker("COMMIT-LATENCY-SLO", "single_cluster"),
        blocker("MULTI-SITE-WRITES-ASYNC", "per_site_clusters", subject="r"),
    ]
    remedy = rules["MULTI-SITE-WRITES-ASYNC"].remedy.format(subject="r")
    text = verdict.summary(PER_SITE, [SINGLE, PER_SITE], findings, rules)
    assert text == (
        "No option meets every requirement. The least bad is a Galera cluster in each site, "
        "linked by asynchronous replication with ProxySQL in front (a; b), with 1 blocker(s) "
        f"left to resolve. To make it viable: {remedy}. "
        "Commits take about 1.30 ms at the median and 1.75 ms at p99 at the slowest writing "
        "site. single_cluster is ruled out by COMMIT-LATENCY-SLO; it would take moving sites "
        "closer. On losing a site, about 41.0 ms of recent commits may be lost (asynchronous "
        "links)."
    )


# -- what would change ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("limit", "predicted", "lan", "factor"),
    [
        (50.0, 30.0, 2.0, 48.0 / 28.0),  # (50 - 2) / (30 - 2) = 1.714
        (8.0, 11.1174, 1.3017, 6.6983 / 9.8157),  # (8 - 1.3017) / (11.1174 - 1.3017) = 0.682
        (1.0, 30.0, 2.0, 0.0),  # the limit is below the LAN part: no RTT meets it
        (5.0, 2.0, 2.0, float("inf")),  # no WAN part: nothing scales
        (5.0, 1.0, 2.0, float("inf")),  # a LAN slower than the prediction
    ],
)
def test_scale_is_the_wan_part_that_fits_under_the_limit(limit, predicted, lan, factor):
    assert verdict.scale_at_limit(limit, predicted, lan) == pytest.approx(factor)


def two_sites(slo_p99, hot_rows=""):
    return recommend(
        parse_topology(
            textwrap.dedent(
                f"""
                name: two
                requirements: {{survive: node, commit_latency_ms: {{p99: {slo_p99}}}}}
                sites:
                  - {{name: a, lan_rtt_ms: 0.2}}
                  - {{name: b, lan_rtt_ms: 0.2}}
                links:
                  - {{sites: [a, b], measurements: [{{method: icmp, samples_ms: [10.0]}}]}}
                galera: {{provider_options: {{gmcast.segment: 0}}}}
                workload: {{hot_rows: [{hot_rows}], writeset_bytes: {{p50: 2048, p99: 2048}}}}
                """
            )
        )
    )


def test_single_cluster_stops_being_viable_at_the_scaled_rtt():
    # 3 + 3 nodes, 10 ms: a -> b (10.0174 - 5) -> b' (0.1) -> a (5) + 1 = 11.1174 ms at the
    # writer a, 21.1174 ms at b (its statements cross to a); alone at a: 1.3017 ms.
    # (40 - 1.3017) / (21.1174 - 1.3017) = 1.95291, x 10 = 19.53 ms.
    (change,) = two_sites(40).what_would_change
    assert (change.quantity, change.unit, change.current) == ("worst_link_rtt_ms", "ms", 10.0)
    assert change.value == pytest.approx(19.53)
    assert change.message.startswith(
        "single_cluster stops being viable for latency when the worst inter-site RTT (p50) "
        "rises above 19.5 ms (now 10.0 ms), limited by commit p99 40 ms; on a typical path"
    )


def test_single_cluster_becomes_viable_below_the_scaled_rtt():
    # (8 - 1.3017) / (21.1174 - 1.3017) = 0.33801, x 10 = 3.38 ms.
    (change,) = two_sites(8).what_would_change
    assert change.value == pytest.approx(3.38)
    assert "becomes viable for latency when the worst inter-site RTT (p50) drops below 3.4 ms" in (
        change.message
    )


def test_a_hot_row_adds_its_bound_and_the_tighter_limit_binds():
    # Row at 40/s: limit 25 ms on its lock's hold (the writer's commit), factor
    # (25 - 1.3017) / 9.8157 = 2.414, looser than the SLO's (40 - 1.3017) / 19.8157 = 1.953.
    # Its bound: 1000 / 11.1174 = 89.95/s.
    rtt, row = two_sites(40, '{name: "h", updates_per_s: 40}').what_would_change
    assert rtt.value == pytest.approx(19.53)
    assert (row.quantity, row.unit, row.current) == ("hot_row_rate:h", "1/s", 40.0)
    assert row.value == pytest.approx(89.95)
    assert row.message == (
        'single_cluster carries "h" up to 89.9 updates/s (one per 11.1 ms commit); it needs 40/s.'
    )


def test_a_ruled_out_option_is_told_its_lever_and_flip_value():
    # SINGLE breaks a p99 SLO of 8 ms at 12.04 ms, LAN base 1.3017 ms, worst link 10 ms:
    # (8 - 1.3017) / (12.04 - 1.3017) = 0.62377 of every RTT, 6.24 ms on the worst link.
    rules = load_rules()
    topology = parse_topology(
        "name: t\nrequirements: {commit_latency_ms: {p99: 8}}\nsites: [{name: a}, {name: b}]\n"
    ).topology
    inputs = verdict.LeverInputs(topology, lan_commit_p50_ms=1.3017, worst_link_p50_ms=10.0)
    findings = [blocker("COMMIT-LATENCY-SLO", "single_cluster")]
    text = verdict.summary(PER_SITE, [SINGLE, PER_SITE], findings, rules, inputs)
    assert (
        "single_cluster is ruled out by COMMIT-LATENCY-SLO; it would take moving sites closer "
        "(worst round trip below 6.2 ms, now 10.0)."
    ) in text
    (lever,) = verdict.what_would_change([SINGLE, PER_SITE], findings, rules, inputs, PER_SITE)
    assert (lever.quantity, lever.value, lever.current) == ("worst_link_rtt_ms", 6.24, 10.0)
    assert lever.option == "single_cluster"


def test_without_a_round_trip_that_meets_it_the_rtt_is_no_lever():
    # A limit below the LAN part: no RTT meets it, and nothing else is known to: the kind of
    # remedy in words, as without inputs.
    rules = load_rules()
    topology = parse_topology(
        "name: t\nrequirements: {commit_latency_ms: {p99: 1}}\nsites: [{name: a}, {name: b}]\n"
    ).topology
    inputs = verdict.LeverInputs(topology, lan_commit_p50_ms=1.3017, worst_link_p50_ms=10.0)
    findings = [blocker("COMMIT-LATENCY-SLO", "single_cluster")]
    assert verdict.what_would_change([SINGLE, PER_SITE], findings, rules, inputs) == []
    text = verdict.summary(PER_SITE, [SINGLE, PER_SITE], findings, rules, inputs)
    assert "it would take moving sites closer." in text
