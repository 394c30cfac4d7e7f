"""advisor: can this Galera cluster span these sites, or must each site run its own?

The public API, imported lazily so that ``import advisor`` (and the CLI's ``--help``) stays
fast::

    from advisor import load_topology, recommend
    result = recommend(load_topology("topology.yaml"))
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = [
    "AdvisorError",
    "Limits",
    "LoadedTopology",
    "Recommendation",
    "RttDistribution",
    "Topology",
    "load_topology",
    "parse_topology",
    "recommend",
]

_HOMES = {
    "AdvisorError": "advisor.errors",
    "Limits": "advisor.loading",
    "LoadedTopology": "advisor.loading",
    "load_topology": "advisor.loading",
    "parse_topology": "advisor.loading",
    "Recommendation": "advisor.result",
    "RttDistribution": "advisor.rtt",
    "Topology": "advisor.topology",
    "recommend": "advisor.recommend",
}

if TYPE_CHECKING:
    from advisor.errors import AdvisorError
    from advisor.loading import Limits, LoadedTopology, load_topology, parse_topology
    from advisor.recommend import recommend
    from advisor.result import Recommendation
    from advisor.rtt import RttDistribution
    from advisor.topology import Topology


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'advisor' has no attribute {name!r}")
