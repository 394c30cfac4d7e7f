"""Per site pair: distance, physical floor, measured or estimated RTT, and TCP at payload size.

This is where the three inputs meet: the topology (where the sites are), physics (how fast a
signal can possibly travel) and the measurements (what was really seen). Each
:class:`LinkEvidence` says where every figure came from.

A pair nobody measured is estimated (:class:`RttEstimate`) from its distance class and route
(:func:`advisor.model.physics.estimate_parts_ms`), bounded by evidence on both sides: below by
the physical floor and the triangle over measured links (``|d(a,k) - d(k,b)|``), above by the
best path over the measured links (a packet can be relayed through a measured neighbour) and
by the band's scatter.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_BANDWIDTH_MBPS",
    "GALERA_ACK_BYTES",
    "MAX_SITES",
    "MAX_TOTAL_MEASUREMENT_FILES",
    "LinkEvidence",
    "MeasuredRtt",
    "RttEstimate",
    "estimate_distribution",
    "gather_links",
    "member_sites",
    "writeset_round_trip",
]

import functools
import itertools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from advisor.engine.site_graph import (
    LowerBound,
    MeasuredPath,
    measured_lower_bounds,
    measured_paths,
)
from advisor.errors import AdvisorError, Location
from advisor.inputs.loading import LoadedTopology
from advisor.inputs.topology import Link, Measurement, Site
from advisor.measurements import ParsedMeasurement, parse_file
from advisor.model import physics, tcp
from advisor.model.rtt import RttDistribution

FloatArray = npt.NDArray[np.float64]

# Assumed usable bandwidth where a link does not state one [Mbit/s]: a common inter-DC
# port; serialisation only matters for large write sets, and reports say it was assumed.
DEFAULT_BANDWIDTH_MBPS = 1000.0
# Size of a Galera acknowledgement on the wire [bytes]: a small EVS message (gap/ack).
GALERA_ACK_BYTES = 128


# Most member sites a topology may have. The engine's work and memory grow with the square of
# the sites (every pair's evidence; a cluster's Monte Carlo draws are draws x sites x sites):
# 30 sites take seconds and about 600 MB, 60 sites a minute and 1.5 GB, 1,000 sites would
# need 24 GB for the pairs' evidence alone (BENCHMARKS.md, SECURITY.md). A Galera cluster
# spans a handful of sites; 32 leaves room for a whole fleet of regions in one file.
MAX_SITES = 32
# Measurement files are read by this many threads when a topology names at least
# _PARALLEL_FILES of them (below that, starting threads costs more than it saves).
_READ_THREADS = 4
_PARALLEL_FILES = 8
# The measurement files of one topology together, as a multiple of the per-file limit
# (Limits.measurement_bytes, --max-file-mb): 1 GB by default. A file named by several
# entries counts, and is read, once.
MAX_TOTAL_MEASUREMENT_FILES = 5


@dataclass(frozen=True)
class MeasuredRtt:
    """One measurement of a link, as read, with its distribution of full round trips."""

    spec: Measurement
    distribution: RttDistribution
    source: str  # the file as named in topology.yaml, "inline samples" or "given percentiles"
    tool: str
    request_bytes: int | None = None
    response_bytes: int | None = None
    notes: tuple[str, ...] = ()

    @property
    def method(self) -> str:
        return self.spec.method


@dataclass(frozen=True)
class RttEstimate:
    """How an unmeasured pair's small-message RTT was estimated, and how far off it may be.

    ``p50_ms`` is the fit (``overhead_ms + propagation_ms``: the private metro path under
    100 km, the backbone with its region pair's route stretch beyond,
    :func:`advisor.model.physics.estimate_parts_ms`) clipped into the range. The range runs
    from ``low_ms``, the higher of the floor and the triangle's lower bound over measured
    links (``lower_bound_ms``), to ``high_ms``, the lower of the fit times the band's scatter
    factor and the best measured path (``path_bound_ms``):
    :func:`advisor.model.physics.bounded_estimate_ms`. ``basis`` says it in words, naming
    which bound applies, e.g. ``at least 9.29 ms (9.76 - 0.47 ms via paris-1 measured), at
    most 10.23 ms via paris-1: 0.47 + 9.76 ms measured``.
    """

    p50_ms: float
    low_ms: float
    high_ms: float
    fit_ms: float  # the distance (or route) fit alone: overhead_ms + propagation_ms
    floor_ms: float
    basis: str
    fit_basis: str  # the fit in words, e.g. "metro fit: 0.5 ms + 2.31 x 0.12 ms floor"
    path_bound_ms: float | None = None  # best path over measured links, None without one
    path: tuple[str, ...] = ()  # the sites of that path, both ends included
    path_legs_ms: tuple[float, ...] = ()  # the measured p50 of each hop
    # The part of the fit that grows with the distance (route stretch x floor) [ms]; the rest
    # of fit_ms is the band's fixed overhead.
    propagation_ms: float = 0.0
    scatter_factor: float = physics.ESTIMATE_SCATTER_FACTOR  # the band's, for high_ms
    band: str = "backbone"  # physics.distance_band: metro, backbone or long_haul
    # The triangle's lower bound over measured links, None without one [ms]; its sites run
    # from one end through the pivot (one measured hop) and the best measured path on.
    lower_bound_ms: float | None = None
    lower_path: tuple[str, ...] = ()

    @property
    def overhead_ms(self) -> float:
        """The fixed part of the fit [ms]."""
        return self.fit_ms - self.propagation_ms

    @property
    def via(self) -> tuple[str, ...]:
        """The sites a packet is relayed through on the measured path."""
        return self.path[1:-1]


def estimate_distribution(p50_ms: float) -> RttDistribution:
    """The distribution of an estimated link at a p50 of ``p50_ms`` [ms].

    One shape for every estimate, scaled to its p50: the provider backbones' median tail,
    p95 = 1.056 x p50 (``physics.ESTIMATE_P95_OVER_P50``), flat beyond (nothing past p95 is
    claimed). The ends of an estimate's range use the same shape at their own p50.
    """
    return RttDistribution.from_percentiles(
        {"p50": p50_ms, "p95": p50_ms * physics.ESTIMATE_P95_OVER_P50}
    )


@dataclass(frozen=True, eq=False)
class LinkEvidence:
    """Everything known about one pair of sites.

    Compared and hashed by identity: one object is one piece of evidence, never changed, so
    an analysis may key what it derives from a link by the link itself (``engine.memo``).
    """

    sites: tuple[str, str]
    medium: str
    distance_km: float | None
    distance_source: Literal["given", "locations"] | None
    route_km: float | None
    bandwidth_mbps: float | None
    floor_rtt_ms: float | None
    rtt: RttDistribution  # small-message round trip (ICMP where measured)
    rtt_source: Literal["measured", "estimated"]
    measurements: tuple[MeasuredRtt, ...] = ()
    key: tuple[str | int, ...] = field(default=(), repr=False)  # where in the YAML it sits
    estimate: RttEstimate | None = None  # how an estimated RTT was bounded (None: measured)

    def at_rtt_p50(self, p50_ms: float) -> LinkEvidence:
        """This estimated link with its RTT and its estimate's p50 moved to ``p50_ms`` [ms]
        (same shape): for evaluating the ends of its range. A measured link is returned
        unchanged."""
        if self.estimate is None:
            return self
        estimate = replace(self.estimate, p50_ms=p50_ms)
        return replace(self, rtt=estimate_distribution(p50_ms), estimate=estimate)

    @property
    def rtt_p50_ms(self) -> float:
        """The small-message round trip's median [ms]."""
        return float(self.rtt.quantile(0.5))

    @property
    def icmp_only(self) -> bool:
        return bool(self.measurements) and all(m.method == "icmp" for m in self.measurements)

    @property
    def effective_bandwidth_mbps(self) -> float:
        return self.bandwidth_mbps or DEFAULT_BANDWIDTH_MBPS

    @property
    def light_speed_fraction(self) -> float | None:
        p50 = self.rtt_p50_ms
        if self.floor_rtt_ms is None or p50 < 1e-6:
            return None  # no distance, or a round trip too small to measure
        return float(physics.light_speed_fraction(self.floor_rtt_ms, p50))

    def writeset_rtt(
        self, size_bytes: float
    ) -> tuple[RttDistribution, Literal["measured", "modelled"]]:
        """Round trip of one write set of ``size_bytes`` and its acknowledgement.

        A ``tcp_rr`` measurement at the nearest request size is used, shifted by what the TCP
        model says the size difference costs; without one the TCP model is applied to the
        small-message RTT (warm window: a replication link under load keeps it open).
        """
        sized = [
            (m, m.request_bytes)
            for m in self.measurements
            if m.method == "tcp_rr" and m.request_bytes
        ]
        bandwidth = self.effective_bandwidth_mbps
        if sized:
            nearest, nearest_bytes = min(
                ((m, float(b)) for m, b in sized if b),
                key=lambda pair: abs(math.log(pair[1] / max(size_bytes, 1))),
            )
            base_ms = self.rtt_p50_ms
            delta_ms = _model_rr(size_bytes, base_ms, bandwidth) - _model_rr(
                nearest_bytes, base_ms, bandwidth
            )
            floor = self.floor_rtt_ms or 0.0
            shifted = nearest.distribution.map(lambda v: np.maximum(v + delta_ms, floor))
            return shifted, "measured" if nearest_bytes == size_bytes else "modelled"
        return self.rtt.map(writeset_round_trip(size_bytes, bandwidth)), "modelled"


