"""Propagation physics: the round trip that no tuning removes.

Pure functions, scalar or numpy array in, same out. Speeds are per km of *medium*; a route
of ``route_km`` or, failing that, the great-circle ``distance_km`` sets the floor. Sources:
at each constant below.

Glossary: ``distance_km`` great-circle distance; ``route_km`` cable or path length;
``floor_rtt_ms`` the physical minimum round trip; ``light_speed_fraction`` floor / measured.
"""

from __future__ import annotations

__all__ = [
    "ESTIMATE_FIXED_OVERHEAD_MS",
    "ESTIMATE_FIXED_OVERHEAD_MS_BY_PATH",
    "ESTIMATE_P95_OVER_P50",
    "ESTIMATE_ROUTE_FACTOR",
    "ESTIMATE_ROUTE_FACTOR_BY_PATH",
    "ESTIMATE_SCATTER_FACTOR",
    "ESTIMATE_SCATTER_FACTOR_BY_BAND",
    "ESTIMATE_SCATTER_FACTOR_BY_PATH",
    "LONG_HAUL_MIN_KM",
    "METRO_MAX_KM",
    "METRO_OVERHEAD_MS",
    "PATH_KINDS",
    "ROUTE_FACTOR_BY_REGIONS",
    "ROUTE_FACTOR_BY_REGIONS_BY_PATH",
    "SPEED_OF_LIGHT_KM_PER_MS",
    "applied_path",
    "bounded_estimate_ms",
    "coarse_region",
    "distance_band",
    "estimate_parts_ms",
    "estimate_range_ms",
    "estimated_rtt_ms",
    "floor_rtt_ms",
    "great_circle_km",
    "light_speed_fraction",
    "max_distance_km",
    "propagation_km_per_ms",
    "route_factor",
    "scatter_factor",
    "typical_distance_km",
]

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

# c, exact by the SI definition of the metre: 299,792.458 km/s.
SPEED_OF_LIGHT_KM_PER_MS = 299.792458
EARTH_RADIUS_KM = 6371.0088  # mean radius (IUGG); haversine error vs WGS-84 well under 1 %

# Speed of a signal per km of medium, as a fraction of c. Sources: fibre, 4.897 us/km at
# 1550 nm: https://mapyourtech.com/the-5-microsecond-rule-fiber-propagation-latency-per-kilometer
# copper and coax, velocity factors:
# https://technologyuk.net/telecommunications/telecom-principles/velocity-of-propagation.shtml
# microwave, light slowed by 0.03 % in air: https://oklo.org/2021/12/29/a-project-outcomes-report
# hollow-core fibre: vendors' and press figures (about 3.3 us/km); no primary paper confirmed.
_VELOCITY_FACTOR = {
    "fiber": 1 / 1.4682,  # standard single-mode fibre, group index at 1550 nm: 204.19 km/ms
    "hollow_core_fiber": 0.997,  # light travels in air inside the core
    "copper": 0.66,  # twisted pair / solid-dielectric coax nominal velocity of propagation
    "microwave": 1 / 1.0003,  # free-space radio through air (HFT networks): 299.70 km/ms
    "leo_satellite": 1.0,  # vacuum between satellites, plus the up/down legs below
    "geo_satellite": 1.0,
}
# Fixed up-and-down legs of a bent-pipe satellite hop: 4 x altitude / c (geometry; measured
# LEO and GEO round trips:
# https://blog.apnic.net/2022/11/28/fact-checking-starlinks-performance-figures/).
_SATELLITE_ALTITUDE_KM = {"leo_satellite": 550.0, "geo_satellite": 35_786.0}

