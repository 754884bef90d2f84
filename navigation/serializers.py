"""The navigation API's requests and responses: request serializers validate (bad input → 400
with a clear message); response serializers both document a payload (OpenAPI, ``/api/schema/``)
and produce it from the graph (``to_representation``), so the schema cannot drift from what
is sent. Their ``to_representation`` builds plain dicts directly: a page holds thousands of
nodes and edges, and field-by-field serialisation would cost more than the graph update.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from rest_framework import serializers

from infra.http_input import MAX_DB_ID
from memory.models import MemoryScope, Note
from documents.models import Document
from navigation.built import BuiltGraph
from navigation.events import event_key, event_label
from navigation.graph import Edge, Trace
from navigation import tuning


@dataclass(frozen=True)
class GraphPage:
    """One page of a graph: upper levels in full, L0 from ``l0_offset`` (layout order)."""

    built: BuiltGraph
    l0_offset: int
    l0_limit: int


@dataclass(frozen=True)
class GraphNode:
    built: BuiltGraph
    index: int


@dataclass(frozen=True)
class GraphTrace:
    """A search run on a graph (``trace`` None: nothing to trace, e.g. an empty graph)."""

    built: BuiltGraph | None
    trace: Trace | None
    visited_limit: int = 2000


def graph_params(built: BuiltGraph) -> dict[str, Any]:
    """The parameters a graph was made with, as the page and the trace report them."""
    return built.graph.params.as_dict() | {"max_level": built.graph.max_level}


class GraphFilterSerializer(serializers.Serializer):
    firm = serializers.IntegerField(required=False, min_value=1, max_value=MAX_DB_ID)
    matter = serializers.IntegerField(required=False, min_value=1, max_value=MAX_DB_ID)
    scope = serializers.ChoiceField(choices=MemoryScope.choices, required=False)
    event = serializers.CharField(required=False, max_length=300)
    # Read by memory.as_of.parse_as_of in the view (it needs the reader's firm): any text here.
    as_of = serializers.CharField(required=False, allow_blank=True, max_length=40)


class GraphQuerySerializer(GraphFilterSerializer):
    l0_offset = serializers.IntegerField(required=False, default=0, min_value=0, max_value=MAX_DB_ID)
    l0_limit = serializers.IntegerField(required=False, default=1500, min_value=0)

    def validate_l0_limit(self, value: int) -> int:
        if value > tuning.NAV_L0_PAGE_MAX:
            raise serializers.ValidationError(f"l0_limit must be at most {tuning.NAV_L0_PAGE_MAX}")
        return value


class TraceQuerySerializer(GraphFilterSerializer):
    k = serializers.IntegerField(required=False, default=10, min_value=1, max_value=100)


class NavSearchRequestSerializer(serializers.Serializer):
    query = serializers.CharField(max_length=2000, trim_whitespace=True)
    k = serializers.IntegerField(required=False, default=10, min_value=1, max_value=100)
    strategy = serializers.ChoiceField(choices=["layered_nav"], required=False, default="layered_nav")
    firm = serializers.IntegerField(required=False, min_value=1, max_value=MAX_DB_ID)
    matter = serializers.IntegerField(required=False, min_value=1, max_value=MAX_DB_ID)
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=MemoryScope.choices), required=False, max_length=5
    )
    as_of = serializers.CharField(required=False, allow_blank=True, max_length=40)


class NodeSerializer(serializers.Serializer):
    i = serializers.IntegerField(help_text="Index of the node in this graph (edges refer to it).")
    id = serializers.UUIDField()
    level = serializers.IntegerField(help_text="Top HNSW level; the node is on every level below too.")
    x = serializers.FloatField()
    y = serializers.FloatField()
    scope = serializers.CharField()
    label = serializers.CharField(help_text="The first 40 characters of the content.")

    def to_representation(self, node: GraphNode) -> dict[str, Any]:
        # Only what the page draws: the detail (category, source, matter, event) comes with the trace.
        graph, info, index = node.built.graph, node.built.info[node.index], node.index
        x, y = graph.layout[index]
        return {
            "i": index,
            "id": graph.ids[index],
            "level": int(graph.levels[index]),
            "x": round(float(x), 4),
            "y": round(float(y), 4),
            "scope": info.scope,
            "label": info.label,
        }


class EdgeSerializer(serializers.Serializer):
    s = serializers.IntegerField()
    t = serializers.IntegerField()
    levels = serializers.ListField(child=serializers.IntegerField())
    w = serializers.FloatField(help_text="Edge score (1-λ)·cos + λ·Jaccard.")
    bridge = serializers.BooleanField(required=False, help_text="Present (true) on connectivity bridges only.")

    def to_representation(self, edge: Edge) -> dict[str, Any]:
        payload = {"s": edge.source, "t": edge.target, "levels": edge.levels, "w": round(edge.score, 3)}
        return (payload | {"bridge": True}) if edge.bridge else payload


class LayerSerializer(serializers.Serializer):
    level = serializers.IntegerField()
    count = serializers.IntegerField()
    top_count = serializers.IntegerField()


class EventSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    count = serializers.IntegerField()


class PageSerializer(serializers.Serializer):
    offset = serializers.IntegerField()
    limit = serializers.IntegerField()
    returned = serializers.IntegerField()
    total = serializers.IntegerField()
    next_offset = serializers.IntegerField(allow_null=True)


class GraphResponseSerializer(serializers.Serializer):
    params = serializers.DictField()
    version = serializers.CharField()
    truncated = serializers.BooleanField()
    total_nodes = serializers.IntegerField()
    entry = serializers.UUIDField(allow_null=True)
    layers = LayerSerializer(many=True)
    events = EventSerializer(many=True)
    nodes = NodeSerializer(many=True)
    edges = EdgeSerializer(many=True)
    l0_page = PageSerializer()

    def to_representation(self, page: GraphPage) -> dict[str, Any]:
        """Upper levels always; L0 one region at a time (nodes in layout order, left to right).
        Edges are those whose two ends are both in the page, with their merged ``levels``."""
        built, l0_offset, l0_limit = page.built, page.l0_offset, page.l0_limit
        graph = built.graph
        n = graph.size
        upper = np.flatnonzero(graph.levels >= 1).tolist() if n else []
        region = graph.order[l0_offset:l0_offset + l0_limit].tolist() if n else []
        included = sorted(set(upper) | set(region))
        chosen = set(included)
        node, edge = NodeSerializer(), EdgeSerializer()
        counts = np.bincount(graph.levels, minlength=graph.max_level + 1) if n else np.zeros(1, dtype=int)
        event_counts: dict[str, int] = {}
        for info in built.info:
            if info.event:
                event_counts[info.event] = event_counts.get(info.event, 0) + 1
        return {
            "params": graph_params(built),
            "version": built.version,
            "truncated": built.truncated,
            "total_nodes": n,
            "entry": graph.ids[graph.entry] if n else None,
            "layers": [
                {"level": level, "count": int(counts[level:].sum()), "top_count": int(counts[level])}
                for level in range(graph.max_level, -1, -1)
            ],
            "events": [
                {"key": key, "label": event_label(key, built.matter_titles), "count": count}
                for key, count in sorted(event_counts.items())
            ],
            "nodes": [node.to_representation(GraphNode(built, i)) for i in included],
            "edges": [edge.to_representation(e) for e in graph.edges if e.source in chosen and e.target in chosen],
            "l0_page": {
                "offset": l0_offset,
                "limit": l0_limit,
                "returned": len(region),
                "total": n,
                "next_offset": l0_offset + l0_limit if l0_offset + l0_limit < n else None,
            },
        }


class StepSerializer(serializers.Serializer):
    source = serializers.UUIDField()
    target = serializers.UUIDField()
    level = serializers.IntegerField()
    phase = serializers.ChoiceField(choices=["descent", "beam"])


class CandidateSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    score = serializers.FloatField()
    rank = serializers.IntegerField()


class VisitSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    level = serializers.IntegerField()
    score = serializers.FloatField()


class TraceSerializer(serializers.Serializer):
    entry = serializers.UUIDField(allow_null=True)
    l0_start = serializers.UUIDField(allow_null=True)
    goal = serializers.UUIDField(required=False)
    path = StepSerializer(many=True)
    path_nodes = serializers.ListField(child=serializers.UUIDField())
    hit = serializers.BooleanField(help_text="Target among the ef results of the standard search.")
    reached = serializers.BooleanField(help_text="Target reached, possibly after expanding past the ef stop.")
    extra_expansions = serializers.IntegerField()
    ef = serializers.IntegerField(required=False)
    visited = VisitSerializer(many=True)
    visited_total = serializers.IntegerField()
    candidates = CandidateSerializer(many=True)
    nodes = NodeSerializer(many=True)

    def to_representation(self, run: GraphTrace) -> dict[str, Any]:
        """A trace as the page draws it: ids, the path steps, and every node it mentions."""
        built, result, visited_limit = run.built, run.trace, run.visited_limit
        if built is None or result is None or built.graph.size == 0:
            return {"entry": None, "l0_start": None, "path": [], "path_nodes": [], "hit": False,
                    "reached": False, "extra_expansions": 0, "visited": [], "visited_total": 0,
                    "candidates": [], "nodes": []}
        graph = built.graph
        ids = graph.ids
        mentioned = {result.entry, result.l0_start, result.goal}
        mentioned.update(s.source for s in result.path)
        mentioned.update(s.target for s in result.path)
        mentioned.update(node for node, _ in result.results)
        mentioned.update(node for node, _, _ in result.visited[:visited_limit])
        node = NodeSerializer()
        return {
            "entry": ids[result.entry],
            "l0_start": ids[result.l0_start],
            "goal": ids[result.goal],
            "path": [
                {"source": ids[s.source], "target": ids[s.target], "level": s.level, "phase": s.phase}
                for s in result.path
            ],
            "path_nodes": [ids[result.entry]] + [ids[s.target] for s in result.path],
            "hit": result.hit,
            "reached": result.reached,
            "extra_expansions": result.extra_expansions,
            "ef": max(len(result.results), graph.params.ef_search),
            "visited": [
                {"id": ids[n], "level": level, "score": round(score, 4)}
                for n, level, score in result.visited[:visited_limit]
            ],
            "visited_total": len(result.visited),
            "candidates": [
                {"id": ids[n], "score": round(score, 4), "rank": rank + 1}
                for rank, (n, score) in enumerate(result.results)
            ],
            "nodes": [node.to_representation(GraphNode(built, i)) for i in sorted(mentioned)],
        }


@dataclass(frozen=True)
class NoteTrace:
    """The trace to one note of a graph: the note, its node index and the search run."""

    note: Note
    built: BuiltGraph
    index: int
    trace: Trace


class NoteDetailSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    content = serializers.CharField()
    level = serializers.IntegerField()
    memory_scope = serializers.CharField()
    category = serializers.CharField()
    source_type = serializers.CharField()
    source_id = serializers.CharField()
    matter = serializers.DictField(allow_null=True)
    event = serializers.CharField()
    event_label = serializers.CharField(help_text="The event in the reader's language (its name, the matter's title).")
    importance = serializers.FloatField()
    confidence = serializers.FloatField()
    provenance_hidden = serializers.BooleanField(
        required=False, help_text="Set when the note's private-conversation provenance is withheld from this reader."
    )
    document = serializers.DictField(
        allow_null=True, help_text="A document-made note's source: id, citation (《title》第 N 页) and viewer url."
    )

    def to_representation(self, found: NoteTrace) -> dict[str, Any]:
        note = found.note
        event = event_key(tags=note.tags, source_type=note.source_type, source_id=note.source_id,
                          matter_id=note.matter_id)
        return {
            "id": str(note.pk),
            "content": note.content,
            "level": int(found.built.graph.levels[found.index]),
            "memory_scope": note.memory_scope,
            "category": note.category,
            "source_type": note.source_type,
            "source_id": note.source_id,
            "matter": ({"id": note.matter_id, "reference": note.matter.reference, "title": note.matter.title}
                       if note.matter_id else None),
            "event": event,
            "event_label": event_label(event, {note.matter_id: note.matter.title} if note.matter_id else {}) if event else "",
            "importance": note.importance,
            "confidence": note.confidence,
            "document": document_source(note, self.context.get("user")),
        }


def document_source(note: Note, user) -> dict[str, Any] | None:
    """Where a document-made note was read: the document (if ``user`` may see it), its citation
    and the viewer at the passage."""
    source = note.document_source()
    if source is None or user is None:
        return None
    document = Document.objects.visible_to(user).filter(pk=source[0]).first()
    if document is None:
        return None
    return {"id": document.pk, "citation": document.citation(source[1]), "url": note.document_url()}


class TraceResponseSerializer(serializers.Serializer):
    note = NoteDetailSerializer()
    query = serializers.CharField()
    params = serializers.DictField()
    version = serializers.CharField()
    trace = TraceSerializer()

    def to_representation(self, found: NoteTrace) -> dict[str, Any]:
        return {
            "note": NoteDetailSerializer(context=self.context).to_representation(found),
            "query": found.note.content,
            "params": graph_params(found.built),
            "version": found.built.version,
            "trace": TraceSerializer().to_representation(GraphTrace(found.built, found.trace)),
        }


class NavHitSerializer(serializers.Serializer):
    note_id = serializers.UUIDField()
    score = serializers.FloatField()
    similarity = serializers.FloatField()
    graph_rank = serializers.IntegerField(allow_null=True)
    vector_rank = serializers.IntegerField(allow_null=True)
    level = serializers.IntegerField()
    memory_scope = serializers.CharField()
    label = serializers.CharField()


class NavSearchResponseSerializer(serializers.Serializer):
    strategy = serializers.CharField()
    query = serializers.CharField()
    k = serializers.IntegerField()
    graph_version = serializers.CharField()
    hits = NavHitSerializer(many=True)
    trace = TraceSerializer()
