"""The input contract: ``topology.yaml`` (FORMAT.md, version 1) as pydantic models.

One model per YAML section, ``extra="forbid"`` everywhere (a typo is an error, not a silently
dropped key), strict types (``nodes: "3"`` is a string, not a number), no NaN or infinity,
and one small named validator per cross-field rule. Positions for error messages are added
by :mod:`advisor.inputs.loading`, which maps pydantic's error locations back to YAML lines.

Annotations are real objects, not strings (no ``from __future__ import annotations``): every
``advisor recommend`` builds these models, and pydantic would compile and evaluate each of
some 90 annotation strings first. Deferring the builds (``defer_build``) is not used
either: a model a run also uses alone (``Percentiles.given()`` dumps one) would be built
twice.
"""

__all__ = [
    "MEDIA",
    "Clients",
    "CommitLatencySlo",
    "FieldError",
    "Galera",
    "HotRow",
    "Link",
    "Measurement",
    "Percentiles",
    "Rate",
    "Replication",
    "Requirements",
    "Site",
    "SiteLocation",
    "SizePercentiles",
    "Topology",
    "Workload",
]

import itertools
import re
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from advisor.model import row_locks
from advisor.model.provider_options import OptionValue, check_option
from advisor.names import safe_name

MEDIA = ("fiber", "hollow_core_fiber", "copper", "microwave", "leo_satellite", "geo_satellite")
Medium = Literal[
    "fiber", "hollow_core_fiber", "copper", "microwave", "leo_satellite", "geo_satellite"
]
SiteName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$", min_length=1, max_length=128)]
# Characters a name must not hold: C0 controls (NUL, ESC, newline...), DEL, C1 controls and
# the bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069, marks U+200E/F,
# U+061C). They reach terminals (OSC 52 writes the clipboard, OSC 8 hides a link), SQL that
# mariadb refuses (NUL), and reorder what a reviewer reads ("Trojan Source", CVE-2021-42574).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# A description is prose: its newlines and tabs are kept.
_CONTROL_IN_PROSE = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _refuse_controls(pattern: re.Pattern[str]) -> Any:
    def check(value: str) -> str:
        found = pattern.search(value)
        if found:
            char = found.group(0)
            raise ValueError(
                f"must not contain control characters: U+{ord(char):04X} at position "
                f"{found.start() + 1} (terminal escapes, NUL and bidi overrides are refused)"
            )
        return value

    return AfterValidator(check)


def _check_path(value: str) -> str:
    """A file reference the operating system can open: each part at most 255 bytes."""
    for part in value.split("/"):
        if len(part.encode("utf-8", "surrogatepass")) > 255:
            raise ValueError(
                f"a path component is {len(part.encode('utf-8', 'surrogatepass'))} bytes; "
                "file systems allow at most 255"
            )
    return value


# A name shown in reports, documents and SQL comments: one line of printable text.
Name = Annotated[str, Field(min_length=1, max_length=256), _refuse_controls(_CONTROL)]
NonNegative = Annotated[float, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]
# Physical bounds that keep the arithmetic finite (SECURITY.md, limits): a round trip or a
# latency of more than 1,000 s, a rate of more than ten million a second or a size beyond
# Galera's 2 GB write-set limit is a typo, not a topology.
# A time above 0 but below 1 ns (1e-6 ms) is no measurement: no tool prints finer (sockperf
# gives ns), light crosses 30 cm in it, and dividing by it overflows (5e-324 ms made the
# sweep's JSON print Infinity). 0 stays allowed: ping prints a loopback's 0.000 ms.
MIN_TIME_MS = 1e-6


def _zero_or_measurable(value: float) -> float:
    if 0 < value < MIN_TIME_MS:
        raise ValueError(f"must be 0 or at least {MIN_TIME_MS:g} ms (1 ns), got {value!r}")
    return value


Milliseconds = Annotated[float, Field(ge=0, le=1e6), AfterValidator(_zero_or_measurable)]
PositiveMs = Annotated[float, Field(gt=0, le=1e6), AfterValidator(_zero_or_measurable)]
PerSecond = Annotated[float, Field(ge=0, le=1e7)]
Bytes = Annotated[float, Field(ge=0, le=2**31)]
BytesPerSecond = Annotated[float, Field(ge=0, le=1e12)]


class FieldError(ValueError):
    """A validation error that knows which key, below the model being validated, is at fault.

    Pydantic places a model validator's error at the model itself; :mod:`advisor.inputs.loading`
    appends ``path`` so that the message points at the offending line.
    """

    def __init__(self, message: str, *path: str | int) -> None:
        super().__init__(message)
        self.path = path


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)


