"""One figure, one value: the chosen option's headline figures read the same in the terminal
report, the JSON, the design document (Markdown and HTML) and the ADR of every example.

The figures are the commit latency p50 and p99, the data at risk on losing a site and the
recovery time of a failover; each is written by :func:`advisor.units.ms_text` (a recovery
time in whole seconds, as the report's "by failover (76 s)"). The documents are the golden
files, which tests/test_report.py holds equal to what the renderer writes.
"""

from __future__ import annotations

import html
import json
from functools import cache
from pathlib import Path

import pytest

from advisor.analysis import analyse
from advisor.recommendation import build_recommendation
from advisor.result import OptionReport, Recommendation
from advisor.text.report import render_recommendations
from advisor.units import ms_text

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "examples").glob("*/topology.yaml"))
GOLDEN = Path(__file__).resolve().parent / "golden"


@cache
def recommendation(topology: Path) -> Recommendation:
    return build_recommendation(analyse(topology))


def _chosen(rec: Recommendation) -> OptionReport:
    return next(o for o in rec.options if o.architecture == rec.architecture)


def _figures(option: OptionReport) -> dict[str, str]:
    """The headline figures of an option as every output must write them."""
    figures = {
        "commit p50": ms_text(option.commit_latency_ms["p50"]),
        "commit p99": ms_text(option.commit_latency_ms["p99"]),
    }
    if option.data_at_risk_s is not None:
        figures["data at risk"] = ms_text(option.data_at_risk_s * 1000)
    if option.failover_rto_s is not None:
        figures["recovery time"] = f"{option.failover_rto_s:.0f} s"
    return figures


def _outputs(topology: Path) -> dict[str, str]:
    rec = recommendation(topology)
    folder = GOLDEN / topology.parent.name
    return {
        "report": render_recommendations([rec], "text", width=1000),
        "design.md": (folder / "design.md").read_text(encoding="utf-8"),
        "design.html": html.unescape((folder / "design.html").read_text(encoding="utf-8")),
        "adr.md": (folder / "adr.md").read_text(encoding="utf-8"),
    }


@pytest.mark.parametrize("topology", EXAMPLES, ids=lambda p: p.parent.name)
def test_the_chosen_options_figures_read_the_same_everywhere(topology: Path) -> None:
    rec = recommendation(topology)
    chosen = _chosen(rec)
    figures = _figures(chosen)
    # The JSON carries the unrounded value; written by the one policy, it is the same text.
    data = json.loads(render_recommendations([rec], "json"))
    option = next(o for o in data["options"] if o["architecture"] == rec.architecture)
    assert ms_text(option["commit_latency_ms"]["p50"]) == figures["commit p50"]
    assert ms_text(option["commit_latency_ms"]["p99"]) == figures["commit p99"]
    if "data at risk" in figures:
        assert ms_text(option["data_at_risk_s"] * 1000) == figures["data at risk"]
    if "recovery time" in figures:
        assert f"{option['failover_rto_s']:.0f} s" == figures["recovery time"]
    for name, text in _outputs(topology).items():
        for what, figure in figures.items():
            assert figure in text, f"{topology.parent.name} {name}: {what} {figure} is missing"


def test_the_survives_row_reads_as_the_report() -> None:
    """paris-frankfurt's chosen option survives a site's loss only by a 76 s failover."""
    topology = REPO / "examples" / "paris-frankfurt" / "topology.yaml"
    chosen = _chosen(recommendation(topology))
    assert chosen.failover_rto_s is not None
    expected = f"by failover ({chosen.failover_rto_s:.0f} s)"
    assert expected == "by failover (76 s)"
    for name, text in _outputs(topology).items():
        if name != "adr.md":
            assert expected in text, name
    md = _outputs(topology)["design.md"]
    survives = next(line for line in md.splitlines() if line.startswith("| Survives losing"))
    assert "| yes |" in survives  # single_cluster keeps its quorum
    assert survives.count("by failover (76 s)") == 2
