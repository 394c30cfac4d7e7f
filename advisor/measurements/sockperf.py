"""sockperf ping-pong summaries into full round-trip percentiles [ms].

Shapes read (sockperf ``src/client.cpp``, ``doc/main.dox``: https://github.com/Mellanox/sockperf)::

    sockperf: [Valid Duration] RunTime=9.550 sec; SentMessages=528579; ReceivedMessages=528579
    sockperf: ====> avg-latency=9.017 (std-dev=4.171, ...)   (old: avg-lat=, --full-rtt: avg-rtt=)
    sockperf: # dropped messages = 0; # duplicated messages = 0; # out-of-order messages = 0
    sockperf: Summary: Latency is 9.017 usec                  (--full-rtt: Round trip is ...)
    sockperf: Total 528579 observations; each percentile contains 5285.79 observations
    sockperf: ---> <MAX> observation =   98.777
    sockperf: ---> percentile 99.999 =   72.628
    sockperf: ---> <MIN> observation =    4.629

Values are microseconds of HALF the round trip (client.cpp divides by 2) unless sockperf
ran with ``--full-rtt``; they are converted to full round trips in milliseconds.
"""

from __future__ import annotations

__all__ = ["parse_sockperf"]

import math
import re

from advisor.measurements.result import (
    ParsedMeasurement,
    check_round_trip_ms,
    line_number,
    percentile_key,
    source_error,
)

_US_PER_MS = 1000.0
_VALUE = r"(\S+)"
_PERCENTILE = re.compile(r"---> percentile\s+(\d+(?:\.\d*)?)\s*=\s*" + _VALUE)
_EXTREME = re.compile(r"---> <(MAX|MIN)> observation\s*=\s*" + _VALUE)
_AVERAGE = re.compile(r"====> avg-(lat|latency|rtt)=\s*" + _VALUE)
# Counts are bounded digit runs and gaps bounded spans: a 5000-digit count crashed int(),
# and '.*?' after each of many "Summary: Latency" on one line made the search quadratic.
_SUMMARY = re.compile(r"Summary: (Latency|Round trip)\b.{0,80}? is " + _VALUE + " usec")
_COUNTS = re.compile(
    r"# dropped messages = (\d{1,18}); # duplicated messages = (\d{1,18}); "
    r"# out-of-order messages = (\d{1,18})\b"
)
_VALID = re.compile(
    r"\[Valid Duration\] RunTime=\S+ sec; SentMessages=(\d{1,18}); "
    r"ReceivedMessages=(\d{1,18})\b"
)
_SERVER = re.compile(r"Printing statistics for Server No:")
# the message size, if the pasted command line (or VMA's "Cmd Line:") shows -m / --msg-size:
# the first command of a line, then its option, each searched once (a lazy '.*?' from every
# "sockperf pp" of a 240 KB line made the search quadratic: 22 s); "sockperf" starts a word,
# so a run of "sockperfsockperf..." is scanned once, not from each of its letters
_COMMAND = re.compile(r"(?<!\w)sockperf\S* +(?:ping-pong|pp|under-load|ul)\b")
_SIZE_OPTION = re.compile(r"\s(?:-m|--msg-size)[= ]?(\d{1,9})\b")
_NO_RESULT = (
    "no latency statistics found in sockperf output; expected lines like "
    "'sockperf: ---> percentile 99.000 = 16.193' from 'sockperf ping-pong'"
)


def parse_sockperf(text: str, *, source: str = "<text>") -> ParsedMeasurement:
    """Read the summary of ``sockperf ping-pong`` (or ``under-load``).

    Parameters
    ----------
    text
        The client's output.
    source
        Name of the file, for error messages.

    Returns
    -------
    ParsedMeasurement
        ``percentiles_ms`` [ms] of the full round trip: ``min``, ``p25`` ... ``p99999``,
        ``max`` and ``mean``; half round trips (sockperf's default) are doubled and the
        notes say so. ``loss`` = dropped / sent messages when both are printed.
    """
    servers = len(_SERVER.findall(text))
    if servers > 1:
        raise source_error(
            f"the output holds statistics for {servers} servers; expected one server per file",
            source,
        )
    # (key, value as printed, line), in the order min, p25 ... p99999, max, mean
    extremes = {
        m.group(1): (m.group(1).lower(), m.group(2), _line(text, m))
        for m in _EXTREME.finditer(text)
    }
    ranked = sorted(_PERCENTILE.finditer(text), key=lambda m: float(m.group(1)))
    half = [extremes[k] for k in ("MIN",) if k in extremes]
    half += [(percentile_key(m.group(1)), m.group(2), _line(text, m)) for m in ranked]
    half += [extremes[k] for k in ("MAX",) if k in extremes]
    average = _AVERAGE.search(text)
    if average is not None:
        half.append(("mean", average.group(2), _line(text, average)))
    summary = _SUMMARY.search(text)
    if summary is not None and average is None:
        half.append(("mean", summary.group(2), _line(text, summary)))
    if not half:
        raise source_error(_NO_RESULT, source)

    full_rtt = (average is not None and average.group(1) == "rtt") or (
        summary is not None and summary.group(1) == "Round trip"
    )
    factor = 1.0 if full_rtt else 2.0
    percentiles = {  # one division: exact decimal inputs stay as close as floats allow
        key: check_round_trip_ms(
            _microseconds(value, key, line, source) / (_US_PER_MS / factor),
            f"sockperf {key} (a round trip in ms)",
            value,
            source,
            line,
        )
        for key, value, line in half
    }
    notes = [
        "sockperf ran with --full-rtt: values are full round trips"
        if full_rtt
        else "sockperf reported half round trips (its default latency = RTT/2); doubled"
    ]
    if average is None and summary is None:
        notes.append("no avg-latency or Summary line: assumed half round trips, sockperf's default")

    transmitted = received = loss = None
    valid = _VALID.search(text)
    if valid is not None:
        transmitted, received = int(valid.group(1)), int(valid.group(2))
    counts = _COUNTS.search(text)
    duplicates = int(counts.group(2)) if counts else 0
    if counts is not None and transmitted:
        loss = min(int(counts.group(1)) / transmitted, 1.0)
    message_bytes = _message_size(text)
    return ParsedMeasurement(
        tool="sockperf",
        samples_ms=None,
        percentiles_ms=percentiles,
        transmitted=transmitted,
        received=received,
        duplicates=duplicates,
        loss=loss,
        request_bytes=message_bytes,
        response_bytes=message_bytes,
        payload_bytes=None,
        notes=tuple(notes),
    )


def _message_size(text: str) -> int | None:
    """The ``-m`` of the first command line that gives one [bytes], else None.

    >>> _message_size("$ sockperf pp -i 10.0.0.2 -m 1400\\nsockperf: done"), _message_size("x")
    (1400, None)
    """
    start = 0
    while (command := _COMMAND.search(text, start)) is not None:
        end = text.find("\n", command.end())
        end = len(text) if end < 0 else end
        option = _SIZE_OPTION.search(text, command.end(), end)
        if option is not None:
            return int(option.group(1))
        start = end  # the rest of this line was searched: on to the next
    return None


def _line(text: str, match: re.Match[str]) -> int:
    return line_number(text, match.start())


def _microseconds(value: str, key: str, line: int, source: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number < 0:
        raise source_error(
            f"sockperf {key} must be a non-negative number of usec, found {value!r}",
            source,
            line,
        )
    return number