# -- Estimate for a pair nobody measured --------------------------------------------------
#
# Fitted by benchmarks/estimates.py (``fit``) on the fit half of 2,611 published measured round
# trips (benchmarks/calibration/rtt-by-distance.csv and rtt-published.csv: the providers'
# inter-region tables of AWS via CloudPing, Azure, Google Cloud and IBM Cloud, WonderProxy's
# public-Internet pings between hosting providers, colocation figures; every row with its
# source and date); tests/test_estimates_benchmark.py checks that the fit still gives these
# numbers, and BENCHMARKS.md ("Estimates from coordinates") reports the error of both halves.
#
# Three bands of great-circle distance, each a different kind of path:
# - under METRO_MAX_KM, a private metro path (dark fibre, a carrier wave, a provider's
#   zone interconnect): METRO_OVERHEAD_MS + ESTIMATE_ROUTE_FACTOR x floor, well under 3 ms;
# - from there, the backbone: ESTIMATE_FIXED_OVERHEAD_MS + k x floor, where k is the route
#   stretch of the two ends' coarse regions (ROUTE_FACTOR_BY_REGIONS),
#   ESTIMATE_ROUTE_FACTOR for a region pair with fewer than five fit pairs or ends without
#   coordinates;
# - beyond LONG_HAUL_MIN_KM the same formula, where the route decides: a path between
#   continents follows the cable systems, e.g. Sao Paulo to Sydney through the US,
#   Johannesburg to Sao Paulo through Europe.
# Each band's range runs from the floor to the estimate times its scatter factor
# (ESTIMATE_SCATTER_FACTOR_BY_BAND, the 95th percentile of measured over estimate).
METRO_MAX_KM = 100.0
LONG_HAUL_MIN_KM = 6000.0
# The backbone fit rtt = a + k x floor over the fit pairs of 100 to 6,000 km (least mean
# absolute log error, the providers' tables and the public-Internet pings weighing the same
# however many pairs each published): a, the fixed per-path overhead from 100 km up
# (exchanges, routers, hypervisors) [ms]...
ESTIMATE_FIXED_OVERHEAD_MS = 3.6
# ... and k, the route stretch of a path between regions without a factor of their own, and
# of a private metro path [ratio].
ESTIMATE_ROUTE_FACTOR = 2.18
# A private metro path's fixed part [ms]: two routers and the hosts' stacks. Not fitted:
# the published pairs under 100 km are public-Internet pings between hosting providers
# (median about 4 ms, some routed abroad), which is not what two data centres joined by
# dark fibre or a carrier wave see. Published private paths: customer machine to customer
# machine through two routers over Mythic Beasts' own lit Docklands fibre, 0.5 ms
# (https://www.mythic-beasts.com/blog/2013/08/05/dark-fibre/, 2013); AWS zone to zone in
# eu-west-1, 0.82-0.83 ms average including tens of km of fibre
# (https://lukasliesis.medium.com/what-is-aws-ec2-cross-availability-zones-network-lag-vs-inside-same-zone-827a4e06b6d7,
# 2022); across all AWS zone pairs 0.25-3.37 ms best of 50 pings
# (https://www.xkyle.com/Measuring-AWS-Region-and-AZ-Latency/). The public Internet's
# scatter around it is the metro band's scatter factor, fitted.
METRO_OVERHEAD_MS = 0.5
# Route stretch by pair of coarse regions (coarse_region), each the median of
# (rtt - overhead) / floor over the fit pairs from 100 km up between those regions, weighted
# as the backbone fit (number of fit pairs in the comment). Within a region it is that
# region's own backbone stretch; between regions it holds the detour of the cables, e.g.
# Oceania-South America 2.5 (through the US), Africa-South America 4.36 (through Europe).
ROUTE_FACTOR_BY_REGIONS: dict[tuple[str, str], float] = {
    ("AF", "EAS"): 3.59,  # 15
    ("AF", "EU"): 1.97,  # 110
    ("AF", "ME"): 3.3,  # 5
    ("AF", "NA"): 1.79,  # 70
    ("AF", "OC"): 3.76,  # 8
    ("AF", "SA"): 4.36,  # 18
    ("AF", "SAS"): 3.54,  # 13
    ("EAS", "EAS"): 2.02,  # 53
    ("EAS", "EU"): 2.36,  # 62
    ("EAS", "ME"): 3.12,  # 27
    ("EAS", "NA"): 1.53,  # 49
    ("EAS", "OC"): 1.85,  # 26
    ("EAS", "SA"): 1.71,  # 39
    ("EAS", "SAS"): 2.28,  # 28
    ("EU", "EU"): 2.2,  # 52
    ("EU", "ME"): 2.27,  # 81
    ("EU", "NA"): 1.6,  # 111
    ("EU", "OC"): 1.73,  # 14
    ("EU", "SA"): 2.12,  # 20
    ("EU", "SAS"): 1.99,  # 22
    ("ME", "NA"): 1.6,  # 69
    ("ME", "OC"): 2.09,  # 10
    ("ME", "SA"): 2.5,  # 12
    ("ME", "SAS"): 3.31,  # 11
    ("NA", "NA"): 1.83,  # 50
    ("NA", "OC"): 1.38,  # 101
    ("NA", "SA"): 1.76,  # 20
    ("NA", "SAS"): 1.77,  # 76
    ("OC", "OC"): 1.38,  # 7
    ("OC", "SA"): 2.5,  # 15
    ("OC", "SAS"): 1.58,  # 15
    ("SA", "SA"): 1.92,  # 9
    ("SA", "SAS"): 2.23,  # 16
}
# How far above the estimate a real link may sit, by band [ratio]: the 95th percentile of
# measured over estimate on the fit half. Under 100 km it admits the public Internet's
# scatter around a private path's estimate.
ESTIMATE_SCATTER_FACTOR_BY_BAND = {"metro": 7.34, "backbone": 3.72, "long_haul": 1.54}
# The backbone band's factor, as rules and reports quote it.
ESTIMATE_SCATTER_FACTOR = ESTIMATE_SCATTER_FACTOR_BY_BAND["backbone"]

