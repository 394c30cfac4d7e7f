"""What the engine must do whatever the topology: monotone answers to monotone changes.

Three properties of the whole pipeline (issue 20), each over topologies drawn here and run
through the public API only (``advisor.parse_topology``, ``advisor.analyse`` and the frozen
``Analysis``):

- more round-trip time never shortens a commit: every measured link's percentiles scaled up
  never lower a cluster's commit p50 or p99 under the same partition of the sites;
- a wider EVS window never lowers the closed-loop throughput of the workload's clients (the
  model breaks it today: two cases pinned as strict xfails);
- measuring one more pair never widens the range of another pair's estimate.

The commit percentiles hold draw for draw: the Monte Carlo runs on fixed seeds (common random
numbers), so a link drawn longer is longer in every draw and the comparison is exact. Example
counts come from tests/hypothesis_profiles.py (``HYPOTHESIS_PROFILE=slow`` runs ten times
more, with a fresh seed).
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from advisor import Analysis, analyse, parse_topology

# Real places, so that floors, fits and estimates are the ones users meet: two metro twins
# (a few km apart: the grouping search finds groups), European and transatlantic distances.
PLACES = {
    "paris-1": (48.8566, 2.3522),
    "paris-2": (48.7262, 2.3652),
    "frankfurt": (50.1109, 8.6821),
    "amsterdam": (52.3676, 4.9041),
    "london": (51.5074, -0.1278),
    "madrid": (40.4168, -3.7038),
    "virginia": (38.9072, -77.0369),
}


def analysed(data: dict[str, Any]) -> Analysis:
    return analyse(parse_topology(yaml.safe_dump(data, sort_keys=False), source=Path("t.yaml")))


@st.composite
def rtt_percentiles(draw: st.DrawFn) -> dict[str, float]:
    """A measured round trip's p50 and p99 [ms]: from a metro link to an ocean crossing."""
    p50 = draw(st.floats(0.2, 90.0).map(lambda x: round(x, 3)))
    tail = draw(st.floats(1.0, 4.0))
    return {"p50": p50, "p99": round(p50 * tail, 3)}


@st.composite
def measurements(draw: st.DrawFn) -> list[dict[str, Any]]:
    """An icmp measurement, sometimes with a tcp_rr one at a write-set size beside it."""
    found: list[dict[str, Any]] = [{"method": "icmp", "percentiles_ms": draw(rtt_percentiles())}]
    if draw(st.integers(0, 3)) == 0:
        found.append(
            {
                "method": "tcp_rr",
                "request_bytes": draw(st.sampled_from([1024, 16384, 65536, 262144])),
                "response_bytes": 128,
                "percentiles_ms": draw(rtt_percentiles()),
            }
        )
    return found


@st.composite
def topologies(
    draw: st.DrawFn,
    *,
    min_sites: int = 2,
    max_sites: int = 4,
    measured: float = 0.8,
    clients: bool = False,
) -> dict[str, Any]:
    """A valid topology of ``min_sites`` to ``max_sites`` places: each pair measured with
    probability ``measured`` (else estimated from the distance), a workload, and ``clients``
    when asked."""
    names = draw(
        st.lists(
            st.sampled_from(sorted(PLACES)), min_size=min_sites, max_size=max_sites, unique=True
        )
    )
    sites: list[dict[str, Any]] = []
    for number, name in enumerate(names):
        lat, lon = PLACES[name]
        site: dict[str, Any] = {"name": name, "location": {"lat": lat, "lon": lon}}
        # The first site holds data and writes: every topology has a commit to look at.
        witness = number > 0 and draw(st.integers(0, 5)) == 0
        site["nodes"] = 0 if witness else draw(st.integers(1, 5))
        if witness:
            site.update(writes=False, arbitrator=True)
        elif number > 0 and draw(st.booleans()):
            site["writes"] = False
        sites.append(site)
    links = [
        {"sites": [a, b], "measurements": draw(measurements())}
        for a, b in itertools.combinations(names, 2)
        if draw(st.floats(0, 1)) < measured
    ]
    p50_bytes = draw(st.sampled_from([256, 2048, 16384, 65536]))
    p99_bytes = p50_bytes * draw(st.sampled_from([1, 8, 64]))
    workload: dict[str, Any] = {
        "commits_per_s": {"avg": draw(st.integers(10, 500)), "peak": draw(st.integers(500, 3000))},
        "writeset_bytes": {"p50": p50_bytes, "p99": p99_bytes},
    }
    if draw(st.booleans()):
        workload["hot_rows"] = [{"name": "counter", "updates_per_s": draw(st.integers(1, 200))}]
    if clients:
        workload["clients"] = {
            "concurrency": draw(st.integers(1, 48)),
            "baseline_txn_latency_ms": draw(st.floats(0.5, 40.0).map(lambda x: round(x, 2))),
            "commits_per_txn": draw(st.integers(1, 3)),
        }
    return {"name": "generated", "sites": sites, "links": links, "workload": workload}


