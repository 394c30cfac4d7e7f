"""A bounded cache of values computed from plain inputs, kept across topologies.

A fleet worker evaluates hundreds of small topologies drawn from the same few sites: the
same pair of sites at the same estimated round trip recurs, and with it the same write-set
round trips and Monte Carlo draws. :class:`ValueCache` keeps such values by a key of plain
values (floats, strings, bytes, tuples) that covers every input of the value, least recently
used first out, within a number of entries and of bytes. What it holds must never change:
callers store immutable objects or read-only arrays.
"""

from __future__ import annotations

__all__ = ["ValueCache"]

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class ValueCache(Generic[V]):
    """Least recently used values by key, at most ``max_entries`` and ``max_bytes``."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def held_bytes(self) -> int:
        """The bytes of the values held, as their callers counted them."""
        return self._bytes

    def get(self, key: Hashable) -> V | None:
        """The value kept for ``key``, now the most recently used, or None."""
        found = self._entries.get(key)
        if found is None:
            return None
        self._entries.move_to_end(key)
        return found[0]

    def put(self, key: Hashable, value: V, size_bytes: int) -> None:
        """Keep ``value`` (``size_bytes`` of memory) for ``key``, dropping the least
        recently used entries beyond the bounds; a value larger than the whole budget is
        not kept."""
        if size_bytes > self.max_bytes:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= old[1]
        self._entries[key] = (value, size_bytes)
        self._bytes += size_bytes
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            _, (_, dropped_bytes) = self._entries.popitem(last=False)
            self._bytes -= dropped_bytes

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0
