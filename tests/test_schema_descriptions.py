"""Every property of the topology's JSON Schema says what it is (an editor shows it on hover),
and FORMAT.md names every key the input accepts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from advisor.inputs.schema import topology_schema

REPO = Path(__file__).resolve().parent.parent


def _properties(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        for name, value in node.get("properties", {}).items():
            found.append((f"{path}.{name}", value))
        for key, value in node.items():
            found += _properties(value, f"{path}/{key}")
    elif isinstance(node, list):
        for value in node:
            found += _properties(value, path)
    return found


def test_every_schema_property_has_a_description() -> None:
    properties = _properties(topology_schema())
    assert len(properties) > 80  # every model's fields, not an empty walk
    bare = [path for path, value in properties if not str(value.get("description", "")).strip()]
    assert bare == [], f"properties without a description (Field(description=...)): {bare}"


def test_the_committed_schema_carries_the_descriptions() -> None:
    committed = json.loads((REPO / "topology.schema.json").read_text(encoding="utf-8"))
    assert committed == topology_schema(), "regenerate: advisor schema > topology.schema.json"
    site = committed["$defs"]["Site"]["properties"]
    assert "pc.weight" in site["weight"]["description"]


def test_format_md_names_every_input_key() -> None:
    """Each property name of the schema appears in FORMAT.md as `name` or `parent.name`."""
    text = (REPO / "FORMAT.md").read_text(encoding="utf-8")
    # a key is named in a code span (`sites[].weight`, `p9999`) or as a key of the YAML
    # example (`  nodes: 3`, `{avg: 400, peak: 1500}`)
    spans = re.findall(r"`([^`\n]+)`", text)
    named = {word for span in spans for word in re.findall(r"\w+", span)}
    named |= set(re.findall(r"^\s*-?\s*(\w+):", text, flags=re.MULTILINE))
    named |= set(re.findall(r"[{,]\s*(\w+):", text))  # flow mappings: {lat: 48.8, lon: 2.3}
    missing = sorted({path.rsplit(".", 1)[1] for path, _ in _properties(topology_schema())} - named)
    assert missing == [], f"keys the input accepts that FORMAT.md never names: {missing}"
