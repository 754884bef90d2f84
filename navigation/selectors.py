"""Read side of navigation: the visible note set, its cached graph, graph pages and traces.

Everything starts from ``Note.objects.visible_to(user)``: a graph is built only from notes
the user may see, so nodes, edges, counts and trace steps of anything else never exist in it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from django.db.models import Count, Max, QuerySet
from django.db.models.functions import Left

from memory.embeddings import get_embedder
from memory.models import Firm, Matter, MemoryScope, Note
from memory.segmentation import segment
from navigation import cache
from navigation.events import event_key, event_label
from navigation.graph import GraphInput, GraphParams, NavGraph, Trace, build_graph, query_scorer, trace


class NavigationInputError(ValueError):
    """A filter or limit the user gave is not acceptable (→ 400 with this message)."""


@dataclass(frozen=True)
class GraphFilters:
    matter_id: int | None = None
    scope: str | None = None
    event: str | None = None


@dataclass(frozen=True)
class GraphContext:
    """Which graph: a firm of the user's and the filters of the page."""

    user: Any
    firm: Firm
    filters: GraphFilters = GraphFilters()


@dataclass
class NodeInfo:
    scope: str
    category: str
    matter_id: int | None
    event: str
    label: str
    importance: float


@dataclass
class BuiltGraph:
    """A navigation graph plus what the page shows of each node, for one visibility set."""

    graph: NavGraph
    info: list[NodeInfo]
    version: str
    truncated: bool
    matter_titles: dict[int, str] = field(default_factory=dict)


def graph_params() -> GraphParams:
    return GraphParams(
        m=settings.NAV_M,
        m0=settings.NAV_M0,
        ef_search=settings.NAV_EF_SEARCH,
        lexical_weight=settings.NAV_LEXICAL_WEIGHT,
        candidates=settings.NAV_CANDIDATES,
    )


def user_firms(user) -> QuerySet[Firm]:
    return Firm.objects.of_user(user).order_by("name", "id")


def resolve_context(user, *, firm_id: int | None = None, matter_id: int | None = None,
                    scope: str | None = None, event: str | None = None) -> GraphContext | None:
    """Validate the filters against what the user may see; None when the user has no firm.

    Unknown and walled-off firms or matters get the same message, so nothing is revealed."""
    firms = user_firms(user)
    if firm_id is not None:
        firm = firms.filter(pk=firm_id).first()
        if firm is None:
            raise NavigationInputError(f"unknown firm {firm_id}")
    else:
        firm = firms.first()
        if firm is None:
            return None
    if matter_id is not None and not Matter.objects.assigned_to(user).filter(pk=matter_id, firm=firm).exists():
        raise NavigationInputError(f"unknown matter {matter_id}")
    if scope is not None and scope not in MemoryScope.values:
        raise NavigationInputError(f"unknown scope {scope!r}; expected one of {', '.join(MemoryScope.values)}")
    if event is not None and (not event or len(event) > 300):
        raise NavigationInputError("event must be a non-empty key of at most 300 characters")
    return GraphContext(user, firm, GraphFilters(matter_id, scope or None, event or None))


def _base_notes(context: GraphContext) -> QuerySet[Note]:
    queryset = (
        Note.objects.visible_to(context.user).filter(firm=context.firm).active().with_embedding()
    )
    if context.filters.matter_id is not None:
        queryset = queryset.filter(matter_id=context.filters.matter_id)
    if context.filters.scope:
        queryset = queryset.filter(memory_scope=context.filters.scope)
    return queryset


def _fingerprint(context: GraphContext) -> tuple:
    matters = tuple(
        sorted(Matter.objects.assigned_to(context.user).filter(firm=context.firm).values_list("pk", flat=True))
    )
    return (context.firm.pk, context.user.pk, matters, context.filters, graph_params())


def _version(queryset: QuerySet[Note]) -> str:
    row = queryset.aggregate(count=Count("id"), updated=Max("updated_at"), stored=Max("stored_at"))
    updated = row["updated"].isoformat() if row["updated"] else "-"
    stored = row["stored"].isoformat() if row["stored"] else "-"
    return f"{row['count']}:{updated}:{stored}"


def _build(context: GraphContext, queryset: QuerySet[Note], version: str) -> BuiltGraph:
    limit = settings.NAV_MAX_NOTES
    rows = list(
        queryset.order_by("-stored_at", "id").annotate(label=Left("content", 40)).values_list(
            "id", "embedding", "search_text", "keywords", "importance", "memory_scope", "category",
            "matter_id", "tags", "source_type", "source_id", "label",
        )[: limit + 1]
    )
    truncated = len(rows) > limit
    rows = rows[:limit]
    events = [event_key(tags=r[8], source_type=r[9], source_id=r[10], matter_id=r[7]) for r in rows]
    if context.filters.event:
        keep = [i for i, key in enumerate(events) if key == context.filters.event]
        rows, events = [rows[i] for i in keep], [events[i] for i in keep]
    ids = [str(r[0]) for r in rows]
    vectors = np.array([np.asarray(r[1], dtype=np.float32) for r in rows], dtype=np.float32).reshape(len(rows), -1)
    if len(rows):
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.where(norms == 0, 1, norms)
    tokens = [frozenset((r[2] or "").split()) | frozenset(k.lower() for k in r[3]) for r in rows]
    graph = build_graph(GraphInput(ids, vectors, tokens, [float(r[4]) for r in rows]), graph_params())
    by_id = {str(r[0]): (r, e) for r, e in zip(rows, events)}
    info = []
    for note_id in graph.ids:
        r, e = by_id[note_id]
        info.append(NodeInfo(r[5], r[6], r[7], e, r[11], float(r[4])))
    titles = dict(
        Matter.objects.assigned_to(context.user).filter(firm=context.firm).values_list("pk", "title")
    )
    return BuiltGraph(graph, info, version, truncated, titles)


