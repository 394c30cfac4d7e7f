"""The output contract (FORMAT.md ``advisor recommend --format json``) as plain data.

Rendering (JSON, terminal, documents) depends only on these models, never on the engine.
Field names are stable: extend, never rename. Every number carries its unit in its name and
every figure says where it came from (``measured``, ``modelled`` from a measurement, or
``estimated`` from physics).

As in :mod:`advisor.inputs.topology`, annotations are real objects: pydantic evaluates no
strings when it builds the models, at every start-up.

The JSON never carries NaN or Infinity (RFC 8259 has neither; ``json.dumps`` writes them and
every strict reader refuses the file). A quantity that legitimately has no finite value (a
lag that grows while the peak lasts, a wait that never ends) is made ``None`` where it is
produced, by :func:`finite_or_none`, and a field says why (``data_at_risk_unbounded``,
``Finding.unbounded``); any other non-finite number reaching a model is a bug, refused as
one :class:`~advisor.errors.AdvisorError` naming the model and the field, never written.
"""

__all__ = [
    "FORMAT_VERSION",
    "UNBOUNDED_ABOVE",
    "UNBOUNDED_BELOW",
    "Finding",
    "HotRowReport",
    "LinkReport",
    "MeasurementReport",
    "OptionReport",
    "Recommendation",
    "Throughput",
    "WhatIf",
    "finite_or_none",
]

import math
from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from advisor.errors import AdvisorError

FORMAT_VERSION = 1
Architecture = Literal["single_cluster", "per_site_clusters", "grouped_clusters"]
Severity = Literal["blocker", "warning", "info"]
Source = Literal["measured", "modelled", "estimated"]


# Why a finding's value is null: the quantity has no finite value (Finding.unbounded).
UNBOUNDED_ABOVE = "unbounded"  # grows without end: a queue at full use, a lag past bandwidth
UNBOUNDED_BELOW = "unbounded below"


def finite_or_none(value: float | None) -> float | None:
    """``value``, or ``None`` when it is not a finite number (the output's null)."""
    return value if value is not None and math.isfinite(value) else None


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="after")
    def _finite(self) -> Self:
        """No NaN or infinity anywhere in the model (nested models checked themselves)."""
        for name, value in self.__dict__.items():
            where = _non_finite(value, name)
            if where is not None:
                raise AdvisorError(
                    f"the result holds a number that is not finite at "
                    f"{type(self).__name__}.{where} (a bug in advisor: please report it with "
                    "the topology)"
                )
        return self


