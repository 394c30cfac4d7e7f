"""Fallback when the binary log is off: row changes per table from ``performance_schema``.

``table_io_waits_summary_by_table`` counts row inserts, updates and deletes per table since
the server started (or the table was truncated), including the rows that Galera's appliers
write, so on any member it sees the whole cluster's writes. It cannot tell rows apart: a
table's rate is an upper bound on the rate of its hottest row.
"""

from __future__ import annotations

__all__ = ["TABLE_CHANGES_SQL", "table_changes", "table_peak_rates"]

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from advisor.collect.hotrows import HotRowRate, round_rate
from advisor.collect.status import counter_deltas

TABLE_CHANGES_SQL = (
    "SELECT OBJECT_SCHEMA, OBJECT_NAME, COUNT_INSERT + COUNT_UPDATE + COUNT_DELETE "
    "FROM performance_schema.table_io_waits_summary_by_table "
    "WHERE OBJECT_TYPE = 'TABLE' AND OBJECT_SCHEMA NOT IN "
    "('mysql', 'sys', 'performance_schema', 'information_schema')"
)


def table_changes(rows: Sequence[tuple[object, ...]]) -> dict[str, float]:
    """``schema.table`` -> rows changed so far, from the rows of :data:`TABLE_CHANGES_SQL`."""
    return {f"{schema}.{table}": float(str(count or 0)) for schema, table, count in rows}


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