def built_graph(context: GraphContext) -> BuiltGraph:
    """The graph of the context's visible notes: from this process's cache when the notes
    have not changed since it was built, else built now (see navigation/cache.py)."""
    queryset = _base_notes(context)
    version = _version(queryset)
    return cache.get_or_build(
        _fingerprint(context), version, lambda: _build(context, queryset, version),
        capacity=settings.NAV_CACHE_ENTRIES,
    )


def node_payload(built: BuiltGraph, index: int) -> dict[str, Any]:
    graph, info = built.graph, built.info[index]
    x, y = built.graph.layout[index]
    # Only what the page draws: the detail (category, source, matter, event) comes with the trace.
    return {
        "i": index,
        "id": graph.ids[index],
        "level": int(graph.levels[index]),
        "x": round(float(x), 4),
        "y": round(float(y), 4),
        "scope": info.scope,
        "label": info.label,
    }


def graph_page(built: BuiltGraph, *, l0_offset: int, l0_limit: int) -> dict[str, Any]:
    """Upper levels always; L0 one region at a time (nodes in layout order, left to right).

    Edges are those whose two ends are both in the page, with their merged ``levels``."""
    graph = built.graph
    n = graph.size
    upper = np.flatnonzero(graph.levels >= 1).tolist() if n else []
    region = graph.order[l0_offset:l0_offset + l0_limit].tolist() if n else []
    included = sorted(set(upper) | set(region))
    chosen = set(included)
    edges = [
        {"s": e.source, "t": e.target, "levels": e.levels, "w": round(e.score, 3)} | ({"bridge": True} if e.bridge else {})
        for e in graph.edges
        if e.source in chosen and e.target in chosen
    ]
    counts = np.bincount(graph.levels, minlength=graph.max_level + 1) if n else np.zeros(1, dtype=int)
    layers = [
        {"level": level, "count": int(counts[level:].sum()), "top_count": int(counts[level])}
        for level in range(graph.max_level, -1, -1)
    ]
    event_counts: dict[str, int] = {}
    for info in built.info:
        if info.event:
            event_counts[info.event] = event_counts.get(info.event, 0) + 1
    next_offset = l0_offset + l0_limit if l0_offset + l0_limit < n else None
    return {
        "params": graph.params.as_dict() | {"max_level": graph.max_level},
        "version": built.version,
        "truncated": built.truncated,
        "total_nodes": n,
        "entry": graph.ids[graph.entry] if n else None,
        "layers": layers,
        "events": [
            {"key": key, "label": event_label(key, built.matter_titles), "count": count}
            for key, count in sorted(event_counts.items())
        ],
        "nodes": [node_payload(built, i) for i in included],
        "edges": edges,
        "l0_page": {
            "offset": l0_offset,
            "limit": l0_limit,
            "returned": len(region),
            "total": n,
            "next_offset": next_offset,
        },
    }


def trace_payload_empty() -> dict[str, Any]:
    return {"entry": None, "l0_start": None, "path": [], "path_nodes": [], "hit": False,
            "reached": False, "extra_expansions": 0, "visited": [], "visited_total": 0,
            "candidates": [], "nodes": []}


def trace_payload(built: BuiltGraph, result: Trace, *, visited_limit: int = 2000) -> dict[str, Any]:
    """A trace as the page draws it: ids, the path steps, and every node it mentions."""
    graph = built.graph
    if graph.size == 0:
        return trace_payload_empty()
    path_nodes = [graph.ids[result.entry]] + [graph.ids[s.target] for s in result.path]
    visited = [
        {"id": graph.ids[node], "level": level, "score": round(score, 4)}
        for node, level, score in result.visited[:visited_limit]
    ]
    mentioned = {result.entry, result.l0_start, result.goal}
    mentioned.update(s.source for s in result.path)
    mentioned.update(s.target for s in result.path)
    mentioned.update(node for node, _ in result.results)
    mentioned.update(node for node, _, _ in result.visited[:visited_limit])
    return {
        "entry": graph.ids[result.entry],
        "l0_start": graph.ids[result.l0_start],
        "goal": graph.ids[result.goal],
        "path": [
            {"source": graph.ids[s.source], "target": graph.ids[s.target], "level": s.level, "phase": s.phase}
            for s in result.path
        ],
        "path_nodes": path_nodes,
        "hit": result.hit,
        "reached": result.reached,
        "extra_expansions": result.extra_expansions,
        "ef": max(len(result.results), graph.params.ef_search),
        "visited": visited,
        "visited_total": len(result.visited),
        "candidates": [
            {"id": graph.ids[node], "score": round(score, 4), "rank": rank + 1}
            for rank, (node, score) in enumerate(result.results)
        ],
        "nodes": [node_payload(built, i) for i in sorted(mentioned)],
    }


def trace_query(built: BuiltGraph, text: str, *, k: int, target: int | None = None) -> Trace:
    """Run the real search for ``text`` (query encoder + segmented words) on the graph."""
    vector = get_embedder().embed_query(text)
    norm = float(np.linalg.norm(vector)) or 1.0
    scorer = query_scorer(built.graph, np.asarray(vector, dtype=np.float32) / norm, frozenset(segment(text)))
    return trace(built.graph, scorer, k=k, target=target)


def visible_note(user, note_id) -> Note:
    """A note the user may see (Note.DoesNotExist otherwise, whatever the reason)."""
    return Note.objects.visible_to(user).select_related("matter").get(pk=note_id)
