"""Build rtt-published.csv: published measured round trips added to rtt-by-distance.csv.

Run once by hand, from the two public sources below (not at test time; the CSV is the
artefact). Every row names its source and date; nothing is computed but the selection.

- WonderProxy's "A day in the life of the Internet" pings (public Internet between
  hosting-provider servers, 2020-07-19 to 2020-07-20), as published in the repository
  sm86/geo-latency-data (commit 0ab28d0e): pings-2020-07-19-2020-07-20-grouped.csv
  (the ``avg`` column, direction with the smaller server id first) with the servers'
  coordinates from servers-2020-07-19.csv. Its 246 servers make about 30,000 pairs; kept
  deterministically, from the coordinates and ids alone (never the round trip): every pair
  under 100 km (the metro band has few published pairs), every pair whose SHA-1 of
  "idA-idB" ends in 00..05 in hex (about 2.3 %), and, between two coarse regions
  (advisor.model.physics.coarse_region) that this sample gives fewer than 20 pairs, every
  pair whose SHA-1 ends in 00..3f (25 %), so that each region pair the route factors are
  fitted on has pairs enough.
- AWS inter-region P50 over one year from https://www.cloudping.co, as snapshotted in
  oaustegard/oaustegard.github.io web-utilities/aws-ping-p50-1y.json (commit 4a1414db):
  every pair of the 32 regions, direction with the alphabetically first region as source.
  AWS publishes the region's metro, not a site: the coordinates are the named city's.

Pairs already in rtt-by-distance.csv (same two places, same source) are left out.

Each row's ``path`` says what kind of path it measured, as its source says:
``internet`` for WonderProxy's pings (the data set's own description: servers at hosting
providers pinging each other over the public Internet), ``backbone`` for CloudPing's AWS
P50s (probes between AWS regions, which AWS interconnects through its own private global
network: https://docs.aws.amazon.com/whitepapers/latest/aws-fault-isolation-boundaries/regions.html).
Nothing about a row is guessed beyond its source.

Usage: python build_rtt_published.py SERVERS.csv PINGS.csv AWS.json > rtt-published.csv
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import sys
from collections import Counter
from itertools import combinations

from advisor.model.physics import coarse_region

COLUMNS = [
    "a",
    "a_lat",
    "a_lon",
    "b",
    "b_lat",
    "b_lon",
    "rtt_ms",
    "stat",
    "source",
    "date",
    "note",
    "path",
]

WP_SOURCE = (
    "sm86/geo-latency-data pings-2020-07-19-2020-07-20-grouped.csv + servers-2020-07-19.csv "
    '(WonderProxy "A day in the life of the Internet" data, '
    "https://wonderproxy.com/blog/a-day-in-the-life-of-the-internet/)"
)
WP_STAT = (
    "many measurements: 'avg' column of a day-long grouped summary of hourly ping -c 30 runs "
    "(grouping method not documented)"
)
AWS_SOURCE = (
    "oaustegard/oaustegard.github.io web-utilities/aws-ping-p50-1y.json (snapshot of "
    "https://www.cloudping.co/api/latencies?percentile=p_50&timeframe=1Y)"
)
AWS_STAT = "many measurements: P50 over 1 year (cloudping.co)"

# The city of each AWS region (AWS names a metro or a country, not a site).
AWS_CITY = {
    "af-south-1": ("Cape Town", -33.92, 18.42),
    "ap-east-1": ("Hong Kong", 22.32, 114.17),
    "ap-northeast-1": ("Tokyo", 35.68, 139.69),
    "ap-northeast-2": ("Seoul", 37.57, 126.98),
    "ap-northeast-3": ("Osaka", 34.69, 135.50),
    "ap-south-1": ("Mumbai", 19.08, 72.88),
    "ap-south-2": ("Hyderabad", 17.39, 78.49),
    "ap-southeast-1": ("Singapore", 1.29, 103.85),
    "ap-southeast-2": ("Sydney", -33.87, 151.21),
    "ap-southeast-3": ("Jakarta", -6.21, 106.85),
    "ap-southeast-4": ("Melbourne", -37.81, 144.96),
    "ap-southeast-5": ("Malaysia; Kuala Lumpur assumed", 3.14, 101.69),
    "ap-southeast-7": ("Thailand; Bangkok assumed", 13.76, 100.50),
    "ca-central-1": ("Canada Central; Montreal assumed", 45.50, -73.57),
    "ca-west-1": ("Calgary", 51.05, -114.07),
    "eu-central-1": ("Frankfurt", 50.11, 8.68),
    "eu-central-2": ("Zurich", 47.37, 8.54),
    "eu-north-1": ("Stockholm", 59.33, 18.07),
    "eu-south-1": ("Milan", 45.46, 9.19),
    "eu-south-2": ("Spain (Aragon); Zaragoza assumed", 41.65, -0.88),
    "eu-west-1": ("Ireland; Dublin assumed", 53.35, -6.26),
    "eu-west-2": ("London", 51.51, -0.13),
    "eu-west-3": ("Paris", 48.86, 2.35),
    "il-central-1": ("Tel Aviv", 32.09, 34.78),
    "me-central-1": ("UAE; Dubai assumed", 25.20, 55.27),
    "me-south-1": ("Bahrain; Manama assumed", 26.23, 50.59),
    "mx-central-1": ("Mexico Central; Queretaro assumed", 20.59, -100.39),
    "sa-east-1": ("Sao Paulo", -23.55, -46.63),
    "us-east-1": ("N. Virginia; Ashburn assumed", 39.04, -77.49),
    "us-east-2": ("Ohio; Columbus assumed", 39.96, -83.00),
    "us-west-1": ("N. California; San Jose assumed", 37.34, -121.89),
    "us-west-2": ("Oregon; Boardman assumed", 45.84, -119.70),
}


def _km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    h = (
        math.sin((p2 - p1) / 2) ** 2
        + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    )
    return 2 * 6371.0088 * math.asin(math.sqrt(min(h, 1.0)))


def _existing() -> set[tuple[str, str]]:
    with open("rtt-by-distance.csv", newline="") as f:
        return {tuple(sorted((r["a"], r["b"]))) for r in csv.DictReader(f)}  # type: ignore[misc]


def wonderproxy(servers_csv: str, pings_csv: str) -> list[dict[str, str]]:
    with open(servers_csv, newline="") as f:
        servers = {r["id"]: r for r in csv.DictReader(f)}
    avg: dict[tuple[str, str], float] = {}
    with open(pings_csv, newline="") as f:
        for r in csv.DictReader(f):
            avg[(r["source"], r["destination"])] = float(r["avg"])
    existing = _existing()

    def regions(a: str, b: str) -> tuple[str, ...]:
        ends = (servers[a], servers[b])
        return tuple(
            sorted(coarse_region(float(s["latitude"]), float(s["longitude"])) for s in ends)
        )

    def tail(a: str, b: str) -> int:
        return int(hashlib.sha1(f"{a}-{b}".encode()).hexdigest()[-2:], 16)

    candidates = [(a, b) for a, b in combinations(sorted(servers, key=int), 2) if (a, b) in avg]
    sampled = Counter(regions(a, b) for a, b in candidates if tail(a, b) < 6)
    rows = []
    for a, b in candidates:
        sa, sb = servers[a], servers[b]
        lat_a, lon_a = float(sa["latitude"]), float(sa["longitude"])
        lat_b, lon_b = float(sb["latitude"]), float(sb["longitude"])
        km = _km(lat_a, lon_a, lat_b, lon_b)
        sparse = sampled[regions(a, b)] < 20
        if not (km < 100 or tail(a, b) < 6 or (sparse and tail(a, b) < 64)):
            continue
        name_a = f"WonderProxy {sa['title']} ({sa['country']})"
        name_b = f"WonderProxy {sb['title']} ({sb['country']})"
        if tuple(sorted((name_a, name_b))) in existing:
            continue
        reverse = avg.get((b, a))
        rows.append(
            {
                "a": name_a,
                "a_lat": sa["latitude"],
                "a_lon": sa["longitude"],
                "b": name_b,
                "b_lat": sb["latitude"],
                "b_lon": sb["longitude"],
                "rtt_ms": f"{avg[(a, b)]:g}",
                "stat": WP_STAT,
                "source": WP_SOURCE,
                "date": "2020-07-19 to 2020-07-20",
                "note": (
                    f"public Internet between hosting-provider servers {a} and {b}; "
                    f"reverse avg={reverse:g}; coords are WonderProxy server-file coords"
                    if reverse is not None
                    else f"public Internet between hosting-provider servers {a} and {b}"
                ),
                "path": "internet",
            }
        )
    return rows


def aws(json_path: str) -> list[dict[str, str]]:
    with open(json_path) as f:
        data = json.load(f)["data"]
    existing = _existing()
    rows = []
    for a, b in combinations(sorted(data), 2):
        if b not in data[a]:
            continue
        (city_a, lat_a, lon_a), (city_b, lat_b, lon_b) = AWS_CITY[a], AWS_CITY[b]
        name_a, name_b = f"AWS {a} ({city_a})", f"AWS {b} ({city_b})"
        if tuple(sorted((name_a, name_b))) in existing:
            continue
        reverse = data[b].get(a)
        rows.append(
            {
                "a": name_a,
                "a_lat": f"{lat_a:.2f}",
                "a_lon": f"{lon_a:.2f}",
                "b": name_b,
                "b_lat": f"{lat_b:.2f}",
                "b_lon": f"{lon_b:.2f}",
                "rtt_ms": f"{data[a][b]:g}",
                "stat": AWS_STAT,
                "source": AWS_SOURCE,
                "date": "snapshot committed 2025-05-29 (1-year window before it)",
                "note": (
                    "AWS backbone as measured by cloudping.co (TCP-based probes; its "
                    "same-region cells read 1.2-8.2 ms, so small values carry a few ms of "
                    f"tool overhead); {a}->{b}={data[a][b]:g}, reverse={reverse:g}; "
                    "coords are the named city's"
                ),
                "path": "backbone",
            }
        )
    return rows


def main() -> None:
    servers_csv, pings_csv, aws_json = sys.argv[1:4]
    writer = csv.DictWriter(sys.stdout, COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(wonderproxy(servers_csv, pings_csv) + aws(aws_json))


if __name__ == "__main__":
    main()
