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
from advisor.model.cpu_quota import KERNEL_SLICE_MS, CpuQuota
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


# A distance above 0 but below a metre is no distance between sites (a rack is metres
# long), and the sweep's scaling divides by it: 5e-324 km put NaN and Infinity in its JSON.
MIN_DISTANCE_KM = 0.001


def _at_least_a_metre(value: float) -> float:
    if value < MIN_DISTANCE_KM:
        raise ValueError(f"must be at least {MIN_DISTANCE_KM:g} km (1 m), got {value!r}")
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

    min: Milliseconds | None = Field(
        default=None,
        description=(
            "The smallest value seen. In the unit of the enclosing key (ms for round trips)."
        ),
    )
    p10: Milliseconds | None = Field(
        default=None,
        description=("The 10th percentile. In the unit of the enclosing key (ms for round trips)."),
    )
    p25: Milliseconds | None = Field(
        default=None,
        description=("The 25th percentile. In the unit of the enclosing key (ms for round trips)."),
    )
    p50: Milliseconds | None = Field(
        default=None,
        description=(
            "The median (50th percentile). In the unit of the enclosing key (ms for round trips)."
        ),
    )
    p75: Milliseconds | None = Field(
        default=None,
        description=("The 75th percentile. In the unit of the enclosing key (ms for round trips)."),
    )
    p90: Milliseconds | None = Field(
        default=None,
        description=("The 90th percentile. In the unit of the enclosing key (ms for round trips)."),
    )
    p95: Milliseconds | None = Field(
        default=None,
        description=("The 95th percentile. In the unit of the enclosing key (ms for round trips)."),
    )
    p99: Milliseconds | None = Field(
        default=None,
        description=("The 99th percentile. In the unit of the enclosing key (ms for round trips)."),
    )
    p999: Milliseconds | None = Field(
        default=None,
        description=(
            "The 99.9th percentile. In the unit of the enclosing key (ms for round trips)."
        ),
    )
    p9999: Milliseconds | None = Field(
        default=None,
        description=(
            "The 99.99th percentile. In the unit of the enclosing key (ms for round trips)."
        ),
    )
    max: Milliseconds | None = Field(
        default=None,
        description=(
            "The largest value seen. In the unit of the enclosing key (ms for round trips)."
        ),
    )

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

    min: Bytes | None = Field(
        default=None,
        description=("The smallest value seen. In bytes (up to Galera's 2 GB write-set limit)."),
    )
    p10: Bytes | None = Field(
        default=None,
        description=("The 10th percentile. In bytes (up to Galera's 2 GB write-set limit)."),
    )
    p25: Bytes | None = Field(
        default=None,
        description=("The 25th percentile. In bytes (up to Galera's 2 GB write-set limit)."),
    )
    p50: Bytes | None = Field(
        default=None,
        description=(
            "The median (50th percentile). In bytes (up to Galera's 2 GB write-set limit)."
        ),
    )
    p75: Bytes | None = Field(
        default=None,
        description=("The 75th percentile. In bytes (up to Galera's 2 GB write-set limit)."),
    )
    p90: Bytes | None = Field(
        default=None,
        description=("The 90th percentile. In bytes (up to Galera's 2 GB write-set limit)."),
    )
    p95: Bytes | None = Field(
        default=None,
        description=("The 95th percentile. In bytes (up to Galera's 2 GB write-set limit)."),
    )
    p99: Bytes | None = Field(
        default=None,
        description=("The 99th percentile. In bytes (up to Galera's 2 GB write-set limit)."),
    )
    p999: Bytes | None = Field(
        default=None,
        description=("The 99.9th percentile. In bytes (up to Galera's 2 GB write-set limit)."),
    )
    p9999: Bytes | None = Field(
        default=None,
        description=("The 99.99th percentile. In bytes (up to Galera's 2 GB write-set limit)."),
    )
    max: Bytes | None = Field(
        default=None,
        description=("The largest value seen. In bytes (up to Galera's 2 GB write-set limit)."),
    )


