"""Check inputs only: every topology file and every measurement file it names."""

from __future__ import annotations

__all__ = ["validate_files"]

from collections.abc import Iterable
from pathlib import Path

from advisor.engine.evidence import gather_links
from advisor.errors import AdvisorError
from advisor.inputs.loading import Limits, TopologyError, load_topology


def validate_files(
    paths: Iterable[Path], *, limits: Limits | None = None, measurements_root: Path | None = None
) -> list[AdvisorError]:
    """Every problem found in ``paths``, in order; an empty list means all are valid."""
    problems: list[AdvisorError] = []
    for path in paths:
        try:
            gather_links(
                load_topology(path, limits or Limits(), measurements_root=measurements_root)
            )
        except TopologyError as error:
            problems.extend(error.errors)
        except AdvisorError as error:
            problems.append(error)
    return problems