def same_partitions(before: Analysis, after: Analysis) -> list[tuple[Any, Any]]:
    """The options of both analyses that split the sites alike, paired: single_cluster and
    per_site_clusters always do; grouped_clusters when the search chose the same groups."""
    paired = []
    for option in before.options:
        match = [o for o in after.options if o.architecture == option.architecture]
        if match and match[0].groups == option.groups:
            paired.append((option, match[0]))
    return paired


# ---------------------------------------------------------------------------------------------
# More RTT never shortens a commit


def scaled(data: dict[str, Any], factor: float) -> dict[str, Any]:
    """``data`` with every measured percentile of every link times ``factor``."""
    out = copy.deepcopy(data)
    for link in out["links"]:
        for measurement in link["measurements"]:
            given = measurement["percentiles_ms"]
            measurement["percentiles_ms"] = {k: v * factor for k, v in given.items()}
    return out


@examples(ci=25)
@given(topologies(), st.floats(1.01, 4.0))
def test_more_rtt_never_shortens_a_commit(data, factor):
    before, after = analysed(data), analysed(scaled(data, factor))
    pairs = same_partitions(before, after)
    assert {o.architecture for o, _ in pairs} >= {"single_cluster"}
    for option, slower in pairs:
        for cluster, longer in zip(option.clusters, slower.clusters, strict=True):
            assert longer.sites == cluster.sites
            for site in cluster.commit_by_site_ms:
                was, now = cluster.commit_percentiles(site), longer.commit_percentiles(site)
                for key in ("p50", "p99"):
                    assert now[key] >= was[key], (
                        f"{option.architecture} {cluster.sites} at {site}: commit {key} "
                        f"{was[key]} -> {now[key]} ms with every RTT x {factor}"
                    )
        for key in ("p50", "p99"):
            assert slower.commit_latency_ms[key] >= option.commit_latency_ms[key]


# ---------------------------------------------------------------------------------------------
# A wider window never lowers throughput

# Throughput is simulated event by event (the clients' closed loop through one node's EVS send
# path): another window changes the order of the events, and with it which drawn think time,
# path and reply each commit takes, so two runs differ by the simulation's sampling noise as
# well as by the window. That noise is not small: moving every RTT by a hundredth of a
# millisecond, which changes the order of events and little else, can move the rate by a
# few percent (20 clients of 2 KB write sets over three sites 7 to 9 ms apart). The property
# cannot be held more tightly than that noise until the rate has less of it (more simulated
# commits, or each client's draws its own). The cases pinned below lose more than 1 % and keep
# losing it when every RTT moves by up to 0.1 ms: they are the model's, not the noise's.
SIMULATION_NOISE = 0.01

