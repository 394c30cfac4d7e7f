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

__all__ = ["LinkDraws", "Sampling", "sampling"]

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from advisor.engine.evidence import LinkEvidence
from advisor.engine.memo import Memo
from advisor.engine.workload import WritesetSizes, writeset_size_draws
from advisor.inputs.topology import Topology
from advisor.model import galera, pipeline, tcp
from advisor.model.provider_options import OptionValue
from advisor.model.rtt import RttDistribution, quantiles_at

FloatArray = npt.NDArray[np.float64]
Pair = tuple[FloatArray, FloatArray]

# Inside a site: 10 Gbit/s and a warm window (a LAN cluster's links are busy and short).
_LAN_BANDWIDTH_MBPS = 10_000.0
# A Galera acknowledgement on the wire [bytes] (as engine.evidence.GALERA_ACK_BYTES).
_ACK_BYTES = 128


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
    given_local = topology.workload.local_commit_ms
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
        local_commit_ms=galera.LOCAL_COMMIT_MS if given_local is None else given_local,
    )


class LinkDraws:
    """Draws of (small, write-set) round trips [ms] of every site pair, and inside every
    site, at one :class:`Sampling`; each drawn once per analysis (:class:`Memo`)."""

    def __init__(
        self,
        topology: Topology,
        links: Sequence[LinkEvidence],
        draws: Sampling,
        memo: Memo,
    ) -> None:
        self.links = {frozenset(link.sites): link for link in links}
        self.sampling = draws
        self._lans = {s.name: tuple(s.lan_rtt_ms.given().items()) for s in topology.sites}
        self._memo = memo

    def link(self, a: str, b: str) -> LinkEvidence:
        """The evidence of the pair a-b, in either order."""
        return self.links[frozenset((a, b))]

    def __call__(self, a: str, b: str) -> Pair:
        """Round trips between sites a and b (inside site a when a == b), draw by draw."""
        plan = self.sampling
        if a == b:
            lan = self._lans[a]
            lan_key = ("lan draws", a, lan, plan.draws, plan.anchor_bytes)
            return self._memo.get(lan_key, lambda: self._lan(a, lan))[0]
        link = self.link(a, b)
        key = ("pair draws", link, plan.draws, plan.anchor_bytes)
        return self._memo.get(key, lambda: self._drawn(a, b, self._at_anchors(link)))

    def relay_ms(self, site: str) -> float:
        """The relay hop into ``site``'s segment: the median of its small LAN draws [ms]."""
        plan = self.sampling
        lan = self._lans[site]
        key = ("lan draws", site, lan, plan.draws, plan.anchor_bytes)
        return self._memo.get(key, lambda: self._lan(site, lan))[1]

    def _lan(self, site: str, lan: tuple[tuple[str, float], ...]) -> tuple[Pair, float]:
        small = RttDistribution.from_percentiles(dict(lan))

        def at(size_bytes: float) -> RttDistribution:
            return small.map(
                lambda v: np.asarray(
                    tcp.request_response_ms(
                        size_bytes, _ACK_BYTES, v, _LAN_BANDWIDTH_MBPS, window="warm"
                    )
                )
            )

        low, high = self.sampling.anchor_bytes
        pair = self._drawn(site, site, (small, at(low), at(high)))
        return pair, float(np.median(pair[0]))

    def _at_anchors(self, link: LinkEvidence) -> tuple[RttDistribution, ...]:
        """The link's small round trip and its write-set round trips at the anchor sizes."""
        low, high = self.sampling.anchor_bytes

        def writeset(size_bytes: float) -> RttDistribution:
            key = ("writeset rtt", link, size_bytes)
            return self._memo.get(key, lambda: link.writeset_rtt(size_bytes)[0])

        return (link.rtt, writeset(low), writeset(high))

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
