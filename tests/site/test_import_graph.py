"""The product's import graph points one way and has no cycles (docs/architecture.md, Layers).

Built from the source with ``ast``: every ``import`` / ``from … import`` anywhere in a module
— at the top, inside a function, or under ``if TYPE_CHECKING`` — is an edge, so a dependency
cannot hide behind a function-local import. Importing a package (``recall``) runs its
``__init__``, so an edge to a package is an edge to its ``__init__`` module (a package's
``__init__`` re-exporting its own modules is the public face of the package, not a cycle —
unless one of those modules imports the package back).

The layers, top to bottom (a module imports its own package, or packages of a lower layer):

    legalmem_site                                          configuration, URLs, ASGI, launcher, health
    connectors                                             tokens and MCP: the apps' own faces, for other assistants
    chat  navigation  records  logins  showcase  evaluation  my_memory  chronology
                                                           apps: pages, APIs, commands, admin
    recall  remember                                       the read path, the write path
    documents                                              a matter's documents, whole: models, reading,
                                                           the worker's job, passage search, pages
    memory                                                 models, services, selectors
    infra                                                  metrics, logs, locks, input limits, LLM, embeddings
    legaltext                                              the one reader of legal text (pure Python)

Packages of one layer do not import each other, except the edges in ``SAME_LAYER_ALLOWED``.
Outside ``recall`` only its public face (``recall/__init__.py``) is imported, except the
modules in ``RECALL_PRIVATE_ALLOWED``.
"""
from __future__ import annotations

import ast
from pathlib import Path

from tests.site.product_packages import left_out, product_packages

ROOT = Path(__file__).resolve().parents[2]

LAYERS: tuple[tuple[str, ...], ...] = (
    ("legalmem_site",),
    ("connectors",),
    ("chat", "navigation", "records", "logins", "showcase", "evaluation", "my_memory", "chronology"),
    ("recall", "remember"),
    ("documents",),
    ("memory",),
    ("infra",),
    ("legaltext",),
)
PACKAGES = tuple(package for layer in LAYERS for package in layer)
LAYER_OF = {package: depth for depth, layer in enumerate(LAYERS) for package in layer}

# (importing package, imported package) → why two packages of one layer may meet. Apps meet
# through registries of a lower layer (navigation's search strategy in
# ``recall.register_strategy``, its erasure hook in ``memory.erasure_hooks``), and the write and
# read paths share helpers through ``memory`` and ``infra``. An entry needs its reason.
SAME_LAYER_ALLOWED: dict[tuple[str, str], str] = {
    ("evaluation", "chat"): "the attribution evaluation scores the chat's own answer check and turn "
                            "(chat.citations, chat.turns), never a copy of them; chat imports nothing of evaluation",
    ("evaluation", "chronology"): "the dates evaluation counts what the matter chronology itself places "
                                  "(chronology.selectors.matter_chronology), never a copy; chronology imports "
                                  "nothing of evaluation",
}

# Modules outside ``recall`` that may import a private ``recall.<module>``, and why.
RECALL_PRIVATE_ALLOWED: dict[str, str] = {}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts:
                found[module_name(path)] = path
    return found


def imported_names(path: Path, name: str, is_package: bool) -> set[str]:
    """Every dotted name the module imports, relative imports resolved."""
    return {imported for imported, _ in imports_with_lines(path, name, is_package)}


def imports_with_lines(path: Path, name: str, is_package: bool) -> list[tuple[str, int]]:
    """Every dotted name the module imports with the line of the import."""
    names: list[tuple[str, int]] = []
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            # ``from pkg import module`` depends on the module; ``from pkg import name``
            # on the package's __init__ (resolved against the known modules below).
            names.extend((f"{target}.{alias.name}", node.lineno) for alias in node.names)
    return names


def _target(imported: str, modules: dict[str, Path]) -> str | None:
    """``from remember import turns`` names a module; ``from memory.models import Note`` names
    an attribute of a package: the longest known prefix is the target."""
    parts = imported.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts) or None


def import_edges() -> dict[str, dict[str, int]]:
    """Module → {imported module: line of the first such import}."""
    modules = source_modules()
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        edges: dict[str, int] = {}
        for imported, line in imports_with_lines(path, name, path.name == "__init__.py"):
            target = _target(imported, modules)
            if target and target != name:
                edges[target] = min(line, edges.get(target, line))
        graph[name] = edges
    return graph


def import_graph() -> dict[str, set[str]]:
    return {name: set(edges) for name, edges in import_edges().items()}


def top(module: str) -> str:
    return module.partition(".")[0]


def layer_violations(graph: dict[str, dict[str, int]]) -> list[str]:
    """Edges to a higher layer, or to another package of the same layer not allowed above."""
    found = []
    for name, edges in sorted(graph.items()):
        for target, line in sorted(edges.items()):
            source_package, target_package = top(name), top(target)
            if source_package == target_package:
                continue
            upward = LAYER_OF[target_package] < LAYER_OF[source_package]
            sideways = LAYER_OF[target_package] == LAYER_OF[source_package]
            if upward or (sideways and (source_package, target_package) not in SAME_LAYER_ALLOWED):
                kind = "a higher layer" if upward else "the same layer"
                found.append(f"{name} (line {line}) imports {target}: {target_package} is {kind} than {source_package}")
    return found


