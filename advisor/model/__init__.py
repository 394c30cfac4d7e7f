"""The model layer: physics, RTT distributions, TCP, Galera, quorum and provider options as
pure functions over numbers (no topology objects).
"""

from typing import TYPE_CHECKING

from advisor._lazy import attach

if TYPE_CHECKING:
    from advisor.model import galera, physics, provider_options, quorum, rtt, tcp
    from advisor.model.provider_options import effective_options
    from advisor.model.rtt import RttDistribution

__all__ = [
    "RttDistribution",
    "effective_options",
    "galera",
    "physics",
    "provider_options",
    "quorum",
    "rtt",
    "tcp",
]

__getattr__, __dir__ = attach(
    __name__,
    ["galera", "physics", "provider_options", "quorum", "rtt", "tcp"],
    {
        "RttDistribution": "rtt",
        "effective_options": "provider_options",
    },
)
