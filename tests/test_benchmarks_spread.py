"""The fidelity table run again with the lab's links as ping measured them
(lab-runs.yaml emulator-links): how a link is built inside and outside that context, and the
section that sets the two inputs side by side."""

from __future__ import annotations

import pytest

from benchmarks import cases, fidelity
from benchmarks.cases import LAB_LATENCY, Row


def _n1_n3(topology: dict[str, object]) -> dict[str, object]:
    links = topology["links"]
    assert isinstance(links, list)
    link = next(link for link in links if link["sites"] == ["n1", "n3"])
    measurement = link["measurements"][0]
    assert isinstance(measurement, dict)
    return measurement


def test_a_lab_link_is_its_set_round_trip_outside_the_context() -> None:
    ping = _n1_n3(cases._cluster(cases._equal(20.0)))
    assert ping == {"method": "icmp", "samples_ms": [20.0]}


@pytest.mark.parametrize(
    ("rtt_ms", "p50_ms", "p99_ms"),
    [
        # 2 ms: the idle pings at 2 ms, +0.04 at the median and +0.14 at p99.
        (2.0, 2.04, 2.14),
        # 7 ms is nearer 10 than 2 in log scale (log 10/7 = 0.36, log 7/2 = 1.25): +0.1, +0.4.
        (7.0, 7.1, 7.4),
        # 100 ms takes 40's spread (ping's three digits hide it at 100): +0.1, +0.8.
        (100.0, 100.1, 100.8),
        # No delay set: the emulator's own path, 0.033 ms at the median.
        (0.0, 0.033, 0.128),
    ],
)
def test_inside_the_context_a_link_carries_the_measured_spread(
    rtt_ms: float, p50_ms: float, p99_ms: float
) -> None:
    with cases.measured_link_spread():
        ping = _n1_n3(cases._cluster(cases._equal(rtt_ms)))
    percentiles = ping["percentiles_ms"]
    assert isinstance(percentiles, dict)
    assert percentiles["p50"] == pytest.approx(p50_ms)
    assert percentiles["p99"] == pytest.approx(p99_ms)
    assert list(percentiles.values()) == sorted(percentiles.values())
    # and the set value again once the context is left
    assert "samples_ms" in _n1_n3(cases._cluster(cases._equal(rtt_ms)))


def _row(quantity: str, predicted: float, *, held_out: bool = False) -> Row:
    return Row("lab x", quantity, "ms", LAB_LATENCY, predicted, 100.0, held_out=held_out)


def test_the_section_lists_the_rows_whose_verdict_changes() -> None:
    point = [_row("a", 92.0), _row("b", 100.0), _row("c", 110.0, held_out=True)]
    spread = [_row("a", 95.0), _row("b", 75.0), _row("c", 111.0, held_out=True)]
    text = fidelity.spread_markdown(point, spread)
    # a: -8 % then -5 %, within both times; b: 0 % then -25 %, a new miss; c: within both.
    assert "| lab x | b | +0.0% | -25.0% | no |" in text
    assert "| lab x | a |" not in text and "| lab x | c |" not in text
    assert "| set round trip (the table) | 2 of 2 | 4.0% | 1 of 1 | 10.0% |" in text
    assert "| measured spread | 1 of 2 | 15.0% | 1 of 1 | 11.0% |" in text


def test_no_change_says_so() -> None:
    rows = [_row("a", 100.0), _row("c", 100.0, held_out=True)]
    assert fidelity.spread_markdown(rows, rows).rstrip().endswith("None.")