def writeset_round_trip(
    size_bytes: float, bandwidth_mbps: float
) -> Callable[[FloatArray], FloatArray | float]:
    """The TCP model's round trip of a write set of ``size_bytes`` and its acknowledgement
    over a link of ``bandwidth_mbps``, as a function of the small-message RTT [ms]."""
    return functools.partial(
        tcp.request_response_ms,
        size_bytes,
        GALERA_ACK_BYTES,
        bandwidth_mbps=bandwidth_mbps,
        window="warm",
    )


def _model_rr(size_bytes: float, rtt_ms: float, bandwidth_mbps: float) -> float:
    return float(writeset_round_trip(size_bytes, bandwidth_mbps)(np.asarray(rtt_ms)))


def member_sites(loaded: LoadedTopology) -> list[Site]:
    """Sites that hold Galera nodes or may hold an arbitrator: the ends of every link."""
    return [s for s in loaded.topology.sites if s.nodes > 0 or s.arbitrator]


def gather_links(loaded: LoadedTopology) -> list[LinkEvidence]:
    """Evidence for every pair of member sites, measured or estimated, in site order.

    Measured pairs first; then each unmeasured pair is estimated from its distance fit,
    bounded above by the shortest path over the measured pairs' small-message p50s (any
    number of hops) and below by its physical floor (:class:`RttEstimate`).
    """
    sites = member_sites(loaded)
    if len(sites) > MAX_SITES:
        raise AdvisorError(
            f"{len(sites)} sites hold nodes or an arbitrator, more than the {MAX_SITES} the "
            "engine evaluates in bounded time and memory (SECURITY.md); split the topology",
            loaded.location("sites"),
        )
    files = _MeasurementFiles(loaded)
    where = {link.pair: i for i, link in enumerate(loaded.topology.links)}
    links = [
        _pair(loaded, a, b, where.get(frozenset((a.name, b.name))), files)
        for a, b in itertools.combinations(sites, 2)
    ]
    if not any(link.rtt_source == "estimated" for link in links):
        return links
    measured = {link.sites: link.rtt_p50_ms for link in links if link.rtt_source == "measured"}
    best = measured_paths(measured)
    lower = measured_lower_bounds(measured)
    return [
        link if link.estimate is None else _bounded(link, best(*link.sites), lower(*link.sites))
        for link in links
    ]


