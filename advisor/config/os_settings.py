"""OS settings for every node, garbd host and replica: socket buffers that fit the
bandwidth-delay product, and TCP slow start after idle.

Sources: Linux ip-sysctl (``tcp_rmem``, ``tcp_wmem``, ``tcp_slow_start_after_idle``):
https://docs.kernel.org/networking/ip-sysctl.html; ``net.core.rmem_max`` and ``wmem_max``:
https://docs.kernel.org/admin-guide/sysctl/net.html; the initial window of 10 segments:
RFC 6928, https://www.rfc-editor.org/rfc/rfc6928.
"""

from __future__ import annotations

__all__ = ["os_plan"]

from typing import TYPE_CHECKING

from advisor.config.model import (
    OsPlan,
    PlanContext,
    Setting,
)

if TYPE_CHECKING:
    from advisor.engine.evidence import LinkEvidence

# Linux defaults (module docstring): net.core.rmem_max/wmem_max 212992, tcp_rmem
# "4096 131072 6291456", tcp_wmem "4096 16384 4194304".
_CORE_MAX_BYTES = 212_992
_TCP_RMEM = (4096, 131_072, 6_291_456)
_TCP_WMEM = (4096, 16_384, 4_194_304)


def os_plan(ctx: PlanContext) -> OsPlan:
    """sysctl settings for every Galera node, garbd host and replica (sources: module doc)."""
    from advisor.model import tcp

    carried = {frozenset(link.sites): link for c in ctx.option.clusters for link in c.links}
    for a in ctx.option.async_links:
        link = ctx.analysis.link(*a.sites)
        carried[frozenset(link.sites)] = link
    exact = [_slow_start(ctx, list(carried.values()))]
    settings: list[Setting] = []
    if carried:
        worst = max(
            carried.values(),
            key=lambda link: link.effective_bandwidth_mbps * float(link.rtt.quantile(0.99)),
        )
        rtt = float(worst.rtt.quantile(0.99))
        bandwidth = worst.effective_bandwidth_mbps
        bdp = float(tcp.bdp_bytes(bandwidth, rtt))
        buffer = int(tcp.socket_buffer_bytes_for(bandwidth, rtt))
        assumed = "" if worst.bandwidth_mbps else " (bandwidth assumed: no bandwidth_mbps given)"
        basis = (
            f"bandwidth-delay product of the worst WAN link {worst.sites[0]}-"
            f"{worst.sites[1]}: {bandwidth:g} Mbit/s x {rtt:.1f} ms (RTT p99) = "
            f"{bdp:,.0f} bytes{assumed}; Linux advertises about half a buffer as window, "
            f"so {buffer:,} bytes"
        )
        settings += [
            Setting(
                name="net.core.rmem_max",
                value=max(buffer, _CORE_MAX_BYTES),
                reason=f"largest receive buffer a program may ask for: {basis}; "
                f"Linux default {_CORE_MAX_BYTES:,}",
            ),
            Setting(
                name="net.core.wmem_max",
                value=max(buffer, _CORE_MAX_BYTES),
                reason=f"the same for send buffers ({buffer:,} bytes); Linux default "
                f"{_CORE_MAX_BYTES:,}",
            ),
        ]
        for name, (low, mid, high), kind in (
            ("net.ipv4.tcp_rmem", _TCP_RMEM, "receive"),
            ("net.ipv4.tcp_wmem", _TCP_WMEM, "send"),
        ):
            settings.append(
                Setting(
                    name=name,
                    value=f"{low} {mid} {max(buffer, high)}",
                    reason=f"autotuned {kind} buffers grow up to the third value: {buffer:,} bytes "
                    f"needed; Linux's defaults ({low} {mid} {high}) where larger",
                )
            )
    return OsPlan(
        file="config/sysctl-advisor.sh",
        settings=settings,
        exact=exact,
        notes=[
            "Run as root on every Galera node, garbd host and ProxySQL host: it writes "
            "/etc/sysctl.d/90-advisor.conf (or the file given as first argument) with, for "
            "each value, the larger of the host's current one and the minimum below, so a "
            "host tuned higher keeps its tuning, then loads it (unless the second argument "
            "is --no-load)."
        ],
    )


def _slow_start(ctx: PlanContext, wan: list[LinkEvidence]) -> Setting:
    from advisor.model import tcp

    why = (
        "Linux restarts a connection idle longer than one RTO from the initial window of "
        "10 segments (RFC 6928; Linux ip-sysctl docs, tcp_slow_start_after_idle); Galera links "
        "idle between bursts of writes"
    )
    if wan:
        worst = max(wan, key=lambda link: float(link.rtt.quantile(0.5)))
        size = ctx.analysis.writeset_bytes.p99_bytes
        rtt = float(worst.rtt.quantile(0.5))
        bandwidth = worst.effective_bandwidth_mbps
        cold = float(tcp.request_response_ms(size, 128, rtt, bandwidth, window="cold"))
        warm = float(tcp.request_response_ms(size, 128, rtt, bandwidth, window="warm"))
        why += (
            f": a {size:,.0f}-byte write set (p99) over {worst.sites[0]}-{worst.sites[1]} "
            f"takes {cold:.1f} ms after idling against {warm:.1f} ms with an open window "
            "(TCP model)"
        )
    return Setting(name="net.ipv4.tcp_slow_start_after_idle", value=0, reason=why)
