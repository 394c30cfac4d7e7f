"""The one cache of an analysis: what several evaluations of one topology ask for again.

An analysis evaluates the same topology several times: the grouping search's screen on a few
draws and the full Monte Carlo, then both ends of the estimates' range, where only the
estimated links move. Every evaluation asks for the same pairs' draws and the same clusters
many times (the grouping search tries a group in many partitions). :class:`Memo` keeps each
such value under a key that names it and everything it depends on that can differ within the
analysis: the number of draws and the links, by identity (a
:class:`~advisor.engine.evidence.LinkEvidence` never changes, and a moved estimate is a new
object). What cannot differ within one analysis, the topology with its workload and provider
options, is the memo's own (``Memo.topology``), not repeated in keys. A memo is never shared
between analyses.
"""

from __future__ import annotations

__all__ = ["Memo"]

from collections.abc import Callable, Hashable
from typing import TypeVar, cast

from advisor.inputs.topology import Topology

T = TypeVar("T")


class Memo:
    """Values of one analysis of ``topology``, each computed once."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self._values: dict[tuple[Hashable, ...], object] = {}

    def get(self, key: tuple[Hashable, ...], compute: Callable[[], T]) -> T:
        """The value kept under ``key`` (its first item names the kind of value), computed
        by ``compute`` the first time it is asked for."""
        if key not in self._values:
            self._values[key] = compute()
        return cast(T, self._values[key])
