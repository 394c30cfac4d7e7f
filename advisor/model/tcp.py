"""Request/response latency over TCP: what moving a write set costs, beyond ping.

Pure functions, vectorised over sizes, round trips and bandwidths (broadcast together): a
whole RTT distribution's atoms can be mapped through them
(``dist.map(lambda rtt_ms: request_response_ms(49152, 1024, rtt_ms, 1000.0))``). The loop
runs over slow-start rounds (a few dozen at most), never over values.

The model (after Cardwell, Savage and Anderson, "Modeling TCP latency", INFOCOM 2000,
https://doi.org/10.1109/INFCOM.2000.832574). An S-byte message is ``n = ceil(S / MSS)``
segments, sent in rounds of ``w_k = min(w_1 * growth^(k-1), W_max)`` segments; K rounds are
needed. Its one-way time, first byte sent to last byte received, is::

    RTT/2 + S/B + sum over k < K of max(0, RTT + MSS/B - w_k * MSS/B)

each earlier round idling until the ACK of its first segment returns, unless the window
already covers the bandwidth-delay product. ``window="cold"`` starts at ``w_1`` = IW = 10
segments: a new connection, and also one idle for longer than an RTO, since Linux restarts
from IW after idleness (``net.ipv4.tcp_slow_start_after_idle = 1``, the default): a Galera
link between bursts of writes. ``window="warm"`` starts at ``W_max``: the window already
covers the BDP, or the cap ``max_window_bytes`` (floored to whole segments) if given.

Assumptions: no queueing beyond the RTT given; no loss (a loss costs a fast retransmit, about
one RTT, or a retransmission timeout of at least 200 ms on Linux: not modelled here);
ACK clocking; a symmetric path, both directions independent; slow start throughout (no
ssthresh), growth 2 per round as in Linux ``tcp_slow_start()``; Galera sets ``TCP_NODELAY``,
so there is no Nagle / delayed-ACK term; B is the bottleneck rate available to this flow.

Calibration (benchmarks/calibration/lab-galera.yaml, ``tcp-request-response-rtt10``: RTT 10 ms,
1 KiB responses, about 1 Gbit/s): warm and fresh-connection round trips of 64 B to 512 KiB
requests come out within 12 % (the lab adds 0.3 to 0.9 ms of fixed cost, and its shaped
1 Gbit/s lets bursts through faster). A fresh 512 KiB request is 5 % under the measurement
with growth 2, and 21 % over it with the growth of 1.5 that delayed ACKs would give.

Several transactions in flight (``in_flight``, netperf ``-b b`` keeps ``1 + b``): they share
each direction's bandwidth, so by Little's law the round trip is at least ``in_flight``
times the serialisation of the busier direction (asymptotic bound of operational analysis,
Lazowska et al., "Quantitative System Performance", 1984, ch. 5):
``T = max(T_single, in_flight * max(S_req, S_resp) / B)``. The path is full duplex: requests
and responses do not queue behind each other. This explains the published netperf runs
(benchmarks/calibration/field-data.yaml, ``tcp-payload-400km``, 6 in flight, 48 KB responses):
inside one DC (ping 0.027 ms) a 48 KB and a 512 KB request took 2.61 and 27.39 ms, 6x the
serialisation at 1 Gbit/s (2.36, 25.2 ms), not RTT + S/B (0.42, 4.2 ms): the link was
saturated. Over 400 km (ping 3.10 ms) 48 KB took 4.27 ms, where the single-transaction time
(3.9 ms) dominates; 512 KB took 37.25 ms against 25.2 modelled: that WAN carried only about
700 Mbit/s, with the retransmissions the source reports, which a loss-free model cannot see.
Multiplying *both* directions' serialisation by ``in_flight`` instead would give 4.7 ms for
48 KB inside the DC, 1.8x the measurement. Near the knee of the bound real latency is above
both terms; the bound ignores that.

Glossary: ``size_bytes`` message size on the wire [bytes]; ``rtt_ms`` round trip [ms];
``bandwidth_mbps`` bottleneck rate [Mbit/s, 10^6 bit/s], None = unlimited (no serialisation);
``mss_bytes`` maximum segment size [bytes]; ``*_segments`` counts of MSS-sized segments.
"""

from __future__ import annotations

__all__ = [
    "INITIAL_WINDOW_SEGMENTS",
    "MSS_BYTES",
    "RTO_MIN_MS",
    "SLOW_START_GROWTH",
    "bdp_bytes",
    "one_way_ms",
    "request_response_ms",
    "socket_buffer_bytes_for",
]

import math
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

