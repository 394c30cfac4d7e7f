"""advisor.engine.evaluator and metrics on small topologies with point round trips.

Every inter-site link is one ICMP sample, so each draw is that RTT exactly; each site's LAN
is a single 0.2 ms value, and segments are off (``gmcast.segment: 0``, as the lab ran).
The write set (default p50 2,048 B) crosses a link as a warm TCP request/response with a
128 B acknowledgement: RTT + (2048 + 128) x 8 bit / 1 Gbit/s = RTT + 0.017408 ms between
sites, and LAN + 0.0017408 ms inside a site (10 Gbit/s).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import yaml

from advisor.engine.evaluator import Evaluator
from advisor.engine.evidence import gather_links
from advisor.engine.metrics import Throughput
from advisor.engine.workload import writeset_sizes
from advisor.inputs.loading import parse_topology

WAN_EXTRA = 0.017408  # 2,176 B at 1 Gbit/s [ms]
LAN_EXTRA = 0.0017408  # 2,176 B at 10 Gbit/s [ms]


def evaluator(sites, rtt_ms, *, survive="node", draws=64, **sections):
    """``sites``: name -> site fields; ``rtt_ms``: "a-b" -> point RTT. Write sets are 2 KB
    unless ``workload`` says otherwise, so that every draw costs the same by hand."""
    workload = sections.pop("workload", {})
    sections["workload"] = {"writeset_bytes": {"p50": 2048, "p99": 2048}, **workload}
    topology = {
        "name": "test",
        "requirements": {"survive": survive},
        "sites": [{"name": n, "lan_rtt_ms": 0.2, **fields} for n, fields in sites.items()],
        "links": [
            {"sites": pair.split("-"), "measurements": [{"method": "icmp", "samples_ms": [ms]}]}
            for pair, ms in rtt_ms.items()
        ],
        "galera": {"provider_options": {"gmcast.segment": 0}},
        **sections,
    }
    loaded = parse_topology(yaml.safe_dump(topology, sort_keys=False))
    sizes = writeset_sizes(loaded.topology)
    return Evaluator(loaded.topology, gather_links(loaded), writeset_bytes=sizes, draws=draws)


TWO_SINGLE_NODES = ({"a": {"nodes": 1}, "b": {"nodes": 1}}, {"a-b": 10.0})
THREE_SITES = ({"a": {}, "b": {}, "c": {}}, {"a-b": 10.0, "a-c": 20.0, "b-c": 20.0})


# -- clusters ------------------------------------------------------------------------------


def test_two_single_nodes_commit_in_one_write_set_round_trip():
    # (10.017408 - 5) + 0 + 5 + 1 ms local = 11.017408
    cluster = evaluator(*TWO_SINGLE_NODES).cluster(["a", "b"])
    assert cluster.commit_percentiles("a")["p50"] == pytest.approx(11.0174, abs=1e-4)


def test_two_single_nodes_cannot_survive_a_node_loss_without_an_arbitrator_site():
    # No garbd site: the writer's site a is weighted (2 against 1), so only its node's loss
    # stops the cluster; b's node may be bootstrapped then.
    cluster = evaluator(*TWO_SINGLE_NODES).cluster(["a", "b"])
    assert [f.event for f in cluster.node_failures] == ["loss of one node at a"]
    assert cluster.arbitrator is None
    assert cluster.unfixable_by_arbitrator
    assert cluster.weights == {"a": 2} and cluster.bootstrap_sites == ("b",)


def test_two_equal_sites_without_a_witness_keep_only_the_weighted_sites_failure():
    # 3 + 3 nodes, no witness: a (the writer's site) gets pc.weight 2 a node, 6 votes of 9,
    # so b's loss and the cut leave a primary; a's loss leaves b 3 of 9.
    ev = evaluator({"a": {}, "b": {}}, {"a-b": 10.0}, survive="site")
    cluster = ev.cluster(["a", "b"])
    assert [f.event for f in cluster.site_failures] == ["loss of site a"]
    assert cluster.unfixable_by_arbitrator
    assert cluster.weights == {"a": 3 // 3 + 1}


def test_weights_the_user_gives_are_kept_as_given():
    ev = evaluator({"a": {"weight": 1}, "b": {}}, {"a-b": 10.0}, survive="site")
    cluster = ev.cluster(["a", "b"])
    assert cluster.weights == {}
    assert [f.event for f in cluster.site_failures] == [
        "loss of site a",
        "loss of site b",
        "cut of link a-b",
    ]


ARBITRATED = {
    "a": {"nodes": 2},
    "b": {"nodes": 2},
    "w": {"nodes": 0, "writes": False, "arbitrator": True},
}


def test_an_arbitrator_is_placed_where_quorum_fails_and_its_cost_is_recorded():
    # 2 + 2 nodes: losing a site leaves 50%. garbd at w: 5 votes, any loss leaves >= 3.
    # Without garbd, a and b alike: a -> b (10.0174 - 5) -> b' (0.1) -> a (5) = 10.1174, + 1.
    # With garbd at w (a-w 4, b-w 14), writer a: a -> b (5.0174) -> w (7) -> a (2) = 14.0174;
    # ProxySQL's one writer is a (the first writing site): b's commits run there, + 10 ms
    # round trip. Cost at the writer: 15.0174 - 11.1174 = 3.9 ms.
    ev = evaluator(ARBITRATED, {"a-b": 10.0, "a-w": 4.0, "b-w": 14.0}, survive="site")
    cluster = ev.cluster(["a", "b"])
    assert cluster.arbitrator == "w"
    assert cluster.site_failures == () and cluster.node_failures == ()
    assert cluster.members == ("a", "b", "w")
    assert {link.sites for link in cluster.links} == {("a", "b"), ("a", "w"), ("b", "w")}
    assert cluster.commit_percentiles("a")["p50"] == pytest.approx(15.0174, abs=1e-4)
    assert cluster.writer_site == "a"
    assert cluster.commit_percentiles("b")["p50"] == pytest.approx(25.0174, abs=1e-4)
    assert cluster.arbitrator_cost_ms == pytest.approx(3.9, abs=1e-4)


def test_the_arbitrator_goes_where_it_costs_the_least():
    # Near witness (a-w 4, b-w 6): a -> b (5.0174) -> b' (0.1) -> a (5) still dominates:
    # cost 0. Far witness (30 ms from both): a -> v (15.0174) -> b (15) -> a (5) = 35.0174.
    sites = {**ARBITRATED, "v": {"nodes": 0, "writes": False, "arbitrator": True}}
    rtt = {"a-b": 10.0, "a-w": 4.0, "b-w": 6.0, "a-v": 30.0, "b-v": 30.0, "w-v": 30.0}
    cluster = evaluator(sites, rtt, survive="site").cluster(["a", "b"])
    assert cluster.arbitrator == "w"
    assert cluster.arbitrator_cost_ms == pytest.approx(0.0, abs=1e-4)


def test_window_limit_uses_the_commit_round_and_the_flavours_send_window():
    # Under load the queue drains with MariaDB's send_window 4 over a round of
    # 11.0174 - 1 = 10.0174 ms; 32728 // 2048 = 15 write sets of 2 KB share a message, so
    # 4 / 0.0100174 x 15 = 5989.6/s.
    cluster = evaluator(*TWO_SINGLE_NODES).cluster(["a", "b"])
    assert cluster.send_window == 4
    assert cluster.writesets_per_message == 15.0
    assert cluster.safe_period_ms == pytest.approx(10.0174, abs=1e-4)
    assert cluster.window_limit_commits_per_s == pytest.approx(4 / 0.0100174 * 15, rel=1e-5)


def test_lan_commit_of_a_three_node_site():
    # Inside one site, 3 nodes, LAN 0.2: (0.2017408 - 0.1) + 0.1 + 0.1 + 1 = 1.3017408.
    ev = evaluator(*THREE_SITES)
    lan = ev.lan_commit_ms("a")
    assert set(lan) == {"p50", "p95", "p99", "p999", "max"}
    assert lan["p50"] == pytest.approx(1.3017, abs=1e-4)
    assert lan["max"] == pytest.approx(1.3017, abs=1e-4)


def test_lan_commit_of_a_site_that_does_not_write_is_the_local_commit():
    sites = {"a": {}, "b": {"writes": False}}
    ev = evaluator(sites, {"a-b": 10.0}, workload={"local_commit_ms": 2.5})
    assert ev.lan_commit_ms("b") == dict.fromkeys(("p50", "p95", "p99", "p999", "max"), 2.5)


# -- options -------------------------------------------------------------------------------


def test_option_groups_follow_the_declaration_order():
    ev = evaluator(*THREE_SITES)
    assert ev.option("per_site_clusters", [["c"], ["a"], ["b"]]).groups == (
        ("a",),
        ("b",),
        ("c",),
    )
    grouped = ev.option("grouped_clusters", [["b"], ["c", "a"]])
    assert grouped.groups == (("a", "c"), ("b",))
    assert grouped.cluster_of("c") == 0 and grouped.cluster_of("b") == 1


def test_three_sites_commit_over_the_longest_path():
    # 3 nodes a site; writer a: a -> b (10.0174 - 5) -> c (10) -> a (10) = 25.0174, + 1.
    # ProxySQL's one writer is at a: c's commits run there and add c-a's 20 ms round trip.
    option = evaluator(*THREE_SITES).option("single_cluster", [["a", "b", "c"]])
    (cluster,) = option.clusters
    assert cluster.commit_percentiles("a")["p50"] == pytest.approx(26.0174, abs=1e-4)
    assert option.commit_latency_ms["p50"] == pytest.approx(46.0174, abs=1e-4)


HOT = {
    "hot_rows": [
        {"name": "r", "updates_per_s": 10, "writer_sites": ["b", "a"]},
        {"name": "d", "updates_per_s": 5},
    ]
}


def test_a_hot_row_is_owned_by_its_first_writer_site_and_routed_there():
    option = evaluator(*THREE_SITES, workload=HOT).option(
        "per_site_clusters", [["a"], ["b"], ["c"]]
    )
    row, default = option.hot_rows
    assert (row.owner, row.cluster, row.spans_clusters) == ("b", 1, True)
    assert row.routed_rtt_ms == {"a": pytest.approx(10.0)}  # a-b RTT p50
    # Without writer_sites: every writing site in declaration order, a first.
    assert default.writer_sites == ("a", "b", "c")
    assert default.owner == "a"
    assert default.routed_rtt_ms == {"b": pytest.approx(10.0), "c": pytest.approx(20.0)}
    # Owned by a per-site cluster: the LAN commit, 1.3017 ms; its bound 1000 / 1.3017.
    assert row.commit_ms["p50"] == pytest.approx(1.3017, abs=1e-4)
    assert row.bound_p50_per_s == pytest.approx(768.2, abs=0.1)


def test_a_hot_row_written_at_two_sites_of_one_cluster_conflicts():
    # Were b and a to write on their own members: r's 10/s split 5 + 5, each within the
    # writer's commit, 26.0174 ms: 2 x 5 x (1 - exp(-5 x 0.0260174)) = 1.2198 conflicts/s.
    # Under one writer (at a, the first writing site) b's statements go to a: 10 ms.
    option = evaluator(*THREE_SITES, workload=HOT).option("single_cluster", [["a", "b", "c"]])
    row = option.hot_rows[0]
    assert not row.spans_clusters and row.routed_rtt_ms == {"b": pytest.approx(10.0)}
    assert row.commit_ms["p50"] == pytest.approx(26.0174, abs=1e-4)
    assert row.conflicts_per_s == pytest.approx(1.2198, abs=1e-4)


def test_a_partial_option_judges_only_the_rows_its_groups_own():
    # The group {b} owns r (owner b), not d (owner a).
    option = evaluator(*THREE_SITES, workload=HOT).option("grouped_clusters", [["b"]])
    assert [row.row.name for row in option.hot_rows] == ["r"]


FOUR = (
    {"a1": {}, "a2": {}, "b1": {}, "b2": {}},
    {
        "a1-a2": 1.0,
        "b1-b2": 1.0,
        "a1-b1": 50.0,
        "a1-b2": 40.0,
        "a2-b1": 30.0,
        "a2-b2": 45.0,
    },
)


def test_an_async_link_runs_between_the_nearest_pair_of_two_clusters():
    # a2-b1 at 30 ms is the nearest cross pair; lag 30 / 2 + 2,048 B x 8 / 1 Gbit/s + the
    # apply, a commit in the receiving cluster at the replica's site: 1 ms of local work and
    # the commit's path over the 1 ms b1-b2 link (2 KB write sets throughout, point RTTs: the
    # same in every draw; no load: no queue).
    built = evaluator(*FOUR)
    option = built.option("grouped_clusters", [["a1", "a2"], ["b1", "b2"]])
    (link,) = option.async_links
    assert link.clusters == (0, 1)
    assert link.sites == ("a2", "b1")
    assert link.rtt_ms == {"p50": 30.0, "p99": 30.0}
    apply_ms, apply_p99_ms, _ = built.clusters.lone_commit(("b1", "b2"), "b1")
    assert apply_p99_ms == apply_ms  # point round trips: every draw alike
    assert 1.0 + 1.0 < apply_ms < 1.0 + 1.0 + 2 * 0.2
    lag_ms = 15.0 + 0.016384 + apply_ms
    # (a cluster's reported percentiles are rounded to 0.1 us; the other way's are not)
    assert link.lag_ms == pytest.approx({"p50": lag_ms, "p99": lag_ms}, abs=1e-4)
    assert link.lag_p99_parts_ms == pytest.approx(
        {
            "one_way": 15.0,
            "serialisation": 0.016384,
            "queue": 0.0,
            "apply_queue": 0.0,
            "apply": apply_ms,
        },
        abs=1e-4,
    )
    assert option.data_at_risk_s == pytest.approx(lag_ms / 1000, abs=1e-7)


def test_one_cluster_has_no_async_links_and_nothing_at_risk():
    option = evaluator(*FOUR).option("single_cluster", [["a1", "a2", "b1", "b2"]])
    assert option.async_links == ()
    assert option.data_at_risk_s is None


CLIENTS = {"clients": {"concurrency": 10, "baseline_txn_latency_ms": 20.0}}


def test_clients_queue_for_the_user_window():
    # 10 clients with 20 ms transactions (19 ms of think time beyond the 1 ms LAN commit) at a
    # 10 ms path, 1 KB write sets: beyond 2 messages in flight a write set queues until the
    # next arrival from the peer; commits wait beyond a lone commit (11.0 ms), so the send
    # window is what limits, and the rate stays below 10 / 30.0 ms = 333/s.
    workload = {**CLIENTS, "writeset_bytes": {"p50": 1000, "p99": 1000}}
    option = evaluator(*TWO_SINGLE_NODES, workload=workload).option("single_cluster", [["a", "b"]])
    got = option.throughput
    assert isinstance(got, Throughput)
    assert got.limited_by == "send window"
    assert 250.0 < got.commits_per_s < 10 / 0.0300174


def test_throughput_limited_by_commit_latency_with_a_wide_window():
    # Windows 512/512: no queue; each client: 19 ms think (exponential) + 11.0174 ms commit.
    sites, rtt = TWO_SINGLE_NODES
    wide = {"evs.send_window": 512, "evs.user_send_window": 512}
    ev = evaluator(
        sites,
        rtt,
        workload={**CLIENTS, "writeset_bytes": {"p50": 1000, "p99": 1000}},
        galera={"provider_options": {"gmcast.segment": 0, **wide}},
    )
    got = ev.option("single_cluster", [["a", "b"]]).throughput
    assert got is not None
    assert got.limited_by == "commit latency"
    assert got.commits_per_s == pytest.approx(10 / 0.0300174, rel=0.05)


def test_no_clients_no_throughput():
    assert evaluator(*TWO_SINGLE_NODES).option("single_cluster", [["a", "b"]]).throughput is None


def test_evaluated_metrics_are_frozen():
    option = evaluator(*TWO_SINGLE_NODES, workload=CLIENTS).option("single_cluster", [["a", "b"]])
    assert option.throughput is not None
    for frozen, field in (
        (option, "groups"),
        (option.clusters[0], "arbitrator"),
        (option.throughput, "commits_per_s"),
    ):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(frozen, field, None)


def test_clusters_are_evaluated_once_per_set_of_sites():
    ev = evaluator(*THREE_SITES)
    assert ev.cluster(["a", "b"]) is ev.cluster(["b", "a"])


def test_pair_draws_are_shared_by_every_cluster():
    ev = evaluator(*THREE_SITES, draws=16)
    small, writeset = ev.pairs("a", "b")
    assert small.shape == (16,)
    assert np.allclose(small, 10.0) and np.allclose(writeset, 10.0 + WAN_EXTRA)
    assert ev.pairs("b", "a")[0] is small
    lan_small, lan_writeset = ev.pairs("c", "c")
    assert np.allclose(lan_small, 0.2) and np.allclose(lan_writeset, 0.2 + LAN_EXTRA)
