"""The benchmarks still run (``python -m benchmarks --smoke``), and their tables say what they
measured. Timings are not asserted: speed is judged by the full run, recorded in BENCHMARKS.md.
"""

import math
import re
import statistics
import sys

import numpy as np
import pytest

from advisor.inputs.loading import load_topology
from advisor.model import physics
from benchmarks import cases, fidelity, kept, speed
from benchmarks.__main__ import main
from benchmarks.cases import Row, rows


@pytest.fixture(scope="module")
def calibration():
    return rows()


def test_smoke_runs_every_benchmark_and_writes_both_tables(tmp_path, calibration):
    output = tmp_path / "BENCHMARKS.md"
    assert main(["--smoke", "--output", str(output)]) == 0
    text = output.read_text(encoding="utf-8")
    for heading in (
        "## Machine",
        "## Speed",
        "### What a kept speed mechanism buys",
        "## Fidelity",
        "### Out of sample",
        "## Estimates from coordinates",
        "## Reproduce",
    ):
        assert heading in text
    assert re.search(r"- numpy: \d+\.\d+", text)
    speed_rows = [line for line in text.splitlines() if line.startswith("| `")]
    # The guards (advisor recommend, recommend() time and RSS, the ping log, the fleet), then
    # information (the sample files, the largest topology, sweep): each beside its yardstick.
    assert len(speed_rows) == 8
    guarded = [row for row in speed_rows if "| ≤ " in row]
    assert len(guarded) == 5 and speed_rows[:5] == guarded
    for bound in ("| ≤ 3x |", "| ≤ 3 s |", "| ≤ 600 MB |", "| ≤ 40 s |", "| ≤ 0.5 s |"):
        assert sum(bound in row for row in guarded) == 1, bound
    assert "issue 13" not in text and "pingparsing" not in text
    assert "| yardstick (same run) | ratio | guard |" in text
    kept_rows = text.split("### What a kept speed mechanism buys", 1)[1].split("## Fidelity")[0]
    # header, rule and one row per mechanism measured in the run; then the recorded ones
    measured = 2 + len(kept.KEPT) if kept.KEPT else 0  # header, rule and a row each, if any
    assert kept_rows.count("\n| ") == measured + 2 + len(kept.RECORDED)
    assert "small topologies, `--format jsonl --jobs 2`" in text
    assert "`recommend()`, 4 sites, 6 links x 500 samples" in text
    assert "1,000 points on paris-frankfurt" in text
    fidelity_rows = [
        line
        for line in text.splitlines()
        if line.startswith(("| lab ", "| field ")) and line.endswith(("| within |", "| **miss** |"))
    ]
    # Every row once: in-sample rows in the table, held-out rows in the out-of-sample one.
    assert len(fidelity_rows) == len(calibration)
    in_sample = [r for r in calibration if not r.held_out]
    for source in ("lab", "field"):
        of_source = [r for r in in_sample if r.kind.source == source]
        median = statistics.median(abs(r.error) for r in of_source)
        assert (
            f"**{source.capitalize()} rows: median absolute error {median:.1%}** over "
            f"{len(of_source)} rows"
        ) in text
    held_out = [r for r in calibration if r.held_out]
    assert held_out, "lab-runs.yaml holds runs measured after the model was fixed"
    out_of_sample = text.split("### Out of sample", 1)[1]
    assert all(f"| {r.case} | {r.quantity} |" in out_of_sample for r in held_out)


def test_smoke_prints_the_fidelity_medians(capsys, monkeypatch, calibration):
    monkeypatch.setattr(speed, "run", lambda *a, **k: [])
    monkeypatch.setattr(kept, "measure", lambda *a, **k: [])
    assert main(["--smoke"]) == 0
    out = capsys.readouterr().out
    lab = [abs(r.error) for r in calibration if r.kind.source == "lab" and not r.held_out]
    assert (
        f"fidelity: median absolute error lab {statistics.median(lab):.1%} over {len(lab)} rows"
        in out
    )


def test_smoke_writes_nothing_without_output(tmp_path, monkeypatch):
    written = []
    monkeypatch.setattr(speed, "run", lambda *a, **k: [])
    monkeypatch.setattr(kept, "measure", lambda *a, **k: [])
    monkeypatch.setattr("pathlib.Path.write_text", lambda self, *a, **k: written.append(self))
    assert main(["--smoke"]) == 0
    assert written == []


