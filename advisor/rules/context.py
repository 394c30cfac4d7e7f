"""What a rule's predicate may look at: the topology, the evidence per link and the options
the engine evaluated, as plain data.
"""

from __future__ import annotations

__all__ = ["Context"]

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from advisor.engine.evidence import LinkEvidence
from advisor.engine.metrics import ClusterEval, HotRowEval, Option
from advisor.inputs.topology import Topology
from advisor.model.provider_options import OptionValue


@dataclass(frozen=True)
class Context:
    """Everything a predicate may look at."""

    topology: Topology
    links: Sequence[LinkEvidence]
    writeset_p50_bytes: float = 2048.0
    writeset_mean_bytes: float = 2048.0
    writeset_p99_bytes: float = 65536.0
    options: Sequence[Option] = field(default_factory=tuple)  # evaluated architectures
    provider_options: Mapping[str, OptionValue] = field(default_factory=dict)  # effective
    # The recommended architecture with every estimated link at the ``low`` and ``high`` end
    # of its range, and at the ``estimate`` (advisor/analysis.py); empty when no link is
    # estimated or before the verdict. Values: the architecture, with its groups when grouped.
    estimate_ends: Mapping[str, str] = field(default_factory=dict)

    def clusters(self) -> Iterator[tuple[Option, ClusterEval]]:
        """Every (option, cluster) pair under judgement."""
        for option in self.options:
            for cluster in option.clusters:
                yield option, cluster

    def hot_rows(self) -> Iterator[tuple[Option, HotRowEval]]:
        """Every (option, hot row) pair under judgement."""
        for option in self.options:
            for row in option.hot_rows:
                yield option, row
