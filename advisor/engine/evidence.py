"""Per site pair: distance, physical floor, measured or estimated RTT, and TCP at payload size.

This is where the three inputs meet: the topology (where the sites are), physics (how fast a
signal can possibly travel) and the measurements (what was really seen). Each
:class:`LinkEvidence` says where every figure came from.

A pair nobody measured is estimated (:class:`RttEstimate`) from the distance fit, bounded by
evidence on both sides: below by the physical floor, above by the best path over the measured
links (a packet can be relayed through a measured neighbour) and by the fit's scatter.
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
]

import itertools
import math
import os
import weakref
from dataclasses import dataclass, field, replace
from pathlib import Path
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

    ``p50_ms`` is the distance fit clipped into [``floor_ms``, ``path_bound_ms``]; the range
    runs from ``low_ms`` (the floor) to ``high_ms`` (the fit times the scatter factor, or the
    measured path if shorter): :func:`advisor.model.physics.bounded_estimate_ms`.
    ``basis`` says it in words, e.g. ``via paris-1: 0.47 + 9.76 ms``.
    """

    p50_ms: float
    low_ms: float
    high_ms: float
    fit_ms: float  # the distance (or route) fit alone
    floor_ms: float
    basis: str
    fit_basis: str  # the fit in words, e.g. "distance fit: 7.5 ms + 1.39 x 4.72 ms floor"
    path_bound_ms: float | None = None  # best path over measured links, None without one
    path: tuple[str, ...] = ()  # the sites of that path, both ends included
    path_legs_ms: tuple[float, ...] = ()  # the measured p50 of each hop

    @property
    def via(self) -> tuple[str, ...]:
        """The sites a packet is relayed through on the measured path."""
        return self.path[1:-1]


def estimate_distribution(p50_ms: float) -> RttDistribution:
    """The distribution of an estimated link at a p50 of ``p50_ms`` [ms].

    One shape for every estimate, scaled to its p50: the provider backbones' median tail,
    p95 = 1.056 x p50 (``physics.ESTIMATE_P95_OVER_P50``), flat beyond (nothing past p95 is
    claimed). The ends of an estimate's range use the same shape at their own p50.
    A function of the p50 alone: :func:`estimated_p50_ms` tells it back.
    """
    distribution = RttDistribution.from_percentiles(
        {"p50": p50_ms, "p95": p50_ms * physics.ESTIMATE_P95_OVER_P50}
    )
    _ESTIMATE_P50_MS[distribution] = float(p50_ms)
    return distribution


def estimated_p50_ms(distribution: RttDistribution) -> float | None:
    """The p50 [ms] whose :func:`estimate_distribution` ``distribution`` is (this very
    object, not an equal one), None for any other distribution."""
    return _ESTIMATE_P50_MS.get(distribution)


