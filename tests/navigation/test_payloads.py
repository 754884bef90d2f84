"""The navigation API sends exactly what its response serializers document (/api/schema/):
every key declared, every required field present, all the way down — because the same
serializers produce the payloads. Checked on real responses for alice, bob and charlie."""
from __future__ import annotations

import pytest
from rest_framework import serializers

from navigation.serializers import (
    GraphResponseSerializer,
    NavSearchResponseSerializer,
    NodeSerializer,
    TraceResponseSerializer,
)
from tests.clients import client_for
from tests.navigation import test_api
from tests.navigation.test_api import GRAPH, SEARCH, trace_url

notes = test_api.notes  # the fixture, shared (an assignment: pyflakes reads an imported one as unused)


def assert_conforms(serializer: serializers.Serializer, data: dict, path: str = "$") -> int:
    """Fail when ``data`` has an undeclared key or lacks a required one, recursively.
    Returns how many objects were checked (so a test can tell the check reached them)."""
    fields = serializer.fields
    undeclared = set(data) - set(fields)
    assert not undeclared, f"{path}: keys not in {type(serializer).__name__}: {sorted(undeclared)}"
    checked = 1
    for name, field in fields.items():
        if name not in data:
            assert not field.required, f"{path}.{name} is required by {type(serializer).__name__} but missing"
            continue
        value = data[name]
        if isinstance(field, serializers.ListSerializer) and isinstance(field.child, serializers.Serializer):
            for index, item in enumerate(value):
                checked += assert_conforms(field.child, item, f"{path}.{name}[{index}]")
        elif isinstance(field, serializers.Serializer) and value is not None:
            checked += assert_conforms(field, value, f"{path}.{name}")
    return checked


def test_the_check_catches_an_undeclared_and_a_missing_key():
    node = {"i": 0, "id": "5f0c6c9e-4c47-4a53-9d0a-5a8f7f6f3f01", "level": 0, "x": 0.0, "y": 0.0,
            "scope": "case", "label": "x"}
    assert assert_conforms(NodeSerializer(), node) == 1
    with pytest.raises(AssertionError, match="not in NodeSerializer"):
        assert_conforms(NodeSerializer(), {**node, "content": "secret"})
    with pytest.raises(AssertionError, match="label is required"):
        assert_conforms(NodeSerializer(), {k: v for k, v in node.items() if k != "label"})


@pytest.mark.parametrize("who", ["alice", "bob", "charlie"])
def test_graph_pages_are_what_the_schema_says(world, notes, who):  # noqa: F811
    response = client_for(getattr(world, who)).get(GRAPH)
    assert response.status_code == 200, response.content
    page = response.json()
    assert page["nodes"]
    assert page["edges"]
    assert page["layers"]
    checked = assert_conforms(GraphResponseSerializer(), page)
    assert checked >= 1 + len(page["nodes"]) + len(page["edges"]) + len(page["layers"])


def test_a_trace_and_an_empty_page_are_what_the_schema_says(world, notes):  # noqa: F811
    target = notes["laptop"][1]
    response = client_for(world.bob).get(trace_url(target.pk))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["note"]["id"] == str(target.pk)
    assert body["trace"]["path_nodes"][-1:] != []
    assert assert_conforms(TraceResponseSerializer(), body) > len(body["trace"]["nodes"])
    # the second L0 page of a small graph: no L0 nodes, and still the documented shape
    later = client_for(world.bob).get(GRAPH, {"l0_offset": 1000}).json()
    assert later["l0_page"]["returned"] == 0
    assert_conforms(GraphResponseSerializer(), later)


def test_search_results_are_what_the_schema_says(world, notes):  # noqa: F811
    alice = client_for(world.alice).post(SEARCH, {"query": "房东扣押金不退怎么办", "k": 3}, format="json")
    assert alice.status_code == 200, alice.content
    assert alice.json()["hits"]
    assert alice.json()["trace"]["path"] is not None
    assert_conforms(NavSearchResponseSerializer(), alice.json())
    # charlie searches only his own firm's graph
    charlie = client_for(world.charlie).post(SEARCH, {"query": "押金", "k": 10}, format="json")
    assert charlie.status_code == 200
    assert_conforms(NavSearchResponseSerializer(), charlie.json())