def _non_finite(value: Any, path: str) -> str | None:
    """The path of the first NaN or infinity in ``value`` (floats, dicts, lists), or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{path} = {value}"
    if isinstance(value, Mapping):
        for key, item in value.items():
            if (found := _non_finite(item, f"{path}.{key}")) is not None:
                return found
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            if (found := _non_finite(item, f"{path}[{index}]")) is not None:
                return found
    return None


class Finding(_Out):
    """One rule that fired: its stable id, how bad, about what, under which option."""

    rule: str
    severity: Severity
    subject: str
    option: Architecture | None = None
    message: str
    title: str = ""
    # The numbers the message was built from, for scripts and documents.
    values: dict[str, float | int | str | None] = {}
    # What kind of change removes it, where the predicate knows (a garbd in an existing site,
    # a new witness site...): the verdict ranks the least bad option by it.
    remedy: str | None = None
    # The values with no finite value, null in ``values``, and why ("unbounded": a wait
    # that never ends, a queue at or past full use).
    unbounded: dict[str, str] = {}

    @model_validator(mode="before")
    @classmethod
    def _unbounded_values_are_null(cls, data: Any) -> Any:
        """An infinite value becomes null, named in ``unbounded``; NaN stays, refused."""
        values = data.get("values") if isinstance(data, dict) else None
        if not isinstance(values, Mapping):
            return data
        unbounded = {
            key: UNBOUNDED_ABOVE if value > 0 else UNBOUNDED_BELOW
            for key, value in values.items()
            if isinstance(value, float) and math.isinf(value)
        }
        if not unbounded:
            return data
        return {
            **data,
            "values": {k: None if k in unbounded else v for k, v in values.items()},
            "unbounded": {**data.get("unbounded", {}), **unbounded},
        }

    @model_serializer(mode="wrap")
    def _unbounded_only_when_some_are(self, handler: SerializerFunctionWrapHandler) -> Any:
        """``unbounded`` is written only when a value is (the JSON of every other finding is
        as it was)."""
        data = handler(self)
        if not self.unbounded and isinstance(data, dict):
            data.pop("unbounded", None)
        return data


class MeasurementReport(_Out):
    method: Literal["icmp", "tcp_rr"]
    payload_bytes: int | None = None
    request_bytes: int | None = None
    response_bytes: int | None = None
    samples: int | None = None
    rtt_ms: dict[str, float]
    loss: float | None = None
    source: str
    tool: str
    notes: list[str] = []


class LinkReport(_Out):
    sites: tuple[str, str]
    distance_km: float | None
    distance_source: Literal["given", "locations"] | None = None
    route_km: float | None = None
    medium: str
    bandwidth_mbps: float | None = None
    floor_rtt_ms: float | None
    rtt_ms: dict[str, float]
    rtt_source: Literal["measured", "estimated"]
    light_speed_fraction: float | None
    loss: float | None = None
    measurements: list[MeasurementReport] = []
    # Round trip of one write set (workload p50 and p99 sizes) and where it comes from.
    writeset_rtt_ms: dict[str, float] = {}
    writeset_rtt_source: Source | None = None
    # An estimated link only (None when measured): where its small-message RTT p50 may lie,
    # {"low": the physical floor or the triangle over measured links, "high": the band's
    # scatter over the fit or the best measured path} [ms], and the estimate's basis in
    # words ("via paris-1: 0.47 + 9.76 ms ...").
    rtt_estimate_range_ms: dict[str, float] | None = None
    rtt_estimate_basis: str | None = None


class Throughput(_Out):
    commits_per_s: float
    txn_latency_ms: dict[str, float]
    limited_by: str = ""
    # The share of time a member slower to apply paused the cluster by flow control while
    # the clients ran (modelled: a simulation of the clients, the member's appliers and its
    # FC_STOP / FC_CONT) [fraction, 0 to 1].
    flow_control_paused_share: float = 0.0
    # The share of CPU periods in which a member held to a CPU limit spent its budget and
    # stopped until the next, while the clients ran (modelled: the same simulation; what the
    # cgroup's cpu.stat nr_throttled over nr_periods reports) [fraction, 0 to 1].
    cpu_throttled_share: float = 0.0


class OptionReport(_Out):
    architecture: Architecture
    groups: list[list[str]]
    arbitrators: list[str] = []  # sites in ``groups`` that hold a garbd, not data nodes
    viable: bool
    commit_latency_ms: dict[str, float]
    commit_latency_source: Source = "modelled"
    commit_latency_by_site_ms: dict[str, dict[str, float]] = {}
    throughput: Throughput | None = None
    survives_site_loss: bool | None = None
    data_at_risk_s: float | None = None
    # When some single failure the requirement names is survived only by failing over to
    # another cluster: the most commits that loses [ms] (the channel's p99 lag, RPO) and the
    # longest writes stop [s] (detection and promotion, RTO); None when no failure needs one.
    failover_rpo_ms: float | None = None
    failover_rto_s: float | None = None
    # An asynchronous channel cannot keep up with the peak replicated bytes: its lag grows for
    # as long as the peak lasts, so data_at_risk_s and the failover figures are null.
    data_at_risk_unbounded: bool = False
    # Why, in words, when unbounded; survives_site_loss is then null: surviving a failure by
    # a failover that loses an ever-growing backlog is not surviving it.
    data_at_risk_reason: str | None = None
    # Failures after which writes wait for an operator's bootstrap of the survivors (a
    # weighted two-site cluster losing its weighted site), in words; nothing committed is lost.
    manual_recovery: list[str] = []
    # pc.weight per node where the design raises it ({site: weight}).
    weights: dict[str, int] = {}
    conflicts_per_s: float | None = None
    clusters: int = 1
    blockers: list[str] = []
    operations: str = ""


class HotRowReport(_Out):
    name: str
    required_updates_per_s: float
    writer_sites: list[str]
    max_updates_per_s: dict[str, float]
    max_updates_per_s_p99: dict[str, float] = {}
    utilisation: dict[str, float] = {}
    # architecture -> writer site -> one write's latency at the median [ms], modelled: the
    # owner cluster's commit plus, for a site outside it, the WAN round trip of the routed
    # statement.
    write_latency_ms: dict[str, dict[str, float]] = {}
    # architecture -> the bound if every writer site of the owner cluster wrote the row on its
    # own node (no one writer per cluster): one update per commit of writers in step
    # [updates/s]; only options whose owner cluster holds several writer sites.
    max_updates_per_s_multi_writer: dict[str, float] = {}


class WhatIf(_Out):
    """A threshold at which the answer changes: the quantity that binds and its flip value."""

    quantity: str
    value: float
    unit: str
    current: float | None = None
    message: str
    # The option whose verdict it changes, and what to apply where it is a remedy the
    # application or the configuration takes (a SQL pattern, provider options).
    option: Architecture | None = None
    example: str | None = None


class Recommendation(_Out):
    format_version: int = FORMAT_VERSION
    topology: str
    architecture: Architecture | None = None
    groups: list[list[str]] = []
    arbitrators: list[str] = []  # sites in ``groups`` that hold a garbd, not data nodes
    summary: str = ""
    findings: list[Finding] = []
    links: list[LinkReport] = []
    hot_rows: list[HotRowReport] = []
    options: list[OptionReport] = []
    what_would_change: list[WhatIf] = []
