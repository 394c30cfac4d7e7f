"""Values kept across topologies (a fleet worker's) are those of their own inputs.

Estimate distributions, write-set round trips of estimated links and their pair draws are
kept by plain-value keys (``advisor.engine.value_cache``). Each test here evaluates a base
topology first, so its values are kept, then one that differs from it in a single input the
key must cover, and checks the kept values against a computation with every cache emptied:
a key that missed that input would hand back the base topology's values.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from advisor.engine import evaluator as evaluator_module
from advisor.engine.evaluator import Evaluator
from advisor.engine.evidence import estimate_distribution, estimated_p50_ms, gather_links
from advisor.engine.value_cache import ValueCache
from advisor.engine.workload import writeset_sizes
from advisor.inputs.loading import parse_topology
from advisor.model.rtt import RttDistribution

BASE = {
    "sites": [("paris", 48.8566, 2.3522), ("chicago", 41.8781, -87.6298)],
    "bandwidth": None,
    "p99_bytes": 65536,
    "draws": 2000,
}


def topology_text(sites, bandwidth, p99_bytes):
    lines = [
        "name: t",
        "requirements: {commit_latency_ms: {p99: 100}, survive: node}",
        "sites:",
        *(
            f"  - {{name: {n}, location: {{lat: {lat}, lon: {lon}}}, nodes: 3}}"
            for n, lat, lon in sites
        ),
        "workload:",
        f"  writeset_bytes: {{p50: 2048, p99: {p99_bytes}}}",
    ]
    if bandwidth is not None:
        lines += [
            "links:",
            f"  - {{sites: [{sites[0][0]}, {sites[1][0]}], bandwidth_mbps: {bandwidth}}}",
        ]
    return textwrap.dedent("\n".join(lines)) + "\n"


def pair_draws(sites, bandwidth, p99_bytes, draws):
    """The draws of the two sites' link and its write-set round trip at 64 kB."""
    loaded = parse_topology(topology_text(sites, bandwidth, p99_bytes))
    links = gather_links(loaded)
    engine = Evaluator(
        loaded.topology, links, writeset_bytes=writeset_sizes(loaded.topology), draws=draws
    )
    small, at_burst = engine.pair_draws(sites[0][0], sites[1][0])
    writeset = links[0].writeset_rtt(65536.0)[0]
    return small.copy(), at_burst.copy(), writeset.quantile(np.linspace(0, 1, 101))


def empty_caches():
    evaluator_module._PAIR_DRAWS.clear()
    evaluator_module._MANY_PAIR_DRAWS.clear()


def assert_same(got, want):
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize(
    "change",
    [
        # other names, the same places: other common random numbers
        {"sites": [("lyon", 48.8566, 2.3522), ("chicago", 41.8781, -87.6298)]},
        # another place: another estimate p50
        {"sites": [("paris", 52.52, 13.405), ("chicago", 41.8781, -87.6298)]},
        {"bandwidth": 20.0},  # the TCP model's serialisation
        {"p99_bytes": 1_048_576},  # each draw's burst and the high anchor
        {"draws": 1000},
    ],
    ids=["names", "estimate", "bandwidth", "bursts", "draws"],
)
def test_a_kept_value_is_never_another_inputs(change):
    check_kept_values(BASE, {**BASE, **change})


def test_kept_draws_follow_each_draws_burst_not_only_the_anchors():
    # Both write-set distributions reach the send window's burst (4 x 32,728 bytes) and
    # share their p50: the anchors are equal, only the bursts of single draws differ.
    # At the full 20,000 draws: the cache of many draws.
    base = {**BASE, "p99_bytes": 2_000_000, "draws": 20_000}
    changed = {**base, "p99_bytes": 4_000_000}
    anchors = []
    for sizes in (base, changed):
        loaded = parse_topology(topology_text(sizes["sites"], None, sizes["p99_bytes"]))
        engine = Evaluator(
            loaded.topology, gather_links(loaded), writeset_bytes=writeset_sizes(loaded.topology)
        )
        anchors.append(engine._anchor_bytes)
    assert anchors[0] == anchors[1] == (2048.0, 130912.0)
    check_kept_values(base, changed)


def check_kept_values(base_inputs, changed):
    empty_caches()
    base = pair_draws(**base_inputs)
    kept = pair_draws(**changed)  # after the base: its values are in the caches
    empty_caches()
    fresh = pair_draws(**changed)
    assert_same(kept, fresh)
    # the change matters, so a key without it would have returned the base's values
    assert any(
        g.shape != b.shape or not np.array_equal(g, b) for g, b in zip(kept, base, strict=True)
    )


def test_kept_and_computed_pair_draws_agree_and_are_shared_read_only():
    empty_caches()
    first = pair_draws(**BASE)
    assert len(evaluator_module._PAIR_DRAWS) == 1
    again = pair_draws(**BASE)
    assert len(evaluator_module._PAIR_DRAWS) == 1  # found, not drawn again
    assert_same(first, again)
    (kept,) = (value for value, _ in evaluator_module._PAIR_DRAWS._entries.values())
    assert not any(values.flags.writeable for values in kept)


def test_only_the_estimate_object_itself_tells_its_p50():
    estimate = estimate_distribution(12.5)
    assert estimated_p50_ms(estimate) == 12.5
    equal = RttDistribution.from_percentiles({"p50": 12.5, "p95": 12.5 * 1.056})
    assert estimated_p50_ms(equal) is None  # equal values, but nothing says where from
    assert estimated_p50_ms(estimate.map(lambda v: v + 1.0)) is None


def test_a_value_cache_drops_the_least_recently_used_within_its_bounds():
    cache: ValueCache[str] = ValueCache(max_entries=2, max_bytes=100)
    cache.put("a", "A", 10)
    cache.put("b", "B", 10)
    assert cache.get("a") == "A"  # now "b" is the least recently used
    cache.put("c", "C", 10)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == ("A", None, "C")
    cache.put("d", "D", 95)  # over the bytes: both others go
    assert (len(cache), cache.held_bytes, cache.get("d")) == (1, 95, "D")
    cache.put("e", "E", 101)  # larger than the budget: not kept
    assert (cache.get("e"), cache.get("d")) == (None, "D")
