"""ping logs (iputils on Linux, BSD and macOS) into round-trip samples, loss and duplicates.

Line shapes (iputils ``ping_common.c``, ``ping.c``: https://github.com/iputils/iputils):

- banner ``PING host (ip) 56(84) bytes of data.`` (BSD: ``PING host (ip): 56 data bytes``);
- reply ``[1700000000.123456] 64 bytes from host (ip): icmp_seq=1 ttl=63 time=49.6 ms``, the
  ``[...]`` prefix only with ``-D``, `` (DUP!)`` after a duplicate;
- probes without a reply: ``From 10.0.0.1 icmp_seq=5 Destination Host Unreachable``,
  ``no answer yet for icmp_seq=7`` (``-O``), BSD ``Request timeout for icmp_seq 3``;
- summary ``10 packets transmitted, 9 received, +1 duplicates, 10% packet loss, time 9013ms``
  (BSD: ``... 9 packets received, ...``) and ``rtt min/avg/max/mdev = a/b/c/d ms``
  (BSD: ``round-trip min/avg/max/stddev = ...``).

A long log holds a million replies, so replies are read with numpy over the raw bytes (see
:mod:`advisor.measurements.scan`); only the few other lines (banner, summary, errors) are
read one by one.
"""

from __future__ import annotations

__all__ = ["FIRST_SEQ", "SEQ_MODULUS", "parse_ping", "parse_ping_bytes"]

import re
from dataclasses import dataclass, field

import numpy as np

from advisor.measurements.result import (
    MAX_RTT_MS,
    ParsedMeasurement,
    check_round_trip_ms,
    source_error,
)
from advisor.measurements.scan import (
    FloatArray,
    IntArray,
    followed_by,
    line_text,
    preceded_by,
    read_numbers,
)

# icmp_seq is 16 bits on the wire (RFC 792, echo "Sequence Number"), so long runs wrap.
SEQ_MODULUS = 65536
# iputils numbers probes from 1 (ping4_send_probe: ntransmitted + 1), BSD ping from 0.
FIRST_SEQ = {"ping-iputils": 1, "ping-bsd": 0}

_NO_SAMPLES = (
    "no round-trip samples found in ping output{detail}; expected lines like "
    "'64 bytes from ...: icmp_seq=1 ttl=63 time=49.6 ms'"
)
_SUMMARY = re.compile(
    rb"\b(\d{1,18}) packets transmitted, (\d{1,18}) (?:packets )?received"
    rb"(?:, \+(\d{1,18}) duplicates)?(?:, \+\d+ corrupted)?(?:, \+\d+ errors)?"
    rb"(?:, [\d.]+% packet loss)?"
)
_RTT = re.compile(
    rb"(?:rtt|round-trip) min/avg/max(?:/(?:mdev|stddev))? = "
    rb"(\d+(?:\.\d*)?)/(\d+(?:\.\d*)?)/(\d+(?:\.\d*)?)(?:/[\d.]+)? ms"
)
# iputils: "56(84) bytes of data." (IPv4), "::1(::1) 56 data bytes" (IPv6);
# BSD: "(ip): 56 data bytes". Counts and sizes are bounded runs of digits ending at a word
# boundary: a run of 5,000 digits then matches nothing instead of crashing int() or making
# the search backtrack over every digit (quadratic: a 300 KB line took minutes).
_BANNER = re.compile(
    rb"PING [^\n]*?(?:\b(\d{1,6})\(\d{1,6}\) bytes of data|(:)? (\d{1,6}) data bytes)"
)
# Longest round trip read [bytes]: "123456.789" (ms) fits.
_TIME_WIDTH = 12
_EQUALS, _NEWLINE = ord("="), ord("\n")
_TIMEOUT = re.compile(rb"Request timeout for icmp_seq (\d{1,18})\b")


@dataclass
class _Probes:
    """Every line naming a probe, in file order: line index, raw icmp_seq, round trip."""

    line: IntArray
    seq: IntArray
    rtt_ms: FloatArray  # NaN where the line is no (valid) reply
    bad_checksums: int = 0


