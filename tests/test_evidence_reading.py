"""Measurement files: the first bad file in link order is the one reported (one read once
however many links name it: tests/test_engine_bounds.py)."""

from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
import yaml

from advisor.engine import evidence
from advisor.errors import AdvisorError
from advisor.inputs.loading import load_topology

SITES = {"a": (48.85, 2.35), "b": (50.11, 8.68), "c": (51.51, -0.13), "d": (52.37, 4.9)}
SITES |= {"e": (40.42, -3.7)}


def _topology(folder: Path, bad: tuple[int, ...] = ()) -> Path:
    rng = np.random.default_rng(5)
    links = []
    for number, (a, b) in enumerate(combinations(SITES, 2)):
        path = folder / f"{a}-{b}.txt"
        if number in bad:
            path.write_text("12.5\nnot a number\n", encoding="utf-8")
        else:
            rtt = 5.0 + number + rng.gamma(2.0, 0.1, 300)
            path.write_text("".join(f"{v:.3f}\n" for v in rtt), encoding="utf-8")
        links.append(
            {
                "sites": [a, b],
                "measurements": [{"method": "icmp", "file": path.name, "format": "samples"}],
            }
        )
    sites = [
        {"name": n, "location": {"lat": lat, "lon": lon}, "nodes": 3}
        for n, (lat, lon) in SITES.items()
    ]
    path = folder / "topology.yaml"
    text = yaml.safe_dump({"version": 1, "name": "t", "sites": sites, "links": links})
    path.write_text(text, encoding="utf-8")
    return path


def test_the_first_bad_file_in_link_order_is_reported(tmp_path: Path) -> None:
    loaded = load_topology(_topology(tmp_path, bad=(3, 7)))
    with pytest.raises(AdvisorError) as error:
        evidence.gather_links(loaded)
    assert "a-e.txt" in str(error.value)  # links[3] is a-e; links[7] (b-e) is bad too
