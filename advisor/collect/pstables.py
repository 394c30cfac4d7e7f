"""Fallback when the binary log is off: row changes per table from ``performance_schema``.

``table_io_waits_summary_by_table`` counts row inserts, updates and deletes per table since
the server started (or the table was truncated), including the rows that Galera's appliers
write, so on any member it sees the whole cluster's writes. It cannot tell rows apart: a
table's rate is an upper bound on the rate of its hottest row.
"""

from __future__ import annotations

__all__ = ["TABLE_CHANGES_SQL", "table_changes", "table_peak_rates"]

import math
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from advisor.collect.hotrows import HotRowRate, round_rate
from advisor.collect.status import counter_deltas

# A count is an unsigned 64-bit integer on the server (20 digits); a longer value is not one.
_MAX_NUMBER_CHARS = 40

TABLE_CHANGES_SQL = (
    "SELECT OBJECT_SCHEMA, OBJECT_NAME, COUNT_INSERT + COUNT_UPDATE + COUNT_DELETE "
    "FROM performance_schema.table_io_waits_summary_by_table "
    "WHERE OBJECT_TYPE = 'TABLE' AND OBJECT_SCHEMA NOT IN "
    "('mysql', 'sys', 'performance_schema', 'information_schema')"
)


def table_changes(rows: Sequence[tuple[object, ...]]) -> dict[str, float]:
    """``schema.table`` -> rows changed so far, from the rows of :data:`TABLE_CHANGES_SQL`."""
    changes = {}
    for row in rows:
        if len(row) < 3:
            continue  # not the three columns asked for: nothing to count
        schema, table, count = row[0], row[1], row[2]
        text = str(count or 0)
        try:
            value = float(text) if len(text) <= _MAX_NUMBER_CHARS else math.nan
        except ValueError:
            value = math.nan
        # a count that is not a finite number is unknown for that table in this sample
        changes[f"{schema}.{table}"] = value if math.isfinite(value) else math.nan
    return changes


def table_peak_rates(
    elapsed_s: ArrayLike, uptime_s: ArrayLike, snapshots: Sequence[Mapping[str, float]], top: int
) -> list[HotRowRate]:
    """The ``top`` tables by peak rate of changed rows over one sampling interval [1/s].

    A table missing from a snapshot (created or first touched later) starts at its first
    appearance; a count that goes down (TRUNCATE of the summary, a restart) drops that
    interval, as for any counter.
    """
    names = sorted({name for snapshot in snapshots for name in snapshot})
    if len(snapshots) < 2 or not names:
        return []
    counts = np.array([[snapshot.get(name, np.nan) for name in names] for snapshot in snapshots])
    t = np.asarray(elapsed_s, dtype=float)
    deltas = counter_deltas(t, counts, uptime_s)
    rates = deltas / np.diff(t)[:, np.newaxis]
    valid = ~np.isnan(rates)
    peaks = np.where(valid.any(axis=0), np.nanmax(np.where(valid, rates, -np.inf), axis=0), 0.0)
    totals = np.nansum(deltas, axis=0)
    order = sorted(range(len(names)), key=lambda i: (-peaks[i], names[i]))
    return [
        HotRowRate(f"{names[i]} (whole table)", round_rate(float(peaks[i])), int(totals[i]))
        for i in order[:top]
        if peaks[i] > 0
    ]
