"""The engine stays easy to change (issue 20): shallow calls, small classes, no object reading
another's private state. Checked on the code itself, so a change that breaks them says so."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import advisor.recommendation as recommendation
from advisor.model import tcp

REPO = Path(__file__).resolve().parent.parent
ENGINE = sorted((REPO / "advisor" / "engine").glob("*.py"))


def _depth_below(frame: FrameType | None, top: Any) -> int:
    """Frames from ``frame`` up to and including the one running ``top``."""
    depth = 0
    while frame is not None:
        depth += 1
        if frame.f_code is top.__code__:
            return depth
        frame = frame.f_back
    raise AssertionError(f"{top.__name__} is not on the stack")


# A topology whose verdict re-runs clusters for its levers (recommendation._commit_at): an
# SLO that 5 MB write sets over 20 ms break at the default windows.
LEVERS = """
name: levers
requirements: {commit_latency_ms: {p99: 30}}
sites: [{name: a}, {name: b}, {name: c}]
links:
  - {sites: [a, b], bandwidth_mbps: 10000, measurements: [{method: icmp, samples_ms: [20, 20.4]}]}
  - {sites: [a, c], bandwidth_mbps: 10000, measurements: [{method: icmp, samples_ms: [20, 20.4]}]}
  - {sites: [b, c], bandwidth_mbps: 10000, measurements: [{method: icmp, samples_ms: [1, 1.1]}]}
workload:
  commits_per_s: {peak: 20}
  writeset_bytes: {p50: 500000, p99: 5000000}
galera: {provider_options: {evs.send_window: 4, evs.user_send_window: 2}}
"""


@pytest.mark.parametrize("topology", ["paris-frankfurt", "levers"])
def test_the_tcp_model_is_at_most_twelve_frames_below_recommend(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, topology: str
) -> None:
    real = tcp.request_response_ms
    depths: list[int] = []

    relevered: list[bool] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        # this frame stands for the TCP model's own
        depths.append(_depth_below(sys._getframe(0), recommendation.recommend))
        frame: FrameType | None = sys._getframe(0)
        while frame is not None and frame.f_code.co_name != "commit_at":
            frame = frame.f_back
        relevered.append(frame is not None)
        return real(*args, **kwargs)

    monkeypatch.setattr(tcp, "request_response_ms", counted)
    path = REPO / "examples" / "paris-frankfurt" / "topology.yaml"
    if topology == "levers":
        path = tmp_path / "levers.yaml"
        path.write_text(LEVERS, encoding="utf-8")
    recommendation.recommend(path)
    if topology == "levers":  # the levers re-ran clusters through the TCP model
        assert any(relevered), "no lever re-ran a cluster"
    assert depths, "the TCP model was never called"
    assert max(depths) <= 12


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: p.name)
def test_no_engine_class_has_more_than_fifteen_methods(path: Path) -> None:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            methods = [b for b in node.body if isinstance(b, ast.FunctionDef)]
            assert len(methods) <= 15, f"{node.name} has {len(methods)} methods"


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: p.name)
def test_the_engine_reads_no_other_objects_private_state(path: Path) -> None:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        owner = node.value.id if isinstance(node.value, ast.Name) else None
        if node.attr.startswith("__") or owner in ("self", "cls"):
            continue
        raise AssertionError(f"{path.name}:{node.lineno} reads {ast.unparse(node)}")
