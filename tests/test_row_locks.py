"""Row locks between one node's clients (advisor.model.row_locks) and their cost in the
closed loop (advisor.model.pipeline.closed_loop with row_writes)."""

from collections import deque

import numpy as np
import pytest

from advisor.model import pipeline
from advisor.model.row_locks import RowLocks, RowWrites


def _locks(rows_per_commit=1, table_rows=1, **kw):
    return RowLocks(RowWrites(rows_per_commit, table_rows, **kw), np.random.default_rng(1))


def test_a_held_row_queues_the_next_client_until_the_commit_is_done():
    locks = _locks()  # one row: every commit writes it
    assert locks.request(0) is True
    assert locks.request(1) is False and locks.request(2) is False
    locks.release(0)
    assert locks.granted == [1]  # first come, first served
    assert locks.holder == {0: 1} and locks.waiting_on == {2: 0}


def test_a_cycle_of_waits_is_a_deadlock_and_the_requester_draws_again():
    locks = _locks(rows_per_commit=1, table_rows=4)
    # Client 0 holds row 0 and waits for row 1; client 1 holds row 1 and asks for row 0.
    locks.holder, locks.held = {0: 0, 1: 1}, {0: [0], 1: [1]}
    locks.wanted, locks.waiters, locks.waiting_on = {0: [1], 1: [0]}, {1: deque([0])}, {0: 1}
    locks.proceed(1)
    assert locks.deadlocks == 1
    assert locks.granted == [0] and locks.holder[1] == 0  # the victim's row went to 0
    new_row = (locks.held[1] or [locks.waiting_on.get(1)])[0]
    assert locks.holder[new_row] in (0, 1)  # the victim holds its new row, or waits for 0's


def test_draws_respect_the_hot_set_share():
    spec = RowWrites(rows_per_commit=1, table_rows=40_000, hot_rows=400, hot_share=0.75)
    locks = RowLocks(spec, np.random.default_rng(7))
    rows = np.array([locks._draw()[0] for _ in range(20_000)])
    assert np.mean(rows < 400) == pytest.approx(0.75, abs=0.01)
    assert rows.max() < 40_000


@pytest.mark.parametrize(
    "args",
    [(0, 10), (11, 10), (3, 10, 2, 0.5), (3, 10, 8, 0.5), (1, 10, 5, 0.0)],
)
def test_impossible_row_sets_are_refused(args):
    with pytest.raises(ValueError):
        RowWrites(*args)


def _sysbench_like(clients, rtt_ms, row_writes):
    # The lab's send path at RTT rtt_ms (a lone commit one path of 1.5 RTT plus 1 ms).
    return pipeline.closed_loop(
        clients, 4.0, 1, [1.5 * rtt_ms], [rtt_ms], [1], user_window=2, send_window=4,
        writesets_per_message=19.0, local_commit_ms=1.0, row_writes=row_writes,
    )  # fmt: skip


def test_rows_nobody_shares_cost_nothing():
    # One client: no one to wait for, so the same run as without row writes.
    alone = _sysbench_like(1, 20.0, RowWrites(3, 40_000, hot_rows=3, hot_share=0.99))
    assert alone.commits_per_s == _sysbench_like(1, 20.0, None).commits_per_s


def test_clients_of_one_row_commit_one_at_a_time():
    # Two clients writing the same row: each commit waits for the other's, so the row
    # commits once per commit (31 ms: one path of 30 ms and 1 ms of local work), whatever
    # the window would allow: 1000 / 31 = 32.3 commits/s, and each transaction takes about
    # two commits (its wait and its own).
    run = _sysbench_like(2, 20.0, RowWrites(1, 1))
    assert run.commits_per_s == pytest.approx(1000 / 31.0, rel=0.02)
    assert np.median(run.txn_ms) == pytest.approx(2 * 31.0, rel=0.1)


