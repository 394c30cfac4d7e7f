"""What would change the answer: the quantity that binds, and where it flips.

Each scenario runs through ``recommend()`` as a user calls it, on a topology built here; each
flip value is computed by hand from the figures the same report gives, or checked by running
``recommend()`` again on either side of it.
"""

from __future__ import annotations

import json
import math
import textwrap

import pytest

from advisor import verdict
from advisor.inputs.loading import parse_topology
from advisor.inputs.schema import topology_schema
from advisor.recommendation import recommend
from advisor.result import Recommendation


def run(text: str) -> Recommendation:
    return recommend(parse_topology(textwrap.dedent(text)))


def change(result: Recommendation, quantity: str):
    return next(w for w in result.what_would_change if w.quantity == quantity)


def option(result: Recommendation, architecture: str):
    return next(o for o in result.options if o.architecture == architecture)


# -- write-set size, not distance ----------------------------------------------------------

# Two sites 0.47 ms apart with 5 MB write sets (every one of them), a 30 ms commit p99 SLO:
# the distance is nothing, the write sets are everything (b's statements add the 0.47 ms
# round trip to ProxySQL's writer at a).
BIG_WRITESETS = """
    name: big-writesets
    requirements: {{commit_latency_ms: {{p99: 30}}, survive: node}}
    sites:
      - {{name: a, nodes: 3}}
      - {{name: b, nodes: 3}}
    links:
      - {{sites: [a, b], bandwidth_mbps: 10000,
          measurements: [{{method: icmp, percentiles_ms: {{p50: 0.47, p99: 0.6}}}}]}}
    {galera}
    workload:
      commits_per_s: {{peak: 20}}
      writeset_bytes: {{p50: {size}, p99: {size}}}
      {local}
    """


# The windows pinned at MariaDB's defaults (2/4): left to the design, it applies the windows
# WRITESET-ROUNDS sizes and predicts with them (tests/test_settings_scenarios.py).
DEFAULT_WINDOWS = "galera: {provider_options: {evs.user_send_window: 2, evs.send_window: 4}}"


def big_writesets(
    size: float = 5e6, galera: str = DEFAULT_WINDOWS, local: str = ""
) -> Recommendation:
    return run(BIG_WRITESETS.format(size=size, galera=galera, local=local))


def test_sites_close_together_with_large_write_sets_are_told_the_write_sets_bind():
    result = big_writesets()
    single = option(result, "single_cluster")
    assert not single.viable and single.blockers == ["COMMIT-LATENCY-SLO"]
    # The levers: the windows WRITESET-ROUNDS advises, then the write-set size; the RTT last
    # (it would have to fall to half of 0.47 ms).
    quantities = [w.quantity for w in result.what_would_change]
    assert quantities[:3] == ["evs.send_window", "writeset_p99_bytes", "worst_link_rtt_ms"]
    assert "moving sites closer" not in result.summary.split("To make it viable:")[1].split(".")[0]
    assert "To make it viable: wider send windows" in result.summary
    assert "write sets below 3.1 MB at p99 (now 5 MB)" in result.summary


def test_the_write_set_flip_value_holds_on_either_side():
    size = change(big_writesets(), "writeset_p99_bytes")
    assert (size.unit, size.current, size.option) == ("bytes", 5e6, "single_cluster")
    # Two significant digits, rounded down: below it single_cluster meets the SLO, and the
    # bisection's upper end (within 5 % of it) breaks it.
    assert size.value == 3.1e6
    assert option(big_writesets(size.value), "single_cluster").viable
    assert not option(big_writesets(size.value * 1.07), "single_cluster").viable


def test_the_windows_a_finding_advises_are_a_lever_that_holds():
    windows = change(big_writesets(), "evs.send_window")
    assert (windows.value, windows.current) == (512, 4)
    assert windows.example == "evs.user_send_window=256; evs.send_window=512"
    applied = big_writesets(
        galera="galera: {provider_options: {evs.user_send_window: 256, evs.send_window: 512}}"
    )
    assert option(applied, "single_cluster").viable


