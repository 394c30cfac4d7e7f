"""The house's rules, checked: one direction of imports between layers, no cycle, and every
layer package's lazy re-exports agreeing with its ``__all__``.

Each module of ``advisor/`` belongs to a layer (ARCHITECTURE.md); a module may import from
its own layer and from the layers below, never from one above. Imports under
``TYPE_CHECKING`` count too: a type from above is a dependency on above.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "advisor"

# Bottom first. A module's layer is its package (advisor/engine/x.py -> "engine"), or its
# own name for the modules at the top level.
LAYERS = [
    {"errors", "result", "vocabulary", "_lazy", "safe_write", "names", "units"},
    {"model"},
    {"measurements"},
    {"inputs"},
    {"engine"},
    {"rules"},
    {"verdict"},
    {"analysis", "validate"},
    {"recommendation", "fleet"},
    {"text", "config", "collect"},
    {"sweep", "documents", "check"},
    {"cli", "__main__", "__init__"},
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"  # the package itself: the public API, at the top
    return parts[1]


def _imports(path: Path) -> set[str]:
    """Every ``advisor.*`` module ``path`` imports, at module level or inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("advisor")}
        elif isinstance(node, ast.ImportFrom) and _is_advisor(node.module) and node.level == 0:
            # ``from advisor.model import physics`` imports the submodule; ``from advisor
            # import recommend`` the package's public API.
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if _exists(candidate) else str(node.module))
    return found


def _is_advisor(module: str | None) -> bool:
    return module is not None and (module == "advisor" or module.startswith("advisor."))


def _exists(module: str) -> bool:
    relative = Path(*module.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").is_file() or (PACKAGE / relative).is_dir()


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_module_has_a_layer():
    assert {_layer(m) for m in MODULES} <= set(RANK), "a new folder needs a layer in LAYERS"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_from_a_layer_above(module):
    own = RANK[_layer(module)]
    for imported in _imports(MODULES[module]):
        if imported == "advisor":
            assert _layer(module) in {"__init__", "cli", "__main__"}, (
                f"{module} imports the package's public API; import the module that defines it"
            )
            continue
        above = RANK[_layer(imported)] > own
        assert not above, f"{module} ({_layer(module)}) imports {imported} from a layer above"


def test_the_import_graph_has_no_cycle():
    graph = nx.DiGraph()
    for module, path in MODULES.items():
        for imported in _imports(path):
            if imported != module and imported in MODULES and not _is_parent(imported, module):
                graph.add_edge(module, imported)
    cycles = list(nx.simple_cycles(graph))
    assert cycles == [], f"import cycles: {cycles[:3]}"


def _is_parent(package: str, module: str) -> bool:
    # A module's package __init__ runs first on import; it re-exports lazily, so it does
    # not import the module back at import time.
    return module.startswith(package + ".")


PACKAGES = sorted(m for m, p in MODULES.items() if p.name == "__init__.py")


@pytest.mark.parametrize("package", PACKAGES)
def test_lazy_exports_agree_with_all(package):
    """Every name of ``__all__`` resolves, to the object its home module defines."""
    imported = importlib.import_module(package)
    names = imported.__all__
    assert names, f"{package} exports nothing"
    if hasattr(imported, "__getattr__"):  # lazy: dir() lists exactly the public names
        assert sorted(dir(imported)) == sorted(names)
    for name in names:
        value = getattr(imported, name)
        if isinstance(value, type) or (callable(value) and hasattr(value, "__module__")):
            home = importlib.import_module(value.__module__)  # defined where it claims
            assert getattr(home, name) is value


def test_the_readme_example_binds_functions_not_modules():
    from advisor import analyse, load_topology, recommend

    assert callable(recommend) and callable(load_topology) and callable(analyse)
    assert recommend.__module__ == "advisor.recommendation"


@pytest.mark.parametrize("package", PACKAGES)
def test_each_layer_says_what_it_is(package):
    doc = importlib.import_module(package).__doc__
    assert doc and len(doc.strip()) > 20, f"{package}/__init__.py needs a one-line docstring"