def _bounded(
    link: LinkEvidence, path: MeasuredPath | None, lower: LowerBound | None
) -> LinkEvidence:
    """``link`` (estimated from its fit alone) bounded by the best measured ``path`` above
    and the triangle's ``lower`` bound below; the basis names the bound that applies."""
    assert link.estimate is not None
    fit = link.estimate
    if path is None and lower is None:
        return link
    bound_ms = path.bound_ms if path is not None else math.inf
    lower_ms = lower.bound_ms if lower is not None else 0.0
    p50, low, high = (
        float(v)
        for v in physics.bounded_estimate_ms(
            fit.fit_ms, fit.floor_ms, bound_ms, lower_ms, fit.scatter_factor
        )
    )
    words = [_above_words(fit, path, high), _below_words(fit, lower, low)]
    if path is not None and bound_ms < max(fit.floor_ms, lower_ms):
        basis = (
            f"{_via_words(path)} measured, below the {max(fit.floor_ms, lower_ms):.2f} ms "
            "this pair needs at least: check its distance, medium and measurements"
        )
    elif p50 != fit.fit_ms:  # the fit is clipped by a bound: the bound is the estimate
        basis = "; ".join(w for w in words if w) + f" (clipping the {_fit_words(fit)})"
    else:
        basis = "; ".join([fit.fit_basis, *(w for w in words if w)])
    estimate = replace(
        fit,
        p50_ms=p50,
        low_ms=low,
        high_ms=high,
        basis=basis,
        path_bound_ms=path.bound_ms if path is not None else None,
        path=path.sites if path is not None else (),
        path_legs_ms=path.legs_ms if path is not None else (),
        lower_bound_ms=lower.bound_ms if lower is not None else None,
        lower_path=lower.sites if lower is not None else (),
    )
    return replace(link, rtt=estimate_distribution(p50), estimate=estimate)