# Each estimate distribution's p50 by the object itself, for as long as it lives: a
# distribution never changes, so whatever holds it holds the estimate at that p50.
_ESTIMATE_P50_MS: weakref.WeakKeyDictionary[RttDistribution, float] = weakref.WeakKeyDictionary()


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
    estimate: RttEstimate | None = None  # how an estimated RTT was bounded (None: measured)
    _writeset_cache: dict[float, tuple[RttDistribution, Literal["measured", "modelled"]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def at_rtt_p50(self, p50_ms: float) -> LinkEvidence:
        """This estimated link with its RTT moved to ``p50_ms`` (same shape): for evaluating
        the ends of its range. A measured link is returned unchanged."""
        if self.rtt_source != "estimated":
            return self
        return replace(self, rtt=estimate_distribution(p50_ms), _writeset_cache={})

    @property
    def value_key(self) -> tuple[float, float] | None:
        """What this link's round trips follow from, as plain values, where that is all:
        an estimated link without measurements is its estimate's p50 [ms] and its bandwidth
        [Mbit/s] (its RTT is ``estimate_distribution(p50)``, its write-set round trips the
        TCP model over it). None for any other link: its values are not kept across
        topologies (``Evaluator.pair_draws``)."""
        if self.measurements:
            return None
        p50_ms = estimated_p50_ms(self.rtt)
        if p50_ms is None or not (math.isfinite(p50_ms) and p50_ms > 0.0):
            return None  # a zero's sign, or a NaN, is no key
        return p50_ms, float(self.effective_bandwidth_mbps)

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
    paths = _Paths(loaded)
    _check_total_bytes(loaded, paths)
    where = {link.pair: i for i, link in enumerate(loaded.topology.links)}
    files: _FileCache = {}
    _prefetch(loaded, {s.name for s in sites}, files, paths)
    links = _shared_writeset_caches(
        [
            _pair(loaded, a, b, where.get(frozenset((a.name, b.name))), files, paths)
            for a, b in itertools.combinations(sites, 2)
        ]
    )
    if not any(link.rtt_source == "estimated" for link in links):
        return links
    names = [s.name for s in sites]
    index = {name: i for i, name in enumerate(names)}
    measured_ms = np.full((len(names), len(names)), np.inf)
    np.fill_diagonal(measured_ms, 0.0)
    for link in links:
        if link.rtt_source == "measured":
            i, j = index[link.sites[0]], index[link.sites[1]]
            measured_ms[i, j] = measured_ms[j, i] = float(link.rtt.quantile(0.5))
    best_ms, hop = physics.relay_paths_ms(measured_ms)
    return [
        link if link.estimate is None else _bounded(link, names, measured_ms, best_ms, hop, index)
        for link in links
    ]


def _shared_writeset_caches(links: list[LinkEvidence]) -> list[LinkEvidence]:
    """Links with the same evidence (one file named by several entries) share their write-set
    round trips: each is a distribution as large as the file, computed once, not per link."""
    shared: dict[
        tuple[object, ...], dict[float, tuple[RttDistribution, Literal["measured", "modelled"]]]
    ] = {}
    out = []
    for link in links:
        key = (
            id(link.rtt),
            link.effective_bandwidth_mbps,
            # the floor clips only a sized TCP measurement shifted to another size
            link.floor_rtt_ms if any(m.method == "tcp_rr" for m in link.measurements) else None,
            tuple((id(m.distribution), m.method, m.request_bytes) for m in link.measurements),
        )
        if link.measurements and key in shared:
            link = replace(link, _writeset_cache=shared[key])
        else:
            shared[key] = link._writeset_cache
        out.append(link)
    return out


def _bounded(
    link: LinkEvidence,
    names: list[str],
    measured_ms: np.ndarray,
    best_ms: np.ndarray,
    hop: np.ndarray,
    index: dict[str, int],
) -> LinkEvidence:
    """``link`` (estimated from its fit alone) bounded by the best measured path."""
    assert link.estimate is not None
    fit = link.estimate
    i, j = index[link.sites[0]], index[link.sites[1]]
    path = physics.relay_path(hop, i, j)
    if not path:
        return link
    legs = tuple(float(measured_ms[a, b]) for a, b in itertools.pairwise(path))
    bound_ms = float(best_ms[i, j])
    p50, low, high = (
        float(v) for v in physics.bounded_estimate_ms(fit.fit_ms, fit.floor_ms, bound_ms)
    )
    sites = tuple(names[k] for k in path)
    via = f"via {', '.join(sites[1:-1])}: {' + '.join(f'{leg:.2f}' for leg in legs)} ms"
    fit_words = f"{fit.fit_basis.replace(': ', ' ', 1)} = {fit.fit_ms:.2f} ms"
    if bound_ms < fit.floor_ms:
        basis = (
            f"{via} measured, below the {fit.floor_ms:.2f} ms floor of this pair: check its "
            "distance and medium"
        )
    elif bound_ms < fit.fit_ms:
        basis = f"{via} measured (clipping the {fit_words})"
    elif bound_ms < fit.fit_ms * physics.ESTIMATE_SCATTER_FACTOR:
        basis = f"{fit.fit_basis}, at most {bound_ms:.2f} ms {via} measured"
    else:  # the measured path is longer than the range: it bounds nothing
        basis = fit.fit_basis
    estimate = replace(
        fit,
        p50_ms=p50,
        low_ms=low,
        high_ms=high,
        basis=basis,
        path_bound_ms=bound_ms,
        path=sites,
        path_legs_ms=legs,
    )
    return replace(link, rtt=estimate_distribution(p50), estimate=estimate, _writeset_cache={})


# A file itself, whatever path names it: (device, inode) from its ``stat``.
_FileId = tuple[int, int]
# A measurement file read once per topology, whatever number of entries name it: (the file,
# or its path where it cannot be found, format, burst, loss given) -> (what the parser
# found, its distribution).
_FileCache = dict[
    tuple[_FileId | Path, str, int | None, float | None],
    tuple[ParsedMeasurement | None, RttDistribution | None],
]


class _Paths:
    """Each measurement file's path, checked to lie inside the topology's folder, and the
    file it names with its size, from one ``stat``: found once per topology. The size check,
    the threaded read and each link need both (9 resolutions a file took 0.17 s of the
    30-site benchmark; a real path instead of the ``stat`` a dozen ``lstat`` calls more)."""

    def __init__(self, loaded: LoadedTopology) -> None:
        self._loaded = loaded
        self._found: dict[tuple[str, tuple[str | int, ...]], tuple[Path, _FileId | None]] = {}
        self.sizes: dict[_FileId, int] = {}  # [bytes]

    def inside(self, reference: str, *key: str | int) -> tuple[Path, _FileId | None]:
        """``loaded.resolve_inside`` (its error raised at every call) and the file it names
        (None where it cannot be found); its size goes to ``sizes``."""
        memo = (reference, key)
        if memo not in self._found:
            path = self._loaded.resolve_inside(reference, *key)
            file = _file_id(path, self.sizes)
            self._found[memo] = (path, file)
        return self._found[memo]


def _file_id(path: Path, sizes: dict[_FileId, int]) -> _FileId | None:
    """The file ``path`` names (symbolic links followed), its size put in ``sizes``; None
    where it cannot be found (reading it then says what is wrong)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    file = (info.st_dev, info.st_ino)
    sizes[file] = info.st_size
    return file


def _prefetch(loaded: LoadedTopology, members: set[str], files: _FileCache, paths: _Paths) -> None:
    """Read the measurement files of many links on every core, into ``files``.

    Reading is independent per file, and numpy releases the GIL for the bytes' decoding and
    the samples' sort, so threads share the cores. A file that cannot be read is left out:
    the sequential pass (:func:`_read`) reads it again and reports the first error in link
    order, with its location, as it would alone.
    """
    jobs: dict[tuple[_FileId | Path, str, int | None, float | None], tuple[Path, Measurement]] = {}
    for index, link in enumerate(loaded.topology.links):
        if not link.pair <= members:
            continue
        for number, spec in enumerate(link.measurements):
            if spec.file is None or spec.samples_ms is not None or spec.percentiles_ms is not None:
                continue
            try:
                path, file = paths.inside(spec.file, "links", index, "measurements", number, "file")
                if file is None:
                    continue
                key = (
                    file,
                    spec.file_format,
                    _parser_options(spec).get("burst"),
                    spec.loss,
                )
            except (AdvisorError, OSError, ValueError):
                continue
            jobs.setdefault(key, (path, spec))
    workers = min(os.cpu_count() or 1, _READ_THREADS)
    if workers < 2 or len(jobs) < _PARALLEL_FILES:
        return
    from concurrent.futures import ThreadPoolExecutor  # only for topologies with many files

    # In a few runs of files per thread, not one task per file (a task costs tens of us).
    todo = list(jobs.values())
    size = -(-len(todo) // (4 * workers))
    runs = [todo[start : start + size] for start in range(0, len(todo), size)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        done = pool.map(lambda run: [_try_read(loaded, *job) for job in run], runs)
        read = [got for run in done for got in run]
    files.update((key, got) for key, got in zip(jobs, read, strict=True) if got is not None)


def _try_read(
    loaded: LoadedTopology, path: Path, spec: Measurement
) -> tuple[ParsedMeasurement, RttDistribution] | None:
    """A file's parse and distribution, or None when reading it fails in any way."""
    try:
        parsed = parse_file(
            path,
            spec.file_format,
            max_bytes=loaded.limits.measurement_bytes,
            ascending=True,
            **_parser_options(spec),
        )
        return parsed, _checked_distribution(parsed, spec, path)
    except Exception:  # _read reads the file again and reports the error in link order
        return None


def _check_total_bytes(loaded: LoadedTopology, paths: _Paths) -> None:
    """Refuse, before reading any, measurement files too large together."""
    limit = MAX_TOTAL_MEASUREMENT_FILES * loaded.limits.measurement_bytes
    counted: set[_FileId] = set()
    total_bytes = 0
    for index, link in enumerate(loaded.topology.links):
        for number, spec in enumerate(link.measurements):
            if spec.file is None:
                continue
            key = ("links", index, "measurements", number, "file")
            _, file = paths.inside(spec.file, *key)
            if file is None or file in counted:
                continue  # not found: reading it says what is wrong, with its own message
            counted.add(file)
            total_bytes += paths.sizes[file]
            if total_bytes > limit:
                raise AdvisorError(
                    f"the measurement files together are more than {limit / 2**20:.0f} MB "
                    f"({MAX_TOTAL_MEASUREMENT_FILES} times --max-file-mb); this one "
                    f"reaches {total_bytes / 2**20:.0f} MB",
                    loaded.location(*key),
                )


def _pair(
    loaded: LoadedTopology,
    a: Site,
    b: Site,
    index: int | None,
    files: _FileCache,
    paths: _Paths,
) -> LinkEvidence:
    link = loaded.topology.links[index] if index is not None else None
    key: tuple[str | int, ...] = ("links", index) if index is not None else ("sites",)
    spec = link or Link(sites=[a.name, b.name])
    distance_km, distance_source = _distance(spec, a, b)
    path_km = spec.route_km or distance_km
    floor = float(physics.floor_rtt_ms(path_km, spec.medium)) if path_km else None
    measured = tuple(
        _read(loaded, m, (*key, "measurements", i), files, paths)
        for i, m in enumerate(spec.measurements)
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
    """The fit alone, with its range; :func:`gather_links` then bounds it by measured paths."""
    overhead = physics.ESTIMATE_FIXED_OVERHEAD_MS
    if link.route_km:  # the route is known: only the fixed overhead is added
        floor = float(physics.floor_rtt_ms(link.route_km, link.medium))
        fit = overhead + floor
        basis = f"route fit: {overhead:.1f} ms + {floor:.2f} ms floor over {link.route_km:g} km"
    elif distance_km is not None:
        floor = float(physics.floor_rtt_ms(distance_km, link.medium))
        factor = physics.ESTIMATE_ROUTE_FACTOR
        fit = overhead + factor * floor
        basis = f"distance fit: {overhead:.1f} ms + {factor:.2f} x {floor:.2f} ms floor"
    else:
        raise AdvisorError(
            f"no RTT for sites {a.name} and {b.name}: add a link with measurements or "
            "distance_km, or give both sites a location",
            loaded.location(*key),
        )
    p50, low, high = (float(v) for v in physics.bounded_estimate_ms(fit, floor))
    return RttEstimate(
        p50_ms=p50,
        low_ms=low,
        high_ms=high,
        fit_ms=fit,
        floor_ms=floor,
        basis=basis,
        fit_basis=basis,
    )


def _small_message_rtt(measured: tuple[MeasuredRtt, ...]) -> RttDistribution:
    """ICMP where measured (the largest sample wins), else the smallest TCP request."""
    icmp = [m for m in measured if m.method == "icmp"]
    if icmp:
        return max(icmp, key=lambda m: m.distribution.n_samples or 0).distribution
    return min(measured, key=lambda m: m.request_bytes or 0).distribution


def _read(
    loaded: LoadedTopology,
    spec: Measurement,
    key: tuple[str | int, ...],
    files: _FileCache,
    paths: _Paths,
) -> MeasuredRtt:
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
    path, file = paths.inside(spec.file, *key, "file")
    if not path.exists():
        raise AdvisorError(f"measurement file not found: {path}", loaded.location(*key, "file"))
    options = _parser_options(spec)
    found = file or _file_id(path, {}) or path  # it may have appeared since
    cache_key = (found, spec.file_format, options.get("burst"), spec.loss)
    parsed, distribution = files.get(cache_key, (None, None))
    if parsed is None:
        parsed = parse_file(
            path,
            spec.file_format,
            max_bytes=loaded.limits.measurement_bytes,
            ascending=True,  # a distribution's order: sorted in the parse, not after it
            **options,
        )
    request = spec.request_bytes or (parsed.request_bytes if spec.method == "tcp_rr" else None)
    response = spec.response_bytes or (parsed.response_bytes if spec.method == "tcp_rr" else None)
    if spec.method == "tcp_rr" and not request:
        raise AdvisorError(
            "tcp_rr measurement needs request_bytes: the file does not state the request size",
            loaded.location(*key),
        )
    if distribution is None:
        distribution = _checked_distribution(parsed, spec, path)
        files[cache_key] = parsed, distribution
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