# The model does not hold this property today: the cases pinned below fail, and are strict
# xfails until they pass. The search for more cases is an xfail that may pass: whether it
# meets one within its examples is not fixed (hypothesis' choices here vary from run to run,
# and it meets noise as well as cases), so it is not strict; it stops at the first case,
# unshrunk (shrinking the simulation's inputs takes minutes), and --runxfail shows it.
WINDOWS_FAIL = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="the closed loop gives fewer commits/s at a wider window here",
)


def with_windows(data: dict[str, Any], send_window: int, user_window: int) -> dict[str, Any]:
    out = copy.deepcopy(data)
    out["galera"] = {
        "provider_options": {"evs.send_window": send_window, "evs.user_send_window": user_window}
    }
    return out


def throughput_per_s(data: dict[str, Any], send_window: int, user_window: int) -> float:
    found = analysed(with_windows(data, send_window, user_window))
    throughput = found.option("single_cluster").throughput
    assert throughput is not None
    return throughput.commits_per_s


@pytest.mark.xfail(
    strict=False,
    raises=AssertionError,
    reason="the closed loop gives fewer commits/s at some wider windows: see the cases of "
    "test_a_wider_window_never_lowers_throughput_here",
)
@settings(examples(ci=25), phases=(Phase.explicit, Phase.generate))
@given(
    topologies(max_sites=3, clients=True),
    st.integers(1, 32),
    st.integers(1, 32),
    st.integers(0, 64),
    st.integers(0, 64),
)
def test_a_wider_window_never_lowers_throughput(data, send, user, more_send, more_user):
    # evs.user_send_window is kept at most evs.send_window, as Galera caps it (a user window
    # above the send window is the send window).
    user = min(user, send)
    wider_send = send + more_send
    wider_user = min(user + more_user, wider_send)
    before = analysed(with_windows(data, send, user))
    after = analysed(with_windows(data, wider_send, wider_user))
    pairs = same_partitions(before, after)
    assert {o.architecture for o, _ in pairs} >= {"single_cluster"}
    for option, wider in pairs:
        assert option.throughput is not None and wider.throughput is not None
        was, now = option.throughput.commits_per_s, wider.throughput.commits_per_s
        assert now >= was * (1 - SIMULATION_NOISE), (
            f"{option.architecture}: {was} -> {now} commits/s when the windows (send/user) go "
            f"from {send}/{user} to {wider_send}/{wider_user}"
        )


def measured_sites(
    sites: dict[str, int], p50_ms: dict[tuple[str, str], float], tail: float
) -> dict[str, Any]:
    """A topology of ``sites`` (name: nodes) whose pairs are measured at ``p50_ms``, each
    with a p99 ``tail`` times its p50."""
    return {
        "name": "pinned",
        "sites": [
            {"name": name, "location": dict(zip(("lat", "lon"), PLACES[name], strict=True)),
             "nodes": nodes}
            for name, nodes in sites.items()
        ],
        "links": [
            {"sites": list(pair), "measurements": [
                {"method": "icmp", "percentiles_ms": {"p50": p50, "p99": p50 * tail}}
            ]}
            for pair, p50 in p50_ms.items()
        ],
    }  # fmt: skip


THREE_SITES = (
    {"paris-1": 3, "frankfurt": 3, "amsterdam": 2},
    {("paris-1", "frankfurt"): 9.0, ("paris-1", "amsterdam"): 7.0, ("frankfurt", "amsterdam"): 8.0},
)
TWO_SITES = ({"paris-1": 3, "frankfurt": 3}, {("paris-1", "frankfurt"): 9.0})


