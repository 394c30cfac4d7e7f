"""The input contract: every kind of bad input gives exit 2 and one located line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from advisor.errors import AdvisorError
from advisor.inputs.loading import Limits, TopologyError, load_topology, parse_topology

GOOD = """
    name: t
    sites:
      - name: a
        location: {lat: 48.8566, lon: 2.3522}
      - name: b
        location: {lat: 50.1109, lon: 8.6821}
"""


def error_of(write, text: str, **kw) -> str:
    path = write(text)
    with pytest.raises(AdvisorError) as caught:
        load_topology(path, **kw)
    message = str(caught.value)
    assert "\n" not in message
    return message.replace(str(path), "T")


def test_a_good_file_loads_with_defaults(write):
    loaded = load_topology(write(GOOD))
    topology = loaded.topology
    assert [s.name for s in topology.sites] == ["a", "b"]
    assert topology.sites[0].nodes == 3
    assert topology.requirements.survive == "site"
    assert topology.galera.flavor == "mariadb"
    assert loaded.location("sites", 1).line == 5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: t\nsites: [\n", "T:3:1: YAML syntax error: did not find expected node content"),
        (
            "- 1\n- 2\n",
            "T:1:1: expected a mapping with keys such as name, sites and links at the "
            "top level, got a list",
        ),
        ("", "T: the file is empty; expected a mapping with at least 'name' and 'sites'"),
        (
            "name: t\nsites:\n  - name: a\n    nodes: -2\n",
            "T:4:12: sites[0].nodes: must be >= 0, got -2",
        ),
        (
            "name: t\nsites:\n  - name: a\n    nodes: three\n",
            "T:4:12: sites[0].nodes: expected an integer, got text 'three'",
        ),
        (
            "name: t\nsites:\n  - name: a\n    nodez: 3\n",
            "T:4:5: sites[0].nodez: unknown key 'nodez'; expected one of name, location, nodes, "
            "writes, arbitrator, lan_rtt_ms, weight, local_commit_ms, cpu_limit_cores, "
            "cpu_ms_per_writeset, cpu_ms_per_message, cpu_period_ms, cpu_slice_ms",
        ),
        (
            "name: t\nsites:\n  - name: a\n    location: {lat: 91, lon: 0}\n",
            "T:4:21: sites[0].location.lat: must be <= 90, got 91",
        ),
        (
            "name: t\nsites:\n  - name: a\nlinks:\n  - sites: [a, b]\n    distance_km: .nan\n",
            "T:6:18: links[0].distance_km: must be a finite number, got nan",
        ),
        (
            "name: t\nsites:\n  - name: a\nlinks:\n  - sites: [a, a]\n    distance_km: .inf\n",
            "T:6:18: links[0].distance_km: must be a finite number, got inf",
        ),
        ("name: t\nversion: 2\nsites:\n  - name: a\n", "T:2:10: version: expected one of 1, got 2"),
        (
            "name: t\nsites:\n  - name: a\n  - name: b\nlinks:\n  - sites: [a, c]\n",
            "T:6:16: links[0].sites[1]: site 'c' is not declared; declared sites: a, b",
        ),
        (
            "name: t\nsites:\n  - name: a\nlinks:\n  - sites: [a, a]\n",
            "T:5:5: links[0]: a link joins two different sites; got 'a' twice",
        ),
        (
            "name: t\nsites:\n  - name: a\n  - name: b\nlinks:\n  - sites: [a, b]\n"
            "    measurements:\n      - method: icmp\n        samples_ms: [1, 2]\n"
            "        percentiles_ms: {p50: 1}\n",
            "T:8:9: links[0].measurements[0]: give exactly one of samples_ms, percentiles_ms or "
            "file; found samples_ms and percentiles_ms",
        ),
        (
            "name: t\nsites:\n  - name: a\n  - name: b\nlinks:\n  - sites: [a, b]\n"
            "    measurements:\n      - method: icmp\n        percentiles_ms: {p50: 5, p99: 3}\n",
            "T:9:25: links[0].measurements[0].percentiles_ms: percentiles must not decrease: "
            "p99 (3) < p50 (5)",
        ),
        (
            "name: t\nsites:\n  - name: a\n  - name: a\n",
            "T:4:11: sites[1].name: site name 'a' is declared twice",
        ),
        (
            "name: t\nname: u\nsites:\n  - name: a\n",
            "T:2:1: duplicate key 'name' (first given on line 1)",
        ),
        (
            "name: t\nsites:\n  - name: a\ngalera:\n  provider_options:\n    evs.send_windw: 512\n",
            "T:6:21: galera.provider_options.evs.send_windw: unknown provider option "
            "'evs.send_windw'; did you mean 'evs.send_window'?",
        ),
        (
            "name: t\nsites:\n  - name: a\ngalera:\n  provider_options:\n"
            "    evs.suspect_timeout: 5 seconds\n",
            "T:6:26: galera.provider_options.evs.suspect_timeout: expected an ISO 8601 duration "
            "such as PT5S or PT1M, got '5 seconds'",
        ),
        (
            "name: t\nsites:\n  - name: a\n    writes: true\n    nodes: 0\n",
            "T:3:5: sites[0]: site 'a' has writes: true but nodes: 0; writes need a Galera node "
            "at the site (set nodes >= 1 or writes: false)",
        ),
        (
            "name: t\nsites:\n  - name: a\nlinks:\n  - sites: [a, b]\n    route_km: 100\n"
            "    distance_km: 400\n",
            "T:5:5: links[0]: route_km (100) is shorter than distance_km (400); a cable cannot "
            "beat the great circle",
        ),
        (
            "name: t\nsites: []\n",
            "T:2:8: sites: list should have at least 1 item after validation, not 0, got []",
        ),
        (
            "name: t\nsites:\n  - name: 'a b'\n",
            "T:3:11: sites[0].name: 'a b' is not allowed here; expected text matching "
            "^[A-Za-z0-9_.-]+$",
        ),
        (
            "name: t\nsites:\n  - name: a\nworkload:\n  hot_rows:\n"
            "    - {name: r, updates_per_s: 0}\n",
            "T:6:32: workload.hot_rows[0].updates_per_s: must be >= 0.001, got 0",
        ),
    ],
)
def test_bad_input_names_file_line_column_and_key(write, text, expected):
    assert error_of(write, text) == expected


def test_every_error_is_listed(write):
    path = write("name: t\nsites:\n  - name: a\n    nodes: -1\n  - name: b\n    nodes: x\n")
    with pytest.raises(TopologyError) as caught:
        load_topology(path)
    assert [str(e).replace(str(path), "T") for e in caught.value.errors] == [
        "T:4:12: sites[0].nodes: must be >= 0, got -1",
        "T:6:12: sites[1].nodes: expected an integer, got text 'x'",
    ]
    assert str(caught.value).endswith("(and 1 more)")


def test_alias_bomb_is_refused(write):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    lines.append("name: t\nsites: [{name: s}]\nbomb: *a8")
    message = error_of(write, "\n".join(lines))
    assert "more than 1,000,000 YAML nodes after alias expansion (an alias bomb?)" in message


def test_self_referencing_alias_and_deep_nesting_are_refused(write):
    assert "nested deeper than 64 levels" in error_of(write, "name: &x [*x]\n")
    deep = "name: t\nx: " + "[" * 100 + "]" * 100 + "\n"
    assert "nested deeper than 64 levels" in error_of(write, deep)


def test_limits_can_be_raised(write):
    path = write(GOOD)
    with pytest.raises(AdvisorError, match="limit is 10 bytes"):
        load_topology(path, Limits(file_bytes=10))
    assert load_topology(path, Limits(file_bytes=10_000)).topology.name == "t"


def test_missing_file_directory_and_device(tmp_path):
    with pytest.raises(AdvisorError, match=r"nope.yaml: topology file not found$"):
        load_topology(tmp_path / "nope.yaml")
    with pytest.raises(AdvisorError, match="topology file is a directory; expected a file"):
        load_topology(tmp_path)
    with pytest.raises(AdvisorError, match="not a regular file"):
        load_topology(Path(os.devnull))


def test_binary_and_non_utf8_files(tmp_path):
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"name: t\x00\x01\x02")
    with pytest.raises(AdvisorError, match="holds binary data"):
        load_topology(binary)
    latin = tmp_path / "l.yaml"
    latin.write_bytes(b"name: t\ndescription: caf\xe9\n")
    with pytest.raises(AdvisorError, match=r"l.yaml:2: topology file is not UTF-8 text"):
        load_topology(latin)


def test_windows_line_endings_and_bom_work(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_bytes(b"\xef\xbb\xbfname: t\r\nsites:\r\n  - name: a\r\n    nodes: 3\r\n")
    assert load_topology(path).topology.sites[0].nodes == 3


def test_single_numbers_are_read_as_peaks():
    loaded = parse_topology(
        "name: t\nsites: [{name: a}]\nworkload:\n  commits_per_s: 2500\n  writeset_bytes: 4096\n"
    )
    workload = loaded.topology.workload
    assert workload.commits_per_s.peak == 2500 and workload.commits_per_s.avg is None
    assert workload.writeset_bytes.given() == {"max": 4096}


def test_measurement_file_resolves_relative_to_the_yaml(write, tmp_path):
    path = write("name: t\nsites: [{name: a}]\n", name="sub/topology.yaml")
    assert load_topology(path).resolve("m/x.txt") == tmp_path / "sub" / "m" / "x.txt"
