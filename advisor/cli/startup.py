"""The garbage collector, paused while the command starts up.

Importing typer, numpy and pydantic and building the command line from the commands'
signatures makes many container objects and almost no garbage, yet the collector runs over
them again and again. :func:`advisor.cli.main` calls :func:`pause` before it imports the app;
:func:`resume` (called when a command starts, once typer has read the command line) moves
what the start-up made into the permanent generation (:func:`gc.freeze`), which later
collections skip, and starts the collector again for the run itself, so a long run or a
fleet still frees its cycles. The start-up's few unreachable objects stay in memory.

It is kept for the start-up guard (``advisor recommend`` against the bare imports of numpy,
pydantic and yaml): the share of it this pause buys is measured in BENCHMARKS.md.
"""

from __future__ import annotations

__all__ = ["pause", "resume"]

import gc

_paused = [False]  # whether pause() stopped the collector (one a user stopped stays stopped)


def pause() -> None:
    """Stop the collector until :func:`resume`, if it runs."""
    if gc.isenabled():
        gc.disable()
        _paused[0] = True


def resume() -> None:
    """Keep what exists now out of later collections and restart the collector :func:`pause`
    stopped; nothing if it did not (the app run by a test, a collector the caller stopped)."""
    if _paused[0]:
        gc.freeze()
        gc.enable()
        _paused[0] = False
