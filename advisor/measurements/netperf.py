"""netperf ``TCP_RR`` reports into the mean application round trip (and percentiles with -k).

Shapes read (netperf ``nettest_omni.c``, ``netlib.c``: https://github.com/HewlettPackard/netperf):

- the banner ``MIGRATED TCP REQUEST/RESPONSE TEST from ... : first burst 0``;
- the default (``-v 1``) table, whose value line gives request and response sizes, elapsed
  time and ``Trans. Rate per sec`` (``Throughput 10^6bits/sec`` with ``-f m``);
- with ``-v 2`` a second block whose ``RoundTrip Latency usec/Tran`` column netperf computes
  as ``10^6 * (1 + b) / rate`` for ``b`` transactions in flight beyond the first (``-b``);
- ``-- -k SELECTOR,...`` output: one ``SELECTOR=value`` per line (``RT_LATENCY``,
  ``P50_LATENCY`` ... in microseconds, ``TRANSACTION_RATE`` in transactions per second).

netperf gives a mean, not samples: ``samples_ms`` is always ``None``.
"""

from __future__ import annotations

__all__ = ["LATENCY_SELECTORS", "parse_netperf"]

import math
import re
from dataclasses import dataclass, field

from advisor.measurements.result import (
    MAX_RTT_MS,
    ParsedMeasurement,
    check_round_trip_ms,
    line_number,
    source_error,
)

# -k latency selectors (microseconds) and the percentile keys they fill.
LATENCY_SELECTORS = {
    "MIN_LATENCY": "min",
    "P50_LATENCY": "p50",
    "P90_LATENCY": "p90",
    "P99_LATENCY": "p99",
    "MAX_LATENCY": "max",
}
_US_PER_MS = 1000.0
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"  # one way to match: linear
_BANNER = re.compile(r"^(?:MIGRATED )?(.+?) TEST (?:from|to) .*$", re.M)
_FIRST_BURST = re.compile(r"first burst (\d{1,9})\b")  # bounded: int() of 5000 digits fails
# a pasted command line: the test-specific -b comes after "--" (a global -b paces streams)
_NETPERF_WORD = re.compile(r"\bnetperf\b")
_BURST_OPTION = re.compile(r"(?:^|\s)-b ?(-?\d{1,9})\b")
_SELECTOR = re.compile(r"^[ \t]*([A-Z][A-Z0-9_]*)=[ \t]*(\S*)[ \t\r]*$", re.M)
_TABLE_HEAD = re.compile(r"^Socket Size\s+Request\s+Resp\.\s+Elapsed\b.*$", re.M)
_VALUE_ROW = re.compile(
    r"^[ \t]*(\d{1,18})[ \t]+(\d{1,18})[ \t]+(\d{1,18})[ \t]+(\d{1,18})[ \t]+([\d.]+)[ \t]+"
    r"([\d.]+)\b.*$",
    re.M,
)
_LATENCY_HEAD = re.compile(r"usec/Tran")
_BARE_RATE = re.compile(r"^[ \t]*(\d+\.\d+)[ \t\r]*$", re.M)  # -v 0 prints "%7.2f" alone
_LATENCY_ROW = re.compile(r"^[ \t]*(?:\d+[ \t]+){4}([\d.]+)[ \t]+([\d.]+)\b.*$", re.M)
_NO_RESULT = (
    "no TCP_RR result found in netperf output; expected the table of 'netperf -t TCP_RR' "
    "(Trans. Rate per sec), its '-v 2' RoundTrip Latency block, or '-k' lines like "
    "'RT_LATENCY=63.1'"
)