class CommitLatencySlo(_Model):
    """Upper bounds on commit latency [ms]."""

    p50: PositiveMs | None = Field(
        default=None,
        description=(
            "The most the commit latency's median may be [ms], at the slowest writing site."
        ),
    )
    p95: PositiveMs | None = Field(
        default=None,
        description=(
            "The most the commit latency's p95 percentile may be [ms], at the slowest writing site."
        ),
    )
    p99: PositiveMs | None = Field(
        default=None,
        description=(
            "The most the commit latency's p99 percentile may be [ms], at the slowest writing site."
        ),
    )
    p999: PositiveMs | None = Field(
        default=None,
        description=(
            "The most the commit latency's p999 percentile may be [ms], "
            "at the slowest writing site."
        ),
    )
    max: PositiveMs | None = Field(
        default=None,
        description=(
            "The most the commit latency's largest value may be [ms], at the slowest writing site."
        ),
    )

    @model_validator(mode="after")
    def _check_order(self) -> Self:
        _check_non_decreasing(self)
        return self

    def given(self) -> dict[str, float]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


class Rate(_Model):
    """A rate with its average and its peak; a single number is read as the peak."""

    avg: NonNegative | None = Field(default=None, description="The average over a working day.")
    peak: NonNegative | None = Field(
        default=None,
        description=(
            "The peak (the busiest minute); the design uses it, as flow control reacts to peaks."
        ),
    )

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

    avg: PerSecond | None = Field(
        default=None, description="Average commits (or transactions) per second."
    )
    peak: PerSecond | None = Field(
        default=None,
        description=("Peak commits per second (the busiest minute); the design uses it."),
    )


class ByteRate(Rate):
    """Bytes per second."""

    avg: BytesPerSecond | None = Field(
        default=None,
        description=(
            "Average replicated bytes per second (wsrep_replicated_bytes "
            "+ wsrep_received_bytes per second)."
        ),
    )
    peak: BytesPerSecond | None = Field(
        default=None,
        description=(
            "Peak replicated bytes per second; the design sizes links and channels for it."
        ),
    )


class Requirements(_Model):
    commit_latency_ms: CommitLatencySlo | None = Field(
        default=None,
        description=(
            "Upper bounds on commit latency [ms] by percentile (the SLO),"
            " e.g. {p99: 50}; an option that breaks one is ruled out."
        ),
    )
    survive: Literal["node", "site"] = Field(
        default="site",
        description=(
            "The failure writes must survive: the loss of one 'node' or "
            "of one whole 'site' (or the link to it)."
        ),
    )
    max_data_loss_s: Annotated[float, Field(ge=0, le=1e9)] | None = Field(
        default=None,
        description=(
            "The most recent commits a lost site may take with it [s]; "
            "asynchronous links above it rule the option out. Absent: not"
            " stated."
        ),
    )


class SiteLocation(_Model):
    lat: Annotated[float, Field(ge=-90, le=90)] = Field(
        description=("Latitude in degrees (WGS 84), for the distance to other sites.")
    )
    lon: Annotated[float, Field(ge=-180, le=180)] = Field(
        description=("Longitude in degrees (WGS 84), for the distance to other sites.")
    )


