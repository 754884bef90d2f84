"""The import graph of the product's apps has no cycles (docs/architecture.md, Layers).

Built from the source with ``ast``: every ``import`` / ``from … import`` anywhere in a module
— at the top, inside a function, or under ``if TYPE_CHECKING`` — is an edge, so a cycle
cannot hide behind a function-local import. Importing a package (``remember``) runs
its ``__init__``, so an edge to a package is an edge to its ``__init__`` module (a package's
``__init__`` re-exporting its own modules is the public face of the package, not a cycle —
unless one of those modules imports the package back).
"""
from __future__ import annotations

import ast
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
APPS = ("memory", "chat", "navigation", "showcase")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_modules() -> dict[str, Path]:
    found = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" not in path.parts:
                found[module_name(path)] = path
    return found


def imported_names(path: Path, name: str, is_package: bool) -> set[str]:
    """Every dotted name the module imports, relative imports resolved."""
    names: set[str] = set()
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            # ``from pkg import module`` depends on the module; ``from pkg import name``
            # on the package's __init__ (resolved against the known modules below).
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    modules = source_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges = set()
        for imported in imported_names(path, name, path.name == "__init__.py"):
            # ``from remember import turns`` names a module; ``from memory.models import
            # Note`` names an attribute of a package: the longest known prefix is the target.
            parts = imported.split(".")
            while parts and ".".join(parts) not in modules:
                parts.pop()
            if parts:
                edges.add(".".join(parts))
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_is_read_from_the_real_source():
    graph = import_graph()
    assert len(graph) > 100
    assert "recall" in graph["chat.turns"]  # a top-level import
    assert "memory.models" in graph["remember.turns"]
    assert "remember" in graph["chat.turns"]  # an import of a package's name: its __init__


def test_a_function_local_import_cycle_is_found(tmp_path, monkeypatch):
    """The checker itself: two modules importing each other, one of them inside a function."""
    package = tmp_path / "memory"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from memory.b import g\n\ndef f():\n    return g()\n")
    (package / "b.py").write_text("def g():\n    from memory.a import f\n    return f\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    assert cycles(import_graph()) == [["memory.a", "memory.b"]]


def test_no_import_cycles_among_modules():
    found = cycles(import_graph())
    assert found == [], "import cycles: " + "; ".join(" ↔ ".join(c) for c in found)


if __name__ == "__main__":  # pragma: no cover - a quick look while refactoring
    for component in cycles(import_graph()):
        print(" ↔ ".join(component))


def test_the_product_never_imports_the_showcase():
    """The story and the evaluations build on the product; the product stands without them."""
    graph = import_graph()
    product = {name: deps for name, deps in graph.items() if not name.startswith("showcase")}
    assert any(name.startswith("showcase") for name in graph)  # the showcase is read too
    assert {name: sorted(d for d in deps if d.startswith("showcase")) for name, deps in product.items()
            if any(d.startswith("showcase") for d in deps)} == {}