@dataclass
class _Found:
    """What one netperf output states."""

    rate_per_s: float | None = None
    round_trip_us: float | None = None  # as netperf printed it: the burst is included
    throughput_only: bool = False  # -f: the rate table shows bits/s, not transactions/s
    request_bytes: int | None = None
    response_bytes: int | None = None
    stated_burst: int | None = None
    latencies_us: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def parse_netperf(
    text: str, *, burst: int | None = None, source: str = "<text>"
) -> ParsedMeasurement:
    """Read a netperf TCP_RR report (``-v 1``, ``-v 2`` or ``-k`` selectors).

    Parameters
    ----------
    text
        The output of ``netperf -t TCP_RR ...``.
    burst
        The test-specific ``-b`` burst [transactions in flight beyond the first], for outputs
        that print only a rate and do not state it. An output that states a different burst
        is an error.
    source
        Name of the file, for error messages.

    Returns
    -------
    ParsedMeasurement
        ``percentiles_ms`` holds ``mean`` [ms] (the round trip netperf prints, or
        ``10^6 (1 + burst) / rate`` microseconds), plus ``min``/``p50``/``p90``/``p99``/``max``
        when ``-k`` printed them. Loss is unknown to TCP_RR: ``loss`` is ``None``.
    """
    _check_test_type(text, source)
    found = _Found()
    _read_selectors(text, found, source)
    _read_tables(text, found, source)
    if found.rate_per_s is None and found.round_trip_us is None and not found.latencies_us:
        _read_bare_rate(text, found, source)
    stated = _FIRST_BURST.search(text) or _command_burst(text)
    if stated is not None:
        found.stated_burst = abs(int(stated.group(1)))  # -b -N: no ramp-up, same N in flight
    if burst is not None and found.stated_burst is not None and burst != found.stated_burst:
        raise source_error(
            f"burst={burst} was given but the netperf output states first burst "
            f"{found.stated_burst}; drop the burst option or fix it",
            source,
        )
    mean_us = _mean_round_trip_us(found, burst, source)
    if mean_us is None and found.throughput_only:
        raise source_error(
            "netperf printed a throughput (-f) instead of a transaction rate and no "
            "RoundTrip Latency block; rerun without -f, or with -v 2",
            source,
        )
    if mean_us is None and not found.latencies_us:
        raise source_error(_NO_RESULT, source)
    percentiles = {key: value / _US_PER_MS for key, value in found.latencies_us.items()}
    if mean_us is not None:
        percentiles["mean"] = mean_us / _US_PER_MS
    if set(percentiles) == {"mean"}:
        found.notes.append("netperf reports a mean round trip only, no percentiles")
    return ParsedMeasurement(
        tool="netperf",
        samples_ms=None,
        percentiles_ms=percentiles,
        transmitted=None,
        received=None,
        duplicates=0,
        loss=None,
        request_bytes=found.request_bytes,
        response_bytes=found.response_bytes,
        payload_bytes=None,
        notes=tuple(found.notes),
    )


def _mean_round_trip_us(found: _Found, burst: int | None, source: str) -> float | None:
    """The round trip netperf printed, else Little's law on the rate: 10^6 (1 + b) / rate."""
    if found.round_trip_us is not None:
        return found.round_trip_us
    if found.rate_per_s is None:
        return None
    rate = found.rate_per_s
    in_flight = found.stated_burst if found.stated_burst is not None else burst
    if in_flight is None:
        in_flight = 0
        found.notes.append(
            "the output does not state netperf's -b burst; assumed 0 (one transaction in "
            "flight): give burst if netperf ran with -b"
        )
    mean_us = 1e6 * (1 + in_flight) / rate
    if mean_us / _US_PER_MS > MAX_RTT_MS:  # a slow rate and a large burst: no one line at fault
        raise source_error(
            f"the round trip 10^6 x (1 + {in_flight}) / {rate:g} transactions/s is "
            f"{mean_us / _US_PER_MS:.3g} ms, more than {MAX_RTT_MS:,.0f} ms (1,000 s; no "
            "network path takes longer)",
            source,
        )
    found.notes.append(
        f"round trip = 10^6 x (1 + {in_flight}) / {rate} transactions/s = {mean_us:.3f} us "
        "(netperf's own formula)"
    )
    return mean_us