def _via_words(path: MeasuredPath) -> str:
    legs = " + ".join(f"{leg:.2f}" for leg in path.legs_ms)
    return f"via {', '.join(path.via)}: {legs} ms"


def _fit_words(fit: RttEstimate) -> str:
    return f"{fit.fit_basis.replace(': ', ' ', 1)} = {fit.fit_ms:.2f} ms"


def _below_words(fit: RttEstimate, lower: LowerBound | None, low_ms: float) -> str:
    """The triangle's lower bound in words where it is what sets the range's bottom."""
    if lower is None or lower.bound_ms <= fit.floor_ms or low_ms < lower.bound_ms:
        return ""
    far = lower.far.bound_ms
    big, small = (far, lower.near_ms) if far >= lower.near_ms else (lower.near_ms, far)
    return (
        f"at least {lower.bound_ms:.2f} ms ({big:.2f} - {small:.2f} ms via {lower.pivot} measured)"
    )


def _above_words(fit: RttEstimate, path: MeasuredPath | None, high_ms: float) -> str:
    """The measured path in words where it is what sets the range's top."""
    if path is None or path.bound_ms > high_ms or path.bound_ms >= fit.fit_ms * fit.scatter_factor:
        return ""
    return f"at most {path.bound_ms:.2f} ms {_via_words(path)} measured"


# A measurement as read: (what the parser found, its distribution of round trips).
_Read = tuple[ParsedMeasurement, RttDistribution]


class _MeasurementFiles:
    """The measurement files of one topology: each checked to lie inside the topology's
    folder, their total size refused before any is read, and each file read once however
    many entries name it (by its device and inode, with the parser's options)."""

    def __init__(self, loaded: LoadedTopology) -> None:
        self._loaded = loaded
        self._read: dict[tuple[tuple[int, int], str, int | None, float | None], _Read] = {}
        self._check_total_bytes()

    def location(self, *key: str | int) -> Location:
        """Where ``key`` sits in the topology's YAML."""
        return self._loaded.location(*key)

    def _check_total_bytes(self) -> None:
        """Refuse, before reading any, measurement files too large together."""
        loaded = self._loaded
        limit = MAX_TOTAL_MEASUREMENT_FILES * loaded.limits.measurement_bytes
        sizes: dict[tuple[int, int], int] = {}
        for index, link in enumerate(loaded.topology.links):
            for number, spec in enumerate(link.measurements):
                if spec.file is None:
                    continue
                key = ("links", index, "measurements", number, "file")
                info = _stat(loaded.resolve_inside(spec.file, *key))
                if info is None:
                    continue  # not found: reading it says what is wrong, with its own message
                sizes[(info.st_dev, info.st_ino)] = info.st_size
                if sum(sizes.values()) > limit:
                    raise AdvisorError(
                        f"the measurement files together are more than {limit / 2**20:.0f} MB "
                        f"({MAX_TOTAL_MEASUREMENT_FILES} times --max-file-mb); this one "
                        f"reaches {sum(sizes.values()) / 2**20:.0f} MB",
                        loaded.location(*key),
                    )

    def read(self, spec: Measurement, key: tuple[str | int, ...]) -> _Read:
        """The parse of the file ``spec`` names and its distribution (``key``: where the
        measurement sits in the YAML, for errors)."""
        loaded = self._loaded
        assert spec.file is not None
        path = loaded.resolve_inside(spec.file, *key, "file")
        info = _stat(path)
        if info is None:
            raise AdvisorError(f"measurement file not found: {path}", loaded.location(*key, "file"))
        options = _parser_options(spec)
        file_key = ((info.st_dev, info.st_ino), spec.file_format, options.get("burst"), spec.loss)
        if file_key not in self._read:
            parsed = parse_file(
                path,
                spec.file_format,
                max_bytes=loaded.limits.measurement_bytes,
                **options,
            )
            self._read[file_key] = parsed, _checked_distribution(parsed, spec, path)
        return self._read[file_key]