def _peak_from_number(value: Any) -> Any:
    """FORMAT.md: a mapping of percentiles may also be a single number, read as the peak."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"max": value}
    return value


def _check_non_decreasing(model: BaseModel) -> None:
    given = [(name, getattr(model, name)) for name in type(model).model_fields]
    given = [(name, value) for name, value in given if value is not None]
    for (low_name, low), (high_name, high) in itertools.pairwise(given):
        if high < low:
            raise ValueError(
                f"percentiles must not decrease: {high_name} ({high:g}) < {low_name} ({low:g})"
            )


class Percentiles(_Model):
    """A distribution given by some of its percentiles, in the unit of the enclosing key.

    Keys ``p999`` = 99.9th, ``p9999`` = 99.99th percentile. A single number is read as ``max``.
    """

    min: Milliseconds | None = None
    p10: Milliseconds | None = None
    p25: Milliseconds | None = None
    p50: Milliseconds | None = None
    p75: Milliseconds | None = None
    p90: Milliseconds | None = None
    p95: Milliseconds | None = None
    p99: Milliseconds | None = None
    p999: Milliseconds | None = None
    p9999: Milliseconds | None = None
    max: Milliseconds | None = None

    @model_validator(mode="after")
    def _check_order(self) -> Self:
        if not self.given():
            raise ValueError("give at least one percentile, e.g. {p50: 4.3, p99: 37.2}")
        _check_non_decreasing(self)
        return self

    def given(self) -> dict[str, float]:
        """The percentiles that were given, in increasing order."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


class SizePercentiles(Percentiles):
    """Percentiles of a size [bytes] (up to Galera's 2 GB write-set limit)."""

    min: Bytes | None = None
    p10: Bytes | None = None
    p25: Bytes | None = None
    p50: Bytes | None = None
    p75: Bytes | None = None
    p90: Bytes | None = None
    p95: Bytes | None = None
    p99: Bytes | None = None
    p999: Bytes | None = None
    p9999: Bytes | None = None
    max: Bytes | None = None


class CommitLatencySlo(_Model):
    """Upper bounds on commit latency [ms]."""

    p50: PositiveMs | None = None
    p95: PositiveMs | None = None
    p99: PositiveMs | None = None
    p999: PositiveMs | None = None
    max: PositiveMs | None = None

    @model_validator(mode="after")
    def _check_order(self) -> Self:
        _check_non_decreasing(self)
        return self

    def given(self) -> dict[str, float]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