# 1500-byte Ethernet MTU - 20 IPv4 - 20 TCP - 12 timestamp option (RFC 7323,
# https://www.rfc-editor.org/rfc/rfc7323; on by default in Linux, tcp_timestamps in
# https://docs.kernel.org/networking/ip-sysctl.html): the MSS a Linux-to-Linux connection
# actually uses.
MSS_BYTES: Final = 1448
# Linux's floor of the retransmission timeout [ms]: RTO = SRTT + max(4 rttvar, 200 ms)
# (include/net/tcp.h TCP_RTO_MIN, __tcp_set_rto; ../shared/reference/network.md).
RTO_MIN_MS: Final = 200.0
# RFC 6928 initial window; Linux TCP_INIT_CWND = 10 (include/net/tcp.h).
INITIAL_WINDOW_SEGMENTS: Final = 10
# Linux tcp_slow_start() adds every newly ACKed segment to cwnd, delayed ACKs included:
# the window doubles per round trip (net/ipv4/tcp_cong.c; RFC 3465).
SLOW_START_GROWTH: Final = 2.0
# Client SYN, server SYN-ACK; the request rides with (or right after) the final ACK.
_HANDSHAKE_RTTS: Final = 1.0
_MS_PER_S: Final = 1e3
_BITS_PER_BYTE: Final = 8.0


def _array(value: npt.ArrayLike, name: str, *, unit: str, positive: bool = False) -> FloatArray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.size == 0:
        return arr
    # Reductions instead of elementwise tests (a distribution's 20,000 atoms are checked at
    # every size): a NaN makes the minimum NaN, which fails both tests.
    low = arr.min()
    ok = low > 0.0 if positive else low >= 0.0 and arr.max() < np.inf
    if not ok:
        bound = "> 0" if positive else "finite and >= 0"
        raise ValueError(f"{name} must be {bound} {unit}, got {value!r}")
    return arr


def _ms_per_byte(bandwidth_mbps: npt.ArrayLike | None) -> FloatArray:
    """Serialisation time of one byte [ms]; 0 for an unlimited (None or inf) bandwidth."""
    if bandwidth_mbps is None:
        return np.zeros(())
    rate_mbps = _array(bandwidth_mbps, "bandwidth_mbps", unit="Mbit/s", positive=True)
    return _BITS_PER_BYTE / (rate_mbps * 1e6 / _MS_PER_S)


def _window_cap_segments(max_window_bytes: npt.ArrayLike | None, mss_bytes: float) -> FloatArray:
    if max_window_bytes is None:
        return np.full((), np.inf)
    cap = _array(max_window_bytes, "max_window_bytes", unit="bytes", positive=True)
    return np.maximum(1.0, np.floor(cap / mss_bytes))


def _check_window_params(mss_bytes: float, initial_window_segments: float, growth: float) -> None:
    if not (math.isfinite(mss_bytes) and mss_bytes > 0):
        raise ValueError(f"mss_bytes must be finite and > 0, got {mss_bytes!r}")
    if not (math.isfinite(initial_window_segments) and initial_window_segments >= 1):
        raise ValueError(f"initial_window_segments must be >= 1, got {initial_window_segments!r}")
    if not (math.isfinite(growth) and growth > 1.0):
        raise ValueError(f"growth must be > 1 (2 for Linux slow start), got {growth!r}")


def _slow_start_idle_ms(
    n_segments: FloatArray,
    first_window: FloatArray,
    cap_segments: FloatArray,
    growth: float,
    rtt_ms: FloatArray,
    segment_ms: FloatArray,
) -> FloatArray:
    """Idle time waiting for ACKs [ms], for broadcast inputs.

    Rounds at the cap repeat identically, so they are summed in closed form: the loop runs
    only while some window is still growing (log_growth(cap / first_window) rounds at most).
    """
    shape = np.broadcast_shapes(
        n_segments.shape, first_window.shape, cap_segments.shape, rtt_ms.shape, segment_ms.shape
    )
    idle_ms = np.zeros(shape)
    sent = np.zeros(shape)
    active = np.ones(shape, dtype=bool)
    window = np.broadcast_to(np.minimum(first_window, cap_segments), shape)

    def stall_ms(segments: FloatArray) -> FloatArray:
        return np.maximum(0.0, rtt_ms + segment_ms - segments * segment_ms)

    while np.any(active):
        capped = active & (window >= cap_segments)
        if np.any(capped):
            cap = np.where(capped, cap_segments, 1.0)  # finite where used
            left = np.ceil((n_segments - sent) / cap)
            idle_ms = idle_ms + np.where(capped, (left - 1.0) * stall_ms(cap), 0.0)
            active = active & ~capped
        sent = sent + np.where(active, window, 0.0)
        more = active & (sent < n_segments)
        idle_ms = idle_ms + np.where(more, stall_ms(window), 0.0)
        active = more
        window = np.minimum(window * growth, cap_segments)
    return idle_ms


