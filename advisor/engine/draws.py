"""The Monte Carlo draws one evaluation shares: each draw's write set, and each site pair's
round trips at that draw's random level.

Each draw carries a write-set size from the workload's distribution (its own random stream),
so commit percentiles are a mixture over sizes; a large write set costs the rounds of
:mod:`advisor.model.pipeline`. A pair's round trips are drawn once per draw at the pair's own
levels (:func:`galera.uniforms`, common random numbers): a slow moment of one link slows every
commit path through it. The write-set round trip of each draw is interpolated between two
sizes (:func:`pipeline.rtt_at_bytes`): the p50 write set's burst and the largest burst, both
costed by the link's evidence (``LinkEvidence.writeset_rtt``).
"""

from __future__ import annotations

__all__ = [
    "LinkDraws",
    "Sampling",
    "sampling",
    "site_local_commit_ms",
    "workload_local_commit_ms",
]

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from advisor.engine.evidence import LinkEvidence, writeset_round_trip
from advisor.engine.memo import Anchors, Lan, Memo, Pair
from advisor.engine.workload import WritesetSizes, writeset_size_draws
from advisor.inputs.topology import Site, Topology
from advisor.model import galera, pipeline
from advisor.model.provider_options import OptionValue
from advisor.model.rtt import RttDistribution, quantiles_at

FloatArray = npt.NDArray[np.float64]

# Inside a site: 10 Gbit/s and a warm window (a LAN cluster's links are busy and short).
_LAN_BANDWIDTH_MBPS = 10_000.0


@dataclass(frozen=True)
class Sampling:
    """What every draw of one evaluation carries, from the workload and provider options."""

    draws: int
    writeset_draw_bytes: FloatArray  # each draw's write-set size [bytes]
    fragments: npt.NDArray[np.int64]  # EVS messages each draw's write set takes
    burst_draw_bytes: FloatArray  # what each draw's first leg carries [bytes]
    anchor_bytes: tuple[float, float]  # the p50 write set's burst, the largest burst [bytes]
    user_window: int  # evs.user_send_window [messages]
    send_window: int  # evs.send_window [messages]
    fragment_bytes: int  # write-set bytes one EVS message carries [bytes]
    writesets_per_message: float  # queued write sets one message carries (mean size)
    local_commit_ms: float  # local certification and commit on the writer [ms]
    # gcs.fc_limit [write sets], gcs.fc_factor [fraction], and whether the limit is not scaled
    # by the members (gcs.fc_single_primary, or gcs.fc_master_slave before Galera 4.10).
    fc_options: tuple[float, float, bool] = (16.0, 1.0, False)


def sampling(
    topology: Topology,
    provider_options: Mapping[str, OptionValue],
    sizes: WritesetSizes,
    draws: int,
) -> Sampling:
    """The draws of one evaluation of ``topology`` (``draws`` of them) under these options."""
    send_window = int(provider_options["evs.send_window"])
    fragment = pipeline.fragment_bytes(int(provider_options["gcs.max_packet_size"]))
    sizes_bytes = writeset_size_draws(topology, draws)
    bursts = pipeline.burst_bytes(sizes_bytes, fragment, send_window)
    p50_burst = float(pipeline.burst_bytes(sizes.p50_bytes, fragment, send_window))
    return Sampling(
        draws=draws,
        writeset_draw_bytes=sizes_bytes,
        fragments=pipeline.fragment_count(sizes_bytes, fragment),
        burst_draw_bytes=bursts,
        anchor_bytes=(p50_burst, float(bursts.max())),
        user_window=int(provider_options["evs.user_send_window"]),
        send_window=send_window,
        fragment_bytes=fragment,
        writesets_per_message=pipeline.writesets_per_message(sizes.mean_bytes, fragment),
        local_commit_ms=workload_local_commit_ms(topology),
        fc_options=(
            float(provider_options["gcs.fc_limit"]),
            float(provider_options["gcs.fc_factor"]),
            bool(provider_options["gcs.fc_single_primary"])
            or bool(provider_options["gcs.fc_master_slave"]),
        ),
    )


def workload_local_commit_ms(topology: Topology) -> float:
    """The local work of one commit or apply [ms] of a site that gives none: the workload's
    ``local_commit_ms``, else :data:`advisor.model.galera.LOCAL_COMMIT_MS`."""
    given = topology.workload.local_commit_ms
    return galera.LOCAL_COMMIT_MS if given is None else given