class Site(_Model):
    name: SiteName = Field(
        description=(
            "The site's name (a data centre, room or cloud region); used "
            "in file names, so unique regardless of case."
        )
    )
    location: SiteLocation | None = Field(
        default=None,
        description=(
            "Where the site is ({lat, lon}), for distances and the estimate of unmeasured links."
        ),
    )
    nodes: Annotated[int, Field(ge=0, le=1000)] = Field(
        default=3,
        description=("Galera data nodes at the site (0 for a room that may only host a garbd)."),
    )
    writes: bool = Field(
        default=True,
        description=(
            "Whether applications write at this site (false for a witness or a read-only site)."
        ),
    )
    arbitrator: bool = Field(
        default=False, description="Whether the site may host a garbd arbitrator (for quorum)."
    )
    lan_rtt_ms: Percentiles = Field(
        default=Percentiles(p50=0.2, p99=0.5),
        description=(
            "Round trip between nodes inside the site [ms] by percentile;"
            " a number is read as its max."
        ),
    )
    # Extension: pc.weight of each Galera node at this site (default 1; Codership docs,
    # Weighted Quorum: https://galeracluster.com/library/documentation/weighted-quorum.html).
    weight: Annotated[int, Field(ge=0, le=255)] = Field(
        default=1,
        description=(
            "pc.weight of each Galera node at this site, for quorum "
            "(default 1; Codership docs, Weighted Quorum)."
        ),
    )
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
    # Extension: a CPU limit on this site's nodes (issue 23, FORMAT.md,
    # advisor.model.cpu_quota).
    cpu_limit_cores: Annotated[float, Field(gt=0, le=1024)] | None = Field(
        default=None,
        description=(
            "The CPU quota each of this site's mariadbd processes runs under [CPUs]: a "
            "Kubernetes CPU limit, docker --cpus, or cgroup cpu.cfs_quota_us over "
            "cpu.cfs_period_us. Once a period's quota is spent the node stops until the next "
            "period, and every commit of its cluster waits for its acknowledgement. Needs "
            "cpu_ms_per_writeset."
        ),
    )
    cpu_ms_per_writeset: Annotated[float, Field(gt=0, le=1e6)] | None = Field(
        default=None,
        description=(
            "CPU time one of this site's nodes spends on each write set it receives, "
            "certifies and applies [ms of CPU], measured: the CPU seconds of its mariadbd "
            "(cgroup cpuacct.usage, or the process's utime + stime) over the change of "
            "wsrep_received in the same minute, while it only replicates."
        ),
    )
    cpu_ms_per_message: Annotated[float, Field(ge=0, le=1e6)] = Field(
        default=0.0,
        description=(
            "CPU time one of this site's nodes spends on each message the writer sends, "
            "beyond the write sets it carries [ms of CPU]: receiving it, acknowledging it and "
            "reading the other members' acknowledgements. With it, cpu_ms_per_writeset is the "
            "cost of one more write set in a message. Measured at two loads: the mariadbd's "
            "CPU = cpu_ms_per_message x the writer's change of wsrep_evs_sent_user "
            "(evs.info_log_mask=0x4 shows it) + cpu_ms_per_writeset x the change of "
            "wsrep_received. 0: all of it per write set."
        ),
    )
    cpu_period_ms: Annotated[float, Field(ge=1, le=1000)] = Field(
        default=100.0,
        description=(
            "The period over which cpu_limit_cores is granted [ms] (cpu.cfs_period_us; 100 "
            "ms in the kernel and Kubernetes by default)."
        ),
    )
    cpu_slice_ms: Annotated[float, Field(ge=0.001, le=1000)] = Field(
        default=KERNEL_SLICE_MS,
        description=(
            "The slice of the quota the kernel hands to one CPU's run queue at a time [ms] "
            "(/proc/sys/kernel/sched_cfs_bandwidth_slice_us of the nodes' host, 5 ms by "
            "default). A budget (cpu_limit_cores x cpu_period_ms) of fewer than two slices "
            "is not all usable by a node whose threads run on two CPUs (CPU-QUOTA-SLICE)."
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

    @model_validator(mode="after")
    def _check_a_cpu_limit_has_its_cost(self) -> Self:
        if self.cpu_limit_cores is not None and self.cpu_ms_per_writeset is None:
            raise ValueError(
                f"site {self.name!r} gives cpu_limit_cores but not cpu_ms_per_writeset: how "
                "long the limit lets a node keep up depends on the CPU each write set costs it "
                "(measure its mariadbd's CPU seconds over the change of wsrep_received)"
            )
        return self

    @property
    def cpu_quota(self) -> CpuQuota | None:
        """The CPU limit of this site's nodes and each write set's cost, when given."""
        if self.cpu_limit_cores is None or self.cpu_ms_per_writeset is None:
            return None
        return CpuQuota(
            self.cpu_limit_cores,
            self.cpu_ms_per_writeset,
            self.cpu_period_ms,
            self.cpu_ms_per_message,
            self.cpu_slice_ms,
        )


class Measurement(_Model):
    """One RTT distribution for a link: inline samples, given percentiles, or a tool's log."""

    method: Literal["icmp", "tcp_rr"] = Field(
        description=(
            "What was measured: 'icmp' (ping) or 'tcp_rr' (a TCP "
            "request/response such as netperf -t TCP_RR)."
        )
    )
    payload_bytes: Annotated[int, Field(ge=0, le=65507)] | None = Field(
        default=None, description="ICMP payload size of the pings [bytes] (ping -s)."
    )
    request_bytes: Annotated[int, Field(ge=1, le=2**31)] | None = Field(
        default=None,
        description=(
            "TCP_RR request size [bytes] (netperf -r REQ,RESP); measure at the write-set size."
        ),
    )
    response_bytes: Annotated[int, Field(ge=1, le=2**31)] | None = Field(
        default=None, description="TCP_RR response size [bytes] (netperf -r REQ,RESP)."
    )
    # Extension: netperf -b burst (transactions in flight beyond the first) when a netperf
    # report does not state it; used to turn a transaction rate into a round trip.
    burst: Annotated[int, Field(ge=0, le=10_000)] | None = Field(
        default=None,
        description=(
            "netperf -b burst (transactions in flight beyond the first) "
            "when the report does not state it."
        ),
    )
    # Extension: loss fraction for inline samples or percentiles (files report their own).
    loss: Annotated[float, Field(ge=0, lt=1)] | None = Field(
        default=None,
        description=(
            "Loss fraction (0 to below 1) for inline samples or "
            "percentiles; files report their own."
        ),
    )
    file: (
        Annotated[
            str,
            Field(min_length=1, max_length=4096),
            _refuse_controls(_CONTROL),
            AfterValidator(_check_path),
        ]
        | None
    ) = Field(
        default=None,
        description=("A tool's log, relative to this YAML file's folder (or --measurements-root)."),
    )
    format: Literal["ping", "netperf", "sockperf", "samples"] | None = Field(
        default=None,
        description=(
            "The log's format: ping (iputils or BSD), netperf, sockperf "
            "or samples (one ms value a line); default ping for icmp, "
            "netperf for tcp_rr."
        ),
    )
    samples_ms: Annotated[list[Milliseconds], Field(min_length=1)] | None = Field(
        default=None, description="Round trips [ms], inline."
    )
    percentiles_ms: Percentiles | None = Field(
        default=None, description="Round trip percentiles [ms], e.g. {p50: 9.8, p99: 12.1}."
    )

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
    sites: Annotated[list[SiteName], Field(min_length=2, max_length=2)] = Field(
        description="The two sites the link joins."
    )
    distance_km: (
        Annotated[float, Field(gt=0, le=20_038), AfterValidator(_at_least_a_metre)] | None
    ) = Field(
        default=None,
        description=("Great-circle distance [km]; without it, computed from the sites' locations."),
    )  # at most half the equator
    route_km: Annotated[float, Field(gt=0, le=1e6), AfterValidator(_at_least_a_metre)] | None = (
        Field(
            default=None,
            description=(
                "Length of the fibre route [km], where known (longer than the"
                " distance); the physical floor uses it."
            ),
        )
    )
    medium: Medium = Field(
        default="fiber",
        description=(
            "What carries the signal, for the physical floor: fiber, copper or microwave (radio)."
        ),
    )
    bandwidth_mbps: Annotated[float, Field(ge=0.001, le=1e9)] | None = Field(
        default=None,
        description=(
            "The link's bandwidth [Mbit/s], for write-set serialisation, "
            "slow start and whether the peak replication traffic fits; "
            "1000 assumed when absent."
        ),
    )
    measurements: list[Measurement] = Field(
        default=[],
        description=(
            "What was measured on the link (ping, netperf, sockperf, "
            "samples); none: the round trip is estimated from the "
            "distance."
        ),
    )
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
    name: Name = Field(description='The row, as people name it (e.g. "inventory sku=1001").')
    updates_per_s: Annotated[float, Field(ge=0.001, le=1e7)] = Field(
        description=(
            "How often the row is updated at peak [1/s]; a row changes at"
            " most once per commit (Callaghan's law)."
        )
    )
    writer_sites: Annotated[list[SiteName], Field(min_length=1)] | None = Field(
        default=None, description="The sites that write the row; absent, every writing site."
    )


class RowWrites(_Model):
    """Extension: the rows each commit of the clients writes, for the lock waits between them
    (advisor.model.row_locks). sysbench 1.0's oltp_read_write: 3 rows of tables x table_size,
    0.75 % of them taking 75 % of the writes (its default ``--rand-type=special``:
    ``advisor.model.row_locks.sysbench_special``)."""

    rows_per_commit: Annotated[int, Field(ge=1, le=10_000)] = Field(
        description="Rows each commit writes (sysbench oltp_read_write: 3)."
    )
    table_rows: Annotated[int, Field(ge=1, le=10**12)] = Field(
        description="Rows the writes are drawn from (tables x table_size)."
    )
    hot_rows: Annotated[int, Field(ge=1, le=10**12)] | None = Field(
        default=None,
        description=(
            "Rows of the hot set that takes hot_share of the writes "
            "(sysbench --rand-type=special: 0.75 % of the rows, not the 1 % of "
            "--rand-spec-pct)."
        ),
    )
    hot_share: Annotated[float, Field(gt=0, lt=1)] | None = Field(
        default=None,
        description=("Share of the writes that go to the hot set (sysbench special: 0.75)."),
    )

    @model_validator(mode="after")
    def _check_sets(self) -> Self:
        self.spec()  # the model's checks, one set for both layers
        return self

    def spec(self) -> row_locks.RowWrites:
        """The model's description of these writes (no hot set: 0 rows, share 0)."""
        return row_locks.RowWrites(
            self.rows_per_commit, self.table_rows, self.hot_rows or 0, self.hot_share or 0.0
        )

    @classmethod
    def for_sysbench(
        cls, tables: int, table_size: int, spec_pct: int = 1, spec_res: int = 75
    ) -> Self:
        """The writes of sysbench 1.0's oltp_read_write or oltp_write_only with
        ``--rand-type=special`` (its default): ``--tables``, ``--table-size``,
        ``--rand-spec-pct``, ``--rand-spec-res`` [%]. The hot set is ``spec_res`` % of
        ``spec_pct`` % of the rows, as sysbench draws it (:func:`advisor.model.row_locks.
        sysbench_special`).

        >>> RowWrites.for_sysbench(tables=4, table_size=10_000).hot_rows
        303
        """
        spec = row_locks.sysbench_special(tables, table_size, 3, spec_pct, spec_res)
        return cls(
            rows_per_commit=spec.rows_per_commit,
            table_rows=spec.table_rows,
            hot_rows=spec.hot_rows or None,  # none: uniform (the input's way of saying it)
            hot_share=spec.hot_share or None,
        )


class Clients(_Model):
    concurrency: Annotated[int, Field(ge=1, le=1_000_000)] = Field(
        description=("Clients in a closed loop (each waits for its transaction before the next).")
    )
    baseline_txn_latency_ms: Annotated[float, Field(ge=0.001, le=1e6)] = Field(
        description=("One transaction's latency on a LAN cluster [ms], before the WAN.")
    )
    commits_per_txn: Annotated[int, Field(ge=1, le=10_000)] = Field(
        default=1, description=("Commits per transaction (autocommit statements count one each).")
    )
    row_writes: RowWrites | None = Field(
        default=None,
        description=("The rows each commit writes, for the lock waits between clients."),
    )


class Workload(_Model):
    commits_per_s: CommitRate | None = Field(
        default=None, description=("Commits per second, {avg, peak}; a number is read as the peak.")
    )
    writeset_bytes: SizePercentiles | None = Field(
        default=None,
        description=(
            "Write-set size [bytes] by percentile (wsrep_replicated_bytes"
            " / wsrep_replicated); a number is read as its max."
        ),
    )
    replicated_bytes_per_s: ByteRate | None = Field(
        default=None,
        description=("Replication traffic [bytes/s], {avg, peak}; a number is read as the peak."),
    )
    # At most 1,000: each row is judged under every option (about 9 ms each in recommend);
    # a topology lists the rows that matter, not a table (SECURITY.md, limits).
    hot_rows: Annotated[list[HotRow], Field(max_length=1000)] = Field(
        default=[],
        description=(
            "Rows updated often (counters, sequences, balances), at most "
            "1,000; each is judged under every option."
        ),
    )
    clients: Clients | None = Field(
        default=None,
        description=("A closed-loop client population, for the throughput each option allows."),
    )
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
    # Extension (issue 23): the write sets' dependency distance, wsrep_cert_deps_distance as a
    # running cluster reports it (advisor collect writes it). It bounds the useful appliers
    # (advisor.model.flow_control.useful_applier_threads). Galera's average is at least 1
    # for any write set it certified; 0 means none seen, which is not a measurement.
    cert_deps_distance: Annotated[float, Field(ge=1.0, le=1e6)] | None = Field(
        default=None,
        description=(
            "The status wsrep_cert_deps_distance of the running cluster [write sets]: the "
            "average distance between the highest and lowest seqno that can apply in "
            "parallel. Applier threads beyond it add no capacity, so the design's "
            "wsrep_slave_threads and the slowest member's apply capacity stop there. "
            "advisor collect measures it. Optional: without it no such bound is assumed."
        ),
    )
    # Extension: the data a node holds [bytes], for the state-transfer times of the design
    # document (a full copy over each WAN link). Optional.
    dataset_bytes: Annotated[float, Field(ge=0, le=1e16)] | None = Field(
        default=None,
        description=(
            "The data a node holds [bytes], for the time of a full state "
            "transfer over each WAN link."
        ),
    )

    _writeset_as_peak = field_validator("writeset_bytes", mode="before")(
        lambda value: _peak_from_number(value)
    )

    @field_validator("hot_rows")
    @classmethod
    def _check_unique_rows(cls, rows: list[HotRow]) -> list[HotRow]:
        seen: set[str] = set()  # a set: the list scanned for each row took 457 s at 190,000
        for index, row in enumerate(rows):
            if row.name in seen:
                raise FieldError(f"hot row {row.name!r} is listed twice", index, "name")
            seen.add(row.name)
        return rows


def _short_parts(version: str) -> str:
    """At most six digits a part ("26.4.20", "10.11.6"): a part of thousands of digits is no
    version, and int() of one over 4,300 digits raised in the configuration (issue 26)."""
    longest = max(len(part) for part in version.split("."))
    if longest > 6:
        raise ValueError(f"a version part of {longest:,} digits; expected at most 6, e.g. 26.4.20")
    return version


class Galera(_Model):
    flavor: Literal["mariadb", "pxc", "codership"] = Field(
        default="mariadb",
        description=(
            "The Galera distribution: mariadb (MariaDB Galera Cluster), "
            "pxc (Percona XtraDB Cluster) or codership (MySQL-wsrep)."
        ),
    )
    version: (
        Annotated[str, Field(pattern=r"^\d+(\.\d+){0,3}$"), AfterValidator(_short_parts)] | None
    ) = Field(
        default=None,
        description=(
            'The Galera library version, e.g. "26.4.23"; the defaults of '
            "its provider options follow it."
        ),
    )
    provider_options: dict[str, OptionValue] = Field(
        default={},
        description=(
            "wsrep_provider_options in force today ({name: value}), e.g. "
            "{evs.suspect_timeout: PT5S}; checked against Galera's "
            "bounds."
        ),
    )

    # Extension (issue 23): the appliers every node runs today.
    applier_threads: Annotated[int, Field(ge=1, le=1024)] | None = Field(
        default=None,
        description=(
            "wsrep_slave_threads (wsrep_applier_threads on PXC 8.0.26+) every node runs today. "
            "Given, the model caps the cluster by flow control at this number (no more of them "
            "working than workload.cert_deps_distance allows) and the generated configuration "
            "keeps it; absent, the design sizes them from the peak."
        ),
    )

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
    version: Literal[1] = Field(default=1, description="The format version: 1.")
    name: Name = Field(description="The topology's name, used in reports and file names.")
    description: Annotated[str, _refuse_controls(_CONTROL_IN_PROSE)] | None = Field(
        default=None,
        description=("What the topology is for, in a sentence; shown in the design document."),
    )
    requirements: Requirements = Field(
        default=Requirements(),
        description=(
            "What the design must meet: commit latency, the failure to "
            "survive, data loss tolerated."
        ),
    )
    sites: Annotated[list[Site], Field(min_length=1, max_length=1000)] = Field(
        description="The data centres, rooms or cloud regions (at most 1,000)."
    )
    links: list[Link] = Field(
        default=[],
        description=(
            "Site pairs with what was measured between them; an unlisted "
            "pair is estimated from the distance."
        ),
    )
    workload: Workload = Field(
        default=Workload(),
        description=(
            "What the application does: commit rates, write-set sizes, hot rows, clients."
        ),
    )
    galera: Galera = Field(
        default=Galera(), description="The Galera flavour, version and provider options in force."
    )
    replication: Replication = Field(
        default=Replication(),
        description=("The asynchronous channels between clusters, as they run today."),
    )

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