def one_way_ms(
    size_bytes: npt.ArrayLike,
    rtt_ms: npt.ArrayLike,
    bandwidth_mbps: npt.ArrayLike | None = None,
    *,
    window: Literal["cold", "warm"] = "cold",
    mss_bytes: float = MSS_BYTES,
    initial_window_segments: float = INITIAL_WINDOW_SEGMENTS,
    max_window_bytes: npt.ArrayLike | None = None,
    growth: float = SLOW_START_GROWTH,
) -> FloatArray | float:
    """Time from the first byte sent to the last byte received, loss-free; inputs broadcast.

    Parameters
    ----------
    size_bytes : array_like
        Message size on the wire [bytes].
    rtt_ms : array_like
        Round trip of the path, without queueing [ms].
    bandwidth_mbps : array_like, optional
        Bottleneck rate [Mbit/s]; None is unlimited (no serialisation).
    window : {"cold", "warm"}, default "cold"
        ``"cold"`` starts from the initial window (a new or idle connection); ``"warm"``
        from ``max_window_bytes``, or a window that covers the BDP.
    mss_bytes : float, default MSS_BYTES
        Segment size [bytes].
    initial_window_segments : float, default INITIAL_WINDOW_SEGMENTS
        Initial congestion window [segments].
    max_window_bytes : array_like, optional
        Cap on the window (receive buffer x usable fraction) [bytes]; None is no cap.
    growth : float, default SLOW_START_GROWTH
        Window growth per round of slow start [factor].

    Returns
    -------
    float or ndarray
        One-way time [ms]: a float for scalar inputs.

    >>> round(one_way_ms(1048576, 80.0, 1000.0), 1), round(one_way_ms(1048576, 80.0, 1000.0,
    ...     window="warm"), 1)
    (521.2, 48.4)
    """
    _check_window_params(mss_bytes, initial_window_segments, growth)
    if window not in ("cold", "warm"):
        raise ValueError(f"unknown window {window!r}; expected cold or warm")
    size = _array(size_bytes, "size_bytes", unit="bytes")
    rtt = _array(rtt_ms, "rtt_ms", unit="ms")
    per_byte_ms = _ms_per_byte(bandwidth_mbps)
    cap = _window_cap_segments(max_window_bytes, mss_bytes)
    base_ms = rtt / 2.0 + size * per_byte_ms
    # An unlimited warm window sends everything in one round: nothing to wait for. Said
    # here rather than by running the slow-start loop once: the engine maps every link's
    # samples this way, and the loop's dozen array passes would outweigh the sum itself.
    if window == "warm" and np.all(np.isinf(cap)):
        return _scalar_or_array(base_ms + np.zeros_like(cap))
    n_segments = np.maximum(1.0, np.ceil(size / mss_bytes))
    if window == "warm":  # an unlimited warm window sends everything in the first round
        first = np.where(np.isinf(cap), n_segments, cap)
    else:
        first = np.full((), float(initial_window_segments))
    idle_ms = _slow_start_idle_ms(n_segments, first, cap, growth, rtt, mss_bytes * per_byte_ms)
    return _scalar_or_array(base_ms + idle_ms)


