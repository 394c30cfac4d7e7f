"""advisor.model.quorum by hand: which single failures leave no primary component.

A partition stays primary only with more than half of the total weight (DOMAIN.md 4).
"""

from __future__ import annotations

import pytest

from advisor.model.quorum import Failure, node_loss_failures, site_failures


def test_two_equal_sites_fail_on_either_loss_and_on_the_cut():
    # 3 + 3 = 6 votes: each side alone holds 3/6 = 50%, not more than half.
    failures = site_failures({"a": 3, "b": 3}, {"a", "b"})
    assert failures == [
        Failure("loss of site a", 0.5),
        Failure("loss of site b", 0.5),
        Failure("cut of link a-b", 0.5),
    ]


def test_a_failure_describes_itself_in_votes():
    assert Failure("loss of site a", 0.5).describe() == (
        "loss of site a leaves at most 50% of the votes with the writers, not a majority"
    )


def test_two_plus_two_plus_a_witness_survives_every_single_failure():
    # 5 votes: losing a or b leaves 3/5 = 60%, losing w leaves 4/5; with three sites a cut
    # is relayed through the third, so no link cut partitions.
    assert site_failures({"a": 2, "b": 2, "w": 1}, {"a", "b"}) == []


def test_weights_favouring_a_primary_site_survive_the_secondary_loss_only():
    # Primary p: 2 nodes of weight 2 = 4; secondary s: 2 nodes of weight 1 = 2; total 6.
    # Loss of s leaves 4/6; loss of p leaves 2/6 = 33%; the cut leaves p with 4/6.
    failures = site_failures({"p": 4, "s": 2}, {"p", "s"})
    assert failures == [Failure("loss of site p", pytest.approx(1 / 3))]


def test_a_cut_that_strands_the_only_writers_on_the_light_side_fails():
    # Writers only at s (2 of 6 votes): after the cut p keeps a majority but no writer.
    # The loss of s itself is not a quorum problem: nobody is left to write.
    failures = site_failures({"p": 4, "s": 2}, {"s"})
    assert failures == [
        Failure("loss of site p", pytest.approx(1 / 3)),
        Failure("cut of link p-s", pytest.approx(1 / 3)),
    ]


def test_losing_the_only_writing_site_is_not_reported():
    # Writers only at a: a's loss is skipped; b's loss leaves a with 3/6.
    failures = site_failures({"a": 3, "b": 3}, {"a"})
    assert [f.event for f in failures] == ["loss of site b", "cut of link a-b"]


def test_a_cluster_without_votes_fails_outright():
    assert site_failures({"a": 0}, {"a"}) == [Failure("a cluster with no votes", 0.0)]


def test_a_two_node_cluster_fails_on_the_loss_of_either_node():
    # 1 + 1 = 2 votes; losing one leaves 1, not more than 1.
    failures = node_loss_failures({"a": [1], "b": [1]})
    assert failures == [
        Failure("loss of one node at a", 0.5),
        Failure("loss of one node at b", 0.5),
    ]


def test_two_nodes_at_one_site_fail_on_a_node_loss():
    assert node_loss_failures({"a": [1, 1]}) == [Failure("loss of one node at a", 0.5)]


def test_three_votes_survive_a_node_loss():
    # 3 votes, 2 left > 1.5; a garbd counts as one vote.
    assert node_loss_failures({"a": [1, 1, 1]}) == []
    assert node_loss_failures({"a": [1], "b": [1], "w": [1]}) == []


def test_node_loss_removes_the_heaviest_member_of_the_site():
    # a: weights 3 and 1, b: 1; total 5. Losing a's weight-3 node leaves 2/5 = 40%.
    # Losing b's node leaves 4/5.
    assert node_loss_failures({"a": [3, 1], "b": [1]}) == [
        Failure("loss of one node at a", pytest.approx(0.4))
    ]


def test_a_site_without_members_is_skipped():
    assert node_loss_failures({"a": [1, 1, 1], "empty": []}) == []


def test_a_heavy_site_lost_from_three_fails_but_no_single_cut_does():
    # a 4 votes, b 1, c 1 (6): losing a leaves b and c with 2/6 = 33%. A cut of any one link
    # of three sites is relayed through the third (no bridge), so no cut is a failure.
    failures = site_failures({"a": 4, "b": 1, "c": 1}, {"b", "c"})
    assert failures == [Failure("loss of site a", pytest.approx(1 / 3))]
