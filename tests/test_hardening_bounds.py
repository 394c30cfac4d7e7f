"""Issue 14, unbounded work and wrong values: each test names the item it keeps fixed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from advisor.analysis import analyse
from advisor.cli import app
from advisor.errors import AdvisorError
from advisor.inputs.loading import parse_topology
from advisor.sweep.grid import MAX_POINTS, parse_range, sweep

TWO_SITES = """\
name: two
sites:
  - {name: a, location: {lat: 48.85, lon: 2.35}}
  - {name: b, location: {lat: 50.11, lon: 8.68}}
links:
  - {sites: [a, b], measurements: [{method: icmp, samples_ms: [SAMPLES]}]}
workload: {hot_rows: [{name: r, updates_per_s: 10, writer_sites: [a]}]}
"""


def _write(folder: Path, text: str, name: str = "topology.yaml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


# -- sweep --range A:B:N accepted N = 10^8 (a traceback) and ranges to 1e308 -----------------


@pytest.mark.parametrize(
    ("text", "variable", "says"),
    [
        ("1:50:100000000", "rtt", "2 <= N <= 10,000"),
        ("1:50:10001", "rtt", "2 <= N <= 10,000"),
        ("1:50:2.5", "rtt", "2 <= N <= 10,000"),
        ("1:1e308:5", "rtt", "at most at 1e+06 ms"),
        ("1:30000", "distance", "at most at 20037.5 km"),
        ("1:1e8", "hot-row-rate", "at most at 1e+07 1/s"),
    ],
)
def test_sweep_range_points_and_values_are_bounded(text, variable, says):
    with pytest.raises(AdvisorError, match=says.replace("+", r"\+")):
        parse_range(text, variable=variable)


def test_sweep_range_at_its_bounds_is_accepted():
    assert parse_range(f"0:1e6:{MAX_POINTS}", variable="rtt").size == MAX_POINTS


def test_sweep_cli_refuses_a_huge_range_in_one_line(tmp_path):
    path = _write(tmp_path, TWO_SITES.replace("SAMPLES", "10.0"))
    code, out, err = _cli("sweep", str(path), "--vary", "rtt", "--range", "1:1e308:100000000")
    assert code == 2
    assert err.count("\n") == 1 and "--range" in err and out == ""


def test_sweep_api_bounds_the_grid_too():
    analysis = analyse(parse_topology(TWO_SITES.replace("SAMPLES", "10.0")))
    with pytest.raises(AdvisorError, match="1 to 10,000 numbers"):
        sweep(analysis, "rtt", np.ones(MAX_POINTS + 1))
    with pytest.raises(AdvisorError, match=r"must lie in \[0, 1e\+06\] ms"):
        sweep(analysis, "rtt", [1.0, 1e308])


# -- samples_ms: [5e-324] made sweep --format json print Infinity/NaN ------------------------


def _strict(constant: str) -> None:
    raise AssertionError(f"{constant} in JSON output")


def test_a_denormal_rtt_sample_is_refused_with_its_key(tmp_path):
    path = _write(tmp_path, TWO_SITES.replace("SAMPLES", "5e-324"))
    code, out, err = _cli("sweep", str(path), "--vary", "rtt", "--range", "0:50:3", "-f", "json")
    assert code == 2 and out == ""
    assert "links[0].measurements[0].samples_ms[0]: must be 0 or at least 1e-06 ms" in err


def test_a_denormal_rtt_from_a_samples_file_gives_an_error_not_infinity(tmp_path):
    (tmp_path / "s.txt").write_text("5e-324\n5e-324\n")
    text = TWO_SITES.replace("samples_ms: [SAMPLES]", "file: s.txt, format: samples")
    path = _write(tmp_path, text)
    code, out, err = _cli("sweep", str(path), "--vary", "rtt", "--range", "0:50:3", "-f", "json")
    assert code == 2 and out == ""
    assert "below 1 µs" in err


def test_sweep_json_stays_strict_at_the_smallest_accepted_rtt(tmp_path):
    path = _write(tmp_path, TWO_SITES.replace("SAMPLES", "0.001"))
    code, out, _ = _cli("sweep", str(path), "--vary", "rtt", "--range", "0:1e6:5", "-f", "json")
    assert code == 0
    data = json.loads(out, parse_constant=_strict)
    assert data["points"][-1]["value"] == 1e6


def test_a_zero_rtt_between_two_sites_is_not_called_a_single_site(tmp_path):
    path = _write(tmp_path, TWO_SITES.replace("SAMPLES", "0, 0"))
    code, _, err = _cli("sweep", str(path), "--vary", "rtt", "--range", "0:50:3")
    assert code == 2
    assert err == (
        "advisor: the worst inter-site RTT p50 is 0 ms, below 1 µs: too small to scale "
        "(was it measured in seconds or rounded to 0?)\n"
    )


# -- doc on a 500 s round trip with a 0.001/s hot row ("math domain error") ------------------


def test_doc_charts_a_hot_row_bound_that_rounds_to_zero(tmp_path):
    text = TWO_SITES.replace("SAMPLES", "500000").replace(
        "updates_per_s: 10", "updates_per_s: 0.001"
    )
    path = _write(tmp_path, text)
    code, _, err = _cli("doc", str(path), "-o", str(tmp_path / "out"), "--format", "md")
    assert code == 0, err
    assert "0/s (too slow)" in (tmp_path / "out" / "charts" / "hot-row-1.svg").read_text()


# -- output to /dev/full, a non-UTF-8 PYTHONIOENCODING --------------------------------------


def _advisor(*args: str, env: dict[str, str] | None = None, stdout=subprocess.PIPE):
    environment = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "advisor", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=environment,
        timeout=120,
        check=False,
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("output_format", ["text", "json"])
def test_output_to_a_full_device_is_one_line_and_exit_2(tmp_path, output_format):
    path = _write(tmp_path, TWO_SITES.replace("SAMPLES", "10.0"))
    with open("/dev/full", "wb") as full:
        done = _advisor("recommend", "-f", output_format, str(path), stdout=full)
    assert done.returncode == 2
    assert done.stderr == b"advisor: cannot write the output: No space left on device\n"


def test_a_name_the_output_encoding_cannot_spell_is_escaped_not_a_traceback(tmp_path):
    text = TWO_SITES.replace("SAMPLES", "10.0").replace(
        "name: r,", 'name: "caf\u00e9 \u6771\u4eac",'
    )
    path = _write(tmp_path, text)
    done = _advisor("recommend", str(path), env={"PYTHONIOENCODING": "latin-1"})
    assert done.returncode == 0, done.stderr
    assert "caf\u00e9 \\u6771\\u4eac".encode("latin-1") in done.stdout
