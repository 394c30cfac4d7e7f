"""The vocabularies every layer shares, each defined once: architectures with their wording,
and severities in order.

A leaf like :mod:`advisor.errors`: it imports nothing of advisor, so the output contract
(:mod:`advisor.result`), the engine, the rules and every renderer can read it.
"""

from __future__ import annotations

__all__ = [
    "ARCHITECTURES",
    "SEVERITIES",
    "SWEEP_UNITS",
    "Architecture",
    "ArchitectureWords",
    "ReportFormat",
    "Severity",
    "SweepFormat",
    "SweepVariable",
    "severity_rank",
]

from dataclasses import dataclass
from typing import Literal, get_args

Architecture = Literal["single_cluster", "per_site_clusters", "grouped_clusters"]
Severity = Literal["blocker", "warning", "info"]

#: Most severe first: the order of reports and of ``--fail-on``.
SEVERITIES: tuple[Severity, ...] = get_args(Severity)

ReportFormat = Literal["text", "json", "markdown", "jsonl"]  # jsonl: one object a line
SweepFormat = Literal["text", "json", "csv"]
SweepVariable = Literal["rtt", "distance", "hot-row-rate"]
#: The unit of each quantity a sweep can vary.
SWEEP_UNITS: dict[SweepVariable, str] = {"rtt": "ms", "distance": "km", "hot-row-rate": "1/s"}


@dataclass(frozen=True)
class ArchitectureWords:
    """How an architecture is named: in a verdict, in a document, in a chart, and what it
    means to operate."""

    title: str  # the verdict's summary ("Recommended: <title> (...)")
    phrase: str  # the documents' headings and tables
    short: str  # chart labels
    operations: str  # what running it involves (the report's options table)


ARCHITECTURES: dict[Architecture, ArchitectureWords] = {
    "single_cluster": ArchitectureWords(
        title="one Galera cluster spanning every site",
        phrase="one Galera cluster over all sites",
        short="one cluster",
        operations="one cluster to run; every commit crosses the WAN; quorum spans sites",
    ),
    "per_site_clusters": ArchitectureWords(
        title="a Galera cluster in each site, linked by asynchronous replication with ProxySQL "
        "in front",
        phrase="a Galera cluster per site, linked asynchronously",
        short="per site",
        operations="a cluster per site, asynchronous channels between them, ProxySQL routing "
        "writes to each row's owner site",
    ),
    "grouped_clusters": ArchitectureWords(
        title="Galera clusters shared by nearby sites, linked asynchronously",
        phrase="Galera clusters shared by nearby sites, linked asynchronously",
        short="grouped",
        operations="a cluster per group, asynchronous channels between groups, ProxySQL routing "
        "writes to each row's owner group",
    ),
}


def severity_rank(severity: Severity) -> int:
    """0 for the most severe (``blocker``); for sorting findings."""
    return SEVERITIES.index(severity)
