"""Work and memory bounded by the input (issue 14): the most sites the engine evaluates, one
read of a measurement file however many entries name it, and the files' total size."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from advisor.engine import evidence
from advisor.engine.evidence import MAX_SITES, gather_links
from advisor.errors import AdvisorError
from advisor.inputs.loading import Limits, load_topology
from advisor.measurements import reading


def _topology(folder: Path, sites: int, links: list[dict[str, object]] | None = None) -> Path:
    data = {
        "version": 1,
        "name": "bounds",
        "requirements": {"commit_latency_ms": {"p99": 50}, "survive": "site"},
        "sites": [
            {"name": f"s{i}", "location": {"lat": -60 + i * 0.1, "lon": i * 0.1}, "nodes": 3}
            for i in range(sites)
        ],
        "links": links or [],
        "workload": {"commits_per_s": {"avg": 100, "peak": 200}},
    }
    path = folder / "topology.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_more_sites_than_the_engine_evaluates_is_one_error_at_the_sites_key(
    tmp_path: Path,
) -> None:
    path = _topology(tmp_path, MAX_SITES + 1)
    line = path.read_text(encoding="utf-8").splitlines().index("- name: s0") + 1  # the list
    with pytest.raises(AdvisorError) as caught:
        gather_links(load_topology(path))
    assert str(caught.value) == (
        f"{path}:{line}:1: sites: {MAX_SITES + 1} sites hold nodes or an "
        f"arbitrator, more than the {MAX_SITES} the engine evaluates in bounded time and "
        "memory (SECURITY.md); split the topology"
    )


def test_the_largest_accepted_topology_is_evaluated(tmp_path: Path) -> None:
    assert len(gather_links(load_topology(_topology(tmp_path, MAX_SITES)))) == 32 * 31 // 2


def _same_file_links(count: int) -> list[dict[str, object]]:
    entry = {"method": "icmp", "file": "rtt.samples.txt", "format": "samples"}
    return [{"sites": ["s0", f"s{i + 1}"], "measurements": [entry]} for i in range(count)]


def test_a_file_named_by_twenty_entries_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rtt.samples.txt").write_text("10.5\n11.0\n12.5\n", encoding="ascii")
    reads: list[Path] = []
    parse = reading.parse_file

    def counted(path: Path, *args: object, **kwargs: object) -> object:
        reads.append(path)
        return parse(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(evidence, "parse_file", counted)
    links = gather_links(load_topology(_topology(tmp_path, 21, _same_file_links(20))))
    assert len(reads) == 1
    measured = [link for link in links if link.rtt_source == "measured"]
    assert len(measured) == 20
    assert {float(link.rtt.quantile(0.5)) for link in measured} == {11.0}
    assert len({id(link.rtt) for link in measured}) == 1  # one distribution, shared


def test_measurement_files_too_large_together_are_refused_before_reading(
    tmp_path: Path,
) -> None:
    for i in range(3):
        (tmp_path / f"m{i}.txt").write_text("10.0\n" * 300, encoding="ascii")  # 1,500 bytes
    links = [
        {
            "sites": ["s0", f"s{i + 1}"],
            "measurements": [{"method": "icmp", "file": f"m{i}.txt", "format": "samples"}],
        }
        for i in range(3)
    ]
    limits = Limits(measurement_bytes=600)  # 5 x 600 = 3,000 bytes in all: the third is over
    loaded = load_topology(_topology(tmp_path, 4, links), limits)
    with pytest.raises(AdvisorError, match=r"links\[2\]\.measurements\[0\]\.file: the measurement"):
        gather_links(loaded)