@dataclass
class _OtherLines:
    """What the lines without ``icmp_seq=`` say: banner, summary, timeouts."""

    banner: re.Match[bytes] | None = None
    banners: int = 0
    summary_line: bytes | None = None
    summary_index: int = 0  # 0-based line index of the summary line
    summaries: int = 0
    rtt: re.Match[bytes] | None = None
    rtt_index: int = 0  # 0-based line index of the rtt min/avg/max line
    timeouts: list[tuple[int, int]] = field(default_factory=list)  # (line index, icmp_seq)


def parse_ping(text: str, *, source: str = "<text>") -> ParsedMeasurement:
    """Read a ping log: one sample per answered probe, loss from the summary or from gaps.

    Parameters
    ----------
    text
        The whole output of ``ping`` (iputils or BSD/macOS), with or without ``-D``.
    source
        Name of the file, for error messages.

    Returns
    -------
    ParsedMeasurement
        ``samples_ms`` [ms] holds the first reply to each probe, in file order; duplicates
        are counted, not sampled. With a summary, ``transmitted``, ``received`` and
        ``duplicates`` come from it; a log cut before its summary is counted from the
        unwrapped icmp_seq numbers. ``percentiles_ms`` holds the summary's min/avg/max.
    """
    return parse_ping_bytes(text.encode("utf-8", errors="replace"), source=source)


def parse_ping_bytes(data: bytes, *, source: str = "<text>") -> ParsedMeasurement:
    """:func:`parse_ping` on the raw UTF-8 bytes of a file (saves re-encoding 100 MB logs)."""
    probes, newlines = _scan_probes(data, source)
    other = _read_other_lines(data, newlines, probes.line)
    runs = max(other.banners, other.summaries)
    if runs > 1:
        raise source_error(
            f"the file holds {runs} ping runs; expected the output of one ping run", source
        )
    if other.timeouts:
        _merge_timeouts(probes, other.timeouts)
    summary = _read_summary(other, source)
    flavour = _flavour(other)
    rtt_summary = None
    if other.rtt is not None:
        low, mean, high = (
            check_round_trip_ms(
                float(other.rtt.group(i)),
                f"the summary's {name}",
                other.rtt.group(i).decode(),
                source,
                other.rtt_index + 1,
            )
            for i, name in ((1, "min"), (2, "avg"), (3, "max"))
        )
        rtt_summary = {"min": low, "mean": mean, "max": high}
    notes: list[str] = []
    if probes.bad_checksums:
        notes.append(f"{probes.bad_checksums} reply(ies) with a bad checksum not counted")
    if not np.isfinite(probes.rtt_ms).any():
        if rtt_summary is None:
            detail = f" ({summary[0]} sent, {summary[1]} received)" if summary else ""
            raise source_error(_NO_SAMPLES.format(detail=detail), source)
        notes.append("no per-reply lines (ping -q?): only the summary's min/avg/max")
        samples_ms, counted = None, None
    else:
        first_seq = FIRST_SEQ[flavour] if other.banner else None
        samples_ms, counted = _samples_and_counts(probes, first_seq, notes)
    transmitted, received, duplicates = _prefer_summary(summary, counted, notes)
    loss = None
    if transmitted and received is not None:
        loss = (transmitted - min(received, transmitted)) / transmitted
    banner = other.banner
    return ParsedMeasurement(
        tool=flavour,
        samples_ms=samples_ms,
        percentiles_ms=rtt_summary,
        transmitted=transmitted,
        received=received,
        duplicates=duplicates,
        loss=loss,
        request_bytes=None,
        response_bytes=None,
        payload_bytes=int(banner.group(1) or banner.group(3)) if banner else None,
        notes=tuple(notes),
    )


