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
    "ESTIMATE_P95_OVER_P50",
    "ESTIMATE_ROUTE_FACTOR",
    "ESTIMATE_SCATTER_FACTOR",
    "SPEED_OF_LIGHT_KM_PER_MS",
    "bounded_estimate_ms",
    "estimated_rtt_ms",
    "floor_rtt_ms",
    "great_circle_km",
    "light_speed_fraction",
    "max_distance_km",
    "propagation_km_per_ms",
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

# Estimate for a pair nobody measured: the two-term fit RTT = a + k * fibre floor (OLS:
# a = 7.5 ms, k = 1.39) over 62 cloud-backbone region pairs of the providers' public median
# round trips: AWS (CloudPing, https://www.cloudping.co), Azure
# (https://learn.microsoft.com/en-us/azure/networking/azure-network-latency) and IBM Cloud
# (https://github.com/ibm-cloud-docs/vpc, _include-segments/network-latency.md). a is the
# fixed per-path overhead (metro fibre to the exchange, routers, hypervisors), k the route
# inflation of long-haul paths. It is a median: real links scatter around it (next constant).
ESTIMATE_FIXED_OVERHEAD_MS = 7.5
ESTIMATE_ROUTE_FACTOR = 1.39
# How far above the fit a real link may sit: a factor of two. Measured median over fit, across
# the same 62 cloud pairs (computed from the three providers' public tables above): 0.69 (IBM
# Tokyo-Osaka, 9.0 ms over 403 km against a fit of 13.0 ms) to 1.55 (AWS Tokyo-Seoul, 36.2 ms
# over 1,160 km against 23.3 ms), 80 % of pairs within 0.79-1.17. Off the providers'
# backbones paths are longer: WonderProxy's public-Internet pings between its servers
# (https://wonderproxy.com/blog/miles-per-milisecond, 2011) put Sydney-Brisbane, 733 km, at
# 38.2 ms, 2.2 x the fit; Bozkurt et al.'s rule of thumb for the Internet is 2.1 x the fibre
# floor (https://arxiv.org/abs/1811.10737). Two is the round factor between the two. Below
# the fit no factor is claimed: private metro fibre runs close to the physical floor (the
# fit's 7.5 ms is mostly cloud overhead), so the floor is the only lower bound.
ESTIMATE_SCATTER_FACTOR = 2.0
# Tail of an estimated link: on provider backbones the median pair has P95/P50 = 1.056
# (636 Azure region pairs, the P50 and P95 editions of the Azure page above). Nothing beyond
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


def estimated_rtt_ms(distance_km: ArrayLike) -> Any:
    """Median round trip expected over a terrestrial path.

    The cloud-backbone fit ``7.5 ms + 1.39 * fibre floor`` (sources at
    ``ESTIMATE_FIXED_OVERHEAD_MS``). Conservative for private metro fibre (where a few km cost
    well under 1 ms): measure such links.

    Parameters
    ----------
    distance_km : array_like
        Great-circle distance [km].

    Returns
    -------
    float or ndarray
        The fit's median round trip [ms].

    >>> round(float(estimated_rtt_ms(1000)), 1)
    21.1
    """
    return ESTIMATE_FIXED_OVERHEAD_MS + ESTIMATE_ROUTE_FACTOR * floor_rtt_ms(distance_km, "fiber")


def bounded_estimate_ms(
    fit_ms: ArrayLike, floor_ms: ArrayLike, path_bound_ms: ArrayLike = np.inf
) -> tuple[Any, Any, Any]:
    """An unmeasured pair's RTT p50 and its range.

    Bounded by evidence on both sides. Below: physics, the floor (no factor of the fit is
    claimed below it: private metro fibre runs near the floor). Above: the fit times the
    scatter factor of two (``ESTIMATE_SCATTER_FACTOR``: the fit's own 62 cloud pairs from
    https://www.cloudping.co, https://learn.microsoft.com/en-us/azure/networking/azure-network-latency
    and https://github.com/ibm-cloud-docs/vpc sit at 0.69 to 1.55 x the fit; public-Internet
    pings, https://wonderproxy.com/blog/miles-per-milisecond, reach 2.2 x), and the best
    relayed path over measured links (``path_bound_ms``, ``inf`` without one: a packet can
    be relayed through a measured neighbour, so the direct round trip need not exceed it).
    The estimate is the fit clipped into [floor, path bound]. Where a measured path is
    faster than the floor, the stated distance or medium is wrong; the measurement wins
    (estimate and range collapse to the path bound).

    Parameters
    ----------
    fit_ms : array_like
        The fit's median (:func:`estimated_rtt_ms`) [ms].
    floor_ms : array_like
        The physical floor (:func:`floor_rtt_ms`) [ms].
    path_bound_ms : array_like, default inf
        The best relayed path over measured links [ms]; ``inf`` without one.

    Returns
    -------
    estimate, low, high : float or ndarray
        The estimated p50 and its range [ms].

    Paris-2 to Frankfurt: floor 4.72 ms, fit 7.5 + 1.39 x 4.72 = 14.06 ms, path via paris-1
    0.47 + 9.76 = 10.23 ms: estimate 10.23, range 4.72 to min(28.12, 10.23) = 10.23.

    >>> [round(float(v), 2) for v in bounded_estimate_ms(14.06, 4.72, 10.23)]
    [10.23, 4.72, 10.23]
    >>> [round(float(v), 2) for v in bounded_estimate_ms(14.06, 4.72)]
    [14.06, 4.72, 28.12]
    """
    fit = np.asarray(fit_ms, dtype=float)
    floor = np.asarray(floor_ms, dtype=float)
    bound = np.asarray(path_bound_ms, dtype=float)
    high = np.minimum(fit * ESTIMATE_SCATTER_FACTOR, bound)
    estimate = np.minimum(np.maximum(fit, floor), bound)
    low = np.minimum(floor, high)
    return estimate, low, high
