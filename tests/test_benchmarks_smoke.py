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
from benchmarks import fidelity, speed
from benchmarks.__main__ import main
from benchmarks.cases import Row, rows


@pytest.fixture(scope="module")
def calibration():
    return rows()


def test_smoke_runs_every_benchmark_and_writes_both_tables(tmp_path, capsys, calibration):
    output = tmp_path / "BENCHMARKS.md"
    assert main(["--smoke", "--output", str(output)]) == 0
    text = output.read_text(encoding="utf-8")
    for heading in ("## Machine", "## Speed", "## Fidelity", "## Reproduce"):
        assert heading in text
    assert re.search(r"- numpy: \d+\.\d+", text)
    speed_rows = [line for line in text.splitlines() if line.startswith("| `")]
    # advisor recommend, recommend() time and RSS, pingparsing, loadtxt, sweep.
    assert len(speed_rows) == 6
    assert "`recommend()`, 4 sites, 6 links x 500 samples" in text
    assert "1,000 points on paris-frankfurt" in text
    fidelity_rows = [
        line
        for line in text.splitlines()
        if line.startswith("| ") and line.count("|") == 8 and "---" not in line
    ]
    assert len(fidelity_rows) == len(calibration) + 1  # with the header
    median = statistics.median(abs(r.error) for r in calibration)
    assert f"**Median absolute error: {median:.1%}** over {len(calibration)} rows" in text
    assert f"fidelity: median absolute error {median:.1%}" in capsys.readouterr().out


def test_smoke_writes_nothing_without_output(tmp_path, monkeypatch):
    written = []
    monkeypatch.setattr(speed, "run", lambda *a, **k: [])
    monkeypatch.setattr("pathlib.Path.write_text", lambda self, *a, **k: written.append(self))
    assert main(["--smoke"]) == 0
    assert written == []


def _row(error, tolerance=0.1, case="c", why=""):
    return Row(case, "q", "ms", 100.0 * (1 + error), 100.0, tolerance, why)


def test_summary_takes_the_median_of_absolute_errors_and_lists_rows_beyond_25_percent():
    calibration = [_row(0.10), _row(-0.20, 0.25), _row(0.30, 0.5), _row(-0.02)]
    summary = fidelity.summarise(calibration)
    assert summary.median_abs_error == pytest.approx(0.15)  # median of 0.02, 0.10, 0.20, 0.30
    assert summary.within_tolerance == 3  # the +10 % row has a 10 % tolerance: inside
    assert summary.off == (calibration[2],)
    assert fidelity.summarise([_row(0.12), _row(-0.5), _row(0.01)]).met
    assert not fidelity.summarise([_row(0.2), _row(-0.3), _row(0.01)]).met


def test_rows_off_by_more_than_25_percent_carry_their_reason_and_fix():
    known = _row(-0.48, 0.6, "field insert-intercontinental", "no RTT was published")
    unknown = _row(0.40, 0.5, "a new case")
    text = fidelity.markdown([known, unknown, _row(0.01)])
    assert "| field insert-intercontinental | q | ms | 52.00 | 100.0 | -48.0% ⚠ | ±60% |" in text
    assert (
        "- **field insert-intercontinental, q** (-48.0%). Why: no RTT was published. "
        "What would fix it: measure the link"
    ) in text
    assert (
        "- **a new case, q** (+40.0%). Why: no reason recorded with the case. "
        "What would fix it: no fix recorded yet: investigate this case."
    ) in text
    assert "**Median absolute error: 40.0%** over 3 rows (target ≤ 15%: **missed**)" in text


def test_every_calibration_row_off_by_more_than_25_percent_has_a_reason_and_a_fix(calibration):
    known = fidelity.fixes()
    for row in fidelity.summarise(calibration).off:
        assert row.why, f"{row.case}: {row.quantity} is off by {row.error:+.0%} with no reason"
        assert row.case in known or row.known_wrong, f"{row.case}: no fix recorded"


def test_every_calibration_case_has_rows(tmp_path, calibration):
    vendored = speed.REPO / "benchmarks" / "calibration"
    assert fidelity.uncovered_cases(calibration, vendored) == []
    (tmp_path / "field-data.yaml").write_text(
        "cases:\n  - id: new-field-case\n  - id: propagation\n"
    )
    assert fidelity.uncovered_cases(calibration, tmp_path) == ["new-field-case"]


def test_figure_met_follows_the_direction_of_its_target():
    assert speed.Figure("k", "b", "m", 1.4, "x", 1.5).met is True
    assert speed.Figure("k", "b", "m", 1.6, "x", 1.5).met is False
    assert speed.Figure("k", "b", "m", 9.0, "x", 10.0, at_most=False).met is False
    assert speed.Figure("k", "b", "m", math.nan, "x", 10.0, at_most=False).met is None
    assert speed.Figure("k", "b", "m", 3.0, "x").met is None


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