def request_response_ms(
    request_bytes: npt.ArrayLike,
    response_bytes: npt.ArrayLike,
    rtt_ms: npt.ArrayLike,
    bandwidth_mbps: npt.ArrayLike | None = None,
    *,
    window: Literal["cold", "warm", "new"] = "warm",
    server_time_ms: npt.ArrayLike = 0.0,
    in_flight: int = 1,
    mss_bytes: float = MSS_BYTES,
    initial_window_segments: float = INITIAL_WINDOW_SEGMENTS,
    max_window_bytes: npt.ArrayLike | None = None,
    growth: float = SLOW_START_GROWTH,
) -> FloatArray | float:
    """Round trip of one transaction, request sent to response received; inputs broadcast.

    Each direction is :func:`one_way_ms`. ``in_flight`` transactions outstanding share the
    bandwidth (module docstring): ``max(T_single, in_flight * max(request, response) / B)``,
    where B is also capped by ``max_window_bytes / rtt_ms`` when a window cap is given.

    Parameters
    ----------
    request_bytes : array_like
        Request size on the wire [bytes].
    response_bytes : array_like
        Response size on the wire [bytes].
    rtt_ms : array_like
        Round trip of the path, without queueing [ms].
    bandwidth_mbps : array_like, optional
        Bottleneck rate [Mbit/s]; None is unlimited.
    window : {"warm", "cold", "new"}, default "warm"
        Both directions warm or cold (:func:`one_way_ms`); ``"new"`` is a fresh connection:
        one RTT of handshake, then cold windows (TLS not modelled).
    server_time_ms : array_like, default 0.0
        Time the server spends between request and response [ms].
    in_flight : int, default 1
        Transactions outstanding on the connection [count].
    mss_bytes, initial_window_segments, max_window_bytes, growth
        As in :func:`one_way_ms` ([bytes], [segments], [bytes], [factor]).

    Returns
    -------
    float or ndarray
        Round trip of the transaction [ms]: a float for scalar inputs.

    >>> round(request_response_ms(49152, 1024, 10.0, 1000.0), 2)
    10.4
    >>> round(request_response_ms(49152, 1024, 10.0, 1000.0, window="new"), 2)
    40.08
    """
    if window not in ("cold", "warm", "new"):
        raise ValueError(f"unknown window {window!r}; expected cold, warm or new")
    if isinstance(in_flight, bool) or not isinstance(in_flight, int) or in_flight < 1:
        raise ValueError(f"in_flight must be an integer >= 1, got {in_flight!r}")
    server_ms = _array(server_time_ms, "server_time_ms", unit="ms")
    rtt = _array(rtt_ms, "rtt_ms", unit="ms")
    direction: Literal["cold", "warm"] = "warm" if window == "warm" else "cold"
    legs = [
        np.asarray(
            one_way_ms(
                size,
                rtt,
                bandwidth_mbps,
                window=direction,
                mss_bytes=mss_bytes,
                initial_window_segments=initial_window_segments,
                max_window_bytes=max_window_bytes,
                growth=growth,
            )
        )
        for size in (request_bytes, response_bytes)
    ]
    single_ms = legs[0] + server_ms + legs[1]
    if window == "new":
        single_ms = single_ms + _HANDSHAKE_RTTS * rtt
    if in_flight == 1:
        return _scalar_or_array(single_ms)
    per_byte_ms = _ms_per_byte(bandwidth_mbps)
    if max_window_bytes is not None:  # throughput <= window / RTT (netperf manual)
        window_bytes = _array(max_window_bytes, "max_window_bytes", unit="bytes", positive=True)
        per_byte_ms = np.maximum(per_byte_ms, rtt / window_bytes)
    busiest_bytes = np.maximum(
        _array(request_bytes, "request_bytes", unit="bytes"),
        _array(response_bytes, "response_bytes", unit="bytes"),
    )
    return _scalar_or_array(np.maximum(single_ms, in_flight * busiest_bytes * per_byte_ms))


def bdp_bytes(bandwidth_mbps: npt.ArrayLike, rtt_ms: npt.ArrayLike) -> FloatArray | float:
    """Bandwidth-delay product: what must be in flight to fill the path.

    Parameters
    ----------
    bandwidth_mbps : array_like
        The path's rate [Mbit/s].
    rtt_ms : array_like
        Its round trip [ms].

    Returns
    -------
    float or ndarray
        The product [bytes].

    >>> bdp_bytes(1000.0, 80.0)  # 1 Gbit/s x 80 ms = 10 MB
    10000000.0
    """
    rate_mbps = _array(bandwidth_mbps, "bandwidth_mbps", unit="Mbit/s", positive=True)
    rtt = _array(rtt_ms, "rtt_ms", unit="ms")
    return _scalar_or_array(rate_mbps * 1e6 / _BITS_PER_BYTE * rtt / _MS_PER_S)


def socket_buffer_bytes_for(
    bandwidth_mbps: npt.ArrayLike, rtt_ms: npt.ArrayLike, *, usable_fraction: float = 0.5
) -> npt.NDArray[np.int64] | int:
    """Socket buffer whose advertised window covers the BDP.

    Linux advertises only part of a receive buffer as window: half with the classic
    ``tcp_adv_win_scale = 1``; newer kernels measure the ratio (Linux ip-sysctl:
    https://docs.kernel.org/networking/ip-sysctl.html), about 0.75 (an assumption, not a
    published figure). Compare with ``tcp_rmem[2]`` (6 MB by default).

    Parameters
    ----------
    bandwidth_mbps : array_like
        The path's rate [Mbit/s].
    rtt_ms : array_like
        Its round trip [ms].
    usable_fraction : float, default 0.5
        Share of the buffer advertised as window [fraction, in (0, 1]].

    Returns
    -------
    int or ndarray of int64
        Buffer size, rounded up [bytes].

    >>> socket_buffer_bytes_for(1000.0, 80.0)
    20000000
    """
    if not 0.0 < usable_fraction <= 1.0:
        raise ValueError(f"usable_fraction must be within (0, 1], got {usable_fraction!r}")
    needed = np.ceil(np.asarray(bdp_bytes(bandwidth_mbps, rtt_ms)) / usable_fraction)
    counts = needed.astype(np.int64)
    return int(counts) if counts.ndim == 0 else counts


def _scalar_or_array(values: FloatArray) -> FloatArray | float:
    return float(values) if values.ndim == 0 else values
