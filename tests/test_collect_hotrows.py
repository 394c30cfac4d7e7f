"""Hot rows: per-row peak rates over sliding windows, names, and the table-level fallback."""

from __future__ import annotations

import pytest

from advisor.collect.hotrows import RowCounter, peak_window_rates, round_rate, row_name
from advisor.collect.pstables import table_changes, table_peak_rates


def test_peak_window_rates_by_hand() -> None:
    counts = [
        [0, 10, 10, 10, 0, 0],  # a 3 s burst: 30 in 3 s
        [5, 5, 5, 5, 5, 5],  # steady
        [0, 0, 0, 0, 0, 9],  # one busy second at the end: 9 in any 3 s window holding it
    ]
    assert peak_window_rates(counts, 3).tolist() == [10.0, 5.0, 3.0]
    assert peak_window_rates(counts, 1).tolist() == [10.0, 5.0, 9.0]


def test_window_longer_than_the_run_uses_the_run() -> None:
    assert peak_window_rates([[4, 4]], 10).tolist() == [4.0]


def test_row_counter_ranks_by_peak_rate_not_total() -> None:
    counter = RowCounter()
    # 'burst' changes 40 times within 2 s; 'steady' 2 per second for 30 s (60 in all).
    for second in range(1000, 1030):
        counter.add("db.t id=2", second, 2, origin=7)
    counter.add("db.t id=1", 1010, 20, origin=2)
    counter.add("db.t id=1", 1011, 20, origin=1)
    counter.add("db.t id=3", 1005)
    top = counter.top(2, window_s=10)
    assert [(row.name, row.updates_per_s, row.total, row.origins) for row in top] == [
        ("db.t id=1", 4.0, 40, (1, 2)),  # 40 in the best 10 s window, from two nodes
        ("db.t id=2", 2.0, 60, (7,)),
    ]
    assert counter.events == 101
    assert counter.distinct == 3


def test_row_counter_empty() -> None:
    assert RowCounter().top(5) == []


def test_steady_rate_is_recovered_exactly_with_whole_second_timestamps() -> None:
    # 40 changes a second for 25 s, as two writers at 20/s each produce.
    counter = RowCounter()
    for second in range(25):
        counter.add("hot.t id=1", 1_700_000_000 + second, 40)
    (row,) = counter.top(1, window_s=10)
    assert row.updates_per_s == 40.0
    assert row.total == 1000


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ([("id", 42)], "accounts id=42"),
        ([("sku", "A-1_b")], "accounts sku=A-1_b"),
        ([("sku", "a b")], "accounts sku='a b'"),
        ([("sku", "it's")], "accounts sku='it''s'"),
        ([("sku", "")], "accounts sku=''"),
        ([("k", b"ab")], "accounts k=ab"),
        ([("k", b"\xff\x00")], "accounts k=0xff00"),
        ([("a", 1), ("b", None)], "accounts a=1,b=None"),
    ],
)
def test_row_names(key: list[tuple[str, object]], name: str) -> None:
    assert row_name("shop", "accounts", key) == "shop." + name


def test_row_names_fit_the_topology_limit() -> None:
    name = row_name("s", "t", [("k", "x" * 1000)])
    assert len(name) == 256
    assert name.endswith("...")


def test_round_rate_keeps_three_significant_digits() -> None:
    assert [round_rate(v) for v in (0.0, 0.012345, 1.2345, 40.04, 1234.5)] == [
        0.0,
        0.0123,
        1.23,
        40.0,
        1234.0,
    ]


def test_table_changes_from_performance_schema_rows() -> None:
    rows = [("hot", "t", 25), ("shop", "stock", 0), ("x", "y", None)]
    assert table_changes(rows) == {"hot.t": 25.0, "shop.stock": 0.0, "x.y": 0.0}


def test_table_peak_rates_per_interval_with_a_reset_and_a_late_table() -> None:
    snapshots = [
        {"hot.t": 100.0},
        {"hot.t": 300.0},  # +200 in 10 s
        {"hot.t": 350.0, "late.t": 0.0},  # +50
        {"hot.t": 10.0, "late.t": 70.0},  # hot.t counter reset: dropped; late.t +70
    ]
    rates = table_peak_rates([0, 10, 20, 30], [1000, 1010, 1020, 1030], snapshots, top=5)
    assert [(r.name, r.updates_per_s, r.total) for r in rates] == [
        ("hot.t (whole table)", 20.0, 250),
        ("late.t (whole table)", 7.0, 70),
    ]


def test_table_peak_rates_leave_out_idle_tables_and_need_two_snapshots() -> None:
    assert table_peak_rates([0], [1], [{"a.b": 1.0}], top=3) == []
    rates = table_peak_rates([0, 10], [1, 11], [{"a.b": 5.0}, {"a.b": 5.0}], top=3)
    assert rates == []
