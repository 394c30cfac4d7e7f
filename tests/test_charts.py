"""Inline SVG charts: valid XML, accessible, escaped, deterministic, values where they belong."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from advisor.documents import charts

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def child(root: ET.Element, tag: str) -> ET.Element:
    found = root.find(f"{SVG}{tag}")
    assert found is not None, tag
    return found


def rtt(marks: tuple[charts.Mark, ...] = ()) -> str:
    series = [
        charts.Series("ping <measured>", [0.30103, 1.0, 2.0], [9.8, 10.0, 60.0]),
        charts.Series("write set", [0.30103, 2.0], [10.0, 12.0], dashed=True),
    ]
    return charts.rtt_chart("rtt-1", "Round trip a - b", "p50 9.8 ms", series, list(marks))


def test_nines_and_percentile_names() -> None:
    assert charts.nines([0.5, 0.9, 0.99, 0.999]).round(4).tolist() == [0.301, 1.0, 2.0, 3.0]
    assert [charts._percentile_name(k) for k in (1, 2, 3, 4)] == ["p90", "p99", "p99.9", "p99.99"]


def test_rtt_chart_is_accessible_xml_with_a_line_per_series() -> None:
    root = parse(rtt((charts.Mark("suspect_timeout 30 s", 30_000.0, True),)))
    assert root.get("role") == "img"
    assert root.get("aria-labelledby") == "rtt-1-title rtt-1-desc"
    assert child(root, "title").text == "Round trip a - b"
    assert child(root, "desc").text == "p50 9.8 ms"
    assert len(root.findall(f"{SVG}polyline")) == 2
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "ping <measured>" in texts  # escaped in the markup, intact once parsed
    assert {"p50", "p90", "p99"} <= set(texts)
    assert {"1 ms", "10 ms", "100 ms", "1 s", "10 s", "100 s"} <= set(texts)
    assert "suspect_timeout 30 s" in texts


def test_rtt_chart_places_values_on_log_axes() -> None:
    root = parse(rtt())
    first = child(root, "polyline").get("points", "").split()
    # Legend of 2 series: plot from y = 54 to 320 - 44; x from 64 (p50) to 450 (p99 = 2 nines).
    x0, y0 = (float(v) for v in first[0].split(","))
    x2, y2 = (float(v) for v in first[2].split(","))
    assert (x0, x2) == (64.0, 450.0)
    # Two legend lines: the plot runs from y = 314 (1 ms) up to y = 54 (100 ms), 130 px a decade.
    assert y0 == pytest.approx(314 - 130 * 0.991226, abs=0.05)  # 9.8 ms
    assert y2 == pytest.approx(314 - 130 * 1.778151, abs=0.05)  # 60 ms
    assert root.get("viewBox") == "0 0 640.0 358.0"


def test_rtt_chart_is_deterministic_and_escapes_markup() -> None:
    assert rtt() == rtt()
    assert "ping &lt;measured&gt;" in rtt()
    assert "<measured>" not in rtt()


def test_hot_row_chart_colours_and_words_for_bars_under_the_need() -> None:
    svg = charts.hot_row_chart(
        "hot-row-1",
        'Hot row "x"',
        "desc",
        50.0,
        [charts.Bar("one cluster", 10.0, 8.0), charts.Bar("per site", 1000.0, 700.0)],
    )
    root = parse(svg)
    bars = [r for r in root.iter(f"{SVG}rect") if r.get("fill-opacity") == "0.85"]
    assert [b.get("fill") for b in bars] == ["#c62828", "#2e7d32"]
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "10/s (too slow)" in texts and "1,000/s" in texts and "needs 50/s" in texts
    # Log scale from 1/s to 10,000/s over 150..550 px: 10/s is a quarter, 1000/s three.
    widths = [float(b.get("width", "nan")) for b in bars]
    assert widths == pytest.approx([100.0, 300.0])


def test_topology_chart_boxes_nodes_and_dashed_async_links() -> None:
    boxes = [
        charts.Box(
            "cluster a_b",
            [
                charts.Node("a", "3 nodes"),
                charts.Node("b", "3 nodes"),
                charts.Node("w", "garbd", dashed=True),
            ],
        ),
        charts.Box("cluster c", [charts.Node("c <&>", "3 nodes")]),
    ]
    edges = [
        charts.Edge((0, 0), (0, 1), "1.00 ms"),
        charts.Edge((0, 0), (0, 2), "2.00 ms"),
        charts.Edge((0, 0), (1, 0), "async 9.76 ms", dashed=True),
    ]
    svg = charts.topology_chart("topology", "Topology", "two clusters", boxes, edges)
    root = parse(svg)
    assert len([r for r in root.iter(f"{SVG}rect") if r.get("rx") == "10"]) == 2
    assert len([r for r in root.iter(f"{SVG}rect") if r.get("rx") == "6"]) == 4
    assert len(root.findall(f".//{SVG}path")) == 1  # the curve between a and w
    dashed = [e for e in root.iter() if e.get("stroke-dasharray") == "6 4"]
    assert len(dashed) == 1
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert {"a", "b", "w", "c <&>", "1.00 ms", "2.00 ms", "async 9.76 ms", "garbd"} <= set(texts)
    assert re.search(r'viewBox="0 0 690.0 \d+\.\d"', svg)
