"""The design page printed and its references: titled links, escaped, nothing fetched."""

from __future__ import annotations

import re
from pathlib import Path

from advisor.documents.filters import reference_html, reference_md

GOLDEN = Path(__file__).resolve().parent / "golden"


def test_a_reference_links_its_address_under_the_words_before_it() -> None:
    ref = "Codership docs, Galera Arbitrator: https://galeracluster.com/library/a.html"
    assert str(reference_html(ref)) == (
        '<a href="https://galeracluster.com/library/a.html">Codership docs, Galera Arbitrator</a>'
    )
    assert reference_md(ref) == (
        "[Codership docs, Galera Arbitrator](https://galeracluster.com/library/a.html)"
    )


def test_two_addresses_make_two_links_and_text_without_one_stays_text() -> None:
    ref = "Docs, health checks: https://a.example/x and source (v2.7): https://b.example/y."
    assert str(reference_html(ref)) == (
        '<a href="https://a.example/x">Docs, health checks</a> '
        '<a href="https://b.example/y">and source (v2.7)</a> .'
    )
    assert str(reference_html("advisor/model/physics.py (estimate_parts_ms)")) == (
        "advisor/model/physics.py (estimate_parts_ms)"
    )


def test_a_hostile_reference_is_escaped_and_only_http_links() -> None:
    # a rule pack may come from a user: neither its words nor its address open markup
    ref = '<script>x</script> javascript:alert(1) see: https://e.example/"onclick=a'
    html = str(reference_html(ref))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'href="https://e.example/"' in html and "onclick" not in html.split(">", 1)[0]
    assert "javascript:" not in html.split("href=", 1)[1].split(">", 1)[0]
    md = reference_md("[x](javascript:alert(1)) see: https://e.example/a)b")
    # the user's brackets are escaped; the one link is the http address
    assert re.findall(r"(?<!\\)\]\(([^)]*)\)", md) == ["https://e.example/a"]


def test_the_page_prints_with_breaks_before_sections_and_whole_rows() -> None:
    page = (GOLDEN / "paris-frankfurt" / "design.html").read_text(encoding="utf-8")
    style = page[page.index("@media print") : page.index("</style>")]
    assert "h2 { break-before: page;" in style
    assert "tr, figure, svg, li { break-inside: avoid;" in style
    # the references are links with titles, not bare addresses
    assert '<a href="https://galeracluster.com/' in page
    assert "<li>https://" not in page