def _samples_and_counts(
    probes: _Probes, first_seq: int | None, notes: list[str]
) -> tuple[FloatArray, tuple[int, int, int]]:
    """Samples (first reply per probe, in file order) and (sent, received, duplicates).

    Probes are numbered by their unwrapped icmp_seq; "sent" runs from the first probe
    (``first_seq`` when the banner shows where the run began) to the last one named.
    """
    unwrapped = _unwrap(probes.seq)
    wraps = int(unwrapped.max() // SEQ_MODULUS - unwrapped[0] // SEQ_MODULUS)
    if wraps:
        notes.append(f"icmp_seq wrapped past 65535 {wraps} time(s); unwrapped")
    answered = np.isfinite(probes.rtt_ms)
    if not answered.all():
        notes.append(
            f"{int((~answered).sum())} line(s) name a probe without a reply (unreachable, "
            "timeout, no answer yet): lost unless answered later"
        )
    reply_seq = unwrapped[answered]
    order = np.argsort(reply_seq, kind="stable")  # nearly sorted: timsort is ~linear here
    repeat = np.zeros(reply_seq.size, dtype=bool)
    repeat[order[1:]] = reply_seq[order[1:]] == reply_seq[order[:-1]]
    samples_ms = probes.rtt_ms[answered][~repeat]
    lowest = int(unwrapped.min())
    start = lowest if first_seq is None else min(first_seq, lowest)
    return samples_ms, (int(unwrapped.max()) - start + 1, samples_ms.size, int(repeat.sum()))


def _prefer_summary(
    summary: tuple[int, int, int] | None,
    counted: tuple[int, int, int] | None,
    notes: list[str],
) -> tuple[int | None, int | None, int]:
    """(sent, received, duplicates): ping's own summary when there is one, else the count."""
    if summary is not None:
        if counted is not None and counted[1] != summary[1]:
            notes.append(
                f"the summary says {summary[1]} received but the log holds {counted[1]} "
                "distinct replies; counts taken from the summary"
            )
        return summary
    if counted is not None:
        notes.append(
            "no ping summary (log cut?): probes counted from the icmp_seq numbers; "
            "probes sent after the last line are not seen"
        )
        return counted
    return None, None, 0


def _unwrap(seq: IntArray) -> IntArray:
    """Undo the 16-bit wrap of icmp_seq: each step is taken the short way round.

    >>> _unwrap(np.array([65534, 65535, 0, 65535, 1])).tolist()
    [65534, 65535, 65536, 65535, 65537]
    """
    half = SEQ_MODULUS // 2
    step = (np.diff(seq) + half) % SEQ_MODULUS - half
    return np.concatenate(([seq[0]], seq[0] + np.cumsum(step)))


def _scan_probes(data: bytes, source: str) -> tuple[_Probes, IntArray]:
    """Every ``icmp_seq=N`` (the first of its line) with the ``time=X ms`` after it on its
    line, and the offset of every newline; or an error naming the first reply whose round
    trip cannot be read."""
    buf = np.frombuffer(data, dtype=np.uint8)
    newlines, equals = np.flatnonzero(buf == _NEWLINE), np.flatnonzero(buf == _EQUALS)
    seq_at = preceded_by(buf, equals, b"seq") + 1  # busybox prints "seq="
    seq_value, _, ok = read_numbers(buf, seq_at, width=5)
    ok &= seq_value == np.trunc(seq_value)
    seq_at, seq = seq_at[ok], seq_value[ok].astype(np.int64)
    line = np.searchsorted(newlines, seq_at)  # 0-based: the newlines before it
    first = np.diff(line, prepend=-1) != 0  # the first icmp_seq= of each line
    seq_at, seq, line = seq_at[first], seq[first], line[first]

    # a time= belongs to the icmp_seq= before it (the last one) if that is on its line
    time_at = preceded_by(buf, equals, b" time") + 1  # not "lifetime="
    owner = np.searchsorted(seq_at, time_at) - 1
    line_end = np.append(newlines, buf.size)[line]  # of each probe's line
    mine = owner >= 0
    mine[mine] = time_at[mine] < line_end[owner[mine]]
    time_at, owner = time_at[mine], owner[mine]
    first = np.diff(owner, prepend=-1) != 0  # the first time= of each line
    time_at, owner = time_at[first], owner[first]
    value, length, ok = read_numbers(buf, time_at, width=_TIME_WIDTH)
    ok &= followed_by(buf, time_at + length, b" ms")
    if not ok.all():
        bad = int(np.argmin(ok))
        raise source_error(
            "cannot read the round trip of this reply: expected 'time=<ms> ms' with a "
            f"non-negative number, found {line_text(data, int(time_at[bad]))!r}",
            source,
            int(line[owner[bad]]) + 1,
        )
    beyond = np.flatnonzero(value > MAX_RTT_MS)
    if beyond.size:
        bad = int(beyond[0])
        text = data[time_at[bad] : time_at[bad] + length[bad]].decode()
        check_round_trip_ms(
            float(value[bad]), "a reply's time", text, source, int(line[owner[bad]]) + 1
        )
    # iputils counts a reply with a bad checksum as corrupted, not received
    corrupted = followed_by(buf, time_at + length + 3, b" (BAD CHECKSUM!)")
    rtt_ms = np.full(seq.size, np.nan)
    rtt_ms[owner] = np.where(corrupted, np.nan, value)
    return _Probes(line, seq, rtt_ms, int(corrupted.sum())), newlines


def _read_other_lines(data: bytes, newlines: IntArray, probe_lines: IntArray) -> _OtherLines:
    """Banner, summary and timeouts, from the (few) non-empty lines that name no icmp_seq=."""
    starts = np.concatenate(([0], newlines + 1))
    ends = np.concatenate((newlines, [len(data)]))
    other = np.ones(starts.size, dtype=bool)
    other[probe_lines] = False
    other &= ends > starts
    found = _OtherLines()
    for index in np.flatnonzero(other).tolist():
        text = data[starts[index] : ends[index]]
        if text.startswith(b"PING "):
            found.banners += 1
            found.banner = found.banner or _BANNER.match(text)
        elif b"packets transmitted" in text:
            found.summaries += 1
            found.summary_line, found.summary_index = text, index
        elif b"min/avg/max" in text:
            if found.rtt is None:
                found.rtt, found.rtt_index = _RTT.search(text), index
        elif (timeout := _TIMEOUT.search(text)) is not None:
            found.timeouts.append((index, int(timeout.group(1))))
    return found


def _read_summary(other: _OtherLines, source: str) -> tuple[int, int, int] | None:
    """(transmitted, received, duplicates) from the summary line, if there is one."""
    if other.summary_line is None:
        return None
    match = _SUMMARY.search(other.summary_line)
    if match is None:
        found = other.summary_line.rstrip(b"\r").decode("utf-8", errors="replace")
        raise source_error(
            "cannot read the ping summary: expected 'N packets transmitted, M received, "
            f"X% packet loss', found {found!r}",
            source,
            other.summary_index + 1,
        )
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def _merge_timeouts(probes: _Probes, timeouts: list[tuple[int, int]]) -> None:
    """Put BSD ``Request timeout`` lines among the probes, in file order."""
    extra = np.array(timeouts, dtype=np.int64)
    line = np.concatenate((probes.line, extra[:, 0]))
    order = np.argsort(line, kind="stable")
    probes.line = line[order]
    probes.seq = np.concatenate((probes.seq, extra[:, 1]))[order]
    probes.rtt_ms = np.concatenate((probes.rtt_ms, np.full(len(timeouts), np.nan)))[order]


def _flavour(other: _OtherLines) -> str:
    """iputils or BSD: the summary says it best, then the rtt line, timeouts and banner."""
    if other.summary_line is not None:
        return "ping-bsd" if b"packets received" in other.summary_line else "ping-iputils"
    if other.rtt is not None:
        return "ping-bsd" if other.rtt.group(0).startswith(b"round-trip") else "ping-iputils"
    if other.timeouts or (other.banner is not None and other.banner.group(2)):
        return "ping-bsd"
    return "ping-iputils"