def _row(error, kind=cases.LAB_LATENCY, case="c", why="", wrong="", held_out=False):
    return Row(case, "q", "ms", kind, 100.0 * (1 + error), 100.0, why, wrong, held_out)


def test_summary_takes_medians_by_source_and_the_bias_by_kind():
    calibration = [
        _row(0.10),
        _row(-0.25, why="w"),
        _row(-0.02),
        _row(0.05, cases.LAB_THROUGHPUT),
        _row(-0.30, cases.FIELD_LATENCY),
        _row(0.20, cases.FIELD_LATENCY),
    ]
    summary = fidelity.summarise(calibration)
    assert summary.median_abs_error["lab"] == pytest.approx(0.075)  # of 0.02, 0.05, 0.10, 0.25
    assert summary.median_abs_error["field"] == pytest.approx(0.25)
    assert summary.count == {"lab": 4, "field": 2}
    assert summary.within_tolerance == 4  # -25 % misses lab's 20 %, -30 % field latency's 25 %
    assert summary.misses == (calibration[1], calibration[4])
    latency = summary.bias[0]
    assert (latency.kind, latency.rows, latency.under, latency.over) == (cases.LAB_LATENCY, 3, 2, 1)
    assert latency.median_error == pytest.approx(-0.02)
    assert [b.kind for b in summary.bias] == [
        cases.LAB_LATENCY,
        cases.LAB_THROUGHPUT,
        cases.FIELD_LATENCY,
    ]
    assert summary.met("lab") and not summary.met("field")


def test_misses_carry_their_reason_and_fix_and_the_medians_their_targets():
    known = _row(-0.48, cases.FIELD_LATENCY, "field insert-intercontinental", wrong="no RTT")
    unknown = _row(0.40, case="a new case")
    text = fidelity.markdown([known, unknown, _row(0.01)])
    assert (
        "| field insert-intercontinental | q | field latency | ms | 52.00 | 100.0 | -48.0% "
        "| ±25% | **miss** |"
    ) in text
    assert "| c | q | lab latency | ms | 101.0 | 100.0 | +1.0% | ±20% | within |" in text
    assert (
        "- **field insert-intercontinental**: q -48.0% (±25%, field latency). Why: no RTT. "
        "What would fix it: measure the link"
    ) in text
    assert (
        "- **a new case**: q +40.0% (±20%, lab latency). Why: no reason recorded: investigate "
        "these rows. What would fix it: no fix recorded yet."
    ) in text
    assert (
        "**Lab rows: median absolute error 20.5%** over 2 rows (target ≤ 10%: **missed**)" in text
    )
    assert "**Field rows: median absolute error 48.0%** over 1 rows" in text
    assert "Latency rows predicted below the measurement: 1 of 3" in text
    assert "No case is marked `role: held_out` yet" in text


def test_held_out_rows_are_summarised_apart():
    held = [_row(0.3, held_out=True), _row(-0.1, held_out=True)]
    text = fidelity.markdown([_row(0.01), *held])
    inside, outside = text.split("### Out of sample")
    assert "over 1 rows" in inside and "+30.0%" not in inside
    assert "**Lab rows: median absolute error 20.0%** over 2 rows" in outside
    assert "| c | q | lab latency | ms | 130.0 | 100.0 | +30.0% | ±20% | **miss** |" in outside


def test_every_calibration_miss_has_a_reason_and_a_fix(calibration):
    known = fidelity.fixes()
    for row in fidelity.summarise(calibration).misses:
        assert row.known_wrong, f"{row.case}: {row.quantity} misses by {row.error:+.0%}, no reason"
        assert row.case in known, f"{row.case}: no fix recorded"


def test_cases_need_rows_or_a_reason_for_none(tmp_path, calibration):
    vendored = speed.REPO / "benchmarks" / "calibration"
    assert fidelity.uncovered_cases(calibration, vendored) == []
    (tmp_path / "field-data.yaml").write_text(
        "cases:\n  - id: new-field-case\n  - id: propagation\n  - id: x\n    role: input\n"
    )
    # propagation has no row, but a note says why (a definition); an input needs neither.
    assert fidelity.uncovered_cases(calibration, tmp_path) == ["new-field-case"]


