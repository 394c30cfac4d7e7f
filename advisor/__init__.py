"""advisor: can this Galera cluster span these sites, or must each site run its own?

The public API, imported lazily so that ``import advisor`` (and the CLI's ``--help``) stays
fast::

    from advisor import load_topology, recommend
    result = recommend(load_topology("topology.yaml"))

The layers, from the bottom up (each imports only from those below it; ARCHITECTURE.md is
the map): :mod:`advisor.errors`, :mod:`advisor.result` and :mod:`advisor.vocabulary`;
:mod:`advisor.model`; :mod:`advisor.measurements`; :mod:`advisor.inputs`;
:mod:`advisor.engine`; :mod:`advisor.rules`; :mod:`advisor.verdict`; :mod:`advisor.analysis`;
:mod:`advisor.recommendation`; then :mod:`advisor.text`, :mod:`advisor.config`,
:mod:`advisor.collect`, :mod:`advisor.sweep`, :mod:`advisor.documents`; :mod:`advisor.cli`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor._lazy import attach

if TYPE_CHECKING:
    from advisor.analysis import Analysis, analyse
    from advisor.errors import AdvisorError
    from advisor.fleet import FleetItem, recommend_many
    from advisor.inputs.loading import Limits, LoadedTopology, load_topology, parse_topology
    from advisor.inputs.topology import Topology
    from advisor.model.rtt import RttDistribution
    from advisor.recommendation import recommend
    from advisor.result import Recommendation

__version__ = "0.1.0"
__all__ = [
    "AdvisorError",
    "Analysis",
    "FleetItem",
    "Limits",
    "LoadedTopology",
    "Recommendation",
    "RttDistribution",
    "Topology",
    "analyse",
    "load_topology",
    "parse_topology",
    "recommend",
    "recommend_many",
]

__getattr__, __dir__ = attach(
    __name__,
    attributes={
        "AdvisorError": "errors",
        "Analysis": "analysis",
        "analyse": "analysis",
        "Limits": "inputs.loading",
        "LoadedTopology": "inputs.loading",
        "load_topology": "inputs.loading",
        "parse_topology": "inputs.loading",
        "Recommendation": "result",
        "RttDistribution": "model.rtt",
        "Topology": "inputs.topology",
        "recommend": "recommendation",
        "FleetItem": "fleet",
        "recommend_many": "fleet",
    },
)