def _stat(path: Path) -> os.stat_result | None:
    """The file ``path`` names (symbolic links followed); None where it cannot be found."""
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _pair(
    loaded: LoadedTopology,
    a: Site,
    b: Site,
    index: int | None,
    files: _MeasurementFiles,
) -> LinkEvidence:
    link = loaded.topology.links[index] if index is not None else None
    key: tuple[str | int, ...] = ("links", index) if index is not None else ("sites",)
    spec = link or Link(sites=[a.name, b.name])
    distance_km, distance_source = _distance(spec, a, b)
    path_km = spec.route_km or distance_km
    floor = float(physics.floor_rtt_ms(path_km, spec.medium)) if path_km else None
    measured = tuple(
        _read(m, (*key, "measurements", i), files) for i, m in enumerate(spec.measurements)
    )
    estimate = None
    if measured:
        source: Literal["measured", "estimated"] = "measured"
        rtt = _small_message_rtt(measured)
    else:
        source = "estimated"
        estimate = _estimate(spec, distance_km, loaded, key, a, b)
        rtt = estimate_distribution(estimate.p50_ms)
    return LinkEvidence(
        sites=(a.name, b.name),
        medium=spec.medium,
        distance_km=distance_km,
        distance_source=distance_source,
        route_km=spec.route_km,
        bandwidth_mbps=spec.bandwidth_mbps,
        floor_rtt_ms=floor,
        rtt=rtt,
        rtt_source=source,
        measurements=measured,
        key=key,
        estimate=estimate,
    )


def _distance(
    link: Link, a: Site, b: Site
) -> tuple[float | None, Literal["given", "locations"] | None]:
    if link.distance_km is not None:
        return link.distance_km, "given"
    if a.location and b.location:
        km = physics.great_circle_km(a.location.lat, a.location.lon, b.location.lat, b.location.lon)
        return float(km), "locations"
    return None, None


def _estimate(
    link: Link,
    distance_km: float | None,
    loaded: LoadedTopology,
    key: tuple[str | int, ...],
    a: Site,
    b: Site,
) -> RttEstimate:
    """The fit alone, with its range; :func:`gather_links` then bounds it by measured paths.

    The band (metro under 100 km, backbone, long haul beyond 6,000 km) comes from the
    great-circle distance; the route stretch from the coarse regions of both sites where both
    have coordinates; a given ``route_km`` replaces the stretch by the route's own floor. A
    stated ``path`` (backbone or internet) takes that kind's own fit from 100 km up
    (:func:`advisor.model.physics.applied_path`); the basis names it, or says why not.
    """
    if distance_km is None and not link.route_km:
        raise AdvisorError(
            f"no RTT for sites {a.name} and {b.name}: add a link with measurements or "
            "distance_km, or give both sites a location",
            loaded.location(*key),
        )
    regions = (
        (
            physics.coarse_region(a.location.lat, a.location.lon),
            physics.coarse_region(b.location.lat, b.location.lon),
        )
        if a.location and b.location
        else None
    )
    band_km = distance_km if distance_km is not None else float(link.route_km or 0.0)
    band = physics.distance_band(band_km)
    overhead, propagation = physics.estimate_parts_ms(
        distance_km, regions, link.route_km, link.medium, link.path
    )
    path_km = link.route_km or band_km
    floor = float(physics.floor_rtt_ms(path_km, link.medium))
    fit = overhead + propagation
    kind = {"metro": "metro", "backbone": "backbone", "long_haul": "long-haul"}[band]
    used = physics.applied_path(band_km, link.path, link.route_km)
    if link.route_km:
        basis = (
            f"{kind} route fit: {overhead:.1f} ms + {floor:.2f} ms floor over {link.route_km:g} km"
        )
    else:
        factor = propagation / floor if floor > 0 else physics.route_factor(regions, used)
        notes = [f"{regions[0]}-{regions[1]}"] if regions is not None and band != "metro" else []
        notes += [f"path {used}"] if used is not None else []
        where = f" ({'; '.join(notes)})" if notes else ""
        basis = f"{kind} fit{where}: {overhead:.1f} ms + {factor:.2f} x {floor:.2f} ms floor"
    if link.path is not None and used is None:
        basis += f" (path {link.path} not used: {_path_unused_reason(link)})"
    scatter = physics.scatter_factor(band_km, used)
    p50, low, high = (float(v) for v in physics.bounded_estimate_ms(fit, floor, scatter=scatter))
    return RttEstimate(
        p50_ms=p50,
        low_ms=low,
        high_ms=high,
        fit_ms=fit,
        floor_ms=floor,
        basis=basis,
        fit_basis=basis,
        propagation_ms=propagation,
        scatter_factor=scatter,
        band=band,
    )