def test_a_hot_set_adds_a_tail_of_whole_commits_and_costs_throughput():
    # sysbench's default ids (75 % of writes on 303 of 40,000 rows, 3 rows a commit): at 16
    # clients and RTT 20 the lab saw 348 tps and a p95 of 80 ms (two commits) against 392
    # tps and 43 ms with uniform ids (lab-runs.yaml sysbench-uniform-vs-special).
    hot = RowWrites(3, 40_000, hot_rows=303, hot_share=0.75)
    uniform = _sysbench_like(16, 20.0, RowWrites(3, 40_000))
    skewed = _sysbench_like(16, 20.0, hot)
    # Uniform ids almost never meet: their p95 is the window's (a lone transaction of 35 ms
    # plus a wait for a slot); the hot set's adds most of a commit (31 ms) of lock waits.
    assert np.percentile(uniform.txn_ms, 95) <= 35.0 + 20.0
    assert np.percentile(skewed.txn_ms, 95) >= np.percentile(uniform.txn_ms, 95) + 0.5 * 31.0
    assert skewed.commits_per_s < 0.95 * uniform.commits_per_s
    assert skewed.commits_per_s == pytest.approx(348.0, rel=0.2)


# -- through the product ---------------------------------------------------------------------

LAB = """\
name: lab-sysbench
requirements: {survive: node}
sites:
  - {name: n1, nodes: 1, writes: true}
  - {name: n2, nodes: 1, writes: false}
  - {name: n3, nodes: 1, writes: false}
links:
  - {sites: [n1, n2], measurements: [{method: icmp, samples_ms: [20]}]}
  - {sites: [n1, n3], measurements: [{method: icmp, samples_ms: [20]}]}
  - {sites: [n2, n3], measurements: [{method: icmp, samples_ms: [20]}]}
galera: {provider_options: {gmcast.segment: 0}}
workload:
  writeset_bytes: 1650
  clients:
    concurrency: 16
    baseline_txn_latency_ms: 4.0
ROWS"""

SYSBENCH_SPECIAL = (
    "    row_writes: {rows_per_commit: 3, table_rows: 40000, hot_rows: 303, hot_share: 0.75}\n"
)


def _throughput(rows: str):
    from advisor.inputs.loading import parse_topology
    from advisor.recommendation import recommend

    result = recommend(parse_topology(LAB.replace("ROWS", rows)))
    return next(o for o in result.options if o.architecture == "single_cluster").throughput


def test_sysbench_hot_ids_cost_what_the_lab_measured():
    # lab-runs.yaml sysbench-uniform-vs-special, 16 threads at RTT 20: 391.9 tps and a p95 of
    # 43.4 ms with uniform ids; 348.1 and 80.0 with sysbench's default ids. Without row_writes
    # the product predicts the uniform run; with the hot set, the special one.
    plain, hot = _throughput(""), _throughput(SYSBENCH_SPECIAL)
    assert plain.commits_per_s == pytest.approx(391.9, rel=0.1)
    assert plain.txn_latency_ms["p95"] == pytest.approx(43.4, rel=0.1)
    assert hot.commits_per_s == pytest.approx(348.1, rel=0.1)
    assert hot.txn_latency_ms["p95"] == pytest.approx(80.0, rel=0.1)
    # Both bind: on average the window's wait (about 7 ms) exceeds the locks' (about 4 ms).
    assert (plain.limited_by, hot.limited_by) == ("send window", "send window")


