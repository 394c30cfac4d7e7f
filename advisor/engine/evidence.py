"""Per site pair: distance, physical floor, measured or estimated RTT, and TCP at payload size.

This is where the three inputs meet: the topology (where the sites are), physics (how fast a
signal can possibly travel) and the measurements (what was really seen). Each
:class:`LinkEvidence` says where every figure came from.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_BANDWIDTH_MBPS",
    "GALERA_ACK_BYTES",
    "LinkEvidence",
    "MeasuredRtt",
    "gather_links",
    "member_sites",
]

import itertools
import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from advisor.errors import AdvisorError, Location
from advisor.inputs.loading import LoadedTopology
from advisor.inputs.topology import Link, Measurement, Site
from advisor.measurements import ParsedMeasurement, parse_file
from advisor.model import physics, tcp
from advisor.model.rtt import RttDistribution

# Assumed usable bandwidth where a link does not state one [Mbit/s]: a common inter-DC
# port; serialisation only matters for large write sets, and reports say it was assumed.
DEFAULT_BANDWIDTH_MBPS = 1000.0
# Size of a Galera acknowledgement on the wire [bytes]: a small EVS message (gap/ack).
GALERA_ACK_BYTES = 128


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
class LinkEvidence:
    """Everything known about one pair of sites."""

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
    _writeset_cache: dict[float, tuple[RttDistribution, Literal["measured", "modelled"]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def icmp_only(self) -> bool:
        return bool(self.measurements) and all(m.method == "icmp" for m in self.measurements)

    @property
    def effective_bandwidth_mbps(self) -> float:
        return self.bandwidth_mbps or DEFAULT_BANDWIDTH_MBPS

    @property
    def light_speed_fraction(self) -> float | None:
        p50 = float(self.rtt.quantile(0.5))
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
        Computed once per size.
        """
        if size_bytes not in self._writeset_cache:
            self._writeset_cache[size_bytes] = self._writeset_rtt(size_bytes)
        return self._writeset_cache[size_bytes]

    def _writeset_rtt(
        self, size_bytes: float
    ) -> tuple[RttDistribution, Literal["measured", "modelled"]]:
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
            base_ms = float(self.rtt.quantile(0.5))
            delta_ms = _model_rr(size_bytes, base_ms, bandwidth) - _model_rr(
                nearest_bytes, base_ms, bandwidth
            )
            floor = self.floor_rtt_ms or 0.0
            shifted = nearest.distribution.map(lambda v: np.maximum(v + delta_ms, floor))
            return shifted, "measured" if nearest_bytes == size_bytes else "modelled"
        return self.rtt.map(lambda v: _model_rr(size_bytes, v, bandwidth)), "modelled"


def _model_rr(size_bytes: float, rtt_ms: np.ndarray | float, bandwidth_mbps: float) -> np.ndarray:
    return np.asarray(
        tcp.request_response_ms(size_bytes, GALERA_ACK_BYTES, rtt_ms, bandwidth_mbps, window="warm")
    )


def member_sites(loaded: LoadedTopology) -> list[Site]:
    """Sites that hold Galera nodes or may hold an arbitrator: the ends of every link."""
    return [s for s in loaded.topology.sites if s.nodes > 0 or s.arbitrator]


def gather_links(loaded: LoadedTopology) -> list[LinkEvidence]:
    """Evidence for every pair of member sites, measured or estimated, in site order."""
    sites = member_sites(loaded)
    where = {link.pair: i for i, link in enumerate(loaded.topology.links)}
    return [
        _pair(loaded, a, b, where.get(frozenset((a.name, b.name))))
        for a, b in itertools.combinations(sites, 2)
    ]


def _pair(loaded: LoadedTopology, a: Site, b: Site, index: int | None) -> LinkEvidence:
    link = loaded.topology.links[index] if index is not None else None
    key: tuple[str | int, ...] = ("links", index) if index is not None else ("sites",)
    spec = link or Link(sites=[a.name, b.name])
    distance_km, distance_source = _distance(spec, a, b)
    path_km = spec.route_km or distance_km
    floor = float(physics.floor_rtt_ms(path_km, spec.medium)) if path_km else None
    measured = tuple(
        _read(loaded, m, (*key, "measurements", i)) for i, m in enumerate(spec.measurements)
    )
    if measured:
        source: Literal["measured", "estimated"] = "measured"
        rtt = _small_message_rtt(measured)
    else:
        source = "estimated"
        rtt = _estimate(spec, distance_km, loaded, key, a, b)
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
) -> RttDistribution:
    if link.route_km:  # the route is known: only the fixed overhead is added
        p50 = physics.ESTIMATE_FIXED_OVERHEAD_MS + float(
            physics.floor_rtt_ms(link.route_km, link.medium)
        )
    elif distance_km is not None:
        p50 = physics.ESTIMATE_FIXED_OVERHEAD_MS + physics.ESTIMATE_ROUTE_FACTOR * float(
            physics.floor_rtt_ms(distance_km, link.medium)
        )
    else:
        raise AdvisorError(
            f"no RTT for sites {a.name} and {b.name}: add a link with measurements or "
            "distance_km, or give both sites a location",
            loaded.location(*key),
        )
    return RttDistribution.from_percentiles(
        {"p50": p50, "p95": p50 * physics.ESTIMATE_P95_OVER_P50}
    )


def _small_message_rtt(measured: tuple[MeasuredRtt, ...]) -> RttDistribution:
    """ICMP where measured (the largest sample wins), else the smallest TCP request."""
    icmp = [m for m in measured if m.method == "icmp"]
    if icmp:
        return max(icmp, key=lambda m: m.distribution.n_samples or 0).distribution
    return min(measured, key=lambda m: m.request_bytes or 0).distribution


def _read(loaded: LoadedTopology, spec: Measurement, key: tuple[str | int, ...]) -> MeasuredRtt:
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
    path = loaded.resolve_inside(spec.file, *key, "file")
    if not path.exists():
        raise AdvisorError(f"measurement file not found: {path}", loaded.location(*key, "file"))
    parsed = parse_file(
        path, spec.file_format, max_bytes=loaded.limits.measurement_bytes, **_parser_options(spec)
    )
    request = spec.request_bytes or (parsed.request_bytes if spec.method == "tcp_rr" else None)
    response = spec.response_bytes or (parsed.response_bytes if spec.method == "tcp_rr" else None)
    if spec.method == "tcp_rr" and not request:
        raise AdvisorError(
            "tcp_rr measurement needs request_bytes: the file does not state the request size",
            loaded.location(*key),
        )
    try:
        distribution = _distribution(parsed, spec)
    except ValueError as error:  # e.g. percentiles in the log that decrease
        raise AdvisorError(str(error), Location(str(path))) from None
    return MeasuredRtt(spec, distribution, spec.file, parsed.tool, request, response, parsed.notes)


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