class Rate(_Model):
    """A rate with its average and its peak; a single number is read as the peak."""

    avg: NonNegative | None = None
    peak: NonNegative | None = None

    @model_validator(mode="before")
    @classmethod
    def _number_is_peak(cls, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return {"peak": value}
        return value

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.avg is None and self.peak is None:
            raise ValueError("give avg, peak or both, e.g. {avg: 800, peak: 2500}")
        if self.avg is not None and self.peak is not None and self.peak < self.avg:
            raise ValueError(f"peak ({self.peak:g}) is below avg ({self.avg:g})")
        return self

    @property
    def design_value(self) -> float:
        """The peak where given, else the average: flow control reacts to peaks."""
        return self.peak if self.peak is not None else float(self.avg or 0.0)


class CommitRate(Rate):
    """Commits (or transactions) per second."""

    avg: PerSecond | None = None
    peak: PerSecond | None = None


class ByteRate(Rate):
    """Bytes per second."""

    avg: BytesPerSecond | None = None
    peak: BytesPerSecond | None = None


class Requirements(_Model):
    commit_latency_ms: CommitLatencySlo | None = None
    survive: Literal["node", "site"] = "site"
    max_data_loss_s: Annotated[float, Field(ge=0, le=1e9)] | None = None


class SiteLocation(_Model):
    lat: Annotated[float, Field(ge=-90, le=90)]
    lon: Annotated[float, Field(ge=-180, le=180)]


class Site(_Model):
    name: SiteName
    location: SiteLocation | None = None
    nodes: Annotated[int, Field(ge=0, le=1000)] = 3
    writes: bool = True
    arbitrator: bool = False
    lan_rtt_ms: Percentiles = Percentiles(p50=0.2, p99=0.5)
    # Extension: pc.weight of each Galera node at this site (default 1; Codership docs,
    # Weighted Quorum: https://galeracluster.com/library/documentation/weighted-quorum.html).
    weight: Annotated[int, Field(ge=0, le=255)] = 1
    # Extension: this site's own cost of one commit or apply (issue 23, FORMAT.md).
    local_commit_ms: Annotated[float, Field(ge=0.001, le=1e6)] | None = Field(
        default=None,
        description=(
            "The local work of one commit, or one replicated write set's apply, on this "
            "site's nodes [ms]: slower disks, weaker CPUs or stricter durability "
            "(innodb_flush_log_at_trx_commit=1, sync_binlog=1) make it larger. Default "
            "workload.local_commit_ms. Every member applies every write set, so a site whose "
            "appliers cannot keep up caps the whole cluster by flow control. Measure it as "
            "the commit latency of the workload's transactions on one of its nodes alone."
        ),
    )

    _lan_as_peak = field_validator("lan_rtt_ms", mode="before")(
        lambda value: _peak_from_number(value)
    )

    @model_validator(mode="after")
    def _check_has_a_member_or_no_writes(self) -> Self:
        if self.writes and self.nodes == 0:
            raise ValueError(
                f"site {self.name!r} has writes: true but nodes: 0; writes need a Galera node "
                "at the site (set nodes >= 1 or writes: false)"
            )
        return self


class Measurement(_Model):
    """One RTT distribution for a link: inline samples, given percentiles, or a tool's log."""

    method: Literal["icmp", "tcp_rr"]
    payload_bytes: Annotated[int, Field(ge=0, le=65507)] | None = None
    request_bytes: Annotated[int, Field(ge=1, le=2**31)] | None = None
    response_bytes: Annotated[int, Field(ge=1, le=2**31)] | None = None
    # Extension: netperf -b burst (transactions in flight beyond the first) when a netperf
    # report does not state it; used to turn a transaction rate into a round trip.
    burst: Annotated[int, Field(ge=0, le=10_000)] | None = None
    # Extension: loss fraction for inline samples or percentiles (files report their own).
    loss: Annotated[float, Field(ge=0, lt=1)] | None = None
    file: (
        Annotated[
            str,
            Field(min_length=1, max_length=4096),
            _refuse_controls(_CONTROL),
            AfterValidator(_check_path),
        ]
        | None
    ) = None
    format: Literal["ping", "netperf", "sockperf", "samples"] | None = None
    samples_ms: Annotated[list[Milliseconds], Field(min_length=1)] | None = None
    percentiles_ms: Percentiles | None = None

    @model_validator(mode="after")
    def _check_one_source(self) -> Self:
        sources = [s for s in ("samples_ms", "percentiles_ms", "file") if getattr(self, s)]
        if len(sources) != 1:
            found = " and ".join(sources) if sources else "none"
            raise ValueError(
                f"give exactly one of samples_ms, percentiles_ms or file; found {found}"
            )
        if self.format is not None and self.file is None:
            raise ValueError("format applies to file only; add file: or remove format:")
        return self

    @model_validator(mode="after")
    def _check_method_fields(self) -> Self:
        if self.method == "icmp" and (self.request_bytes or self.response_bytes):
            raise ValueError("request_bytes/response_bytes apply to method tcp_rr, not icmp")
        if self.method == "tcp_rr" and self.payload_bytes is not None:
            raise ValueError("payload_bytes applies to method icmp; use request_bytes for tcp_rr")
        return self

    @property
    def file_format(self) -> str:
        """The log format: as given, else ping for icmp and netperf for tcp_rr."""
        return self.format or ("ping" if self.method == "icmp" else "netperf")


class Link(_Model):
    sites: Annotated[list[SiteName], Field(min_length=2, max_length=2)]
    distance_km: Annotated[float, Field(gt=0, le=20_038)] | None = None  # half the equator
    route_km: Annotated[float, Field(gt=0, le=1e6)] | None = None
    medium: Medium = "fiber"
    bandwidth_mbps: Annotated[float, Field(ge=0.001, le=1e9)] | None = None
    measurements: list[Measurement] = []
    # Extension: the kind of path an unmeasured pair takes, for its estimate from 100 km up
    # (advisor.model.physics.PATH_KINDS, fitted per kind by benchmarks/estimates.py).
    path: Literal["backbone", "internet"] | None = Field(
        default=None,
        description=(
            "The kind of path between the two sites, for the estimate of a pair nobody "
            "measured: 'backbone', a cloud provider's own network between its regions (both "
            "sites in regions of one provider); 'internet', the public Internet between "
            "hosting providers (a VPN over the Internet). Used from 100 km up without "
            "route_km; each kind has its own fit on published measured pairs of that kind "
            "(BENCHMARKS.md, 'Estimates from coordinates'). Absent: the fit of both kinds "
            "together. Measured links ignore it."
        ),
    )

    @model_validator(mode="after")
    def _check_pair(self) -> Self:
        if self.sites[0] == self.sites[1]:
            raise ValueError(f"a link joins two different sites; got {self.sites[0]!r} twice")
        if self.distance_km and self.route_km and self.route_km < self.distance_km:
            raise ValueError(
                f"route_km ({self.route_km:g}) is shorter than distance_km "
                f"({self.distance_km:g}); a cable cannot beat the great circle"
            )
        return self

    @property
    def pair(self) -> frozenset[str]:
        return frozenset(self.sites)


class HotRow(_Model):
    name: Name
    updates_per_s: Annotated[float, Field(ge=0.001, le=1e7)]
    writer_sites: Annotated[list[SiteName], Field(min_length=1)] | None = None


class RowWrites(_Model):
    """Extension: the rows each commit of the clients writes, for the lock waits between them
    (advisor.model.row_locks). sysbench 1.0's oltp_read_write: 3 rows of tables x table_size,
    1 % of them taking 75 % of the writes (its default ``--rand-type=special``)."""

    rows_per_commit: Annotated[int, Field(ge=1, le=10_000)]
    table_rows: Annotated[int, Field(ge=1, le=10**12)]
    hot_rows: Annotated[int, Field(ge=1, le=10**12)] | None = None
    hot_share: Annotated[float, Field(gt=0, lt=1)] | None = None

    @model_validator(mode="after")
    def _check_sets(self) -> Self:
        self.spec()  # the model's checks, one set for both layers
        return self

    def spec(self) -> row_locks.RowWrites:
        """The model's description of these writes (no hot set: 0 rows, share 0)."""
        return row_locks.RowWrites(
            self.rows_per_commit, self.table_rows, self.hot_rows or 0, self.hot_share or 0.0
        )


class Clients(_Model):
    concurrency: Annotated[int, Field(ge=1, le=1_000_000)]
    baseline_txn_latency_ms: Annotated[float, Field(ge=0.001, le=1e6)]
    commits_per_txn: Annotated[int, Field(ge=1, le=10_000)] = 1
    row_writes: RowWrites | None = None


class Workload(_Model):
    commits_per_s: CommitRate | None = None
    writeset_bytes: SizePercentiles | None = None
    replicated_bytes_per_s: ByteRate | None = None
    hot_rows: list[HotRow] = []
    clients: Clients | None = None
    # Extension: a commit on a lone node, without replication [ms] (certification, binlog,
    # InnoDB flush). Default 1.0 ms, from this project's lab (the ``notes`` of
    # benchmarks/calibration/lab-galera.yaml); large write sets cost far more (FORMAT.md).
    local_commit_ms: Annotated[float, Field(ge=0.001, le=1e6)] | None = Field(
        default=None,
        description=(
            "The local work of one commit on a node alone, without replication [ms]: "
            "certification, binlog, InnoDB; added to every commit. Default 1 ms, a small "
            "write set's. Large write sets cost more: the project's lab measured about 10 ms "
            "at 200 KB, 35 ms at 790 KB and 124 ms at 3.2 MB with no network delay "
            "(benchmarks/calibration/lab-runs.yaml, large-writeset-local-rtt0). Measure it "
            "as the commit latency of the workload's transactions on one node alone."
        ),
    )
    # Extension: the data a node holds [bytes], for the state-transfer times of the design
    # document (a full copy over each WAN link). Optional.
    dataset_bytes: Annotated[float, Field(ge=0, le=1e16)] | None = None

    _writeset_as_peak = field_validator("writeset_bytes", mode="before")(
        lambda value: _peak_from_number(value)
    )

    @field_validator("hot_rows")
    @classmethod
    def _check_unique_rows(cls, rows: list[HotRow]) -> list[HotRow]:
        names = [row.name for row in rows]
        for index, name in enumerate(names):
            if name in names[:index]:
                raise FieldError(f"hot row {name!r} is listed twice", index, "name")
        return rows


class Galera(_Model):
    flavor: Literal["mariadb", "pxc", "codership"] = "mariadb"
    version: Annotated[str, Field(pattern=r"^\d+(\.\d+){0,3}$")] | None = None
    provider_options: dict[str, OptionValue] = {}

    @field_validator("provider_options")
    @classmethod
    def _check_options(cls, options: dict[str, OptionValue]) -> dict[str, OptionValue]:
        for key, value in options.items():
            try:
                check_option(key, value)
            except ValueError as error:
                raise FieldError(str(error), key) from None
        return options


class Replication(_Model):
    """Extension: the asynchronous channels between clusters, as they run today."""

    applier_threads: Annotated[int, Field(ge=1, le=1024)] | None = Field(
        default=None,
        description=(
            "Workers applying each asynchronous channel on its replica: MariaDB "
            "slave_parallel_threads (0 there means the SQL thread alone: give 1), MySQL and "
            "PXC replica_parallel_workers. Given, the model judges the channels at this "
            "number and the generated files keep it; absent, the design sets the fewest "
            "that keep up with the peak."
        ),
    )


class Topology(_Model):
    version: Literal[1] = 1
    name: Name
    description: Annotated[str, _refuse_controls(_CONTROL_IN_PROSE)] | None = None
    requirements: Requirements = Requirements()
    sites: Annotated[list[Site], Field(min_length=1, max_length=1000)]
    links: list[Link] = []
    workload: Workload = Workload()
    galera: Galera = Galera()
    replication: Replication = Replication()

    @model_validator(mode="after")
    def _check_site_names_unique(self) -> Self:
        """Distinct, also as file names: ``Paris`` and ``paris``, ``-x`` and ``_-x``, ``CON``
        and ``CON_`` would share generated files (:func:`advisor.names.safe_name`) and,
        for case, DNS host names; refused here so that ``validate`` and ``doc`` agree."""
        seen: dict[str, int] = {}
        for index, site in enumerate(self.sites):
            slug = safe_name(site.name)
            first = seen.setdefault(slug.casefold(), index)
            if first == index:
                continue
            other = self.sites[first].name
            if other == site.name:
                message = f"site name {site.name!r} is declared twice"
            elif other.casefold() == site.name.casefold():
                message = (
                    f"site name {site.name!r} differs from {other!r} (sites[{first}]) only in "
                    "case, which file names on macOS and Windows and DNS host names ignore; "
                    "rename one"
                )
            else:
                message = (
                    f"site name {site.name!r} would share generated file names with {other!r} "
                    f"(sites[{first}]): both become {slug!r}; rename one"
                )
            raise FieldError(message, "sites", index, "name")
        return self

    @model_validator(mode="after")
    def _check_references(self) -> Self:
        declared = {site.name for site in self.sites}
        pairs: set[frozenset[str]] = set()
        for index, link in enumerate(self.links):
            for end, name in enumerate(link.sites):
                if name not in declared:
                    raise FieldError(_undeclared(name, declared), "links", index, "sites", end)
            if link.pair in pairs:
                raise FieldError(f"the pair {'-'.join(link.sites)} is linked twice", "links", index)
            pairs.add(link.pair)
        with_nodes = {site.name for site in self.sites if site.nodes > 0}
        if not with_nodes:
            raise FieldError("no site has Galera nodes; give at least one site nodes >= 1", "sites")
        not_writing = {site.name for site in self.sites if not site.writes}
        writing = [site.name for site in self.sites if site.writes and site.nodes > 0]
        for index, row in enumerate(self.workload.hot_rows):
            where = ("workload", "hot_rows", index)
            for end, name in enumerate(row.writer_sites or ()):
                if name not in declared:
                    raise FieldError(_undeclared(name, declared), *where, "writer_sites", end)
                if name not in with_nodes:
                    raise FieldError(
                        f"site {name!r} has no Galera nodes (nodes: 0), so no row is written "
                        "there; list sites with nodes >= 1",
                        *where,
                        "writer_sites",
                        end,
                    )
                if name in not_writing:
                    raise FieldError(
                        f"site {name!r} has writes: false; list sites where the application writes",
                        *where,
                        "writer_sites",
                        end,
                    )
            if row.writer_sites is None and not writing:
                raise FieldError(
                    f"hot row {row.name!r} has no writer site: no site has writes: true and "
                    "nodes >= 1; give writer_sites",
                    *where,
                )
        return self

    def site(self, name: str) -> Site:
        return next(site for site in self.sites if site.name == name)

    def link(self, a: str, b: str) -> Link | None:
        pair = frozenset((a, b))
        return next((link for link in self.links if link.pair == pair), None)


def _undeclared(name: str, declared: set[str]) -> str:
    return f"site {name!r} is not declared; declared sites: " + ", ".join(sorted(declared))