# -- The same estimate for a link that says what kind of path it takes (``links[].path``) ---
#
# Distance and regions cannot tell a provider's backbone from the public Internet, and from
# 100 km up the two sit apart: on the published pairs of 100 to 6,000 km the estimate above
# is about 13 % above the providers' backbones and about 23 % below public-Internet paths
# between hosting providers (BENCHMARKS.md). A link that states its kind gets the same fit
# run on that kind's fit pairs alone (benchmarks/estimates.py, ``fit``, ``by_path``):
# ``backbone`` on the providers' tables between their own regions (AWS via CloudPing, Azure,
# Google Cloud, IBM Cloud), ``internet`` on WonderProxy's pings between hosting providers.
# Under 100 km a kind changes nothing: the estimate there is the private metro path (which
# a provider's zone interconnect is) and its range admits the public Internet. Nor does a
# kind change a route fit (``route_km``): the kinds' fits hold their route stretch, which a
# known route replaces. The alternative tried, one factor per kind and band over the fit of
# both kinds (the median of measured over it), did as well for backbones (13.6 % median
# error on the held-back pairs of 100 to 6,000 km) and worse for the public Internet (29.5 %
# against the 24.6 % of no kind at all): its overhead is not the backbones' scaled.
PATH_KINDS = ("backbone", "internet")
# a, the fixed overhead of each kind of path from 100 km up [ms]; and k, its route stretch
# between regions without a factor of their own [ratio].
ESTIMATE_FIXED_OVERHEAD_MS_BY_PATH = {"backbone": 3.6, "internet": 8.2}
ESTIMATE_ROUTE_FACTOR_BY_PATH = {"backbone": 1.75, "internet": 2.61}
# Route stretch by pair of coarse regions, each kind's own (fit pairs in the comment).
ROUTE_FACTOR_BY_REGIONS_BY_PATH: dict[str, dict[tuple[str, str], float]] = {
    "backbone": {
        ("AF", "EU"): 1.58,  # 6
        ("EAS", "EAS"): 1.61,  # 13
        ("EAS", "EU"): 2.14,  # 30
        ("EAS", "ME"): 2.32,  # 12
        ("EAS", "NA"): 1.41,  # 29
        ("EAS", "SAS"): 1.86,  # 8
        ("EU", "EU"): 1.96,  # 12
        ("EU", "ME"): 2.14,  # 13
        ("EU", "NA"): 1.58,  # 34
        ("EU", "OC"): 1.57,  # 6
        ("EU", "SAS"): 1.7,  # 9
        ("ME", "NA"): 1.59,  # 7
        ("NA", "NA"): 1.6,  # 11
        ("NA", "OC"): 1.25,  # 9
        ("NA", "SA"): 1.64,  # 6
        ("NA", "SAS"): 1.61,  # 5
    },
    "internet": {
        ("AF", "EAS"): 3.85,  # 12
        ("AF", "EU"): 2.52,  # 104
        ("AF", "NA"): 1.95,  # 67
        ("AF", "OC"): 3.17,  # 7
        ("AF", "SA"): 2.84,  # 17
        ("AF", "SAS"): 4.39,  # 11
        ("EAS", "EAS"): 3.23,  # 40
        ("EAS", "EU"): 2.73,  # 32
        ("EAS", "ME"): 3.71,  # 15
        ("EAS", "NA"): 1.66,  # 20
        ("EAS", "OC"): 2.2,  # 22
        ("EAS", "SA"): 1.79,  # 36
        ("EAS", "SAS"): 3.49,  # 20
        ("EU", "EU"): 2.17,  # 40
        ("EU", "ME"): 2.5,  # 68
        ("EU", "NA"): 1.6,  # 77
        ("EU", "OC"): 1.72,  # 8
        ("EU", "SA"): 1.92,  # 17
        ("EU", "SAS"): 2.1,  # 13
        ("ME", "NA"): 1.61,  # 62
        ("ME", "OC"): 2.43,  # 9
        ("ME", "SA"): 2.34,  # 10
        ("ME", "SAS"): 4.46,  # 7
        ("NA", "NA"): 2.0,  # 38
        ("NA", "OC"): 1.48,  # 92
        ("NA", "SA"): 1.85,  # 14
        ("NA", "SAS"): 1.86,  # 71
        ("OC", "OC"): 1.06,  # 6
        ("OC", "SA"): 2.56,  # 13
        ("OC", "SAS"): 1.53,  # 11
        ("SA", "SA"): 4.23,  # 8
        ("SA", "SAS"): 2.57,  # 15
    },
}
# How far above each kind's estimate a real link may sit, by band from 100 km up: the 95th
# percentile of measured over estimate on that kind's fit pairs [ratio].
ESTIMATE_SCATTER_FACTOR_BY_PATH: dict[str, dict[str, float]] = {
    "backbone": {"backbone": 1.52, "long_haul": 1.5},
    "internet": {"backbone": 2.68, "long_haul": 1.42},
}
# Tail of an estimated link: on provider backbones the median pair has P95/P50 = 1.056
# (636 Azure region pairs, the P50 and P95 editions of
# https://learn.microsoft.com/en-us/azure/networking/azure-network-latency). Nothing beyond
# p95 is claimed.
ESTIMATE_P95_OVER_P50 = 1.056


