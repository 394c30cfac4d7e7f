"""What every measurement parser returns, and the small helpers they share.

All times are full round trips in milliseconds, whatever the tool printed (sockperf's half
round trips in microseconds, netperf's microseconds per transaction); each conversion is
stated in ``notes``.
"""

from __future__ import annotations

__all__ = [
    "MAX_RTT_MS",
    "ParsedMeasurement",
    "check_round_trip_ms",
    "line_number",
    "percentile_key",
    "source_error",
]

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from advisor.errors import AdvisorError, Location

# Longest round trip read from a tool's output [ms]: 1,000 s, the bound topology.yaml puts on
# every round trip and latency (advisor.inputs.topology, SECURITY.md "Limits"). No network
# path takes longer (a geostationary hop is about 600 ms; TCP gives up after minutes of
# retransmissions); a larger figure is a typo, a unit mix-up or a corrupt log, and from about
# 3.4e38 ms on it overflowed the float32 draws and put NaN in the JSON.
MAX_RTT_MS = 1e6


def check_round_trip_ms(
    value_ms: float, what: str, found: str, source: str, line: int | None
) -> float:
    """``value_ms`` if it is a round trip of at most :data:`MAX_RTT_MS`, else a located error."""
    if not value_ms <= MAX_RTT_MS:
        raise source_error(
            f"{what} must be at most {MAX_RTT_MS:,.0f} ms (1,000 s; no network path takes "
            f"longer), found {_shown(found)}",
            source,
            line,
        )
    return value_ms


def _shown(text: str) -> str:
    shown = repr(text)
    return shown if len(shown) <= 60 else shown[:57] + "..."


@dataclass(frozen=True, eq=False)  # eq=False: numpy arrays have no single truth value
class ParsedMeasurement:
    """One tool's log, read: round-trip samples or summary figures, loss and sizes.

    Attributes
    ----------
    tool
        ``"ping-iputils"``, ``"ping-bsd"``, ``"netperf"``, ``"sockperf"`` or ``"samples"``.
    samples_ms
        Round-trip samples [ms] in file order, one per probe (duplicates dropped),
        read-only; ``None`` when the tool gives only a summary.
    percentiles_ms
        Summary figures of the full round trip [ms], keyed ``min``, ``p25``, ``p50``, ``p90``,
        ``p99``, ``p999`` (99.9), ``p9999``, ``p99999``, ``max``, ``mean``; ``None`` if none.
    transmitted, received
        Probes sent and distinct replies [count]; ``None`` when the tool does not say.
    duplicates
        Duplicate replies [count], not counted as samples.
    loss
        Fraction of probes lost [0..1]; ``None`` when the tool cannot know.
    request_bytes, response_bytes
        Message sizes [bytes] of a request/response test, when the output states them.
    payload_bytes
        ICMP data bytes [bytes] from the ping banner (56 by default).
    notes
        Honest remarks on what was assumed or converted.
    """

    tool: str
    samples_ms: npt.NDArray[np.float64] | None
    percentiles_ms: dict[str, float] | None
    transmitted: int | None
    received: int | None
    duplicates: int
    loss: float | None
    request_bytes: int | None
    response_bytes: int | None
    payload_bytes: int | None
    notes: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.samples_ms is not None:
            self.samples_ms.flags.writeable = False  # frozen means frozen, samples included


def percentile_key(percent: str | float) -> str:
    """Key of a percentile: ``"p"`` and its digits without the dot.

    >>> [percentile_key(p) for p in (50, "99.900", 99.99, "99.999", 25.0)]
    ['p50', 'p999', 'p9999', 'p99999', 'p25']
    """
    text = f"{float(percent):.6f}".rstrip("0").rstrip(".")
    return "p" + text.replace(".", "")


def line_number(text: str, position: int) -> int:
    """1-based number of the line holding character ``position`` of ``text``."""
    return text.count("\n", 0, position) + 1


def source_error(message: str, source: str, line: int | None = None) -> AdvisorError:
    """An :class:`AdvisorError` located at ``source`` (and ``line`` when one line is at fault)."""
    return AdvisorError(message, Location(source, line, None, None))