# -- the local commit of large write sets --------------------------------------------------


def test_large_write_sets_without_a_local_commit_say_what_was_assumed():
    result = run(BIG_WRITESETS.replace("p99: 30", "p99: 150").format(size=5e6, galera="", local=""))
    single = option(result, "single_cluster")
    assert result.architecture == "single_cluster" and single.viable
    assert (
        "Write sets reach 5 MB at p99 and workload.local_commit_ms is not given, so each "
        "commit's local work (certification, binlog, InnoDB) is assumed to take 1 ms"
    ) in result.summary
    # Every commit moves 1:1 with the local work: the SLO breaks at 1 + (150 - p99) ms.
    local = change(result, "local_commit_ms")
    assert local.current == 1.0
    assert local.value == pytest.approx(1 + 150 - single.commit_latency_ms["p99"], abs=0.01)
    # The lab's cost for 5 MB: 123.6 ms at 3.163 MB (148.92 less 25.30 of serialisation), in
    # proportion beyond: 195 ms, which breaks it.
    assert "the lab measured about 195 ms" in result.summary
    assert "at that cost the verdict no longer holds" in local.message
    # Given, it is measured: no note, no lever; just below the flip the option stands.
    given = BIG_WRITESETS.replace("p99: 30", "p99: 150")
    below = run(given.format(size=5e6, galera="", local=f"local_commit_ms: {local.value - 1}"))
    assert option(below, "single_cluster").viable
    assert "local_commit_ms" not in below.summary
    assert all(w.quantity != "local_commit_ms" for w in below.what_would_change)
    above = run(given.format(size=5e6, galera="", local=f"local_commit_ms: {local.value + 1}"))
    assert not option(above, "single_cluster").viable


def test_small_write_sets_assume_nothing_worth_saying():
    result = big_writesets(size=65536)
    assert "local_commit_ms" not in result.summary
    assert all(w.quantity != "writeset_p99_bytes" for w in result.what_would_change)


def test_the_lab_local_commit_is_read_off_its_runs():
    # lab-runs.yaml large-writeset-local-rtt0, p50 less the serialisation at 1 Gbit/s.
    assert verdict.lab_local_commit_ms(3_163_002) == pytest.approx(148.92 - 25.304016)
    assert verdict.lab_local_commit_ms(198_631) == pytest.approx(11.17 - 1.589048)
    assert verdict.lab_local_commit_ms(2 * 3_163_002) == pytest.approx(2 * (148.92 - 25.304016))
    between = verdict.lab_local_commit_ms(500_000)
    assert verdict.lab_local_commit_ms(198_631) < between < verdict.lab_local_commit_ms(793_042)


def test_the_schema_documents_the_local_commit():
    properties = topology_schema()["$defs"]["Workload"]["properties"]
    assert "large-writeset-local-rtt0" in properties["local_commit_ms"]["description"]


# -- the garbd link ------------------------------------------------------------------------

GARBD = """
    name: garbd-far
    requirements: {{commit_latency_ms: {{p99: 15}}, survive: site}}
    sites:
      - {{name: a, nodes: 3}}
      - {{name: b, nodes: 3, writes: false}}
      - {{name: w, nodes: 0, writes: false, arbitrator: true}}
    links:
      - {{sites: [a, b], measurements: [{{method: icmp, percentiles_ms: {ab}}}]}}
      - {{sites: [a, w], measurements: [{{method: icmp, percentiles_ms: {garbd}}}]}}
      - {{sites: [b, w], measurements: [{{method: icmp, percentiles_ms: {garbd}}}]}}
    """


def garbd(rtt_ms: float) -> Recommendation:
    far = f"{{p50: {rtt_ms}, p99: {round(rtt_ms + 0.5, 3)}}}"
    return run(GARBD.format(ab="{p50: 7.8, p99: 8.2}", garbd=far))


