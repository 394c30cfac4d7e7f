"""advisor.sweep.grid: ranges, the contract with the full analysis, flips and rule overrides."""

from __future__ import annotations

import functools
import json
import textwrap
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from advisor.analysis import Analysis, analyse
from advisor.engine.evidence import MeasuredRtt
from advisor.errors import AdvisorError
from advisor.inputs.loading import LoadedTopology, parse_topology
from advisor.inputs.topology import Link, Measurement
from advisor.model import physics
from advisor.recommendation import recommend
from advisor.rules.pack import load_rules
from advisor.sweep.grid import CARRIED, MAX_VALUES, REJUDGED, VARIABLES, parse_range, sweep
from advisor.sweep.render import render_sweep, sweep_svg

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*/topology.yaml"))


def two_sites(*, slo_p99=20, lan="0.2", hot_rows="", distance_km=None, b_writes=True):
    """3 + 3 nodes 10 ms apart, one LAN value, segments off; no latency bound with
    ``slo_p99`` None.

    With LAN 0.2: commit 11.1174 ms at the writer a (a -> b (10.0174 - 5) -> b' (0.1) ->
    a (5) + 1), 21.1174 ms at b (its statements cross to a: 10 ms more), alone at a site
    1.3017 ms.
    """
    distance = f"distance_km: {distance_km}, " if distance_km else ""
    bound = "" if slo_p99 is None else f", commit_latency_ms: {{p99: {slo_p99}}}"
    return parse_topology(
        textwrap.dedent(
            f"""
            name: two
            requirements: {{survive: node{bound}}}
            sites:
              - {{name: a, lan_rtt_ms: {lan}}}
              - {{name: b, lan_rtt_ms: {lan}, writes: {str(b_writes).lower()}}}
            links:
              - {{sites: [a, b], {distance}measurements: [{{method: icmp, samples_ms: [10.0]}}]}}
            galera: {{provider_options: {{gmcast.segment: 0}}}}
            workload: {{hot_rows: [{hot_rows}], writeset_bytes: {{p50: 2048, p99: 2048}}}}
            """
        )
    )


def moved(analysis: Analysis, variable: str, value: float) -> LoadedTopology:
    """The topology with ``variable`` at ``value``, written as a user would write it: what the
    full engine evaluates at one point of the sweep (MEANINGS says how each variable moves).

    Every site pair gets an explicit link. ``rtt``: each measurement's samples shifted by
    today's p50 x (factor - 1), an estimated link given at its moved p50 in the estimate's
    shape; distances and locations dropped, as the RTT is what varies (below a link's floor
    its sites would have to be nearer). ``distance``: every distance and route scaled, each
    measurement shifted by its floor x (factor - 1), an estimated link left to the engine's
    estimate at its new distance. ``hot-row-rate``: every hot row's rate scaled.
    """
    factor = value / sweep(analysis, variable, [value]).current
    topology = analysis.topology
    if variable == "hot-row-rate":
        rows = [
            row.model_copy(update={"updates_per_s": row.updates_per_s * factor})
            for row in topology.workload.hot_rows
        ]
        workload = topology.workload.model_copy(update={"hot_rows": rows})
        return replace(analysis.loaded, topology=topology.model_copy(update={"workload": workload}))
    links = []
    for link in analysis.links:
        km, route = link.distance_km, link.route_km
        if variable == "rtt":
            shift_ms = link.rtt_p50_ms * (factor - 1.0)
            km = route = None
        else:
            shift_ms = (link.floor_rtt_ms or 0.0) * (factor - 1.0)
            km, route = km and km * factor, route and route * factor
        if link.estimate is None:
            measurements = [_shifted(m, shift_ms) for m in link.measurements]
        elif variable == "rtt":
            p50 = link.rtt_p50_ms * factor
            shape = {"p50": p50, "p95": p50 * physics.ESTIMATE_P95_OVER_P50}
            measurements = [Measurement(method="icmp", percentiles_ms=shape)]
        else:
            measurements = []
        links.append(
            Link(
                sites=list(link.sites),
                distance_km=km,
                route_km=route,
                medium=link.medium,
                bandwidth_mbps=link.bandwidth_mbps,
                measurements=measurements,
            )
        )
    update: dict[str, object] = {"links": links}
    if variable == "rtt":
        update["sites"] = [site.model_copy(update={"location": None}) for site in topology.sites]
    return replace(analysis.loaded, topology=topology.model_copy(update=update))


