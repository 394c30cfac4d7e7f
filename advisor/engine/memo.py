"""The one cache of an analysis: what several evaluations of one topology ask for again.

An analysis evaluates the same topology several times: the grouping search's screen on a few
draws and the full Monte Carlo, then both ends of the estimates' range, where only the
estimated links move; and the grouping search asks for the same cluster in many partitions.
:class:`Memo` keeps each such value under a key that holds everything it depends on that can
differ within the analysis: the number of draws, the write-set sizes the draws are anchored
at, and the links, by identity (a :class:`~advisor.engine.evidence.LinkEvidence` never
changes; a moved estimate is a new object). What a memo's evaluations cannot differ in, the
topology with its workload and provider options, is the memo's own (``Memo.topology``) and
not repeated in keys. An option evaluated again at the windows its design applies gets a memo
of its own (another topology) that shares the draws' dicts: a pair's draws depend on the
windows only through the bursts they are anchored at, which their keys hold. A memo is never
shared between analyses.
"""

from __future__ import annotations

__all__ = ["ClusterKey", "Memo", "Pair"]

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from advisor.engine.evidence import LinkEvidence
from advisor.engine.metrics import ClusterEval, Throughput
from advisor.inputs.topology import Topology
from advisor.model.rtt import RttDistribution

# Draws of a pair's (small, write-set) round trips [ms].
Pair = tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]
# The p50 write set's burst and the largest burst the draws are anchored at [bytes].
Anchors = tuple[float, float]
# A site's LAN round trips as given: ((percentile key, ms), ...).
Lan = tuple[tuple[str, float], ...]
# A cluster: its data sites, the number of draws, and the links among its sites and the
# arbitrator sites its garbd may go to.
ClusterKey = tuple[tuple[str, ...], int, tuple[LinkEvidence, ...]]


@dataclass
class Memo:
    """Values of one analysis of ``topology``, each computed once."""

    topology: Topology
    # (link, draws, anchors) -> the pair's draws
    pair_draws: dict[tuple[LinkEvidence, int, Anchors], Pair] = field(default_factory=dict)
    # (site, its LAN, draws, anchors) -> the LAN's draws and their small median [ms]
    lan_draws: dict[tuple[str, Lan, int, Anchors], tuple[Pair, float]] = field(default_factory=dict)
    # (link, write-set burst [bytes]) -> the round trip of that burst
    writeset_rtts: dict[tuple[LinkEvidence, float], RttDistribution] = field(default_factory=dict)
    clusters: dict[ClusterKey, ClusterEval] = field(default_factory=dict)
    # (the clients' site, its cluster) -> the clients' closed-loop throughput
    throughputs: dict[tuple[str, ClusterKey], Throughput] = field(default_factory=dict)
