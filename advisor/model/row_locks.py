"""Row locks between clients of one node: a transaction waits for a row another holds.

InnoDB locks a row a transaction writes until that transaction commits; under Galera the
commit includes its replication, so a row stays locked for a whole commit path (Callaghan's
law, per row rather than per hot row). Clients of one node that write the same rows queue
for each other's commits: the waits are InnoDB's, before replication, and no certification
conflict arises. A workload whose writes fall on a small hot set (sysbench 1.0's default
``--rand-type=special``: 75 % of the ids in 0.75 % of each table, :func:`sysbench_special`)
loses throughput to them and gains a tail of one or more extra commit paths.

The mechanism, as ``closed_loop`` in :mod:`advisor.model.pipeline` drives it:

- Each commit writes ``rows_per_commit`` distinct rows, drawn with probability ``hot_share``
  uniformly from ``hot_rows`` rows and otherwise uniformly from the other
  ``table_rows - hot_rows``; the writes come at the end of the transaction's SQL (as in
  sysbench's oltp_read_write: point and range selects first, then the updates, the delete and
  the insert), so all are requested at once when the think time ends.
- Rows are locked in order; a row held by another client puts the requester in that row's
  first-come queue, holding what it has (InnoDB's record locks, granted in order of request).
- A request that would close a cycle of waits is a deadlock: the requester is the victim,
  releases its rows and draws its writes again at once (InnoDB rolls one transaction back
  with ER_LOCK_DEADLOCK; sysbench counts it as an ignored error and runs the event again).
- Every row is released when its commit is done (after replication and local commit); the
  first waiter of each row gets it.

Glossary: ``rows_per_commit`` rows one commit writes; ``table_rows`` rows the writes fall on;
``hot_rows`` the hot set inside them; ``hot_share`` the share of writes that land in it.
"""

from __future__ import annotations

__all__ = ["RowLocks", "RowWrites", "sysbench_special"]

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the generator is the caller's; the input layer imports RowWrites alone
    import numpy as np


@dataclass(frozen=True)
class RowWrites:
    """Where a commit's writes fall: ``rows_per_commit`` of ``table_rows`` rows, of which
    ``hot_rows`` take ``hot_share`` of the writes (0 and 0.0: uniform)."""

    rows_per_commit: int
    table_rows: int
    hot_rows: int = 0
    hot_share: float = 0.0

    def __post_init__(self) -> None:
        rows, table, hot = self.rows_per_commit, self.table_rows, self.hot_rows
        if rows < 1:
            raise ValueError(f"rows_per_commit must be at least 1, got {rows}")
        if rows > table:
            raise ValueError(f"rows_per_commit ({rows}) exceeds table_rows ({table})")
        if not 0 <= hot < table or not 0.0 <= self.hot_share < 1.0:
            raise ValueError("hot_rows must be below table_rows and hot_share in [0, 1)")
        if (hot == 0) != (self.hot_share == 0.0):
            raise ValueError("hot_rows and hot_share go together: give both or neither")
        if hot and not rows <= hot <= table - rows:
            raise ValueError(
                f"hot_rows ({hot}) must hold a commit's rows ({rows}) and leave as many "
                f"outside it in table_rows ({table})"
            )


def sysbench_special(
    tables: int, table_size: int, rows_per_commit: int = 3, spec_pct: int = 1, spec_res: int = 75
) -> RowWrites:
    """Where sysbench 1.0's ``--rand-type=special`` puts a transaction's writes.

    sysbench draws each id with ``sb_rand_special(1, table_size)`` (src/sb_rand.c): with
    probability ``1 - spec_res / 100`` a bell about the middle of the table (the mean of 12
    uniform draws), otherwise a uniform draw over ``spec_pct`` % of the table about its middle.
    That uniform draw reuses the random number which chose it, already known to be at least
    ``1 - spec_res / 100``, so it covers only ``spec_res`` % of that range: with the defaults
    (1 and 75) the hot set is 0.75 % of each table, not 1 %. 400,000 draws over 10,000 ids on
    the project's lab machine (benchmarks/calibration/lab-runs.yaml, sysbench-special-ids)
    gave 76 ids (4,975 to 5,051) 75 % of the draws. The bell's draws are taken as uniform
    over the rest of the table: it spreads them over a few thousand ids a table, so this
    understates their few conflicts.

    Parameters
    ----------
    tables : int
        ``--tables``; each statement picks its table uniformly.
    table_size : int
        ``--table-size``, rows in each table.
    rows_per_commit : int
        Rows one transaction writes: 3 for oltp_write_only and oltp_read_write's defaults
        (one index update, one non-index update, a delete and insert of one id).
    spec_pct, spec_res : int
        ``--rand-spec-pct`` and ``--rand-spec-res`` [%].

    Returns
    -------
    RowWrites
        ``tables * table_size`` rows, of which ``spec_res`` % of ``spec_pct`` % (rounded)
        take ``spec_res`` % of the writes.

    Examples
    --------
    >>> sysbench_special(tables=4, table_size=10_000)
    RowWrites(rows_per_commit=3, table_rows=40000, hot_rows=303, hot_share=0.75)
    """
    hot_per_table = (spec_pct / 100.0 * (table_size - 1) + 1.0) * spec_res / 100.0
    return RowWrites(
        rows_per_commit=rows_per_commit,
        table_rows=tables * table_size,
        hot_rows=round(tables * hot_per_table),
        hot_share=spec_res / 100.0,
    )


