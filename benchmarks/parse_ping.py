"""Benchmark: parse a realistic iputils ping log of a million replies (``ping -D``).

The log is what a week of ``ping -D -i 0.5`` between two data centres looks like: a banner,
``[epoch.usec]`` timestamps, RTTs from a shifted gamma with rare spikes printed with
iputils' adaptive precision, about 0.5 % lost probes (gaps), some ``Destination Host
Unreachable`` lines, a few ``(DUP!)`` replies, icmp_seq wrapping past 65535 fifteen times,
and the summary. It is generated with a fixed seed in a temporary folder, then
:func:`advisor.measurements.parse_file` is timed (median of ``repeats`` runs).

Run ``python benchmarks/parse_ping.py [n_lines]``; a benchmark suite calls ``run(n_lines)``.
"""

from __future__ import annotations

__all__ = ["run", "write_log"]

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

try:
    from advisor.measurements import parse_file
except ModuleNotFoundError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from advisor.measurements import parse_file

SEED = 20240601
LOST_FRACTION = 0.005  # probes without any line (gaps in icmp_seq)
UNREACHABLE_FRACTION = 0.001  # probes answered by "From ... Destination Host Unreachable"
DUPLICATE_FRACTION = 0.0005  # replies printed twice, the second with (DUP!)


def write_log(path: Path, n_lines: int, seed: int = SEED) -> dict[str, int]:
    """Write a ping log with about ``n_lines`` reply lines; return its true counts."""
    rng = np.random.default_rng(seed)
    n_probes = int(n_lines / (1 - LOST_FRACTION - UNREACHABLE_FRACTION))
    fate = rng.random(n_probes)
    unreachable = fate < UNREACHABLE_FRACTION
    lost = (fate >= UNREACHABLE_FRACTION) & (fate < UNREACHABLE_FRACTION + LOST_FRACTION)
    duplicated = rng.random(n_probes) < DUPLICATE_FRACTION
    rtt_ms = 48.0 + rng.gamma(2.0, 0.8, n_probes)
    spike = rng.random(n_probes) < 0.002
    rtt_ms[spike] += rng.exponential(60.0, spike.sum())
    epoch_s = 1_700_000_000 + 0.5 * np.arange(n_probes) + rtt_ms / 1000

    lines = ["PING db2.example.net (10.0.0.2) 56(84) bytes of data."]
    host = "64 bytes from db2.example.net (10.0.0.2)"
    for i in range(n_probes):  # generation only: the timed parse has no per-line loop
        if lost[i]:
            continue
        seq = (i + 1) % 65536
        stamp = f"[{epoch_s[i]:.6f}]"
        if unreachable[i]:
            lines.append(f"{stamp} From 10.0.0.1 icmp_seq={seq} Destination Host Unreachable")
            continue
        reply = f"{stamp} {host}: icmp_seq={seq} ttl=63 time={_iputils_time(rtt_ms[i])} ms"
        lines.append(reply)
        if duplicated[i]:
            lines.append(reply + " (DUP!)")
    received = int((~lost & ~unreachable).sum())
    lines += [
        "",
        "--- db2.example.net ping statistics ---",
        f"{n_probes} packets transmitted, {received} received, "
        f"+{int((duplicated & ~lost & ~unreachable).sum())} duplicates, "
        f"+{int(unreachable.sum())} errors, "
        f"{100 * (n_probes - received) / n_probes:g}% packet loss, time {n_probes * 500}ms",
    ]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return {"transmitted": n_probes, "received": received}


def _iputils_time(rtt_ms: float) -> str:
    """iputils' adaptive precision: 3 decimals < 1 ms, 2 < 10 ms, 1 < 100 ms, else none."""
    if rtt_ms >= 100:
        return f"{rtt_ms:.0f}"
    return f"{rtt_ms:.1f}" if rtt_ms >= 10 else f"{rtt_ms:.2f}"


def run(n_lines: int = 1_000_000, repeats: int = 5) -> dict[str, float]:
    """Time ``parse_file`` on a generated log of ``n_lines`` replies.

    Returns
    -------
    dict
        ``n_lines``, ``file_bytes``, ``median_s`` [s], ``min_s`` [s], ``cpu_median_s`` [s]
        (the process's CPU time: steadier than the wall time on a shared host),
        ``lines_per_s``.
    """
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ping.txt"
        truth = write_log(path, n_lines)
        times_s, cpu_s = [], []
        for _ in range(repeats):
            start, start_cpu = time.perf_counter(), time.process_time()
            parsed = parse_file(path, "ping")
            times_s.append(time.perf_counter() - start)
            cpu_s.append(time.process_time() - start_cpu)
        assert parsed.transmitted == truth["transmitted"]
        assert parsed.received == truth["received"]
        median_s = statistics.median(times_s)
        return {
            "n_lines": float(n_lines),
            "file_bytes": float(path.stat().st_size),
            "median_s": median_s,
            "min_s": min(times_s),
            "cpu_median_s": statistics.median(cpu_s),
            "lines_per_s": n_lines / median_s,
        }


def main() -> None:
    n_lines = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    result = run(n_lines)
    print(
        f"parse_file(ping): {result['n_lines']:,.0f} replies, "
        f"{result['file_bytes'] / 2**20:.1f} MiB: median {result['median_s']:.3f} s "
        f"(best {result['min_s']:.3f} s, CPU {result['cpu_median_s']:.3f} s, "
        f"{result['lines_per_s'] / 1e6:.2f} M lines/s)"
    )


if __name__ == "__main__":
    main()