def private_recall_imports(graph: dict[str, dict[str, int]]) -> list[str]:
    return [
        f"{name} (line {line}) imports {target}: use recall's public API (recall/__init__.py)"
        for name, edges in sorted(graph.items()) if top(name) != "recall" and name not in RECALL_PRIVATE_ALLOWED
        for target, line in sorted(edges.items()) if top(target) == "recall" and target != "recall"
    ]


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
                top_ = stack.pop()
                on_stack.discard(top_)
                component.append(top_)
                if top_ == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_is_read_from_the_real_source():
    graph = import_graph()
    assert len(graph) > 250
    assert set(map(top, graph)) == set(PACKAGES)  # every product package is read, legalmem_site too
    assert "recall" in graph["chat.turns"]  # a top-level import of a package's name: its __init__
    assert "memory.models" in graph["remember.turns"]
    assert "remember.turns" in graph["chat.turns"]
    assert "chat.routing" in graph["legalmem_site.asgi"]
    # function-local imports are edges too
    assert "infra.embeddings" in graph["legalmem_site.health"]


def test_the_layers_name_every_product_package_once():
    assert len(PACKAGES) == len(set(PACKAGES))
    assert left_out(PACKAGES) == set(), "a new top-level package needs its place in LAYERS"
    assert product_packages() >= set(PACKAGES), "LAYERS names a package that is gone"
    assert all(LAYER_OF[a] == LAYER_OF[b] for a, b in SAME_LAYER_ALLOWED)


def _fake_tree(tmp_path, monkeypatch, files: dict[str, str]) -> None:
    for package in PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    for relative, text in files.items():
        (tmp_path / relative).write_text(text)
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)


def test_a_function_local_import_cycle_is_found(tmp_path, monkeypatch):
    """The checker itself: two modules importing each other, one of them inside a function."""
    _fake_tree(tmp_path, monkeypatch, {
        "memory/a.py": "from memory.b import g\n\ndef f():\n    return g()\n",
        "memory/b.py": "def g():\n    from memory.a import f\n    return f\n",
    })
    assert cycles(import_graph()) == [["memory.a", "memory.b"]]


def test_an_upward_import_is_named_with_its_module_and_line(tmp_path, monkeypatch):
    """The checker itself: a lower layer importing a higher one, inside a function or under
    TYPE_CHECKING, fails with the module, the line and the import."""
    _fake_tree(tmp_path, monkeypatch, {
        "infra/a.py": "def f():\n    from memory.models import Note\n",
        "memory/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from recall import x\n",
        "remember/c.py": "from recall import search\n",
        "chat/d.py": "from recall.fusion import fuse\n",
        "recall/fusion.py": "",
    })
    graph = import_edges()
    assert layer_violations(graph) == [
        "infra.a (line 2) imports memory: memory is a higher layer than infra",
        "memory.b (line 3) imports recall: recall is a higher layer than memory",
        "remember.c (line 1) imports recall: recall is the same layer than remember",
    ]
    assert private_recall_imports(graph) == [
        "chat.d (line 1) imports recall.fusion: use recall's public API (recall/__init__.py)",
    ]


def test_no_import_cycles_among_modules():
    found = cycles(import_graph())
    assert found == [], "import cycles: " + "; ".join(" ↔ ".join(c) for c in found)


def test_dependencies_point_down_the_layers():
    found = layer_violations(import_edges())
    assert found == [], "imports against the layers (tests/site/test_import_graph.py, LAYERS):\n" + "\n".join(found)


def test_only_recall_imports_its_private_modules():
    found = private_recall_imports(import_edges())
    assert found == [], "private recall modules imported:\n" + "\n".join(found)


def test_the_write_path_does_not_borrow_from_the_read_path():
    """remember and recall are one layer: neither imports the other (shared helpers live in
    memory or infra, e.g. ``infra.tokens.estimate_tokens``)."""
    graph = import_graph()
    assert {name: sorted(d for d in deps if top(d) == "recall") for name, deps in graph.items()
            if top(name) == "remember" and any(top(d) == "recall" for d in deps)} == {}
    assert {name: sorted(d for d in deps if top(d) == "remember") for name, deps in graph.items()
            if top(name) == "recall" and any(top(d) == "remember" for d in deps)} == {}


#: Packages built on the product that the product never imports: the demo story, the evaluations.
ON_TOP_OF_THE_PRODUCT = ("showcase", "evaluation")


def test_the_product_never_imports_the_showcase_or_the_evaluations():
    """The story and the evaluations build on the product; the product stands without them."""
    graph = import_graph()
    product = {name: deps for name, deps in graph.items() if top(name) not in ON_TOP_OF_THE_PRODUCT}
    assert {top(name) for name in graph} >= set(ON_TOP_OF_THE_PRODUCT)  # both are read too
    assert {name: sorted(d for d in deps if top(d) in ON_TOP_OF_THE_PRODUCT) for name, deps in product.items()
            if any(top(d) in ON_TOP_OF_THE_PRODUCT for d in deps)} == {}


if __name__ == "__main__":  # pragma: no cover - a quick look while refactoring
    edges = import_edges()
    for component in cycles(import_graph()):
        print("cycle:", " ↔ ".join(component))
    print("\n".join(layer_violations(edges)))
    print("\n".join(private_recall_imports(edges)))