def _check_test_type(text: str, source: str) -> None:
    banner = _BANNER.search(text)
    if banner is not None and "TCP REQUEST/RESPONSE" not in banner.group(1):
        raise source_error(
            f"this netperf output is a {banner.group(1)} test; expected 'netperf -t TCP_RR' "
            "(TCP REQUEST/RESPONSE TEST)",
            source,
            line_number(text, banner.start()),
        )


def _read_selectors(text: str, found: _Found, source: str) -> None:
    """``-k`` output: ``SELECTOR=value`` lines."""
    seen: dict[str, tuple[str, int]] = {}
    for match in _SELECTOR.finditer(text):
        name, value = match.group(1), match.group(2)
        line = line_number(text, match.start())
        if name in seen and seen[name][0] != value:
            raise source_error(
                f"{name} appears twice (line {seen[name][1]} and here); expected one "
                "netperf result per file",
                source,
                line,
            )
        seen[name] = (value, line)
    if "PROTOCOL" in seen and seen["PROTOCOL"][0] not in ("TCP", ""):
        value, line = seen["PROTOCOL"]
        raise source_error(f"PROTOCOL={value}; expected a TCP_RR test", source, line)
    for name, key in LATENCY_SELECTORS.items():
        if name in seen:
            _latency_selector(found, name, key, *seen[name], source)
    for name in ("RT_LATENCY", "MEAN_LATENCY"):
        if name in seen and "mean" not in found.latencies_us:
            _latency_selector(found, name, "mean", *seen[name], source)
    if "mean" in found.latencies_us:
        found.round_trip_us = found.latencies_us.pop("mean")
    rate_name = "TRANSACTION_RATE"
    if rate_name not in seen and seen.get("THROUGHPUT_UNITS", ("",))[0] == "Trans/s":
        rate_name = "THROUGHPUT"
    if rate_name in seen:
        value, line = seen[rate_name]
        found.rate_per_s = _rate(value, rate_name, line, source)
    for name, attribute in (("REQUEST_SIZE", "request_bytes"), ("RESPONSE_SIZE", "response_bytes")):
        if name in seen:
            value, line = seen[name]
            setattr(found, attribute, _size_bytes(value, name, line, source, low=1))
    if "BURST_SIZE" in seen:
        value, line = seen["BURST_SIZE"]
        found.stated_burst = int(_non_negative(value, "BURST_SIZE", line, source))


def _latency_selector(
    found: _Found, name: str, key: str, value: str, line: int, source: str
) -> None:
    if value == "-1":  # netperf's "not measured" (latency histogram off: run with -j)
        found.notes.append(f"{name}=-1: netperf did not measure it (needs the global -j)")
        return
    found.latencies_us[key] = _latency_us(value, name, line, source)


def _latency_us(text: str, name: str, line: int, source: str) -> float:
    """A latency [us] of at most :data:`MAX_RTT_MS`."""
    value_us = _non_negative(text, name, line, source)
    check_round_trip_ms(value_us / _US_PER_MS, f"{name} (usec)", text, source, line)
    return value_us


def _read_bare_rate(text: str, found: _Found, source: str) -> None:
    """``-v 0``: the banner, then the transaction rate alone on its line."""
    banner = _BANNER.search(text)
    row = _BARE_RATE.search(text, banner.end()) if banner else None
    if row is not None:
        line = line_number(text, row.start())
        found.rate_per_s = _rate(row.group(1), "Trans. Rate per sec", line, source)
        found.notes.append("netperf -v 0: the transaction rate alone")


def _read_tables(text: str, found: _Found, source: str) -> None:
    """The human report: the rate table (``-v 1``) and the RoundTrip block (``-v 2``)."""
    heads = list(_TABLE_HEAD.finditer(text))
    if len(heads) > 1:
        raise source_error(
            f"the file holds {len(heads)} netperf results; expected one per file", source
        )
    if heads:
        _read_rate_table(text, heads[0], found, source)
    head = _LATENCY_HEAD.search(text)
    row = _LATENCY_ROW.search(text, head.end()) if head else None
    if row is not None:
        line = line_number(text, row.start())
        latency = _positive(row.group(1), "RoundTrip Latency usec/Tran", line, source)
        check_round_trip_ms(latency / _US_PER_MS, "RoundTrip Latency", row.group(1), source, line)
        rate = _rate(row.group(2), "Trans Rate per sec", line, source)
        found.round_trip_us, found.rate_per_s = latency, rate