def test_a_garbd_link_in_every_commit_is_the_lever_named():
    result = garbd(12.3)
    single = option(result, "single_cluster")
    assert not single.viable and result.architecture == "per_site_clusters"
    lever = result.what_would_change[0]
    # The garbd's legs a -> w -> b of the longest path move 1:1 with its round trips: the
    # p99 over the SLO comes off the 12.3 ms link.
    assert (lever.quantity, lever.unit, lever.current) == ("garbd_link_rtt_ms:w", "ms", 12.3)
    assert lever.value == pytest.approx(12.3 - (single.commit_latency_ms["p99"] - 15), abs=0.01)
    assert (
        f"single_cluster is ruled out by COMMIT-LATENCY-SLO; it would take the garbd at w "
        f"within {lever.value:.1f} ms of every data site (now 12.3 ms)"
    ) in result.summary
    # The RTT lever says the garbd link is in every commit too.
    rtt = change(result, "worst_link_rtt_ms")
    assert rtt.current == 7.8 and "the garbd link a - w (12.3 ms now)" in rtt.message
    # Either side of the flip, as measured.
    assert option(garbd(round(lever.value - 0.1, 2)), "single_cluster").viable
    assert not option(garbd(round(lever.value + 0.1, 2)), "single_cluster").viable


# -- a hot counter -------------------------------------------------------------------------

HOT = """
    name: hot-counter
    requirements: {{commit_latency_ms: {{p99: 150}}, survive: site}}
    sites: [{{name: a}}, {{name: b}}, {{name: c}}]
    links:
      - {{sites: [a, b], measurements: [{{method: icmp, percentiles_ms: {{p50: 10, p99: 10.5}}}}]}}
      - {{sites: [a, c], measurements: [{{method: icmp, percentiles_ms: {{p50: 10, p99: 10.5}}}}]}}
      - {{sites: [b, c], measurements: [{{method: icmp, percentiles_ms: {{p50: 10, p99: 10.5}}}}]}}
    workload:
      hot_rows: [{{name: counter, updates_per_s: {rate}, writer_sites: [a]}}]
    """


def test_a_hot_counter_at_97_percent_of_its_bound_is_split_in_two():
    # The commit does not depend on the row's rate: read the bound once, then ask 97 % of it.
    bound = run(HOT.format(rate=1)).hot_rows[0].max_updates_per_s["single_cluster"]
    rate = round(0.97 * bound, 3)
    result = run(HOT.format(rate=rate))
    commit_ms = 1000 / bound
    # One row: utilisation 0.97, M/D/1 wait 0.97 x T / (2 x 0.03) = 16.2 T, about 270 ms on
    # top of T = 16.5 ms: over the 150 ms SLO. Two rows: 0.485 each, wait 0.485 T / 1.03 =
    # 0.47 T: within it. So N = 2; at 50 % of the bound, ceil(0.97 / 0.5) = 2 as well.
    assert 0.97 * commit_ms / (2 * 0.03) + commit_ms > 150
    assert 0.485 * commit_ms / (2 * 0.515) + commit_ms < 150
    split = change(result, "hot_row_split:counter")
    assert (split.value, split.unit, split.current) == (2, "rows", 1)
    assert "SELECT SUM(n) FROM counters WHERE id = ?" in split.example
    assert "slot = ?" in split.example and "[0, 2)" in split.example
    # Batched: one UPDATE per two commits keeps it at half its bound.
    batch = change(result, "hot_row_batch_ms:counter")
    assert batch.value == pytest.approx(2 * commit_ms, abs=0.06)
    assert batch.current == pytest.approx(1000 / rate, abs=0.01)
    rate_lever = change(result, "hot_row_rate:counter")
    assert rate_lever.value == pytest.approx(bound, abs=0.01)


