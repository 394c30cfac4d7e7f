"""The design documents' "slowest member" section (issue 23): for each cluster whose members
differ in apply cost, its slowest member, that member's capacity, the cap against the peak,
the pause share as a floor and FLOW-CONTROL's remedies; absent when every site costs the same."""

from __future__ import annotations

import pytest

from advisor.analysis import analyse
from advisor.documents.context import document_context
from advisor.documents.render import render_documents
from advisor.inputs.loading import parse_topology
from tests.test_flow_control import SLOW_DR, _topology


@pytest.fixture(scope="module")
def slow():
    return analyse(parse_topology(_topology(SLOW_DR)))


def test_the_slow_site_is_named_with_its_capacity_cap_and_floor(slow):
    (member,) = document_context(slow)["slowest_members"]
    assert member["cluster"] == "a, b, c"  # single_cluster's one cluster; the others are equal
    assert member["costs_ms"] == {"a": 1.0, "b": 1.0, "c": 20.0}
    assert member["site"] == "c"
    # the design's 4 appliers (600/s x 1 ms x 2 -> the floor of 4) over c's 20 ms
    assert member["applier_threads"] == 4
    assert member["capacity_per_s"] == pytest.approx(200.0)
    assert member["caps_peak"] is True
    assert member["pause_share"] == pytest.approx(1 - 200 / 600)
    assert member["options"] == ["single_cluster"]
    assert member["viable"] == {"single_cluster": False}
    assert [r[:4] for r in member["remedies"]] == ["(1) ", "(2) ", "(3) ", "(4) "]
    assert "wsrep_slave_threads=24" in member["remedies"][0]


def test_both_documents_carry_the_section(slow):
    files = render_documents(slow, ("md", "html"))
    md = " ".join(files["design.md"].split())
    assert "## The slowest member" in files["design.md"]
    assert "### Cluster a, b, c" in files["design.md"]
    assert "Apply cost of one write set per site: a 1.00 ms, b 1.00 ms, c 20.0 ms." in md
    assert "Slowest member: c, 4 applier threads at 20.0 ms each: it applies at most 200/s." in md
    assert "it caps the cluster at 200/s, paused by flow control at least 67 % of the time" in md
    assert "  - (4) c out of the cluster, as an asynchronous replica" in files["design.md"]
    html = " ".join(files["design.html"].split())
    assert '<h2 id="slowest">The slowest member</h2>' in html
    assert "<li>Slowest member: c, 4 applier threads at 20.0 ms each" in html
    assert "at least 67 % of the time (a floor" in html


def test_a_slow_site_that_keeps_up_says_so_without_remedies():
    # 4 threads / 6 ms = 667/s against the peak of 600/s: no cap, FLOW-CONTROL quiet
    analysis = analyse(parse_topology(_topology("{name: c, nodes: 3, local_commit_ms: 6}")))
    members = document_context(analysis)["slowest_members"]
    # every cluster that holds c with a faster site: all three, and a with c (grouped)
    assert [m["cluster"] for m in members] == ["a, b, c", "a, c"]
    assert [m["options"] for m in members] == [["single_cluster"], ["grouped_clusters"]]
    member = members[0]
    assert member["capacity_per_s"] == pytest.approx(4000 / 6)
    assert member["caps_peak"] is False and member["pause_share"] == 0.0
    assert member["remedies"] == []
    md = " ".join(render_documents(analysis, ("md",))["design.md"].split())
    assert "Against the peak of 600/s: it keeps up, no cap." in md


def test_equal_sites_have_no_section():
    analysis = analyse(parse_topology(_topology("{name: c, nodes: 3, local_commit_ms: 1.0}")))
    assert document_context(analysis)["slowest_members"] == []
    files = render_documents(analysis, ("md", "html"))
    assert "slowest member" not in files["design.md"].lower()
    assert 'id="slowest"' not in files["design.html"]