def propagation_km_per_ms(medium: str) -> float:
    """Signal speed in a medium.

    Parameters
    ----------
    medium : str
        ``fiber``, ``hollow_core_fiber``, ``copper``, ``microwave``, ``leo_satellite`` or
        ``geo_satellite``.

    Returns
    -------
    float
        Speed per km of medium [km/ms].

    >>> round(propagation_km_per_ms("fiber"), 2)
    204.19
    """
    try:
        return SPEED_OF_LIGHT_KM_PER_MS * _VELOCITY_FACTOR[medium]
    except KeyError:
        raise ValueError(
            f"unknown medium {medium!r}; expected one of {', '.join(_VELOCITY_FACTOR)}"
        ) from None


def great_circle_km(lat1: ArrayLike, lon1: ArrayLike, lat2: ArrayLike, lon2: ArrayLike) -> Any:
    """Great-circle distance between two points (haversine); inputs broadcast.

    Parameters
    ----------
    lat1, lon1 : array_like
        Latitude and longitude of the first point [degrees].
    lat2, lon2 : array_like
        Latitude and longitude of the second point [degrees].

    Returns
    -------
    float or ndarray
        The distance on a sphere of the Earth's mean radius [km].

    >>> round(float(great_circle_km(41.9028, 12.4964, 37.3861, -122.0839)))
    10069
    """
    phi1, phi2 = np.radians(lat1), np.radians(lat2)
    dphi = phi2 - phi1
    dlmb = np.radians(np.asarray(lon2, dtype=float) - np.asarray(lon1, dtype=float))
    h = np.sin(dphi / 2) ** 2 + np.cos(phi1) * np.cos(phi2) * np.sin(dlmb / 2) ** 2
    return 2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))


