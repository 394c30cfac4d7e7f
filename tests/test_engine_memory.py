"""glibc keeps the engine's freed memory for reuse (advisor.engine.memory)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GLIBC = hasattr(os, "confstr") and bool(os.confstr("CS_GNU_LIBC_VERSION") or "")

CHURN = """
import resource, sys
import numpy as np
from advisor.engine.memory import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
x = np.ones(20_000)  # a link's 20,000 draws: 160 KB
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(2_000):
    y = np.sort(x * 2.0 + (x * 3.0 + (x * 4.0 + x * 5.0)))  # 5 temporaries of 40 pages
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not GLIBC, reason="the thresholds are glibc's")
def test_temporaries_reuse_memory_instead_of_faulting_pages_in() -> None:
    def faults(mode: str) -> int:
        done = subprocess.run(
            [sys.executable, "-c", CHURN, mode], capture_output=True, text=True, check=True
        )
        return int(done.stdout)

    kept = faults("keep")
    assert kept < 2_000  # 10,000 temporaries of 40 pages: reused, not faulted in again
    assert faults("default") > 50_000  # glibc's defaults: (nearly) every one faulted in


@pytest.mark.skipif(not GLIBC, reason="the thresholds are glibc's")
def test_set_once_per_process() -> None:
    from advisor.engine.memory import keep_freed_memory

    assert keep_freed_memory() is True
    assert keep_freed_memory.cache_info().currsize == 1


LIBRARY_RUN = """
from pathlib import Path
from advisor import recommend
from advisor.engine.memory import keep_freed_memory
recommend(Path("examples/paris-frankfurt/topology.yaml"))
print(keep_freed_memory.cache_info().currsize)
"""


def test_the_library_leaves_the_process_s_allocator_alone() -> None:
    # A script's process is its own: only the advisor command and the fleet's workers set it.
    done = subprocess.run(
        [sys.executable, "-c", LIBRARY_RUN], capture_output=True, text=True, check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )  # fmt: skip
    assert done.stdout.strip() == "0"
