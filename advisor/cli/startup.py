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
With discovery off, pydantic's plugin loader (``pydantic.plugin._loader``) answers "no
plugins" without looking, yet importing it still imports :mod:`importlib.metadata` (and with
it email, zipfile, csv, socket...): about 8 ms more on a quiet machine, 4 % of the bare
imports (``python -X importtime``, 2026-11-22). :func:`pause` puts in its place a module whose
``get_plugins`` gives that same answer; tests/test_cli_fast.py checks that pydantic's own
loader answers alike and is the only name pydantic takes from it.
"""

from __future__ import annotations

__all__ = ["pause", "resume"]

import gc
import os
import sys
import types
from collections.abc import Iterable

_paused = [False]  # whether pause() stopped the collector (one a user stopped stays stopped)

_PLUGIN_LOADER = "pydantic.plugin._loader"
_NO_PLUGINS = ("__all__", "1", "true")  # the values that make pydantic load no plugin at all


def pause() -> None:
    """Stop the collector until :func:`resume`, if it runs; no pydantic plugin discovery."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if os.environ["PYDANTIC_DISABLE_PLUGINS"] in _NO_PLUGINS and _PLUGIN_LOADER not in sys.modules:
        sys.modules[_PLUGIN_LOADER] = _no_plugins_loader()
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


def _no_plugins_loader() -> types.ModuleType:
    """A stand-in for pydantic's plugin loader when plugins are disabled: no plugins.

    Any other name a pydantic release may ask of it comes from the real loader, imported
    then in the stand-in's place: a newer pydantic costs the 8 ms again, never a failure.
    """

    def get_plugins() -> Iterable[object]:
        return ()

    def real(name: str) -> object:
        if name.startswith("__"):  # the import system asks for __path__: a plain module
            raise AttributeError(name)
        del sys.modules[_PLUGIN_LOADER]
        import pydantic.plugin._loader as loader  # the real one, in the stand-in's place

        return getattr(loader, name)

    module = types.ModuleType(_PLUGIN_LOADER, "advisor.cli.startup: plugins are disabled")
    module.get_plugins = get_plugins  # type: ignore[attr-defined]
    module.__getattr__ = real  # type: ignore[method-assign]  # PEP 562: names it lacks
    return module
