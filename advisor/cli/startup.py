"""The garbage collector, paused while the command starts up.

Importing numpy, pydantic's models and the engine makes about 70,000 container objects and
almost no garbage (about 800 unreachable objects), yet the collector runs about a hundred
times over them: 15-18 ms of ``advisor recommend examples/paris-frankfurt/topology.yaml``
(measured with :data:`gc.callbacks`), a sixth of the bare ``import numpy, pydantic, yaml``.
:func:`pause` stops it for the start-up; :func:`resume` moves what the start-up made into the
permanent generation (:func:`gc.freeze`), which later collections skip, and starts the
collector again for the run itself, so a long run or a fleet still frees its cycles. The
start-up's few unreachable objects stay in memory (a few hundred KB at most).

:func:`pause` also turns off pydantic's plugin discovery for the command, unless the user set
``PYDANTIC_DISABLE_PLUGINS`` (pydantic's documented switch, docs.pydantic.dev "Plugins"): the
first model build would scan every installed distribution's entry points for plugins the
command has no use for, about 16 ms of ``advisor recommend`` (paired runs, 2026-11-22).
"""

from __future__ import annotations

__all__ = ["pause", "resume"]

import gc
import os

_paused = [False]  # whether pause() stopped the collector (one a user stopped stays stopped)


def pause() -> None:
    """Stop the collector until :func:`resume`, if it runs; no pydantic plugin discovery."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if gc.isenabled():
        gc.disable()
        _paused[0] = True


def resume() -> None:
    """Keep what exists now out of later collections and restart the collector :func:`pause`
    stopped; nothing if it did not."""
    from advisor.engine.memory import keep_freed_memory

    keep_freed_memory()  # the command's process is ours: the engine reuses freed memory
    if _paused[0]:
        gc.freeze()
        gc.enable()
        _paused[0] = False