def _read_rate_table(text: str, head: re.Match[str], found: _Found, source: str) -> None:
    units_end = text.find("\n", text.find("\n", head.end() + 1) + 1)  # two header lines more
    units = text[head.start() : units_end]
    block_end = text.find("Alignment", head.end())  # the -v 2 block has number rows too
    row = _VALUE_ROW.search(text, head.end(), len(text) if block_end < 0 else block_end)
    if row is None:
        raise source_error(
            "the netperf table has no value line; expected a line like "
            "'16384 87380 1 1 10.00 29150.15'",
            source,
            line_number(text, head.start()),
        )
    line = line_number(text, row.start())
    found.request_bytes = _size_bytes(row.group(3), "Request Size", line, source)
    found.response_bytes = _size_bytes(row.group(4), "Resp. Size", line, source)
    if "per sec" in units:
        found.rate_per_s = _rate(row.group(6), "Trans. Rate per sec", line, source)
    elif "bits/s" in units or "Bytes/s" in units:
        found.throughput_only = True
    else:
        raise source_error(
            "cannot tell the last column of the netperf table; expected 'Trans. Rate per "
            "sec' or 'Throughput 10^6bits/sec'",
            source,
            line_number(text, head.start()),
        )


# Slowest transaction rate taken seriously [1/s]: one transaction in 1,000 s; below it the
# round trip 1e6 / rate overflows to infinity (a rate of 1e-320 was found by fuzzing).
_MIN_RATE_PER_S = 0.001


def _command_burst(text: str) -> re.Match[str] | None:
    """``-b N`` among the test-specific options (after `` -- ``) of a pasted command line.

    Line by line, split at the first `` -- ``: one regex over the whole command line had two
    ways to match each `` -- `` and took hours on 300,000 of them.
    """
    for line in text.splitlines():
        if " -- " in line and _NETPERF_WORD.search(line):
            found = _BURST_OPTION.search(line.split(" -- ", 1)[1])
            if found is not None:
                return found
    return None


def _rate(text: str, name: str, line: int, source: str) -> float:
    value = _number(text, name, line, source)
    if not value >= _MIN_RATE_PER_S:
        raise source_error(
            f"{name} must be at least {_MIN_RATE_PER_S:g} transactions/s, found {text!r}",
            source,
            line,
        )
    return value


# Largest message read [bytes]: the bound topology.yaml puts on request_bytes (2 GB).
_MAX_MESSAGE_BYTES = 2**31


def _size_bytes(text: str, name: str, line: int, source: str, low: int = 0) -> int:
    value = _number(text, name, line, source)
    if not low <= value <= _MAX_MESSAGE_BYTES:
        raise source_error(
            f"{name} must be from {low} to {_MAX_MESSAGE_BYTES:,} bytes, found {text!r}",
            source,
            line,
        )
    return int(value)


def _positive(text: str, name: str, line: int, source: str) -> float:
    value = _number(text, name, line, source)
    if value <= 0:
        raise source_error(f"{name} must be > 0, found {text!r}", source, line)
    return value


def _non_negative(text: str, name: str, line: int, source: str) -> float:
    value = _number(text, name, line, source)
    if value < 0:
        raise source_error(f"{name} must be >= 0, found {text!r}", source, line)
    return value


def _number(text: str, name: str, line: int, source: str) -> float:
    value = float(text) if re.fullmatch(_NUMBER, text) else math.nan
    if not math.isfinite(value):
        raise source_error(f"{name} must be a finite number, found {text!r}", source, line)
    return value