def site_local_commit_ms(topology: Topology, site: Site) -> float:
    """The local work of one commit or apply on ``site``'s nodes [ms]: its own
    ``local_commit_ms``, else :func:`workload_local_commit_ms`."""
    return (
        workload_local_commit_ms(topology) if site.local_commit_ms is None else site.local_commit_ms
    )


class LinkDraws:
    """Draws of (small, write-set) round trips [ms] of every site pair, and inside every
    site, at one :class:`Sampling`: all drawn when it is made, each once per analysis
    (:class:`~advisor.engine.memo.Memo`)."""

    def __init__(
        self,
        topology: Topology,
        links: Sequence[LinkEvidence],
        plan: Sampling,
        memo: Memo,
    ) -> None:
        self.links = {frozenset(link.sites): link for link in links}
        self.sampling = plan
        self._memo = memo
        key = (plan.draws, plan.anchor_bytes)
        self._lans: dict[str, tuple[Pair, float]] = {}
        for site in topology.sites:
            lan = tuple(site.lan_rtt_ms.given().items())
            self._lans[site.name] = self._lan(site.name, lan, key)
        self._pairs: dict[frozenset[str], Pair] = {}
        for pair, link in self.links.items():
            self._pairs[pair] = self._pair(link, key)

    def link(self, a: str, b: str) -> LinkEvidence:
        """The evidence of the pair a-b, in either order."""
        return self.links[frozenset((a, b))]

    def __call__(self, a: str, b: str) -> Pair:
        """Round trips between sites a and b (inside site a when a == b), draw by draw."""
        return self._lans[a][0] if a == b else self._pairs[frozenset((a, b))]

    def relay_ms(self, site: str) -> float:
        """The relay hop into ``site``'s segment: the median of its small LAN draws [ms]."""
        return self._lans[site][1]

    def _pair(self, link: LinkEvidence, key: tuple[int, Anchors]) -> Pair:
        """The link's draws, from the memo or drawn at its write-set round trips."""
        kept = self._memo.pair_draws.get((link, *key))
        if kept is not None:
            return kept
        dists = [link.rtt]
        for size_bytes in self.sampling.anchor_bytes:  # each burst's round trip, once a link
            sized = self._memo.writeset_rtts.get((link, size_bytes))
            if sized is None:
                sized = link.writeset_rtt(size_bytes)[0]
                self._memo.writeset_rtts[(link, size_bytes)] = sized
            dists.append(sized)
        drawn = self._drawn(*link.sites, (dists[0], dists[1], dists[2]))
        return self._memo.pair_draws.setdefault((link, *key), drawn)

    def _lan(self, site: str, lan: Lan, key: tuple[int, Anchors]) -> tuple[Pair, float]:
        """A site's LAN draws and their small median [ms]: 10 Gbit/s and a warm window
        inside a site (a LAN cluster's links are busy and short)."""
        kept = self._memo.lan_draws.get((site, lan, *key))
        if kept is not None:
            return kept
        small = RttDistribution.from_percentiles(dict(lan))
        low, high = self.sampling.anchor_bytes
        dists = (
            small,
            small.map(writeset_round_trip(low, _LAN_BANDWIDTH_MBPS)),
            small.map(writeset_round_trip(high, _LAN_BANDWIDTH_MBPS)),
        )
        pair = self._drawn(site, site, dists)
        return self._memo.lan_draws.setdefault((site, lan, *key), (pair, float(np.median(pair[0]))))

    def _drawn(self, a: str, b: str, dists: tuple[RttDistribution, ...]) -> Pair:
        """Draws at the pair's levels, as float32; each draw's write-set round trip at its
        burst, between the anchors."""
        plan = self.sampling
        low, high = plan.anchor_bytes
        small, at_low, at_high = dists
        levels = galera.uniforms(a, b, plan.draws)
        drawn = quantiles_at((small, at_low, at_high) if high > low else (small, at_low), levels)
        small_draws, low_draws = (d.astype(np.float32) for d in drawn[:2])
        at_burst = pipeline.rtt_at_bytes(
            plan.burst_draw_bytes,
            low,
            low_draws,
            high,
            drawn[2] if high > low else low_draws,
            small_draws,
        )
        return cast(FloatArray, small_draws), cast(FloatArray, at_burst.astype(np.float32))