def floor_rtt_ms(distance_km: ArrayLike, medium: str = "fiber") -> Any:
    """The physical minimum round trip over a distance of a medium.

    For satellites the up and down legs of both directions are added (bent pipe at the
    zenith, the best case). 400 km of fibre: 3.92 ms.

    Parameters
    ----------
    distance_km : array_like
        Path length [km].
    medium : str, default "fiber"
        The medium (:func:`propagation_km_per_ms`).

    Returns
    -------
    float or ndarray
        The floor round trip [ms].

    >>> round(float(floor_rtt_ms(400)), 2)
    3.92
    """
    one_way_ms = np.asarray(distance_km, dtype=float) / propagation_km_per_ms(medium)
    legs_ms = 4 * _SATELLITE_ALTITUDE_KM.get(medium, 0.0) / SPEED_OF_LIGHT_KM_PER_MS
    return 2 * one_way_ms + legs_ms


def max_distance_km(rtt_ms: ArrayLike, medium: str = "fiber") -> Any:
    """The longest path a round trip allows in a medium: :func:`floor_rtt_ms` inverted.

    Parameters
    ----------
    rtt_ms : array_like
        Round trip [ms].
    medium : str, default "fiber"
        The medium (:func:`propagation_km_per_ms`).

    Returns
    -------
    float or ndarray
        Path length [km]; 0 where the round trip is below a satellite's fixed legs.

    >>> round(float(max_distance_km(3.92)))
    400
    """
    legs_ms = 4 * _SATELLITE_ALTITUDE_KM.get(medium, 0.0) / SPEED_OF_LIGHT_KM_PER_MS
    usable_ms = np.maximum(np.asarray(rtt_ms, dtype=float) - legs_ms, 0.0)
    return usable_ms / 2 * propagation_km_per_ms(medium)


def light_speed_fraction(floor_ms: ArrayLike, rtt_ms: ArrayLike) -> Any:
    """How close a measured round trip comes to the physical floor.

    Parameters
    ----------
    floor_ms : array_like
        The floor round trip [ms].
    rtt_ms : array_like
        The measured round trip [ms].

    Returns
    -------
    float or ndarray
        Floor over measured [ratio]; 1.0 is at the floor.
    """
    return np.asarray(floor_ms, dtype=float) / np.asarray(rtt_ms, dtype=float)


def coarse_region(lat: float, lon: float) -> str:
    """The coarse region of a place, for the route stretch between regions.

    Boxes of latitude and longitude, first match wins: Oceania (south of 11 S, east of
    110 E), the Americas (west of 30 W: South and Central below 13 N and east of 93 W, North
    otherwise), East and Southeast Asia (east of 92 E), South and Central Asia (east of
    63 E), the Middle East (east of 34 E, 12 N to 43 N), Africa (south of 30 N, east of
    20 W), Europe (the rest: Russia west of 92 E, and North Africa, whose cables land in
    Europe).

    Parameters
    ----------
    lat, lon : float
        Latitude and longitude [degrees].

    Returns
    -------
    str
        ``OC``, ``SA``, ``NA``, ``EAS``, ``SAS``, ``ME``, ``AF`` or ``EU``.

    >>> coarse_region(-33.87, 151.21), coarse_region(-23.55, -46.63), coarse_region(50.11, 8.68)
    ('OC', 'SA', 'EU')
    """
    if lat < -11 and lon > 110:
        return "OC"
    if lon < -30:
        return "SA" if lat < 13 and lon > -93 else "NA"
    if lon > 92:
        return "EAS"
    if lon > 63 and lat < 45:
        return "SAS"
    if lon > 34 and 12 < lat < 43:
        return "ME"
    if lat < 30 and lon > -20:
        return "AF"
    return "EU"


