"""Hot rows: modifications counted per row and second, and their peak rate over sliding windows.

Callaghan's law (a row changes at most once per commit round trip: Jay Janssen, Percona blog,
2013, https://www.percona.com/blog/2013/05/14/is-synchronous-replication-right-for-your-app/)
makes the few rows modified most often decide whether a cluster may span sites, so what
matters per row is its peak sustained rate, not its total. Row events carry a timestamp in
whole seconds; counts are kept per row and second, and a row's peak rate is the largest count
in any window of ``window_s`` consecutive seconds, divided by ``window_s``.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_WINDOW_S",
    "HotRowRate",
    "RowCounter",
    "peak_window_rates",
    "round_rate",
    "row_name",
    "table_name",
]

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

# Long enough that whole-second timestamps and pacing jitter average out, short enough to
# catch a burst that lasts a few seconds.
DEFAULT_WINDOW_S = 10
# HotRow.name in advisor.inputs.topology allows 256 characters.
_MAX_NAME_CHARS = 256
# Rows kept for the peak computation: the most modified ones by total.
_MAX_CANDIDATES = 5000


@dataclass(frozen=True)
class HotRowRate:
    """One row (or table) and how often it was modified."""

    name: str
    updates_per_s: float
    total: int
    origins: tuple[int, ...] = ()  # server_id of the nodes the changes came from (binlog)


def _value_text(value: object) -> str:
    if isinstance(value, bytes):
        raw = value
        try:
            value = raw.decode("utf-8")
        except UnicodeDecodeError:
            return "0x" + raw.hex()
    text = str(value)
    plain = text.replace("_", "").replace("-", "").isalnum()
    if isinstance(value, str) and not plain:
        return "'" + text.replace("'", "''") + "'"
    return text


def table_name(schema: str, table: str) -> str:
    """``schema.table``, as the row names use it."""
    return f"{schema}.{table}"


def row_name(schema: str, table: str, key: Sequence[tuple[str, object]]) -> str:
    """A row's name for topology.yaml: table, then its primary key columns and values.

    >>> row_name("hot", "t", [("id", 1)])
    'hot.t id=1'
    >>> row_name("shop", "stock", [("sku", "A 1"), ("wh", 3)])
    "shop.stock sku='A 1',wh=3"
    """
    pairs = ",".join(f"{column}={_value_text(value)}" for column, value in key)
    name = f"{table_name(schema, table)} {pairs}"
    return name if len(name) <= _MAX_NAME_CHARS else name[: _MAX_NAME_CHARS - 3] + "..."


def peak_window_rates(counts: ArrayLike, window_s: int) -> NDArray[np.float64]:
    """Peak rate of each row over sliding windows of ``window_s`` seconds [1/s].

    Parameters
    ----------
    counts : array of int, shape (rows, seconds)
        Modifications of each row in each second of the run.
    window_s : int
        Window length [s]; a run shorter than that is one window of its own length.

    Returns
    -------
    array of float, shape (rows,)
        The largest number of modifications in any ``window_s`` consecutive seconds, over
        the window length [1/s].

    >>> peak_window_rates([[0, 10, 10, 10, 0, 0], [5, 5, 5, 5, 5, 5]], 3).tolist()
    [10.0, 5.0]
    """
    c = np.asarray(counts, dtype=float)
    if c.ndim != 2 or c.shape[1] == 0:
        return np.zeros(c.shape[0] if c.ndim == 2 else 0)
    width = max(1, min(int(window_s), c.shape[1]))
    cumulative = np.concatenate([np.zeros((c.shape[0], 1)), np.cumsum(c, axis=1)], axis=1)
    sums = cumulative[:, width:] - cumulative[:, :-width]
    return np.asarray(sums.max(axis=1) / width, dtype=float)


class RowCounter:
    """Modifications per row and second, fed one event at a time by a reader thread.

    Rows are interned to integer ids; (row id, second) pairs are kept in growing integer
    buffers so that the peak computation at the end is vectorised.
    """

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._names: list[str] = []
        self._rows = array("q")
        self._seconds = array("q")
        self._origins = array("q")

    def add(self, name: str, second: int, count: int = 1, origin: int = 0) -> None:
        """Record ``count`` modifications of row ``name`` in the second ``second`` [unix s],
        made on the node whose ``server_id`` is ``origin``."""
        row = self._ids.get(name)
        if row is None:
            row = self._ids[name] = len(self._names)
            self._names.append(name)
        self._rows.extend([row] * count)
        self._seconds.extend([second] * count)
        self._origins.extend([origin] * count)

    @property
    def events(self) -> int:
        """Modifications recorded."""
        return len(self._rows)

    @property
    def distinct(self) -> int:
        """Distinct rows seen."""
        return len(self._names)

    def top(self, n: int, window_s: int = DEFAULT_WINDOW_S) -> list[HotRowRate]:
        """The ``n`` rows with the highest peak rate, highest first (ties by name)."""
        if not self._rows or n <= 0:
            return []
        rows = np.frombuffer(self._rows, dtype=np.int64)
        seconds = np.frombuffer(self._seconds, dtype=np.int64)
        totals = np.bincount(rows, minlength=len(self._names))
        # A row's peak rate is at most its total over one window and at least its total
        # spread over the whole run: only the rows with the largest totals can rank.
        candidates = np.argsort(-totals, kind="stable")[:_MAX_CANDIDATES]
        position = np.full(len(self._names), -1, dtype=np.int64)
        position[candidates] = np.arange(candidates.size)
        keep = position[rows] >= 0
        first = int(seconds.min())
        span = int(seconds.max()) - first + 1
        counts = np.zeros((candidates.size, span))
        np.add.at(counts, (position[rows[keep]], seconds[keep] - first), 1.0)
        peaks = peak_window_rates(counts, window_s)
        names = [self._names[i] for i in candidates]
        order = sorted(range(candidates.size), key=lambda i: (-peaks[i], names[i]))[:n]
        origins = np.frombuffer(self._origins, dtype=np.int64)
        return [
            HotRowRate(
                names[i],
                round_rate(float(peaks[i])),
                int(totals[candidates[i]]),
                tuple(int(o) for o in np.unique(origins[rows == candidates[i]])),
            )
            for i in order
        ]


def round_rate(rate: float) -> float:
    """Three significant digits (whole numbers from 100 up): more would pretend a precision
    that counting does not have."""
    if rate <= 0:
        return 0.0
    digits = 2 - math.floor(math.log10(rate))
    return round(rate, max(0, digits))