def test_a_hotter_set_is_limited_by_its_row_locks():
    # 75 % of 3 writes a commit on 100 rows: with about 12 of them locked at any time, most
    # transactions wait for a commit, and the locks, not the window, set the rate.
    hotter = _throughput(SYSBENCH_SPECIAL.replace("hot_rows: 303", "hot_rows: 100"))
    assert hotter.limited_by == "row locks"
    assert hotter.commits_per_s < 0.8 * _throughput(SYSBENCH_SPECIAL).commits_per_s
    assert hotter.txn_latency_ms["p95"] >= 3 * 31.0


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("    row_writes: {rows_per_commit: 3, table_rows: 40000, hot_rows: 400}\n", "together"),
        ("    row_writes: {rows_per_commit: 5, table_rows: 4}\n", "exceeds table_rows"),
        (
            "    row_writes: {rows_per_commit: 3, table_rows: 10, hot_rows: 9, hot_share: 0.5}\n",
            "must hold a commit's rows",
        ),
        ("    row_writes: {rows_per_commit: 3, table_rows: 10, hot_share: 1.5, hot_rows: 4}\n", ""),
    ],
)
def test_impossible_row_writes_name_the_key(rows, message):
    from advisor.errors import AdvisorError
    from advisor.inputs.loading import parse_topology

    with pytest.raises(AdvisorError) as error:
        parse_topology(LAB.replace("ROWS", rows))
    text = str(error.value)
    assert "workload.clients.row_writes" in text and message in text
    assert "\n" not in text


# -- sysbench's special ids --------------------------------------------------------------------


def test_sysbench_special_ids_are_three_quarters_of_the_special_range():
    from advisor.model.row_locks import sysbench_special

    # sb_rand_special(1, 10000): the uniform branch spans 0.75 x (9,999 x 1 % + 1) = 75.74
    # ids a table; four tables hold 302.97 of them, not the 400 that "1 %" reads as.
    spec = sysbench_special(tables=4, table_size=10_000)
    assert (spec.rows_per_commit, spec.table_rows, spec.hot_rows) == (3, 40_000, 303)
    assert spec.hot_share == 0.75
    # --rand-spec-pct=2 --rand-spec-res=50, one table of 1,000: 0.5 x (999 x 2 % + 1) = 10.49.
    other = sysbench_special(tables=1, table_size=1_000, spec_pct=2, spec_res=50)
    assert (other.hot_rows, other.hot_share) == (10, 0.5)


def test_sysbench_special_ids_match_the_draws_recorded_on_the_lab_machine():
    import yaml
    from conftest import CALIBRATION

    from advisor.model.row_locks import sysbench_special

    cases = yaml.safe_load((CALIBRATION / "lab-runs.yaml").read_text(encoding="utf-8"))["cases"]
    (draws,) = next(c for c in cases if c["id"] == "sysbench-special-ids")["measured"]
    spec = sysbench_special(tables=1, table_size=10_000)
    low, high = draws["hot_range"]
    # 75 whole ids and two partial ones at the edges: 76 in the product.
    assert draws["full_hot_ids"] <= spec.hot_rows <= high - low + 1
    # The range's share is the special branch's 75 % plus the few bell draws that land there.
    assert spec.hot_share <= draws["hot_range_share"] <= spec.hot_share + 0.01


def test_a_sysbench_workload_is_one_call_of_the_input_model():
    from advisor.inputs.topology import RowWrites as Given

    given = Given.for_sysbench(tables=4, table_size=10_000)
    assert given.model_dump() == {
        "rows_per_commit": 3,
        "table_rows": 40_000,
        "hot_rows": 303,
        "hot_share": 0.75,
    }
    assert Given.for_sysbench(tables=4, table_size=10_000, spec_res=0).hot_rows is None


def test_a_convoy_of_lock_waits_is_simulated_until_its_rate_settles():
    # 64 clients on sysbench's hot set behind one 39 ms commit path: lock waits chain into
    # convoys that come and go, so 4,000 commits leave the rate to the seed; the run left to
    # settle (batch means, pipeline._settled) gives one answer whatever the seed.
    def rates(commits):
        return [
            pipeline.closed_loop(
                64, 3.16, 1, [39.0], [20.0], [1], user_window=2, send_window=4,
                writesets_per_message=19, local_commit_ms=0.84, seed=seed, commits=commits,
                row_writes=RowWrites(3, 40_000, hot_rows=303, hot_share=0.75),
            ).commits_per_s
            for seed in (1, 2, 3, 4)
        ]  # fmt: skip

    def spread(values):
        return (max(values) - min(values)) / np.mean(values)

    assert spread(rates(4000)) > 0.15  # 538 to 704/s
    assert spread(rates(None)) < 0.08  # 657 to 690/s
