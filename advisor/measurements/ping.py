"""ping logs (iputils on Linux, BSD and macOS) into round-trip samples, loss and duplicates.

Line shapes (reference/network.md section 5.2; iputils ``ping_common.c``, ``ping.c``):

- banner ``PING host (ip) 56(84) bytes of data.`` (BSD: ``PING host (ip): 56 data bytes``);
- reply ``[1700000000.123456] 64 bytes from host (ip): icmp_seq=1 ttl=63 time=49.6 ms``, the
  ``[...]`` prefix only with ``-D``, `` (DUP!)`` after a duplicate;
- probes without a reply: ``From 10.0.0.1 icmp_seq=5 Destination Host Unreachable``,
  ``no answer yet for icmp_seq=7`` (``-O``), BSD ``Request timeout for icmp_seq 3``;
- summary ``10 packets transmitted, 9 received, +1 duplicates, 10% packet loss, time 9013ms``
  (BSD: ``... 9 packets received, ...``) and ``rtt min/avg/max/mdev = a/b/c/d ms``
  (BSD: ``round-trip min/avg/max/stddev = ...``).

A long log has a million replies, so the replies are read with numpy over the raw bytes:
every ``=`` is found in one vectorised pass, the ones after ``icmp_seq`` and ``time`` are
kept, and their numbers are decoded column by column. No Python loop runs per line.
"""

from __future__ import annotations

__all__ = ["parse_ping"]

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from advisor.measurements.result import ParsedMeasurement, source_error

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
ByteArray = npt.NDArray[np.uint8]

# icmp_seq is 16 bits on the wire (RFC 792 echo "Sequence Number"), so long runs wrap.
SEQ_MODULUS = 65536
# iputils numbers probes from 1 (ping4_send_probe: ntransmitted + 1), BSD ping from 0.
FIRST_SEQ = {"ping-iputils": 1, "ping-bsd": 0}
_CHUNK_BYTES = 1 << 22  # scan in 4 MiB chunks: small temporaries are reused, not page-faulted
_NUMBER_WIDTH = 12  # longest number read: "icmp_seq=65535", "time=123456.789"
_ZERO, _NINE, _DOT, _EQUALS, _NEWLINE = (ord(c) for c in "09.=\n")

_NO_SAMPLES = (
    "no round-trip samples found in ping output{detail}; expected lines like "
    "'64 bytes from ...: icmp_seq=1 ttl=63 time=49.6 ms'"
)
_SUMMARY = re.compile(
    rb"(\d+) packets transmitted, (\d+) (?:packets )?received"
    rb"(?:, \+(\d+) duplicates)?(?:, \+\d+ corrupted)?(?:, \+\d+ errors)?"
    rb"(?:, ([\d.]+)% packet loss)?"
)
_RTT = re.compile(
    rb"(rtt|round-trip) min/avg/max(?:/(?:mdev|stddev))? = "
    rb"([\d.]+)/([\d.]+)/([\d.]+)(?:/[\d.]+)? ms"
)
# iputils: "56(84) bytes of data." (IPv4), "::1(::1) 56 data bytes" (IPv6); BSD: "(ip): 56 data bytes"
_BANNER = re.compile(rb"PING [^\n]*?(?:(\d+)\(\d+\) bytes of data|(:)? (\d+) data bytes)")
_TIMEOUT = re.compile(rb"Request timeout for icmp_seq (\d+)")
_BAD_CHECKSUM = re.compile(rb"\(BAD CHECKSUM!\)")


@dataclass(frozen=True)
class _Probes:
    """Every probe line seen, in file order: its raw icmp_seq and round trip (NaN: no reply)."""

    position: IntArray  # byte offset of the line's icmp_seq
    seq: IntArray
    rtt_ms: FloatArray


