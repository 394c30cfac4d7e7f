"""Keep freed memory for reuse: the engine's numpy temporaries otherwise cost page faults.

numpy allocates a fresh array for every operation, and the engine's arrays are mostly a
link's 20,000 samples or draws (80 to 160 KB). glibc serves blocks of more than 128 KB with
``mmap`` (the threshold rises only to the largest block freed so far) and hands the top of
its heap back to the system once twice that much is free there; either way the next array
lands on new pages, which the kernel must fault in and zero: system time the analysis did
not need. Keeping blocks below 32 MB on the heap and up to 256 MB free at its top reuses
them instead, the peak memory unchanged; what that buys the 30-site guard is measured by
``python -m benchmarks`` (BENCHMARKS.md, "What a kept speed mechanism buys"). See mallopt(3)
and the glibc manual, "Memory Allocation Tunables".

The settings are the process's: they apply to whatever else the process runs, and it keeps
up to 256 MB it freed rather than returning it. So the library does not set them on its own:
the ``advisor`` command and the fleet's worker processes call :func:`keep_freed_memory`, and a
script that analyses large topologies may call it too. Other C libraries are left as they
are.
"""

from __future__ import annotations

__all__ = ["keep_freed_memory"]

import functools
import os

# mallopt(3) parameters, from glibc's malloc.h.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Blocks from this size [bytes] still come from mmap (and go back to the system when freed).
MMAP_THRESHOLD_BYTES = 32 * 2**20
# Free memory at the top of the heap [bytes] kept before any is given back.
TRIM_THRESHOLD_BYTES = 256 * 2**20


@functools.cache
def keep_freed_memory() -> bool:
    """Set glibc's thresholds once per process; whether they were set (False elsewhere)."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
    except (AttributeError, OSError, ValueError):  # not a glibc system
        return False
    import ctypes  # numpy imported it already

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
        and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    )