# Where the model breaks the property, pinned: (sites, tail, workload, windows before, after
# as send/user). Each case fails until the model follows the property there, or goes if the
# model is right after all (the lab saw queued write sets aggregated, which the first case
# rests on: benchmarks/calibration).
@WINDOWS_FAIL
@pytest.mark.parametrize(
    ("sites", "tail", "workload", "before", "after"),
    [
        pytest.param(
            # 841 commits/s at 9/3, 768 at 9/9. Queued write sets are aggregated into one
            # message; a wider user window sends them one per message, and messages become
            # safe in order, each one drawn commit path after it left: with long tails, the
            # more messages in flight, the longer each waits. Without tails (p99 = p50) the
            # wider window gives more (1,505 -> 1,588).
            THREE_SITES,
            4.0,
            {"writeset_bytes": 2048, "clients": {"concurrency": 27, "commits_per_txn": 2,
                                                 "baseline_txn_latency_ms": 1.0}},
            (9, 3),
            (9, 9),
            id="user window, tails",
        ),
        pytest.param(
            # 31.1 commits/s at 32/16, 30.1 at 64/16: a lone client, write sets of 64 KB at the
            # median and 4 MB at p99 (128 fragments).
            TWO_SITES,
            1.5,
            {"writeset_bytes": {"p50": 65536, "p99": 4 * 2**20},
             "clients": {"concurrency": 1, "baseline_txn_latency_ms": 10.0}},
            (32, 16),
            (64, 16),
            id="send window, large write sets",
        ),
    ],
)  # fmt: skip
def test_a_wider_window_never_lowers_throughput_here(sites, tail, workload, before, after):
    data = measured_sites(*sites, tail)
    data["workload"] = {"commits_per_s": 500, **workload}
    narrow, wide = throughput_per_s(data, *before), throughput_per_s(data, *after)
    assert wide >= narrow * (1 - SIMULATION_NOISE), f"{narrow} -> {wide} commits/s"


# ---------------------------------------------------------------------------------------------
# Measuring one more pair never widens another pair's estimate


@st.composite
def one_more_measured(draw: st.DrawFn) -> tuple[dict[str, Any], tuple[str, str], list[str]]:
    """A topology with at least two unmeasured pairs; one of them (``added``) then gets a
    measurement. Returns the topology, the pair added and the link entry to add."""
    data = draw(topologies(min_sites=3, max_sites=4, measured=0.5))
    names = [s["name"] for s in data["sites"]]
    measured = {frozenset(link["sites"]) for link in data["links"]}
    unmeasured = [p for p in itertools.combinations(names, 2) if frozenset(p) not in measured]
    if len(unmeasured) < 2:  # make room: drop measured pairs until two are unmeasured
        data["links"] = data["links"][: max(len(data["links"]) - (2 - len(unmeasured)), 0)]
        measured = {frozenset(link["sites"]) for link in data["links"]}
        unmeasured = [p for p in itertools.combinations(names, 2) if frozenset(p) not in measured]
    added = draw(st.sampled_from(unmeasured))
    entry = {"sites": list(added), "measurements": draw(measurements())}
    return data, added, entry


@examples(ci=30)
@given(one_more_measured())
def test_measuring_another_pair_never_widens_an_estimate(drawn):
    data, added, entry = drawn
    more = copy.deepcopy(data)
    more["links"].append(entry)
    before, after = analysed(data), analysed(more)
    assert after.link(*added).estimate is None
    estimated = [link for link in before.links if link.estimate is not None]
    assert len(estimated) >= 2
    for link in estimated:
        if set(link.sites) == set(added):
            continue
        was, now = link.estimate, after.link(*link.sites).estimate
        assert was is not None and now is not None
        where = f"{'-'.join(link.sites)} after measuring {'-'.join(added)}: {was} -> {now}"
        assert now.low_ms <= now.p50_ms <= now.high_ms, where
        assert now.high_ms <= was.high_ms, where
        assert now.high_ms - now.low_ms <= was.high_ms - was.low_ms, where
        if now.high_ms >= was.low_ms:  # a path no faster than the floor: the range is inside
            assert now.low_ms >= was.low_ms, where
        # The estimate a link is drawn at is its p50, whatever the report shows.
        p50_ms = float(after.link(*link.sites).rtt.quantile(0.5))
        assert abs(p50_ms - now.p50_ms) <= 1e-9 * max(now.p50_ms, 1.0), where