@dataclass(frozen=True)
class _Summary:
    transmitted: int
    received: int
    duplicates: int
    flavour: str


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
        ``samples_ms`` [ms] holds the first reply to each probe, in file order. With a
        summary, ``transmitted``/``received``/``duplicates`` come from it; a log cut before
        its summary is counted from the unwrapped icmp_seq numbers instead.
    """
    data = text.encode("utf-8", errors="replace")
    _check_single_run(data, source)
    summary = _read_summary(data, source)
    banner = _BANNER.search(data)
    flavour = _flavour(data, summary, banner)
    payload_bytes = int(banner.group(1) or banner.group(3)) if banner else None
    rtt_summary = _read_rtt_summary(data)
    probes = _scan_probes(data, source)
    notes: list[str] = []

    if not np.isfinite(probes.rtt_ms).any():
        if rtt_summary is None:
            detail = ""
            if summary is not None:
                detail = f" ({summary.transmitted} sent, {summary.received} received)"
            raise source_error(_NO_SAMPLES.format(detail=detail), source)
        notes.append("no per-reply lines (ping -q?): only the min/avg/max of the summary")
        samples_ms = None
        counted = _Counts(None, None, 0, 0)
    else:
        unwrapped = _unwrap(probes.seq)
        wraps = int(unwrapped.max() // SEQ_MODULUS - unwrapped[0] // SEQ_MODULUS)
        if wraps:
            notes.append(f"icmp_seq wrapped past 65535 {wraps} time(s); unwrapped")
        first_seq = FIRST_SEQ[flavour] if banner else None
        samples_ms, counted = _count(unwrapped, probes.rtt_ms, first_seq)

    if summary is not None:
        transmitted, received, duplicates = summary.transmitted, summary.received, summary.duplicates
        if counted.received is not None and counted.received != received:
            notes.append(
                f"the summary says {received} received but the log holds {counted.received} "
                "distinct replies; counts taken from the summary"
            )
    else:
        transmitted, received, duplicates = counted.transmitted, counted.received, counted.duplicates
        if transmitted is not None:
            notes.append(
                "no ping summary (log cut?): probes counted from icmp_seq numbers; "
                "probes sent after the last line are not seen"
            )
    loss = None if not transmitted or received is None else 1.0 - min(received, transmitted) / transmitted
    if counted.unanswered_lines:
        notes.append(
            f"{counted.unanswered_lines} line(s) name a probe without a reply "
            "(unreachable, timeout, no answer yet): counted as lost unless answered later"
        )
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
        payload_bytes=payload_bytes,
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class _Counts:
    transmitted: int | None
    received: int | None
    duplicates: int
    unanswered_lines: int


def _count(
    unwrapped: IntArray, rtt_ms: FloatArray, first_seq: int | None
) -> tuple[FloatArray, _Counts]:
    """Samples (first reply per probe, file order) and counts inferred from sequence numbers."""
    answered = np.isfinite(rtt_ms)
    reply_seq = unwrapped[answered]
    order = np.argsort(reply_seq, kind="stable")  # near-sorted input: timsort runs in ~O(n)
    repeat = np.zeros(reply_seq.size, dtype=bool)
    repeat[order[1:]] = reply_seq[order[1:]] == reply_seq[order[:-1]]
    samples_ms = rtt_ms[answered][~repeat]
    start = int(unwrapped.min()) if first_seq is None else min(first_seq, int(unwrapped.min()))
    counts = _Counts(
        transmitted=int(unwrapped.max()) - start + 1,
        received=int(samples_ms.size),
        duplicates=int(repeat.sum()),
        unanswered_lines=int((~answered).sum()),
    )
    return samples_ms, counts


def _unwrap(seq: IntArray) -> IntArray:
    """Undo the 16-bit wrap of icmp_seq: each step is taken as the shortest way round.

    >>> _unwrap(np.array([65534, 65535, 0, 65535, 1])).tolist()
    [65534, 65535, 65536, 65535, 65537]
    """
    step = np.diff(seq)
    step = (step + SEQ_MODULUS // 2) % SEQ_MODULUS - SEQ_MODULUS // 2
    return np.concatenate(([seq[0]], seq[0] + np.cumsum(step)))


def _scan_probes(data: bytes, source: str) -> _Probes:
    """Find every ``icmp_seq=N`` and the ``time=X ms`` on the same line, vectorised."""
    buf = np.frombuffer(data, dtype=np.uint8)
    equals, newlines = _positions_of_equals_and_newlines(buf)
    seq_at = equals[_key_is(buf, equals, b"seq", (b"_", b" "))] + 1  # icmp_seq=, busybox seq=
    time_at = equals[_key_is(buf, equals, b"time", (b" ",))] + 1
    seq_value, seq_len, seq_ok = _read_decimals(buf, seq_at)
    seq_ok &= (seq_len <= 5) & (seq_value % 1 == 0)
    seq_at, seq = seq_at[seq_ok], seq_value[seq_ok].astype(np.int64)
    timeouts = [(m.start(1), int(m.group(1))) for m in _TIMEOUT.finditer(data)]
    if timeouts:  # BSD "Request timeout for icmp_seq 3": rare lines, merged in file order
        extra = np.array(timeouts, dtype=np.int64).reshape(-1, 2)
        order = np.argsort(np.concatenate((seq_at, extra[:, 0])), kind="stable")
        seq_at = np.concatenate((seq_at, extra[:, 0]))[order]
        seq = np.concatenate((seq, extra[:, 1]))[order]

    seq_line = np.searchsorted(newlines, seq_at)
    time_line = np.searchsorted(newlines, time_at)
    owner = np.searchsorted(seq_line, time_line, side="left")
    on_probe_line = owner < seq_line.size
    on_probe_line[on_probe_line] = seq_line[owner[on_probe_line]] == time_line[on_probe_line]
    time_at, owner = time_at[on_probe_line], owner[on_probe_line]
    value, length, ok = _read_decimals(buf, time_at)
    after = np.minimum(time_at[:, None] + length[:, None] + np.arange(3), buf.size - 1)
    ok &= (buf[after] == np.frombuffer(b" ms", dtype=np.uint8)).all(axis=1)
    if not ok.all():
        bad = int(time_at[np.argmin(ok)])
        line = int(np.searchsorted(newlines, bad)) + 1
        raise source_error(
            f"cannot read the round trip of this reply: expected 'time=<ms> ms' with a "
            f"non-negative number, found {_line_text(data, bad)!r}",
            source,
            line,
        )
    rtt_ms = np.full(seq.size, np.nan)
    rtt_ms[owner[::-1]] = value[::-1]  # reversed so the first time= of a line wins
    for match in _BAD_CHECKSUM.finditer(data):  # corrupted replies are not replies (iputils)
        rtt_ms[seq_line == np.searchsorted(newlines, match.start())] = np.nan
    return _Probes(seq_at, seq, rtt_ms)


def _positions_of_equals_and_newlines(buf: ByteArray) -> tuple[IntArray, IntArray]:
    equals, newlines = [], []
    for start in range(0, buf.size, _CHUNK_BYTES):
        chunk = buf[start : start + _CHUNK_BYTES]
        equals.append(np.flatnonzero(chunk == _EQUALS) + start)
        newlines.append(np.flatnonzero(chunk == _NEWLINE) + start)
    empty = np.empty(0, dtype=np.int64)
    return (np.concatenate(equals or [empty]), np.concatenate(newlines or [empty]))


def _key_is(
    buf: ByteArray, equals: IntArray, key: bytes, before: tuple[bytes, ...]
) -> npt.NDArray[np.bool_]:
    """Which ``=`` signs follow ``key`` itself preceded by one of ``before``."""
    width = len(key) + 1
    at = np.maximum(equals[:, None] - width + np.arange(width), 0)
    window = buf[at]
    match = (window[:, 1:] == np.frombuffer(key, dtype=np.uint8)).all(axis=1)
    lead = np.isin(window[:, 0], np.frombuffer(b"".join(before), dtype=np.uint8))
    return match & lead & (equals >= width)


def _read_decimals(
    buf: ByteArray, starts: IntArray
) -> tuple[FloatArray, IntArray, npt.NDArray[np.bool_]]:
    """Decode the unsigned decimal numbers that begin at ``starts``.

    Digits are accumulated into an exact integer mantissa and divided once by a power of
    ten, which rounds exactly like ``float(text)``. Returns (value, length in bytes, ok);
    ``ok`` is false where no digit starts the number, it has two dots, or it runs too long.
    """
    n = starts.size
    mantissa = np.zeros(n, dtype=np.int64)
    decimals = np.zeros(n, dtype=np.int64)
    length = np.zeros(n, dtype=np.int64)
    dots = np.zeros(n, dtype=np.int64)
    open_ = np.ones(n, dtype=bool)
    last = buf.size - 1
    for column in range(_NUMBER_WIDTH + 1):
        byte = buf[np.minimum(starts + column, last)]
        byte = np.where(starts + column <= last, byte, 0)
        digit = (byte >= _ZERO) & (byte <= _NINE)
        dot = byte == _DOT
        open_ &= digit | dot
        if not open_.any():
            break
        take = open_ & digit
        mantissa = np.where(take, mantissa * 10 + (byte.astype(np.int64) - _ZERO), mantissa)
        decimals += take & (dots > 0)
        dots += open_ & dot
        length += open_
    first = buf[np.minimum(starts, last)]
    ok = (first >= _ZERO) & (first <= _NINE) & (dots <= 1) & (length <= _NUMBER_WIDTH)
    return mantissa / 10.0**decimals, length, ok


def _line_text(data: bytes, position: int) -> str:
    start = data.rfind(b"\n", 0, position) + 1
    end = data.find(b"\n", position)
    line = data[start : end if end >= 0 else len(data)].rstrip(b"\r")
    return line.decode("utf-8", errors="replace")


def _check_single_run(data: bytes, source: str) -> None:
    runs = data.count(b"packets transmitted, ")
    banners = data.count(b"\nPING ") + data.startswith(b"PING ")
    if max(runs, banners) > 1:
        raise source_error(
            f"the file holds {max(runs, banners)} ping runs; expected the output of one "
            "ping run per file",
            source,
        )


def _read_summary(data: bytes, source: str) -> _Summary | None:
    at = data.rfind(b"packets transmitted")
    if at < 0:
        return None
    start = data.rfind(b"\n", 0, at) + 1
    end = data.find(b"\n", at)
    match = _SUMMARY.match(data, start, len(data) if end < 0 else end)
    if match is None:
        line = data.count(b"\n", 0, at) + 1
        raise source_error(
            "cannot read the ping summary: expected 'N packets transmitted, M received, "
            f"X% packet loss', found {_line_text(data, at)!r}",
            source,
            line,
        )
    flavour = "ping-bsd" if b"packets received" in match.group(0) else "ping-iputils"
    return _Summary(int(match.group(1)), int(match.group(2)), int(match.group(3) or 0), flavour)


def _read_rtt_summary(data: bytes) -> dict[str, float] | None:
    at = max(data.rfind(b"rtt min/avg/max"), data.rfind(b"round-trip min/avg/max"))
    match = _RTT.match(data, at) if at >= 0 else None
    if match is None:
        return None
    low, mean, high = (float(match.group(i)) for i in (2, 3, 4))
    return {"min": low, "mean": mean, "max": high}


def _flavour(data: bytes, summary: _Summary | None, banner: re.Match[bytes] | None) -> str:
    """iputils or BSD: the summary says it best, then the rtt line, banner and timeouts."""
    if summary is not None:
        return summary.flavour
    if b"round-trip min/avg/max" in data or b"Request timeout for icmp_seq" in data:
        return "ping-bsd"
    if banner is not None and banner.group(2) is not None:
        return "ping-bsd"
    return "ping-iputils"