def distance_band(distance_km: float) -> str:
    """The band of a great-circle distance: ``metro`` (under ``METRO_MAX_KM``),
    ``backbone`` (up to ``LONG_HAUL_MIN_KM``) or ``long_haul``.

    Parameters
    ----------
    distance_km : float
        Great-circle distance [km].

    Returns
    -------
    str
        The band's name.
    """
    if distance_km < METRO_MAX_KM:
        return "metro"
    return "backbone" if distance_km < LONG_HAUL_MIN_KM else "long_haul"


def applied_path(
    distance_km: float | None, path: str | None = None, route_km: float | None = None
) -> str | None:
    """The kind of path an estimate uses: ``path`` from ``METRO_MAX_KM`` up without a known
    route, else None (the kinds' fits hold neither a private metro path nor a known route).

    Parameters
    ----------
    distance_km : float or None
        Great-circle distance [km] (the route's length where only that is known).
    path : str, optional
        The kind of path the link takes: one of ``PATH_KINDS``; None where not stated.
    route_km : float, optional
        The cable route's length where known [km].

    Returns
    -------
    str or None
        ``path`` where the estimate uses it, else None.

    >>> applied_path(500.0, "internet"), applied_path(12.0, "internet")
    ('internet', None)
    """
    if path is None or route_km:
        return None
    if path not in PATH_KINDS:
        raise ValueError(f"unknown path {path!r}; expected one of {', '.join(PATH_KINDS)}")
    band_km = distance_km if distance_km is not None else 0.0
    return path if band_km >= METRO_MAX_KM else None


def route_factor(regions: tuple[str, str] | None = None, path: str | None = None) -> float:
    """The route stretch of a path between two coarse regions.

    Parameters
    ----------
    regions : tuple of str, optional
        The :func:`coarse_region` of both ends, either order; None where an end has no
        coordinates.
    path : str, optional
        The kind of path (``PATH_KINDS``) whose own fit applies; None for the fit of all.

    Returns
    -------
    float
        Path round trip beyond the overhead over the fibre floor [ratio]:
        ``ROUTE_FACTOR_BY_REGIONS`` (``ROUTE_FACTOR_BY_REGIONS_BY_PATH`` of the kind) where
        the fit had enough pairs, else ``ESTIMATE_ROUTE_FACTOR`` (the kind's
        ``ESTIMATE_ROUTE_FACTOR_BY_PATH``).
    """
    default = ESTIMATE_ROUTE_FACTOR if path is None else ESTIMATE_ROUTE_FACTOR_BY_PATH[path]
    if regions is None:
        return default
    table = ROUTE_FACTOR_BY_REGIONS if path is None else ROUTE_FACTOR_BY_REGIONS_BY_PATH[path]
    return table.get((min(regions), max(regions)), default)


