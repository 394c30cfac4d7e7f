"""The first screen of the design documents, and the ADR's consequences, on real examples and
on hand-built options for the cases no example reaches."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from advisor.analysis import analyse
from advisor.documents import write_documents
from advisor.documents.context import document_context, pros_and_cons
from advisor.result import OptionReport, Recommendation
from advisor.text.report import render_recommendations, survives_text

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "examples").glob("*/topology.yaml"))


@cache
def context(name: str) -> dict[str, Any]:
    return document_context(analyse(REPO / "examples" / name / "topology.yaml"))


def _option(**changes: Any) -> OptionReport:
    base: dict[str, Any] = {
        "architecture": "per_site_clusters",
        "groups": [["a"], ["b"]],
        "viable": True,
        "commit_latency_ms": {"p50": 1.2, "p99": 1.7},
        "clusters": 2,
    }
    return OptionReport(**{**base, **changes})


def test_paris_frankfurt_first_screen() -> None:
    headline = context("paris-frankfurt")["headline"]
    assert headline["sentence"] == (
        "Run Galera clusters shared by nearby sites, linked asynchronously (paris-1 + paris-2 "
        "(garbd at paris-witness); frankfurt): it meets every stated requirement."
    )
    figures = dict(headline["figures"])
    assert figures["Commit latency at the slowest writing site"] == (
        "p50 2.69 ms, p99 3.26 ms; required p99 at most 8.00 ms (met)"
    )
    # 150/s against 451.39/s: 33 %
    assert figures["Binding hot row"].startswith('"inventory sku=1001" needs 150/s; at most 451/s')
    assert "(33% of its bound" in figures["Binding hot row"]
    assert figures["On losing one site"] == (
        "up to 10.7 ms of recent commits lost (asynchronous, p99 lag); "
        "writes fail over in about 76 s"
    )
    assert headline["rests_on"]["estimated"] is False  # its links are measured
    assert len(headline["changes"]) == 3 and headline["more_changes"] == 2


def test_an_answer_an_estimate_may_flip_names_the_links_to_measure() -> None:
    rests = context("global-counter")["headline"]["rests_on"]
    assert rests["estimated"] is True
    assert rests["measure"] == ["frankfurt - paris", "london - paris"]
    assert "at the low end of their range the answer is grouped_clusters" in rests["text"]


def test_a_blocked_option_names_what_it_breaks_in_words_not_ids() -> None:
    sentence = context("amsterdam-metro")["headline"]["sentence"]
    assert sentence.startswith("No option meets every requirement; the least bad is one Galera")
    assert sentence.endswith(
        "which still fails: predicted commit latency breaks the required bound."
    )
    assert "COMMIT-LATENCY-SLO" not in sentence


@pytest.mark.parametrize("topology", EXAMPLES, ids=lambda p: p.parent.name)
def test_survives_reads_as_the_terminal_report(topology: Path) -> None:
    ctx = context(topology.parent.name)
    rec: Recommendation = ctx["rec"]
    report = render_recommendations([rec], "text", width=1000)
    for option in rec.options:
        row = next(line for line in report.splitlines() if line.startswith(option.architecture))
        assert f"  {survives_text(option)}  " in row, (option.architecture, row)


def test_survives_in_each_case() -> None:
    assert survives_text(_option(survives_site_loss=True)) == "yes"
    assert survives_text(_option(survives_site_loss=True, failover_rto_s=75.8)) == (
        "by failover (76 s)"
    )
    manual = ["loss of site a: fence it, then bootstrap b (pc.bootstrap=YES)"]
    assert survives_text(_option(survives_site_loss=False, manual_recovery=manual)) == (
        "by manual bootstrap"
    )
    assert survives_text(_option(survives_site_loss=None, data_at_risk_unbounded=True)) == (
        "unbounded loss"
    )
    assert survives_text(_option(survives_site_loss=False)) == "no"


def _rec(option: OptionReport) -> Recommendation:
    return Recommendation(topology="t", architecture=option.architecture, options=[option])


def test_the_adr_says_writes_fail_over_not_continue() -> None:
    option = _option(survives_site_loss=True, data_at_risk_s=0.0405, failover_rto_s=75.9)
    said = pros_and_cons(option, _rec(option))
    assert not any("writes continue" in item for item in said["good"])
    assert (
        "when a site or link fails, its writes fail over in about 76 s, losing up to about "
        "40.5 ms of recent commits (asynchronous links, p99 lag)"
    ) in said["bad"]
    quorum = _option(architecture="single_cluster", groups=[["a", "b", "c"]], clusters=1)
    kept = pros_and_cons(quorum.model_copy(update={"survives_site_loss": True}), _rec(quorum))
    assert (
        "writes continue when any one site or inter-site link fails (no failover)" in (kept["good"])
    )


def test_unbounded_and_manual_recovery_are_said_as_such() -> None:
    unbounded = _option(
        survives_site_loss=None, data_at_risk_unbounded=True, data_at_risk_reason="a-b is full"
    )
    bad = pros_and_cons(unbounded, _rec(unbounded))["bad"]
    assert any(item.startswith("losing a site loses an unbounded backlog") for item in bad)
    manual = _option(
        survives_site_loss=False, manual_recovery=["loss of site a: bootstrap b"], clusters=1
    )
    bad = pros_and_cons(manual, _rec(manual))["bad"]
    assert "writes wait for a manual bootstrap after the loss of site a: bootstrap b" in bad


def test_a_hot_row_a_blocker_names_is_not_good_under_that_option() -> None:
    adr = (REPO / "tests" / "golden" / "amsterdam-metro" / "adr.md").read_text(encoding="utf-8")
    assert 'hot row "ledger_seq id=1" fits' not in adr
    assert 'Bad, because hot row "ledger_seq id=1" blocks this option although its rate' in adr


def test_a_verdict_on_estimates_alone_says_so(tmp_path: Path) -> None:
    from advisor.inputs.loading import parse_topology

    text = """
name: unmeasured
requirements: {commit_latency_ms: {p99: 50}}
sites:
  - {name: a, location: {lat: 48.85, lon: 2.35}}
  - {name: b, location: {lat: 50.11, lon: 8.68}}
  - {name: c, location: {lat: 52.37, lon: 4.90}}
"""
    ctx = document_context(analyse(parse_topology(text)))
    rests = ctx["headline"]["rests_on"]
    assert ctx["chosen"].clusters == 1  # one cluster over the three: every link it uses
    assert rests["text"].startswith("estimated round trips for a - b, a - c, b - c")
    assert "nothing it uses was measured" in rests["text"] and rests["estimated"]
    assert rests["measure"] == ["a - b", "a - c", "b - c"]


def test_a_hot_row_whose_bound_rounds_to_zero_is_beyond_it(tmp_path: Path) -> None:
    # Found by the bounds property test (seed 1356135930): a LAN of 1,000 s gives a bound of
    # 0.0/s, and the first screen divided by it.
    path = tmp_path / "slow.yaml"
    path.write_text(
        "name: bounds\nsites: [{name: a, nodes: 1000, lan_rtt_ms: {min: 1000000.0}}]\n"
        "workload: {hot_rows: [{name: h, updates_per_s: 0.001}]}\n",
        encoding="utf-8",
    )
    out = tmp_path / "docs"
    write_documents(analyse(path), out, formats=("md",))
    assert '"h" needs' in (out / "design.md").read_text()