def _shifted(measured: MeasuredRtt, shift_ms: float) -> Measurement:
    """A measurement with every round trip shifted by ``shift_ms`` (none below 0): given
    percentiles as percentiles, anything else as its samples (a file's percentiles as the
    distribution's 2,001 atoms)."""
    spec = measured.spec
    given = spec.percentiles_ms.given() if spec.percentiles_ms else None
    return Measurement(
        method=spec.method,
        payload_bytes=spec.payload_bytes,
        request_bytes=measured.request_bytes,
        response_bytes=measured.response_bytes,
        loss=measured.distribution.loss or None,
        percentiles_ms={k: max(v + shift_ms, 0.0) for k, v in given.items()} if given else None,
        samples_ms=None
        if given
        else np.maximum(measured.distribution.values_ms + shift_ms, 0.0).tolist(),
    )


def verdict_of(analysis: Analysis) -> tuple[str, list[tuple[str, ...]]]:
    """The recommended architecture and its clusters' members, as recommend's groups."""
    return analysis.chosen.architecture, [c.members for c in analysis.chosen.clusters]


def swept_verdict(analysis: Analysis, variable: str, value: float) -> tuple[str, list]:
    """The sweep's recommended architecture and groups at ``value``."""
    option = analysis.options[int(sweep(analysis, variable, [value]).chosen[0])]
    return option.architecture, [c.members for c in option.clusters]


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


@functools.cache
def example(name: str) -> tuple[Analysis, list[str], list[list[str]]]:
    """An example's analysis, and recommend()'s architecture and groups for it."""
    path = next(p for p in EXAMPLES if p.parent.name == name)
    result = recommend(path)
    return analyse(path), result.architecture, result.groups


# Why a sweep is refused, by example and variable (every other pair is accepted).
REFUSED = {
    ("pxc-wan-windows", "distance"): "no site pair has a distance to scale",
    ("pxc-wan-windows", "hot-row-rate"): r"no workload\.hot_rows",
    ("dr-site-durable", "hot-row-rate"): r"no workload\.hot_rows",
}
EVERY_SWEEP = [(p.parent.name, variable) for p in EXAMPLES for variable in VARIABLES]
ACCEPTED = [pair for pair in EVERY_SWEEP if pair not in REFUSED]


@pytest.mark.parametrize(
    ("name", "variable"), EVERY_SWEEP, ids=[f"{n}-{v}" for n, v in EVERY_SWEEP]
)
def test_at_todays_value_every_sweep_returns_what_recommend_returns(name, variable):
    # Before the sweep moved the evidence, amsterdam-metro's distance sweep replaced the
    # measured 0.5-0.7 ms dark fibre by the cloud fit (10.8 ms at 26.5 km) and returned
    # per_site_clusters where recommend says single_cluster.
    analysis, architecture, groups = example(name)
    if (name, variable) in REFUSED:
        with pytest.raises(AdvisorError, match=REFUSED[name, variable]):
            sweep(analysis, variable, [1.0])
        return
    current = sweep(analysis, variable, [1.0]).current
    assert swept_verdict(analysis, variable, current) == (architecture, [tuple(g) for g in groups])
    result = sweep(analysis, variable, [current])
    today = {o.architecture: o.commit_latency_ms.get("p50", 0.0) for o in analysis.options}
    assert dict(zip(result.architectures, result.commit_p50_ms[:, 0], strict=True)) == today


