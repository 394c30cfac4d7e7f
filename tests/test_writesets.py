"""Write-set sizes end to end: the commit percentiles are a mixture over the workload's sizes,
each costed through Galera's pipeline; sized tcp_rr measurements reach the tail rule; the
explanation of a large write set names its messages, rounds and the windows that change it."""

from __future__ import annotations

import math
import textwrap

import pytest

from advisor.engine.workload import writeset_sizes
from advisor.inputs.loading import parse_topology
from advisor.recommendation import recommend

BIG = """
name: big-writesets
requirements: {survive: node}
sites:
  - {name: a, nodes: 3}
  - {name: b, nodes: 3}
  - {name: c, nodes: 1, writes: false}
links:
  - sites: [a, b]
    bandwidth_mbps: 1000
    measurements:
      - {method: icmp, samples_ms: [10.0, 10.1, 10.2, 10.1]}
      - {method: tcp_rr, request_bytes: 524288, response_bytes: 1024,
         percentiles_ms: {p50: 16.0, p99: 40.0, max: 230.0}}
  - {sites: [a, c], measurements: [{method: icmp, samples_ms: [10.0, 10.1]}]}
  - {sites: [b, c], measurements: [{method: icmp, samples_ms: [10.0, 10.1]}]}
workload:
  writeset_bytes: {p50: 2048, p99: SIZE}
"""


def run(p99_bytes: int):
    return recommend(parse_topology(textwrap.dedent(BIG).replace("SIZE", str(p99_bytes))))


def single(result):
    return next(o for o in result.options if o.architecture == "single_cluster")


def test_a_p99_write_set_of_512_kb_raises_the_p99_commit_above_its_round_trip():
    result = run(524_288)
    link = next(link for link in result.links if set(link.sites) == {"a", "b"})
    # The 512 KB round trip measured a-b: 16 ms at the median.
    assert link.writeset_rtt_ms["p99_size_p50"] == pytest.approx(16.0)
    # 512 KB is 17 messages: the design widens the windows to send it at once (one path of
    # 16 ms and the route to the writer, not five), and predicts with what it applies; with
    # the default windows 4/2 pinned it would take five commit paths of 10+ ms.
    assert 16.0 < single(result).commit_latency_ms["p99"] < 5 * 16.0
    pinned = recommend(
        parse_topology(
            textwrap.dedent(BIG).replace("SIZE", "524288")
            + "galera: {provider_options: {evs.send_window: 4, evs.user_send_window: 2}}\n"
        )
    )
    assert single(pinned).commit_latency_ms["p99"] > 5 * 16.0
    # A small p99 write set keeps the p99 commit near one path (b's commits add the 10 ms
    # round trip to the writer at a).
    assert single(run(4_096)).commit_latency_ms["p99"] < 50.0 + 10.2


def test_the_median_commit_follows_the_median_write_set():
    # Sizes interpolate in log space: a p99 of 512 KB moves the median commit little.
    small, large = single(run(4_096)), single(run(524_288))
    assert large.commit_latency_ms["p50"] < small.commit_latency_ms["p50"] * 1.5


def test_the_report_explains_a_large_write_set_in_messages_rounds_and_windows():
    result = run(524_288)
    (finding,) = [
        f for f in result.findings if f.rule == "WRITESET-ROUNDS" and f.option == "single_cluster"
    ]
    # ceil(524288 / 32728) = 17 messages; rounds = ceil(17 / 4) - 1 = 4, the 17th alone:
    # 5 paths; windows that send it at once: user 32 (>= 17), send 64.
    assert finding.values["messages"] == 17
    assert finding.values["paths"] == 5
    assert (finding.values["user_send_window"], finding.values["send_window"]) == (32, 64)
    assert "17 EVS messages" in finding.message
    assert "evs.user_send_window=32; evs.send_window=64" in finding.message


def test_a_sized_tcp_rr_tail_far_below_the_timers_raises_no_tail_rule():
    # The 512 KB tcp_rr maximum of 230 ms is 14x its median, but a silence a tenth of the
    # shortest EVS timer (keepalive 1 s) reaches none: the timers are judged in ms, not by
    # a ratio (issue 21 part 2).
    result = run(4_096)
    assert not [f for f in result.findings if f.rule == "RTT-TAIL-INSTABILITY"]


def test_sizes_mean_comes_from_the_whole_distribution():
    # p50 2 KB, p99 64 KB, log-interpolated: about 10.7 KB on average, 5x the median, which
    # is what the replicated bytes per second and the messages per commit follow.
    loaded = parse_topology("name: t\nsites: [{name: a}]\n")
    sizes = writeset_sizes(loaded.topology)
    assert (sizes.p50_bytes, sizes.p99_bytes) == (2048.0, 65536.0)
    assert sizes.mean_bytes == pytest.approx(10_655.5, abs=1.0)


def test_routed_writes_pay_the_wan_round_trip_next_to_the_hot_row_bounds():
    text = textwrap.dedent(
        """
        name: routed
        requirements: {survive: node}
        sites: [{name: a}, {name: b}]
        links:
          - {sites: [a, b], measurements: [{method: icmp, samples_ms: [20.0]}]}
        workload:
          writeset_bytes: {p50: 1000, p99: 1000}
          hot_rows: [{name: "stock sku=7", updates_per_s: 100, writer_sites: [a, b]}]
        """
    )
    result = recommend(parse_topology(text))
    (row,) = result.hot_rows
    per_site = row.write_latency_ms["per_site_clusters"]
    # Owner a: a's own commit; b's statement is routed to a: one 20 ms round trip more.
    assert per_site["b"] == pytest.approx(per_site["a"] + 20.0)
    # One cluster, one writer (at a): b's statement crosses the WAN to it all the same.
    single = row.write_latency_ms["single_cluster"]
    assert single["b"] == pytest.approx(single["a"] + 20.0)


def test_sizes_interpolate_the_logarithm_between_the_given_percentiles():
    from advisor.engine.workload import SizeDistribution, writeset_distribution

    topology = parse_topology(textwrap.dedent(BIG).replace("SIZE", "65536")).topology
    sizes = writeset_distribution(topology)
    assert isinstance(sizes, SizeDistribution)
    # The given percentiles exactly; halfway between p50 and p99 in probability, the
    # geometric mean of 2 KB and 64 KB, sqrt(2048 x 65536) = 11,585.2 bytes; flat beyond.
    at = sizes.quantile_bytes([0.0, 0.5, 0.745, 0.99, 1.0])
    assert at[[0, 1, 3, 4]].tolist() == pytest.approx([2048.0, 2048.0, 65536.0, 65536.0])
    assert at[2] == pytest.approx(math.sqrt(2048 * 65536), rel=1e-5)
    figures = writeset_sizes(topology)
    assert (figures.p50_bytes, figures.p99_bytes) == (2048.0, 65536.0)
