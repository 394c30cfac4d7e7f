"""Lazy re-exports for the layer packages, so that importing one module of a layer does not
import the whole layer (``advisor schema`` needs no numpy, ``advisor --help`` only typer).

The same idea as scientific-python's ``lazy_loader.attach`` (SPEC 1), in a dozen lines.
"""

from __future__ import annotations

__all__ = ["attach"]

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def attach(
    package: str, submodules: Sequence[str] = (), attributes: Mapping[str, str] | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``.

    ``submodules`` are re-exported as modules; ``attributes`` maps a public name to the
    submodule that defines it. The package keeps a literal ``__all__`` and the same imports
    under ``TYPE_CHECKING`` for type checkers; tests/test_layers.py checks the three agree.
    """
    homes = dict(attributes or {})
    public = sorted({*submodules, *homes})

    def __getattr__(name: str) -> Any:
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        if name in homes:
            return getattr(importlib.import_module(f"{package}.{homes[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return list(public)

    return __getattr__, __dir__