@pytest.mark.parametrize(("name", "variable"), ACCEPTED, ids=[f"{n}-{v}" for n, v in ACCEPTED])
def test_the_sweep_flips_where_the_full_engine_does(name, variable):
    # The vectorised sweep is a first-order shortcut of the engine. At half and twice today's
    # value, and 10 % either side of every flip from 0.05 to 10 times today, the full engine
    # on the topology moved the same way recommends what the sweep does. (The flips it finds
    # lie within 5 % of the full engine's: amsterdam-metro's distance flip at 238 km against
    # 226 km is the farthest.)
    analysis = example(name)[0]
    current = sweep(analysis, variable, [1.0]).current
    grid = np.linspace(0.05 * current, min(10 * current, MAX_VALUES[variable]), 2000)
    points = [0.5 * current, 2 * current]
    for at, _, _ in sweep(analysis, variable, grid).flips():
        points += [0.9 * at, 1.1 * at]
    for value in points:
        full = analyse(moved(analysis, variable, value))
        assert swept_verdict(analysis, variable, value) == verdict_of(full), value


def test_the_moved_topology_at_todays_value_is_the_analysis():
    # The reference itself: moved to today's value, every example's topology gives the same
    # verdict and commit latencies as the original up to p99 (the samples are the evidence's
    # own; given percentiles, as sockperf's, become 2,001 samples, which keep no p99.999;
    # within 0.2 %, as a commit routed to the writer sums two such links' draws).
    for name, variable in ACCEPTED:
        analysis = example(name)[0]
        current = sweep(analysis, variable, [1.0]).current
        again = analyse(moved(analysis, variable, current))
        assert verdict_of(again) == verdict_of(analysis)
        for option in analysis.options:
            commit = again.option(option.architecture).commit_latency_ms
            for key in ("p50", "p95", "p99"):
                expected = option.commit_latency_ms[key]
                assert commit[key] == pytest.approx(expected, rel=2e-3), (name, variable, key)


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


def test_a_known_example_whose_rows_queue_behind_stalls_stays_blocked_at_any_rtt():
    # paris-frankfurt, single_cluster: its writer paris-1 holds "inventory sku=1001"
    # (150/s) for one commit, and the links' measured loss stalls a few commits in a
    # thousand for a retransmission timeout (200 ms and more); the updates queued behind
    # such a stall wait for it, so the row's p99 stays far above the 8 ms bound even at a
    # tiny RTT. The sweep says so, as the full engine does at 0.5 ms.
    path = next(p for p in EXAMPLES if p.parent.name == "paris-frankfurt")
    analysis = analyse(path)
    result = sweep(analysis, "rtt", parse_range("0.1:28:280"))
    index = result.architectures.index("single_cluster")
    assert not result.viable[index].any()
    full = analyse(moved(analysis, "rtt", 0.5))
    blocking = {
        f.subject
        for f in full.findings
        if f.option == "single_cluster" and f.rule == "COMMIT-LATENCY-SLO"
    }
    assert "inventory sku=1001" in blocking
    (row,) = [r for r in full.option("single_cluster").hot_rows if r.row.name in blocking][:1]
    assert row.lock_wait_ms is not None and row.lock_wait_ms["p99"] > 100.0


def test_a_hot_row_rate_sweep_flips_at_callaghans_bound():
    # Row "h" written at a and b: single_cluster holds it while rate x 11.1174 ms (its lock
    # held for one commit at the writer a) < 1, i.e. below 1000 / 11.1174 = 89.95/s;
    # per_site_clusters splits it (a blocker of cost 1), cheaper than HOT-ROW-RATE (cost 3)
    # once both are blocked. No latency bound: the row's queue, which grows towards the
    # bound, is COMMIT-LATENCY-SLO's (tests/test_commit_parts.py).
    analysis = analyse(two_sites(slo_p99=None, hot_rows='{name: "h", updates_per_s: 40}'))
    result = sweep(analysis, "hot-row-rate", parse_range("0:200:201"))
    assert result.current == 40.0
    assert result.viability_changes() == [(90.0, "single_cluster", False)]
    assert result.flips() == [(90.0, "single_cluster", "per_site_clusters")]


