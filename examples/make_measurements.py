"""Regenerate the examples' measurement files: `python examples/make_measurements.py`.

The logs are synthetic but shaped exactly like the tools' output (iputils ping -D, netperf
TCP_RR -v 2, sockperf ping-pong, plain samples), seeded so they never change. Their RTTs are
set from published figures: the median of each path sits where the public inter-region
tables put it (../shared/reference/network.md section 3.2), with a right-skewed excess and
rare spikes as real WAN links show (section 6).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
START_S = 1_763_788_800.0  # 2025-11-22 05:20:00 UTC


def rtts(
    rng: np.random.Generator,
    n: int,
    floor_ms: float,
    excess_ms: float,
    spike_share: float = 0.0,
    spike_ms: tuple[float, float] = (10, 60),
) -> np.ndarray:
    """A floor, a gamma-shaped excess and a few spikes, in ms."""
    values = floor_ms + rng.gamma(2.0, excess_ms / 2.0, n)
    spikes = rng.random(n) < spike_share
    values[spikes] += rng.uniform(*spike_ms, spikes.sum())
    return values


def _time(value: float) -> str:
    # iputils: 3 decimals below 1 ms, 2 below 10, 1 below 100, none above.
    return (
        f"{value:.3f}"
        if value < 1
        else f"{value:.2f}"
        if value < 10
        else f"{value:.1f}"
        if value < 100
        else f"{value:.0f}"
    )


def ping_log(
    path: Path,
    host: str,
    ip: str,
    values: np.ndarray,
    lost: set[int],
    duplicate: set[int] = frozenset(),
) -> None:
    """iputils ping -D output: one probe a second, gaps for lost replies, the summary."""
    lines = [f"PING {host} ({ip}) 56(84) bytes of data."]
    received = []
    for seq, value in enumerate(values, start=1):
        if seq in lost:
            continue
        received.append(value)
        stamp = START_S + seq - 1 + value / 1000
        line = f"64 bytes from {host} ({ip}): icmp_seq={seq} ttl=54 time={_time(value)} ms"
        lines.append(f"[{stamp:.6f}] {line}")
        if seq in duplicate:
            lines.append(f"[{stamp + 0.0002:.6f}] {line} (DUP!)")
    got = np.array(received)
    n = len(values)
    loss = 100 * (n - len(got)) / n
    dups = f", +{len(duplicate)} duplicates" if duplicate else ""
    lines += [
        "",
        f"--- {host} ping statistics ---",
        f"{n} packets transmitted, {len(got)} received{dups}, {loss:g}% packet loss, "
        f"time {int((n - 1) * 1000 + 41)}ms",
        f"rtt min/avg/max/mdev = {got.min():.3f}/{got.mean():.3f}/{got.max():.3f}/"
        f"{got.std():.3f} ms",
    ]
    path.write_text("\n".join(lines) + "\n")


def netperf_report(path: Path, host: str, request: int, response: int, rate: float) -> None:
    """netperf -t TCP_RR -v 2 -- -r REQ,RESP (one transaction in flight)."""
    latency_us = 1e6 / rate
    out_mbps = rate * request * 8 / 1e6
    in_mbps = rate * response * 8 / 1e6
    path.write_text(
        f"MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to {host} () "
        "port 0 AF_INET : first burst 0\n"
        "Local /Remote\n"
        "Socket Size   Request  Resp.   Elapsed  Trans.\n"
        "Send   Recv   Size     Size    Time     Rate\n"
        "bytes  Bytes  bytes    bytes   secs.    per sec\n\n"
        f"16384  131072 {request:<6d}   {response:<6d}  60.00    {rate:7.2f}\n"
        "16384  131072\n"
        "Alignment      Offset         RoundTrip  Trans    Throughput\n"
        "Local  Remote  Local  Remote  Latency    Rate     10^6bits/s\n"
        "Send   Recv    Send   Recv    usec/Tran  per sec  Outbound   Inbound\n"
        f"    8      0       0      0   {latency_us:<6.3f}   {rate:<6.3f} {out_mbps:<6.3f}    "
        f"{in_mbps:<6.3f}\n"
    )


def sockperf_summary(path: Path, ip: str, half_rtt_us: np.ndarray, dropped: int) -> None:
    """sockperf ping-pong --tcp -m 64 (default mode: half round trips in usec)."""
    ordered = np.sort(half_rtt_us)
    n = ordered.size

    def pct(p: float) -> float:
        return float(ordered[max(round(p / 100 * n) - 1, 0)])

    lines = [
        "sockperf: == version #3.10-0.git9bba0e35e7a8 ==",
        "sockperf[CLIENT] send on:",
        f"[ 0] IP = {ip:<15s} PORT = 11111 # TCP",
        "sockperf: Warmup stage (sending a few dummy messages)...",
        "sockperf: Starting test...",
        "sockperf: Test end (interrupted by timer)",
        "sockperf: Test ended",
        "sockperf: [Total Run] RunTime=60.000 sec; Warm up time=400 msec; "
        f"SentMessages={n + dropped + 800}; ReceivedMessages={n + 800}",
        "sockperf: ========= Printing statistics for Server No: 0",
        "sockperf: [Valid Duration] RunTime=59.550 sec; "
        f"SentMessages={n + dropped}; ReceivedMessages={n}",
        f"sockperf: ====> avg-latency={ordered.mean():.3f} (std-dev={ordered.std():.3f}, "
        "mean-ad=0.000, median-ad=0.000, siqr=0.000, cv=0.000, std-error=0.000, "
        "99.0% ci=[0.000, 0.000])",
        f"sockperf: # dropped messages = {dropped}; # duplicated messages = 0; "
        "# out-of-order messages = 0",
        f"sockperf: Summary: Latency is {ordered.mean():.3f} usec",
        f"sockperf: Total {n} observations; each percentile contains {n / 100:.2f} observations",
        f"sockperf: ---> <MAX> observation = {ordered[-1]:8.3f}",
    ]
    for p in (99.999, 99.990, 99.900, 99.000, 90.000, 75.000, 50.000, 25.000):
        lines.append(f"sockperf: ---> percentile {p:6.3f} = {pct(p):8.3f}")
    lines.append(f"sockperf: ---> <MIN> observation = {ordered[0]:8.3f}")
    path.write_text("\n".join(lines) + "\n")


def samples(path: Path, comment: str, values: np.ndarray) -> None:
    path.write_text(f"# {comment}\n" + "\n".join(f"{v:.3f}" for v in values) + "\n")


def main() -> None:
    rng = np.random.default_rng(20261122)
    out = HERE / "paris-frankfurt" / "measurements"
    out.mkdir(parents=True, exist_ok=True)
    # Paris-1 to Frankfurt: 478 km, floor 4.7 ms; about 9.8 ms measured (48 % of light speed).
    values = rtts(rng, 3600, 9.55, 0.25, 0.004)
    ping_log(
        out / "paris-1_frankfurt.ping.txt",
        "frankfurt-db1.example.net",
        "10.20.0.11",
        values,
        lost={311, 1207, 2650},
        duplicate={1800},
    )
    netperf_report(
        out / "paris-1_frankfurt.netperf.txt", "frankfurt-db1.example.net", 16384, 128, 99.63
    )
    samples(
        out / "paris-1_paris-2.samples.txt",
        "ping paris-2 from paris-1 [ms], one per line",
        rtts(rng, 1800, 0.40, 0.08),
    )

    out = HERE / "amsterdam-metro" / "measurements"
    out.mkdir(parents=True, exist_ok=True)
    sockperf_summary(
        out / "ams-1_ams-2.sockperf.txt",
        "10.1.2.11",
        rtts(rng, 200_000, 0.21, 0.05, 0.0005, (0.2, 2.0)) * 1000,
        dropped=0,
    )
    ping_log(
        out / "ams-1_ams-3.ping.txt",
        "ams-3-db1.example.net",
        "10.1.3.11",
        rtts(rng, 3600, 0.55, 0.12),
        lost=set(),
    )
    ping_log(
        out / "ams-2_ams-3.ping.txt",
        "ams-3-db1.example.net",
        "10.1.3.11",
        rtts(rng, 3600, 0.62, 0.12),
        lost={2001},
    )

    out = HERE / "us-eu" / "measurements"
    out.mkdir(parents=True, exist_ok=True)
    # Virginia to Dublin: 5,460 km, floor 53.5 ms; 69.6 ms p50 (AWS CloudPing, 1-year median).
    ping_log(
        out / "virginia_dublin.ping.txt",
        "dub-db1.example.net",
        "10.30.0.11",
        rtts(rng, 86_400 // 10, 69.0, 0.9, 0.002, (20, 150)),
        lost={100, 4000, 4001, 7000},
    )
    netperf_report(out / "virginia_dublin.netperf.txt", "dub-db1.example.net", 65536, 256, 13.9)

    out = HERE / "global-counter" / "measurements"
    out.mkdir(parents=True, exist_ok=True)
    ping_log(
        out / "frankfurt_london.ping.txt",
        "lon-db1.example.net",
        "10.40.0.11",
        rtts(rng, 1800, 13.2, 0.5, 0.002),
        lost={77},
    )

    dr_site_measurements()


def dr_site_measurements() -> None:
    """dr-site-durable: its own generator, so that the other examples' files stay as they
    were. Warsaw to Krakow: 252 km, floor 2.5 ms; a private line about half as fast."""
    rng = np.random.default_rng(20261128)
    out = HERE / "dr-site-durable" / "measurements"
    out.mkdir(parents=True, exist_ok=True)
    samples(
        out / "warsaw-1_warsaw-2.samples.txt",
        "ping warsaw-2 from warsaw-1 [ms], one per line",
        rtts(rng, 1800, 0.30, 0.06),
    )
    ping_log(
        out / "warsaw-1_krakow-dr.ping.txt",
        "krk-db1.example.net",
        "10.50.3.11",
        rtts(rng, 3600, 5.05, 0.2, 0.002),
        lost={1440},
    )
    netperf_report(out / "warsaw-1_krakow-dr.netperf.txt", "krk-db1.example.net", 1500, 128, 190.8)
    ping_log(
        out / "warsaw-2_krakow-dr.ping.txt",
        "krk-db1.example.net",
        "10.50.3.11",
        rtts(rng, 3600, 5.15, 0.2, 0.002),
        lost=set(),
    )


if __name__ == "__main__":
    main()