def _path_unused_reason(link: Link) -> str:
    """Why a stated ``path`` does not change an estimate (physics.applied_path)."""
    if link.route_km:
        return "the route is given"
    return f"under {physics.METRO_MAX_KM:g} km the estimate is a private metro path"


def _small_message_rtt(measured: tuple[MeasuredRtt, ...]) -> RttDistribution:
    """ICMP where measured (the largest sample wins), else the smallest TCP request."""
    icmp = [m for m in measured if m.method == "icmp"]
    if icmp:
        return max(icmp, key=lambda m: m.distribution.n_samples or 0).distribution
    return min(measured, key=lambda m: m.request_bytes or 0).distribution


def _read(spec: Measurement, key: tuple[str | int, ...], files: _MeasurementFiles) -> MeasuredRtt:
    if spec.samples_ms is not None:
        dist = RttDistribution.from_samples(spec.samples_ms, loss=spec.loss or 0.0)
        return MeasuredRtt(
            spec, dist, "inline samples", "samples", spec.request_bytes, spec.response_bytes
        )
    if spec.percentiles_ms is not None:
        dist = RttDistribution.from_percentiles(spec.percentiles_ms.given(), loss=spec.loss or 0.0)
        return MeasuredRtt(
            spec, dist, "given percentiles", "percentiles", spec.request_bytes, spec.response_bytes
        )
    assert spec.file is not None
    parsed, distribution = files.read(spec, key)
    request = spec.request_bytes or (parsed.request_bytes if spec.method == "tcp_rr" else None)
    response = spec.response_bytes or (parsed.response_bytes if spec.method == "tcp_rr" else None)
    if spec.method == "tcp_rr" and not request:
        raise AdvisorError(
            "tcp_rr measurement needs request_bytes: the file does not state the request size",
            files.location(*key),
        )
    return MeasuredRtt(spec, distribution, spec.file, parsed.tool, request, response, parsed.notes)


def _checked_distribution(
    parsed: ParsedMeasurement, spec: Measurement, path: Path
) -> RttDistribution:
    try:
        return _distribution(parsed, spec)
    except ValueError as error:  # e.g. percentiles in the log that decrease
        raise AdvisorError(str(error), Location(str(path))) from None


def _parser_options(spec: Measurement) -> dict[str, int]:
    return {"burst": spec.burst} if spec.burst is not None and spec.file_format == "netperf" else {}


def _distribution(parsed: ParsedMeasurement, spec: Measurement) -> RttDistribution:
    loss = parsed.loss if parsed.loss is not None else (spec.loss or 0.0)
    if loss >= 1.0:
        raise ValueError("every probe was lost (loss 100%): there is no round trip to use")
    if parsed.samples_ms is not None and len(parsed.samples_ms):
        return RttDistribution.from_samples(parsed.samples_ms, loss=loss)
    percentiles = {k: v for k, v in (parsed.percentiles_ms or {}).items() if k != "mean"}
    if percentiles:
        return RttDistribution.from_percentiles(percentiles, loss=loss)
    mean = (parsed.percentiles_ms or {})["mean"]
    return RttDistribution.point(mean)
