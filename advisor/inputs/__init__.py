"""The input layer: topology.yaml"s models, its loading with line and column positions, and its
JSON Schema.
"""

from typing import TYPE_CHECKING

from advisor._lazy import attach

if TYPE_CHECKING:
    from advisor.inputs import loading, schema, topology
    from advisor.inputs.loading import (
        Limits,
        LoadedTopology,
        TopologyError,
        load_topology,
        parse_topology,
        read_text_file,
    )
    from advisor.inputs.schema import topology_schema_json
    from advisor.inputs.topology import HotRow, Link, Measurement, Site, Topology

__all__ = [
    "HotRow",
    "Limits",
    "Link",
    "LoadedTopology",
    "Measurement",
    "Site",
    "Topology",
    "TopologyError",
    "load_topology",
    "loading",
    "parse_topology",
    "read_text_file",
    "schema",
    "topology",
    "topology_schema_json",
]

__getattr__, __dir__ = attach(
    __name__,
    ["loading", "schema", "topology"],
    {
        "Limits": "loading",
        "LoadedTopology": "loading",
        "TopologyError": "loading",
        "load_topology": "loading",
        "parse_topology": "loading",
        "read_text_file": "loading",
        "topology_schema_json": "schema",
        "Topology": "topology",
        "Site": "topology",
        "Link": "topology",
        "Measurement": "topology",
        "HotRow": "topology",
    },
)