def estimate_parts_ms(
    distance_km: float | None,
    regions: tuple[str, str] | None = None,
    route_km: float | None = None,
    medium: str = "fiber",
    path: str | None = None,
) -> tuple[float, float]:
    """The two parts of an unmeasured pair's median round trip.

    Under ``METRO_MAX_KM`` a private metro path: ``METRO_OVERHEAD_MS`` and
    ``ESTIMATE_ROUTE_FACTOR`` x floor. From there the backbone: ``ESTIMATE_FIXED_OVERHEAD_MS``
    and :func:`route_factor` x floor, or, for a stated kind of path (:func:`applied_path`),
    that kind's ``ESTIMATE_FIXED_OVERHEAD_MS_BY_PATH`` and route factor. Where the route is
    known (``route_km``), its floor is the propagation itself (no stretch). Sources at
    ``ESTIMATE_FIXED_OVERHEAD_MS``.

    Parameters
    ----------
    distance_km : float or None
        Great-circle distance [km]; it chooses the band (the route's length where only
        that is known).
    regions : tuple of str, optional
        The :func:`coarse_region` of both ends; None without coordinates.
    route_km : float, optional
        The cable route's length where known [km].
    medium : str, default "fiber"
        The medium (:func:`propagation_km_per_ms`).
    path : str, optional
        The kind of path the link takes (``PATH_KINDS``); None where not stated.

    Returns
    -------
    overhead_ms, propagation_ms : float
        The fixed part and the part that grows with the distance [ms].

    >>> [round(v, 2) for v in estimate_parts_ms(12.0)]
    [0.5, 0.26]
    >>> [round(v, 2) for v in estimate_parts_ms(1000.0, path="internet")]
    [8.2, 25.56]
    """
    if distance_km is None and not route_km:
        raise ValueError("an estimate needs a distance or a route")
    band_km = distance_km if distance_km is not None else float(route_km or 0.0)
    metro = band_km < METRO_MAX_KM
    kind = applied_path(band_km, path, route_km)
    if metro:
        overhead_ms = METRO_OVERHEAD_MS
    elif kind is not None:
        overhead_ms = ESTIMATE_FIXED_OVERHEAD_MS_BY_PATH[kind]
    else:
        overhead_ms = ESTIMATE_FIXED_OVERHEAD_MS
    if route_km:
        return overhead_ms, float(floor_rtt_ms(route_km, medium))
    factor = ESTIMATE_ROUTE_FACTOR if metro else route_factor(regions, kind)
    return overhead_ms, factor * float(floor_rtt_ms(band_km, medium))


def estimated_rtt_ms(
    distance_km: float, regions: tuple[str, str] | None = None, path: str | None = None
) -> float:
    """Median round trip expected over a terrestrial fibre path nobody measured.

    The sum of :func:`estimate_parts_ms`.

    Parameters
    ----------
    distance_km : float
        Great-circle distance [km].
    regions : tuple of str, optional
        The :func:`coarse_region` of both ends; None without coordinates.
    path : str, optional
        The kind of path the link takes (``PATH_KINDS``); None where not stated.

    Returns
    -------
    float
        The estimated median round trip [ms].

    >>> round(estimated_rtt_ms(12.0), 2), round(estimated_rtt_ms(1000), 1)
    (0.76, 25.0)
    """
    overhead_ms, propagation_ms = estimate_parts_ms(distance_km, regions, path=path)
    return overhead_ms + propagation_ms


def typical_distance_km(rtt_ms: float, regions: tuple[str, str] | None = None) -> float:
    """The great-circle distance at which :func:`estimated_rtt_ms` reaches a round trip: how
    far apart sites may typically be for it (the inverse of the estimate, band by band).

    Parameters
    ----------
    rtt_ms : float
        Round trip [ms].
    regions : tuple of str, optional
        The :func:`coarse_region` of both ends; None without coordinates.

    Returns
    -------
    float
        Distance [km]; 0 below a metro path's fixed part, ``METRO_MAX_KM`` for a round trip
        between the metro path's and the backbone's at that distance (the bands' edge).

    >>> [round(typical_distance_km(rtt_ms)) for rtt_ms in (2.0, 5.0, 20.0)]
    [70, 100, 768]
    """
    metro_km = float(max_distance_km(max(rtt_ms - METRO_OVERHEAD_MS, 0.0) / ESTIMATE_ROUTE_FACTOR))
    if metro_km < METRO_MAX_KM:
        return metro_km
    backbone = max(rtt_ms - ESTIMATE_FIXED_OVERHEAD_MS, 0.0) / route_factor(regions)
    return max(float(max_distance_km(backbone)), METRO_MAX_KM)


def scatter_factor(distance_km: float, path: str | None = None) -> float:
    """How far above the estimate a real link of this distance may sit.

    Parameters
    ----------
    distance_km : float
        Great-circle distance [km].
    path : str, optional
        The kind of path the link takes (``PATH_KINDS``); None where not stated.

    Returns
    -------
    float
        ``ESTIMATE_SCATTER_FACTOR_BY_BAND`` of its :func:`distance_band`, or the kind's
        ``ESTIMATE_SCATTER_FACTOR_BY_PATH`` where :func:`applied_path` uses it [ratio].
    """
    band = distance_band(distance_km)
    kind = applied_path(distance_km, path)
    if kind is not None:
        return ESTIMATE_SCATTER_FACTOR_BY_PATH[kind][band]
    return ESTIMATE_SCATTER_FACTOR_BY_BAND[band]