_HELD_OUT_RUNS = """
cases:
  - id: blob-rtt40
    role: held_out
    commands: "./experiment.py topo --rtt-ms 40; ./experiment.py blob --bytes B --seconds 10"
    measured:
      - {writeset_bytes: 3384, commit_ms: {p50: 61.0, p99: 66.0}}
  - id: sysbench-far
    role: held_out
    commands: >-
      ./experiment.py topo --rtt-ms 2 --far n3 --far-rtt-ms 60;
      ./experiment.py windows --send 512 --user 256;
      ./experiment.py sysbench --threads 4 --seconds 30
    measured:
      - {threads: 4, tps: 60.0, txn_ms: {avg: 66.0, p95: 70.0}}
  - id: jittery
    role: held_out
    commands: "./experiment.py topo --rtt-ms 20 --jitter-ms 2; ./experiment.py blob --bytes B"
    measured: [{writeset_bytes: 3384, commit_ms: {p50: 33.0}}]
"""


def test_held_out_lab_runs_are_rebuilt_from_their_commands(tmp_path):
    (tmp_path / "lab-runs.yaml").write_text(_HELD_OUT_RUNS)
    blob, far, jittery = cases.calibration_cases(tmp_path)["lab-runs.yaml"]
    assert cases.held_out_cases(tmp_path) == ["lab blob-rtt40", "lab sysbench-far", "lab jittery"]
    assert cases.unbuilt_lab_runs(tmp_path) == {"jittery": "topo --jitter-ms is not rebuilt"}
    setup = cases.lab_run_setup(far)
    assert (setup.experiment, setup.rtt_ms, setup.far) == ("sysbench", 2.0, ("n3", 60.0))
    assert setup.windows == {"evs.send_window": 512, "evs.user_send_window": 256}
    rows = cases.lab_run_rows(blob)
    assert [(r.case, r.quantity, r.measured) for r in rows] == [
        ("lab blob-rtt40", "3384 B write set: commit p50", 61.0),
        ("lab blob-rtt40", "3384 B write set: commit p99", 66.0),
    ]
    # A commit at RTT 40 on three equal pairs: about 1.5 RTT and the local work.
    assert 55 < rows[0].predicted < 70
    assert [r.quantity for r in cases.lab_run_rows(far)] == [
        "RTT 2 ms, 4 threads: tps",
        "RTT 2 ms, 4 threads: transaction p95",
    ]
    with pytest.raises(cases.UnbuiltCase):
        cases.lab_run_rows(jittery)


_HOT_ROW_RUNS = """
cases:
  - id: spread
    role: held_out
    commands: >-
      ./experiment.py topo --rtt-ms 20; ./experiment.py hotrow --clients 4 --nodes n1,n2,n3
    measured: [{commits_per_s: 40.0}, {commits_per_s: 42.0}]
  - id: lone
    role: held_out
    commands: "./experiment.py topo --rtt-ms 20; ./experiment.py hotrow --clients 1 --nodes n1"
    measured: [{commits_per_s: 31.0, commit_ms: {p50: 31.6}}]
  - id: elsewhere
    commands: "./experiment.py topo --rtt-ms 20; ./experiment.py hotrow --clients 1 --nodes n9"
    measured: [{commits_per_s: 31.0}]
"""


def test_hot_row_lab_runs_are_rebuilt_against_the_rows_bound(tmp_path):
    (tmp_path / "lab-runs.yaml").write_text(_HOT_ROW_RUNS)
    spread, lone, _ = cases.calibration_cases(tmp_path)["lab-runs.yaml"]
    assert cases.lab_run_setup(spread).writer_nodes == ("n1", "n2", "n3")
    assert cases.unbuilt_lab_runs(tmp_path) == {
        "elsewhere": "hotrow needs --nodes among n1, n2, n3"
    }
    rows = cases.lab_run_rows(spread)
    label = "clients on n1, n2, n3: commits/s (the row's bound, writers in step)"
    assert [r.quantity for r in rows] == [f"run 1: {label}", f"run 2: {label}"]
    # Writers in step on three equal pairs at RTT 20: one round trip and the local work,
    # about 1000 / 21 = 47.6/s; a lone writer waits 1.5 round trips: about 1000 / 31.
    assert rows[0].predicted == pytest.approx(1000 / 21.0, rel=0.02)
    lone_rows = cases.lab_run_rows(lone)
    assert [r.quantity for r in lone_rows] == [
        "clients on n1: commits/s (the row's bound)",
        "commit p50",
    ]
    assert lone_rows[0].predicted == pytest.approx(1000 / 31.0, rel=0.02)
    assert lone_rows[1].predicted == pytest.approx(31.0, rel=0.02)


