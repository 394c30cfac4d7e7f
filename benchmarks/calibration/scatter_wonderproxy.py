"""Where the public Internet's scatter around the estimate comes from, on WonderProxy's whole day.

Run once by hand on the same two files build_rtt_published.py reads (sm86/geo-latency-data,
commit 0ab28d0e); its output is quoted in SOURCE.md ("Scatter of the public Internet"). Not
run at test time: the full data set (30,022 pairs) is not in the repository.

For every pair of servers 100 to 6,000 km apart it takes the error of physics.py's estimate
with the ``internet`` kind, then:

- the median absolute error over all of them, and over those in the benchmark's held-back
  half (SHA-1 of the two names, as benchmarks/estimates.py) that the published sample did
  not put in its fit half;
- each server's own effect: the log of measured over estimate split into one additive term
  per server (alternating medians), and the median error left once both ends' terms are
  taken out;
- whether a server's effect is its place's: the effects of servers within 50 km of each
  other, and the correlation of each effect with the median of the other servers' within
  300 km;
- how many pairs measure less than the fibre floor (a server not where its file says).

Usage: python scatter_wonderproxy.py SERVERS.csv PINGS.csv
"""

from __future__ import annotations

import csv
import hashlib
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from advisor.model import physics

HERE = Path(__file__).resolve().parent


def _fit_half_names() -> set[tuple[str, str]]:
    """The pairs of the published sample's fit half (benchmarks/estimates.py's rule)."""
    names = set()
    for file in ("rtt-by-distance.csv", "rtt-published.csv"):
        with (HERE / file).open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                key = tuple(sorted((row["a"], row["b"])))
                if int(hashlib.sha1("|".join(key).encode()).hexdigest(), 16) % 2 == 0:
                    names.add((key[0], key[1]))
    return names


@dataclass(frozen=True)
class _Pair:
    a: str  # server ids
    b: str
    error: float  # |estimate - measured| / measured
    log_ratio: float  # log(measured / estimate)
    held_unseen: bool  # in the held-back half, not in the published sample's fit half


def _additive_effects(pairs: list[_Pair]) -> dict[str, float]:
    """One term per server such that log(measured / estimate) ~ u[a] + u[b] (L1, by
    alternating medians, 20 rounds)."""
    effect: dict[str, float] = defaultdict(float)
    for _ in range(20):
        parts: dict[str, list[float]] = defaultdict(list)
        for p in pairs:
            parts[p.a].append(p.log_ratio - effect[p.b])
            parts[p.b].append(p.log_ratio - effect[p.a])
        effect = defaultdict(float, {s: float(np.median(v)) for s, v in parts.items()})
    return effect


def main() -> None:
    servers_csv, pings_csv = sys.argv[1:3]
    with open(servers_csv, newline="") as f:
        servers = {r["id"]: r for r in csv.DictReader(f)}
    avg = {}
    with open(pings_csv, newline="") as f:
        for r in csv.DictReader(f):
            avg[(r["source"], r["destination"])] = float(r["avg"])
    where = {s: (float(r["latitude"]), float(r["longitude"])) for s, r in servers.items()}
    name = {s: f"WonderProxy {r['title']} ({r['country']})" for s, r in servers.items()}
    fit_half = _fit_half_names()
    ids = sorted(servers, key=int)
    pairs: list[_Pair] = []
    below_floor = 0
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            if (a, b) not in avg:
                continue
            km = float(physics.great_circle_km(*where[a], *where[b]))
            if not physics.METRO_MAX_KM <= km < physics.LONG_HAUL_MIN_KM:
                continue
            regions = sorted((physics.coarse_region(*where[a]), physics.coarse_region(*where[b])))
            estimate = physics.estimated_rtt_ms(km, (regions[0], regions[1]), "internet")
            rtt = avg[(a, b)]
            below_floor += rtt < float(physics.floor_rtt_ms(km))
            key = tuple(sorted((name[a], name[b])))
            held = int(hashlib.sha1("|".join(key).encode()).hexdigest(), 16) % 2 == 1
            pairs.append(
                _Pair(
                    a,
                    b,
                    abs(estimate - rtt) / rtt,
                    float(np.log(rtt / estimate)),
                    held and (key[0], key[1]) not in fit_half,
                )
            )
    print(f"pairs of 100 to 6,000 km: {len(pairs)}; below the fibre floor: {below_floor}")
    print(f"median absolute error, all: {statistics.median(p.error for p in pairs):.1%}")
    held = [p.error for p in pairs if p.held_unseen]
    print(
        f"median absolute error, held-back half not in the sample's fit half ({len(held)}): "
        f"{statistics.median(held):.1%}"
    )
    _same_metros(pairs, where)
    effect = _additive_effects(pairs)
    left = [abs(1 / np.exp(p.log_ratio - effect[p.a] - effect[p.b]) - 1) for p in pairs]
    print(f"median absolute error, each server's own term taken out: {statistics.median(left):.1%}")
    print("servers within 50 km of each other (term, as a factor on the estimate):")
    near = sorted(effect)
    for i, s in enumerate(near):
        for t in near[i + 1 :]:
            km = float(physics.great_circle_km(*where[s], *where[t]))
            if km < 50:
                print(
                    f"  {servers[s]['title']} x{np.exp(effect[s]):.2f} | "
                    f"{servers[t]['title']} x{np.exp(effect[t]):.2f} ({km:.0f} km)"
                )
    own, neighbours = [], []
    for s in near:
        around = [
            effect[t]
            for t in near
            if t != s and float(physics.great_circle_km(*where[s], *where[t])) < 300
        ]
        if around:
            own.append(effect[s])
            neighbours.append(float(np.median(around)))
    print(
        f"correlation of a server's term with its neighbours' (within 300 km, {len(own)} "
        f"servers): {np.corrcoef(own, neighbours)[0, 1]:.2f}"
    )
    worst = sorted(near, key=lambda s: -abs(effect[s]))[:12]
    print(
        "largest terms: "
        + "; ".join(
            f"{servers[s]['title']} ({servers[s]['country']}) x{np.exp(effect[s]):.2f}"
            for s in worst
        )
    )


def _same_metros(pairs: list[_Pair], where: dict[str, tuple[float, float]]) -> None:
    """The spread of round trips between the same two metros (servers within 50 km of a
    metro's first server, in id order) over different servers."""
    metros: list[tuple[float, float]] = []
    metro_of = {}
    for s in sorted(where, key=int):
        for m, centre in enumerate(metros):
            if float(physics.great_circle_km(*where[s], *centre)) < 50:
                metro_of[s] = m
                break
        else:
            metro_of[s] = len(metros)
            metros.append(where[s])
    groups: dict[tuple[int, int], list[_Pair]] = defaultdict(list)
    for p in pairs:
        ends = sorted((metro_of[p.a], metro_of[p.b]))
        groups[(ends[0], ends[1])].append(p)
    spread = []
    for group in groups.values():
        if len(group) > 1:
            rtts = [float(np.exp(p.log_ratio)) for p in group]  # measured / the same estimate
            centre = float(np.median(rtts))
            spread += [abs(centre - r) / r for r in rtts]
    shared = sum(len(g) > 1 for g in groups.values())
    print(
        f"{len(metros)} metros; {shared} metro pairs measured by more than one server pair "
        f"({len(spread)} pairs): median distance from their metro pair's median "
        f"{statistics.median(spread):.1%}"
    )


if __name__ == "__main__":
    main()
