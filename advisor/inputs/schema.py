"""The JSON Schema of topology.yaml, for editors (yaml-language-server) and CI checks.

Generated from the pydantic models, then adjusted where the YAML is more lenient than the
models' shape: a percentiles or rate mapping may be a single number, read as the peak.
"""

from __future__ import annotations

__all__ = ["topology_schema", "topology_schema_json"]

import json
from typing import Any

from advisor.inputs.topology import Topology

_NUMBER_OR = ("Percentiles", "Rate")


def topology_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a topology file."""
    schema = Topology.model_json_schema()
    schema = _allow_numbers(schema)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "advisor topology.yaml (format version 1)",
        "description": "Sites, links with their measurements, workload and Galera settings; "
        "see FORMAT.md.",
        **{k: v for k, v in schema.items() if k != "title"},
    }


def topology_schema_json() -> str:
    return json.dumps(topology_schema(), indent=2, sort_keys=False)


def _allow_numbers(node: Any) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref", "")
        if len(node) == 1 and any(ref == f"#/$defs/{name}" for name in _NUMBER_OR):
            return {"anyOf": [{"type": "number", "minimum": 0}, node]}
        return {k: _allow_numbers(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_allow_numbers(v) for v in node]
    return node