def test_figure_met_follows_the_direction_of_its_target():
    assert speed.Figure("k", "b", "m", 1.4, "x", 1.5).met is True
    assert speed.Figure("k", "b", "m", 1.6, "x", 1.5).met is False
    assert speed.Figure("k", "b", "m", math.inf, "s", 3.0).met is False  # did not finish
    assert speed.Figure("k", "b", "m", 9.0, "x", 10.0, at_most=False).met is False
    assert speed.Figure("k", "b", "m", math.nan, "x", 10.0, at_most=False).met is None
    assert speed.Figure("k", "b", "m", 3.0, "x").met is None


def test_the_guards_are_issue_20s():
    assert speed.GUARDS == {
        "cli": 3.0,
        "many_sites_time": 3.0,
        "many_sites_rss": 600.0,
        "fleet": 40.0,
        "ping": 0.5,
    }
    assert set(kept.FIGURES) == set(speed.GUARDS)


def _mechanism(name, result):
    def measure(sizes):
        if isinstance(result, Exception):
            raise result
        return result

    return kept.Mechanism(name, "fleet", "s", measure)


def test_kept_mechanisms_are_tabulated_with_the_share_they_buy():
    bought = kept.measure(
        [
            _mechanism("cache A", (20.0, 25.0)),
            _mechanism("cache B", (20.0, 21.0)),
            _mechanism("cache C", ImportError("no module named advisor.cache")),
        ],
        speed.SMOKE,
    )
    assert bought[0].share == pytest.approx(0.25) and bought[0].earns_its_place
    assert bought[1].share == pytest.approx(0.05) and not bought[1].earns_its_place
    text = kept.markdown(bought)
    fleet = "1,000 small topologies, `--jobs 2`: time"
    assert f"| cache A | {fleet} | 20 s | 25 s | +25.0% | yes |" in text
    assert f"| cache B | {fleet} | 20 s | 21 s | +5.0% | **no** (under 10%) |" in text
    assert (
        f"| cache C | {fleet} | - | - | - | not measured: ImportError: no module named "
        "advisor.cache |"
    ) in text
    assert "No mechanism is measured in the run" in kept.markdown([])
    assert kept.markdown([]).count("\n| ") == 2 + len(kept.RECORDED)


def test_many_sites_topology_has_every_pair_measured_above_the_physical_floor(tmp_path):
    path = speed.write_many_sites(tmp_path, sites=4, samples=300)
    loaded = load_topology(path)
    assert [s.name for s in loaded.topology.sites] == ["paris", "frankfurt", "london", "amsterdam"]
    assert len(loaded.topology.links) == 6
    for link in loaded.topology.links:
        a, b = (speed.CITIES[s] for s in link.sites)
        samples = np.loadtxt(loaded.resolve(link.measurements[0].file))
        assert samples.shape == (300,)
        floor_ms = physics.floor_rtt_ms(physics.great_circle_km(*a, *b))
        assert samples.min() >= 1.25 * floor_ms + 0.2 - 0.0005  # printed to 3 decimals


def test_import_cost_is_summed_per_top_level_package():
    cost = speed.import_ms_by_package([sys.executable, "-c", "import email.mime.text"])
    assert cost["email"] > 0
    assert not any("." in name for name in cost)


def test_top_functions_rank_by_own_time():
    def busy():
        total = 0
        for i in range(300_000):
            total += i * i
        return total

    def wrapper():
        return busy()

    (name, total_s, _), *ranked = speed.top_functions(wrapper, count=3)
    assert name == "total"
    assert ranked[0][0].endswith(" busy")
    assert all(own <= cumulative + 1e-9 <= total_s + 2e-9 for _, own, cumulative in ranked)
