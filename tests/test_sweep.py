"""advisor.sweep.grid: ranges, the contract with the full analysis, flips and rule overrides."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from advisor.analysis import analyse
from advisor.errors import AdvisorError
from advisor.inputs.loading import parse_topology
from advisor.recommendation import recommend
from advisor.sweep.grid import parse_range, sweep

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*/topology.yaml"))


def two_sites(*, slo_p99=20, lan="0.2", hot_rows=""):
    """3 + 3 nodes 10 ms apart, one LAN value, segments off.

    With LAN 0.2: commit 11.1174 ms at the writer a (a -> b (10.0174 - 5) -> b' (0.1) ->
    a (5) + 1), 21.1174 ms at b (its statements cross to a: 10 ms more), alone at a site
    1.3017 ms.
    """
    return parse_topology(
        textwrap.dedent(
            f"""
            name: two
            requirements: {{survive: node, commit_latency_ms: {{p99: {slo_p99}}}}}
            sites:
              - {{name: a, lan_rtt_ms: {lan}}}
              - {{name: b, lan_rtt_ms: {lan}}}
            links:
              - {{sites: [a, b], measurements: [{{method: icmp, samples_ms: [10.0]}}]}}
            galera: {{provider_options: {{gmcast.segment: 0}}}}
            workload: {{hot_rows: [{hot_rows}], writeset_bytes: {{p50: 2048, p99: 2048}}}}
            """
        )
    )


# -- parse_range ---------------------------------------------------------------------------


def test_a_range_has_200_points_by_default():
    grid = parse_range("0:100")
    assert grid.shape == (200,)
    assert (grid[0], grid[-1]) == (0.0, 100.0)


def test_a_range_with_a_count():
    assert parse_range("10:20:3").tolist() == [10.0, 15.0, 20.0]


@pytest.mark.parametrize(
    "text", ["5", "a:b", "10:5", "5:5", "-1:5", "0:10:1", "0:inf", "0:nan", "0:10:2:3", ""]
)
def test_a_bad_range_is_refused_with_the_expected_form(text):
    with pytest.raises(AdvisorError, match=r"--range must be A:B or A:B:N .* got"):
        parse_range(text)


def test_an_unknown_variable_is_refused():
    with pytest.raises(AdvisorError, match="unknown sweep variable 'latency'"):
        sweep(analyse(two_sites()), "latency", [1.0])


def test_a_rate_sweep_needs_hot_rows():
    with pytest.raises(AdvisorError, match=r"no workload\.hot_rows"):
        sweep(analyse(two_sites()), "hot-row-rate", [1.0])


# -- the contract with the analysis --------------------------------------------------------


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.parent.name)
def test_at_todays_rtt_the_sweep_chooses_what_the_analysis_chose(path):
    analysis = analyse(path)
    result = sweep(analysis, "rtt", [analysis.worst_link_p50_ms])
    assert result.current == analysis.worst_link_p50_ms
    assert result.architectures[result.chosen[0]] == analysis.chosen.architecture


# -- flips ---------------------------------------------------------------------------------


def test_single_cluster_stops_being_viable_past_the_scaled_slo():
    # At b: (20 - 1.3017) / (21.1174 - 1.3017) x 10 ms = 9.436 ms: on a 0.1 ms grid the last
    # viable point is 9.4, the first beyond 9.5; per_site_clusters (viable, 2 clusters)
    # takes over there.
    result = sweep(analyse(two_sites()), "rtt", parse_range("0:40:401"))
    assert result.viability_changes() == [(pytest.approx(9.5), "single_cluster", False)]
    assert result.flips() == [
        (pytest.approx(9.5), "single_cluster", "per_site_clusters"),
    ]


def test_a_known_example_flips_where_its_tightest_limit_binds():
    # paris-frankfurt, single_cluster, the worst link at 10.227 ms (paris-2 - frankfurt,
    # estimated, bounded by the measured path via paris-1: 0.467 + 9.76). ProxySQL's writer
    # is paris-1 (it owns the hot rows): "inventory sku=1001" at 150/s needs its lock's hold,
    # the commit there (about 11.7 ms), below 1000 / 150 = 6.6667 ms: about 5.28 ms of worst
    # link. Frankfurt's commits run at paris-1 and cross back (p99 about 22.4 ms): the SLO
    # (p99 8 ms) binds first, near 3.2 ms. The sweep flips where what_would_change says.
    path = next(p for p in EXAMPLES if p.parent.name == "paris-frankfurt")
    analysis = analyse(path)
    assert analysis.worst_link_p50_ms == pytest.approx(10.227)
    single = analysis.option("single_cluster")
    lan_ms = analysis.lan_base_ms(single.clusters[0])["p50"]
    row = next(r for r in single.hot_rows if r.row.name == "inventory sku=1001")
    row_limit_ms = (1000 / 150 - lan_ms) / (row.commit_ms["p50"] - lan_ms) * 10.227
    assert row_limit_ms == pytest.approx(5.28, abs=0.15)
    slo = recommend(path).what_would_change[0]
    assert slo.quantity == "worst_link_rtt_ms" and 2.9 < slo.value < row_limit_ms
    first_ms = np.ceil(round(slo.value * 10, 6)) / 10
    result = sweep(analysis, "rtt", parse_range("0:28:281"))
    assert result.viability_changes() == [(pytest.approx(first_ms), "single_cluster", False)]
    assert result.flips() == [(pytest.approx(first_ms), "single_cluster", "grouped_clusters")]


def test_a_hot_row_rate_sweep_flips_at_callaghans_bound():
    # Row "h" written at a and b: single_cluster holds it while rate x 11.1174 ms (its lock
    # held for one commit at the writer a) < 1, i.e. below 1000 / 11.1174 = 89.95/s;
    # per_site_clusters splits it (a blocker of cost 1), cheaper than HOT-ROW-RATE (cost 3)
    # once both are blocked. The SLO (p99 40 ms) holds b's 21.1 ms commits.
    analysis = analyse(two_sites(slo_p99=40, hot_rows='{name: "h", updates_per_s: 40}'))
    result = sweep(analysis, "hot-row-rate", parse_range("0:200:201"))
    assert result.current == 40.0
    assert result.viability_changes() == [(90.0, "single_cluster", False)]
    assert result.flips() == [(90.0, "single_cluster", "per_site_clusters")]


def test_the_sweep_and_what_would_change_agree_on_the_slo_limit():
    # LAN p50 0.2, p99 2.0 ms: single_cluster's commit p99 is 10 + 1.0174 + 1.0 = 12.0174.
    loaded = two_sites(lan="{p50: 0.2, p99: 2.0}")
    (change,) = recommend(loaded).what_would_change
    result = sweep(analyse(loaded), "rtt", parse_range("0:40:4001"))
    ((where, option, viable),) = result.viability_changes()
    assert (option, viable) == ("single_cluster", False)
    assert where == pytest.approx(change.value, abs=0.02)


# -- rule overrides ------------------------------------------------------------------------


def test_a_rule_downgraded_to_warning_no_longer_blocks_along_the_sweep(tmp_path):
    overrides = tmp_path / "rules"
    overrides.mkdir()
    (overrides / "COMMIT-LATENCY-SLO.yaml").write_text(
        "id: COMMIT-LATENCY-SLO\nseverity: warning\n", encoding="utf-8"
    )
    analysis = analyse(two_sites(), rules_dirs=[overrides])
    result = sweep(analysis, "rtt", parse_range("0:40:401"))
    # Past 9.44 ms the SLO breaks, but as a warning: single_cluster stays viable and chosen.
    assert result.viable[result.architectures.index("single_cluster")].all()
    assert result.flips() == []
    assert set(np.asarray(result.architectures)[result.chosen]) == {"single_cluster"}
