"""connectors is an app like chat and navigation: the import graph with it has no cycles, and
nothing of the product imports it (it reaches the product only through public entry points)."""
from __future__ import annotations

from tests.site import test_import_graph as graph


def test_no_cycles_and_no_app_depends_on_connectors(monkeypatch):
    monkeypatch.setattr(graph, "APPS", (*graph.APPS, "connectors"))
    edges = graph.import_graph()
    assert any(name.startswith("connectors.") for name in edges)
    assert graph.cycles(edges) == []
    assert {name: sorted(d for d in deps if d.startswith("connectors")) for name, deps in edges.items()
            if not name.startswith("connectors") and any(d.startswith("connectors") for d in deps)} == {}