@dataclass
class RowLocks:
    """The lock table of one node's clients; clients are integers, rows are integers.

    ``request`` and ``proceed`` say whether the client now holds all its rows; a release (a
    commit done, or a deadlock victim's) grants rows to waiters, listed in ``granted`` for the
    caller to ``proceed`` with, in order.
    """

    writes: RowWrites
    rng: np.random.Generator
    holder: dict[int, int] = field(default_factory=dict)  # row -> client holding it
    waiters: dict[int, deque[int]] = field(default_factory=dict)  # row -> queue of clients
    wanted: dict[int, list[int]] = field(default_factory=dict)  # client -> rows still to lock
    held: dict[int, list[int]] = field(default_factory=dict)  # client -> rows it holds
    waiting_on: dict[int, int] = field(default_factory=dict)  # client -> row it waits for
    granted: list[int] = field(default_factory=list)  # clients given a row they waited for
    deadlocks: int = 0
    work: int = 0  # rows drawn and rows examined for locking so far: the work done

    def request(self, client: int) -> bool:
        """The client's commit asks for its rows.

        Parameters
        ----------
        client : int
            The client.

        Returns
        -------
        bool
            True when it holds them all; False when it waits for a row.
        """
        self.wanted[client] = self._draw()
        self.held.setdefault(client, [])
        return self.proceed(client)

    def proceed(self, client: int) -> bool:
        """Lock the client's rows in order until one is held by another.

        Parameters
        ----------
        client : int
            The client.

        Returns
        -------
        bool
            True when it holds all its rows; False when it waits for a row.
        """
        rows = self.wanted[client]
        while rows:
            free = self._free_prefix(client, rows)
            if free:  # the rows before the first one another client holds, in one step
                taken, rows[:free] = rows[:free], []
                self.holder.update(dict.fromkeys(taken, client))
                self.held[client].extend(taken)
                continue
            owner = self.holder[rows[0]]
            if self._waits_for(owner, client):  # a cycle: this request is the victim
                self.deadlocks += 1
                self.release(client)
                rows = self.wanted[client] = self._draw()
                continue
            self.waiters.setdefault(rows[0], deque()).append(client)
            self.waiting_on[client] = rows[0]
            return False
        return True

    def _free_prefix(self, client: int, rows: list[int]) -> int:
        """How many of ``rows``, from the first, no other client holds.

        Found with one set intersection (C code, linear in the rows) rather than a lookup a
        row: a commit of 5,000 rows is then a few set operations, not 5,000 steps of Python.
        """
        self.work += len(rows)
        others = {row for row in self.holder.keys() & set(rows) if self.holder[row] != client}
        if not others:
            return len(rows)
        return next(index for index, row in enumerate(rows) if row in others)

    def release(self, client: int) -> None:
        """The client's rows go to their first waiters.

        Parameters
        ----------
        client : int
            The client whose commit is done, or a deadlock victim.

        Returns
        -------
        None
            The waiters given a row are appended to ``granted``.
        """
        held = self.held.get(client, [])
        self.work += len(held)
        queued = self.waiters.keys() & set(held) if self.waiters else set()
        # Rows nobody waits for are freed in one pass (a commit may hold 10,000 rows).
        deque(map(self.holder.__delitem__, (r for r in held if r not in queued)), maxlen=0)
        for row in (r for r in held if r in queued):  # in the order they were locked
            queue = self.waiters[row]
            nxt = queue.popleft()
            if not queue:
                del self.waiters[row]
            self.holder[row] = nxt
            wanted = self.wanted[nxt]
            self.work += len(wanted)  # the pop below moves the rest of the list
            self.held[nxt].append(wanted.pop(0))
            del self.waiting_on[nxt]
            self.granted.append(nxt)
        self.held[client] = []

    def _waits_for(self, start: int, target: int) -> bool:
        """Whether ``start`` waits, through a chain of holders, for ``target``."""
        seen = set()
        client = start
        while client in self.waiting_on and client not in seen:
            seen.add(client)
            client = self.holder[self.waiting_on[client]]
            if client == target:
                return True
        return False

    def _draw(self) -> list[int]:
        """``rows_per_commit`` distinct rows: hot ones numbered below ``hot_rows``.

        A row at a time from the generator (the stream every run and test was calibrated
        with); a set remembers the rows drawn, so a row drawn twice costs one lookup, not a
        scan of the list (10,000 rows a commit scanned 50 million entries).
        """
        spec = self.writes
        rows: list[int] = []
        seen: set[int] = set()
        while len(rows) < spec.rows_per_commit:
            self.work += 1
            if spec.hot_rows and self.rng.random() < spec.hot_share:
                row = int(self.rng.integers(spec.hot_rows))
            else:
                row = spec.hot_rows + int(self.rng.integers(spec.table_rows - spec.hot_rows))
            if row not in seen:
                seen.add(row)
                rows.append(row)
        return rows