def test_an_rtt_sweep_moves_the_tail_with_the_median():
    # LAN p50 0.2, p99 2.0 ms, a alone writes: single_cluster's commit p99 is 12.0174 ms,
    # its p50 11.4948; a alone commits in 1.3326 ms at the median. The link's samples move,
    # the LAN's spread does not: at a link RTT of r ms the p99 is 12.0174 + (11.4948 -
    # 1.3326) x (r / 10 - 1), at the 20 ms SLO for r = 10 x (1 + 7.9826 / 10.1622) = 17.855
    # ms. (Scaling the whole network part, the LAN's spread with it, would say less; the
    # full engine puts it between 17.8 and 18.1 ms.)
    analysis = analyse(two_sites(lan="{p50: 0.2, p99: 2.0}", b_writes=False))
    single = analysis.option("single_cluster").commit_latency_ms
    lan_ms = analysis.lan_commit_ms["a"]["p50"]
    limit_ms = 10 * (1 + (20 - single["p99"]) / (single["p50"] - lan_ms))
    assert limit_ms == pytest.approx(17.855, abs=0.01)
    result = sweep(analysis, "rtt", parse_range("0:40:4001"))
    first_ms = np.ceil(round(limit_ms * 100, 6)) / 100
    assert result.viability_changes() == [(pytest.approx(first_ms), "single_cluster", False)]
    assert verdict_of(analyse(moved(analysis, "rtt", 17.8)))[0] == "single_cluster"
    assert verdict_of(analyse(moved(analysis, "rtt", 18.1)))[0] == "per_site_clusters"


def test_a_distance_sweep_keeps_the_measured_rtt_beyond_its_floor():
    # 10 ms measured over 500 km: a fibre floor of 2 x 500 / 204.19 = 4.897 ms, and 5.103 ms
    # of routers and detours, which stay. The 20 ms p99 SLO allows a link RTT of 19.05 ms
    # (the previous test's arithmetic with a point LAN, a alone writing: 10 x (1 + (20 -
    # 11.1174) / (11.1174 - 1.3017))), a floor of 19.05 - 5.103 = 13.95 ms, hence 500 x
    # 13.95 / 4.897 = 1,424 km. The distance fit (7.5 + 1.39 x floor) would have put today's
    # 500 km at 14.3 ms instead of the 10 measured.
    analysis = analyse(two_sites(distance_km=500, b_writes=False))
    floor_ms = float(physics.floor_rtt_ms(500))
    assert floor_ms == pytest.approx(4.8973, abs=1e-4)
    single = analysis.option("single_cluster").commit_latency_ms
    lan_ms = analysis.lan_commit_ms["a"]["p50"]
    rtt_limit_ms = 10 * (1 + (20 - single["p99"]) / (single["p50"] - lan_ms))
    km = 500 * (rtt_limit_ms - (10 - floor_ms)) / floor_ms
    assert km == pytest.approx(1424, abs=1)
    result = sweep(analysis, "distance", parse_range("0:3000:3001"))
    assert result.current == 500
    assert result.viability_changes() == [(np.ceil(km), "single_cluster", False)]
    assert verdict_of(analyse(moved(analysis, "distance", 1400)))[0] == "single_cluster"
    assert verdict_of(analyse(moved(analysis, "distance", 1450)))[0] == "per_site_clusters"


# -- what the output says -----------------------------------------------------------------


def test_the_table_the_json_and_the_chart_say_what_the_swept_value_means():
    analysis = example("amsterdam-metro")[0]
    result = sweep(analysis, "distance", parse_range("0:300:61"))
    text = render_sweep(result, "text", width=100)
    assert text.splitlines()[1:3] == [
        "distance: the farthest site pair's distance; every link's distance scales with it, "
        "and the",
        "propagation share of its measured RTT (its fibre floor) with that, the rest kept",
    ]
    assert "Today: 26.49 km" in text
    assert json.loads(render_sweep(result, "json"))["meaning"] == result.meaning
    assert f"<desc>distance: {result.meaning}</desc>" in sweep_svg(result)
    assert "shifted (shape kept)" in sweep(analysis, "rtt", [1.0]).meaning


def test_every_shipped_blocker_is_rejudged_or_independent_of_what_a_sweep_varies():
    # A blocker that depends on an RTT, a distance or a hot row's rate but is carried over
    # as it is today would keep today's answer along the whole grid.
    blockers = {rule_id for rule_id, rule in load_rules(()).items() if rule.severity == "blocker"}
    assert blockers == set(REJUDGED) | set(CARRIED)


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