def test_a_row_over_its_bound_names_the_split_that_fits_not_the_distance():
    # 3 sites 10 ms apart, a row written at a at 150/s: about 16.5 ms a commit, 60/s bound;
    # single_cluster is ruled out by HOT-ROW-RATE alone.
    result = run(HOT.format(rate=150))
    single = option(result, "single_cluster")
    assert single.blockers == ["HOT-ROW-RATE"]
    bound = result.hot_rows[0].max_updates_per_s["single_cluster"]
    commit_ms = 1000 / bound
    # The fewest rows under the bound whose commit plus mean wait meets 150 ms, by hand.
    rows = next(
        n
        for n in range(1, 100)
        if 150 / n < bound and commit_ms + (r := 150 / n / bound) * commit_ms / (2 * (1 - r)) <= 150
    )
    assert rows == math.floor(150 / bound) + 1 == 3
    split = change(result, "hot_row_split:counter")
    assert split.value == rows
    # The split comes first: a design decision, where moving sites is the dearest remedy.
    assert result.what_would_change[0].quantity == "hot_row_split:counter"
    assert (
        'single_cluster is ruled out by HOT-ROW-RATE; it would take "counter" split into 3 rows'
        in (result.summary)
    )


def test_a_row_written_at_several_sites_is_told_to_take_an_owner():
    result = run(HOT.format(rate=150).replace("writer_sites: [a]", "writer_sites: [a, b]"))
    split = change(result, "hot_row_split:counter")
    assert "give it one owner site (a)" in split.message


# -- estimates -----------------------------------------------------------------------------


def test_a_verdict_on_estimates_alone_says_so_first():
    result = run(
        """
        name: coordinates
        requirements: {commit_latency_ms: {p99: 50}, survive: site}
        sites:
          - {name: a, location: {lat: 48.86, lon: 2.35}}
          - {name: b, location: {lat: 50.11, lon: 8.68}}
          - {name: c, location: {lat: 51.5, lon: -0.12}}
        """
    )
    first = result.summary.split(". ")[0]
    assert "estimated" in first and "none measured" in first


def test_one_measured_link_is_not_a_verdict_on_estimates_alone():
    result = garbd(12.3)
    assert not result.summary.startswith("Every round trip here is estimated")


def test_the_json_carries_the_levers_option_and_example():
    result = big_writesets()
    data = json.loads(result.model_dump_json())
    windows = next(w for w in data["what_would_change"] if w["quantity"] == "evs.send_window")
    assert windows["option"] == "single_cluster"
    assert windows["example"] == "evs.user_send_window=256; evs.send_window=512"


def test_a_queued_row_under_a_latency_blocker_still_gets_its_remedies():
    # single_cluster breaks a 10 ms p99 with its 16.5 ms commits; the row at 40/s uses about
    # 66 % of its bound and queues: its wait may be part of what breaks the SLO, so its split
    # (2 rows, each at a third of the bound) and batching are listed; the SLO, which the
    # commit alone breaks, does not enter the split.
    result = run(HOT.format(rate=40).replace("p99: 150", "p99: 10"))
    single = option(result, "single_cluster")
    assert single.blockers == ["COMMIT-LATENCY-SLO"]
    assert change(result, "hot_row_split:counter").value == 2
    assert change(result, "hot_row_batch_ms:counter").unit == "ms"


def test_an_estimated_metro_is_one_cluster_and_told_to_measure_its_links():
    # Three sites within 12 km by their coordinates alone: a private metro path, about
    # 0.7 ms, one cluster. The SLO would break above about 2.9 ms, inside the estimates'
    # range (up to about 5 ms): the lever says to measure the links before relying on it.
    result = run(
        """
        name: metro-coordinates
        requirements: {commit_latency_ms: {p99: 10}, survive: site}
        sites:
          - {name: a, location: {lat: 52.35, lon: 4.90}}
          - {name: b, location: {lat: 52.30, lon: 4.95}}
          - {name: c, location: {lat: 52.33, lon: 4.82}}
        """
    )
    assert result.architecture == "single_cluster"
    assert result.summary.startswith("Every round trip here is estimated from distance")
    rtt = change(result, "worst_link_rtt_ms")
    high = max(link.rtt_estimate_range_ms["high"] for link in result.links)
    assert rtt.current < rtt.value < high
    assert "are estimates, anywhere from" in rtt.message
    assert "measure them before relying on it" in rtt.message
    assert "on a typical path that is about" in rtt.message
