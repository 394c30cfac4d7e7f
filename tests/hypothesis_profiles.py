"""Hypothesis profiles for the hostile-input properties: ``ci`` (default) and ``slow``.

Tests decorated with :func:`per_run_seed` (tests/test_properties_bounds.py) draw with a seed
that changes with every run: :data:`SEED`, from ``HYPOTHESIS_SEED`` when set (to replay a
run), else random; conftest.py prints it in the header of the run and the tests add it to
every failure. A CI run then explores new topologies each time, and any failure can be
replayed exactly.

``HYPOTHESIS_PROFILE=slow pytest tests/test_properties.py`` runs ten times the examples with
a fresh random seed each run; the default ``ci`` profile is derandomized, so CI is
reproducible and never flaky (a new seed only runs when someone asks for ``slow``).
Neither profile has a deadline: the engine is not timed in unit tests (benchmarks/ do that).

Tests take their settings from :func:`examples` instead of loading a profile globally, so
other test modules keep hypothesis' defaults.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, seed, settings
from hypothesis.database import InMemoryExampleDatabase

__all__ = ["PROFILE", "SEED", "SLOW_FACTOR", "examples", "per_run_seed"]

SLOW_FACTOR = 10
_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
# Derandomized runs keep no database; the slow run keeps its failures in memory only, never
# in a .hypothesis/ folder of the source tree (print_blob gives the reproduction instead).
settings.register_profile("ci", derandomize=True, database=None, **_COMMON)
settings.register_profile("slow", database=InMemoryExampleDatabase(), print_blob=True, **_COMMON)
# A seed per run (not derandomized), no database: what a failure needs is the seed.
settings.register_profile("per-run", derandomize=False, database=None, print_blob=True, **_COMMON)

SEED = int(os.environ.get("HYPOTHESIS_SEED") or random.SystemRandom().randrange(2**32))

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
if PROFILE not in ("ci", "slow"):
    raise RuntimeError(f"HYPOTHESIS_PROFILE={PROFILE!r}; expected ci or slow")


def examples(ci: int) -> settings:
    """Settings for a test that runs ``ci`` examples in CI, ``SLOW_FACTOR`` times more if slow."""
    count = ci if PROFILE == "ci" else max(ci * SLOW_FACTOR, 1000)
    return settings(settings.get_profile(PROFILE), max_examples=count)


def per_run_seed(ci: int) -> Callable[[Any], Any]:
    """Settings and :data:`SEED` for a test of ``ci`` examples in CI (``SLOW_FACTOR`` times
    more if slow), drawn afresh each run."""
    count = ci if PROFILE == "ci" else max(ci * SLOW_FACTOR, 100)
    chosen = settings(settings.get_profile("per-run"), max_examples=count)

    def decorate(test: Any) -> Any:
        return seed(SEED)(chosen(test))

    return decorate
