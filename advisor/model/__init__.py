"""The model layer: physics, RTT distributions, TCP, Galera, quorum and provider options as
pure functions over numbers (no topology objects).
"""

from typing import TYPE_CHECKING

from advisor._lazy import attach

if TYPE_CHECKING:
    from advisor.model import (
        galera,
        membership,
        physics,
        pipeline,
        provider_options,
        quorum,
        replication,
        rtt,
        tcp,
    )
    from advisor.model.provider_options import effective_options
    from advisor.model.rtt import RttDistribution

__all__ = [
    "RttDistribution",
    "effective_options",
    "galera",
    "membership",
    "physics",
    "pipeline",
    "provider_options",
    "quorum",
    "replication",
    "rtt",
    "tcp",
]

__getattr__, __dir__ = attach(
    __name__,
    [
        "galera",
        "membership",
        "physics",
        "pipeline",
        "provider_options",
        "quorum",
        "replication",
        "rtt",
        "tcp",
    ],
    {
        "RttDistribution": "rtt",
        "effective_options": "provider_options",
    },
)