def estimate_range_ms(
    distance_km: float, regions: tuple[str, str] | None = None, path: str | None = None
) -> tuple[float, float, float]:
    """An unmeasured fibre pair's median round trip and its range, from distance alone.

    Parameters
    ----------
    distance_km : float
        Great-circle distance [km].
    regions : tuple of str, optional
        The :func:`coarse_region` of both ends; None without coordinates.
    path : str, optional
        The kind of path the link takes (``PATH_KINDS``); None where not stated.

    Returns
    -------
    estimate, low, high : float
        :func:`estimated_rtt_ms`, the floor, the estimate times :func:`scatter_factor` [ms].
    """
    fit = estimated_rtt_ms(distance_km, regions, path)
    estimate, low, high = bounded_estimate_ms(
        fit, floor_rtt_ms(distance_km), scatter=scatter_factor(distance_km, path)
    )
    return float(estimate), float(low), float(high)


def bounded_estimate_ms(
    fit_ms: ArrayLike,
    floor_ms: ArrayLike,
    path_bound_ms: ArrayLike = np.inf,
    lower_bound_ms: ArrayLike = 0.0,
    scatter: ArrayLike = ESTIMATE_SCATTER_FACTOR,
) -> tuple[Any, Any, Any]:
    """An unmeasured pair's RTT p50 and its range, bounded by evidence on both sides.

    Below: physics (the floor) and the triangle over measured links (``lower_bound_ms``: for
    a measured a-k and a best measured path k-b, the round trip a-b is at least
    ``|d(a,k) - d(k,b)|``), whichever is higher. Above: the fit times the band's scatter
    factor (``scatter``, ``ESTIMATE_SCATTER_FACTOR_BY_BAND``) and the best relayed path
    over measured links (``path_bound_ms``: a packet can be relayed through a measured
    neighbour, so the direct round trip need not exceed it), whichever is lower. The
    estimate is the fit clipped into the range. Where the bounds cross (a measured path
    faster than the floor or the lower bound: the stated distance, medium or a measurement
    is wrong), the measured path wins: estimate and range collapse to it.

    Parameters
    ----------
    fit_ms : array_like
        The fit's median (:func:`estimated_rtt_ms`) [ms].
    floor_ms : array_like
        The physical floor (:func:`floor_rtt_ms`) [ms].
    path_bound_ms : array_like, default inf
        The best relayed path over measured links [ms]; ``inf`` without one.
    lower_bound_ms : array_like, default 0
        The triangle's lower bound over measured links [ms]; 0 without one.
    scatter : array_like, default ESTIMATE_SCATTER_FACTOR
        How far above the fit the range reaches [ratio].

    Returns
    -------
    estimate, low, high : float or ndarray
        The estimated p50 and its range [ms].

    Paris-2 to Frankfurt, fit 12.0 ms, floor 4.72 ms; measured paris-2 - paris-1 0.47 ms and
    paris-1 - frankfurt 9.76 ms: at most 0.47 + 9.76 = 10.23 ms, at least 9.76 - 0.47 =
    9.29 ms. The estimate 10.23 ms, the range 9.29 to 10.23 ms.

    >>> [round(float(v), 2) for v in bounded_estimate_ms(12.0, 4.72, 10.23, 9.29)]
    [10.23, 9.29, 10.23]
    >>> [round(float(v), 2) for v in bounded_estimate_ms(12.0, 4.72, scatter=2.0)]
    [12.0, 4.72, 24.0]
    """
    fit = np.asarray(fit_ms, dtype=float)
    bound = np.asarray(path_bound_ms, dtype=float)
    high = np.minimum(fit * np.asarray(scatter, dtype=float), bound)
    low = np.minimum(np.maximum(floor_ms, lower_bound_ms), high)
    estimate = np.minimum(np.maximum(fit, low), high)
    return estimate, low, high
