"""Read side of navigation: the visible note set, its cached graph, graph pages and traces.

Everything starts from ``Note.objects.visible_to(user)``: a graph is built only from notes
the user may see, so nodes, edges, counts and trace steps of anything else never exist in it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from django.conf import settings
from django.db.models import Count, Max, QuerySet, TextField, Value
from django.db.models.functions import MD5, Cast, Concat, Left
from django.utils import timezone

from memory.disclosure import DISCLOSURE_RULE, ProvenanceRef, Viewer, hides_private_trace, viewer_of
from memory.embeddings import get_embedder
from memory.models import Firm, Matter, MemoryScope, Note
from memory.segmentation import segment
from navigation import cache, snapshots
from navigation.built import BuiltGraph, NodeInfo
from navigation.events import event_key, event_label
from navigation.graph import GraphInput, GraphParams, Trace, build_graph, query_scorer, trace
from navigation.incremental import IncrementalLimits, apply_delta, incremental_blocker
from navigation.models import NavigationGraphSnapshot

__all__ = ["BuiltGraph", "NodeInfo"]  # re-exported (navigation.search and the bench import them from here)


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


def visible_notes(context: GraphContext) -> QuerySet[Note]:
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
    return (context.firm.pk, context.user.pk, matters, context.filters, graph_params(), DISCLOSURE_RULE)


def notes_version(queryset: QuerySet[Note]) -> str:
    row = queryset.aggregate(count=Count("id"), updated=Max("updated_at"), stored=Max("stored_at"))
    updated = row["updated"].isoformat() if row["updated"] else "-"
    stored = row["stored"].isoformat() if row["stored"] else "-"
    return f"{row['count']}:{updated}:{stored}"


ROW_FIELDS = ("id", "embedding", "search_text", "keywords", "importance", "memory_scope", "category",
              "matter_id", "tags", "source_type", "source_id", "label", "stamp", "owner_id", "conversation_id")


def _event_of(context: GraphContext, viewer: Viewer, tags, source_type, source_id, matter_id, owner_id,
              conversation_id) -> str:
    """The note's event key, or "" when it would show a colleague's private conversation
    (memory/disclosure.py)."""
    if hides_private_trace(ProvenanceRef(context.firm.pk, matter_id, owner_id, conversation_id), viewer):
        return ""
    return event_key(tags=tags, source_type=source_type, source_id=source_id, matter_id=matter_id)


# What a node of the graph is made of: its words and vector (content, keywords, embedding model),
# its level and entry rank (importance), and what the page shows of it (layer, category, matter,
# event from tags and source). A change elsewhere (a mention count, a confidence) is no change.
STAMP_PARTS = ("content", "embedding_model", "keywords", "importance", "memory_scope", "category", "matter_id",
               "tags", "source_type", "source_id")


def _stamped(queryset: QuerySet[Note]) -> QuerySet[Note]:
    """``stamp``: an MD5 of what the graph uses of a note, computed by PostgreSQL; a note whose
    stamp differs from the one a graph was made with is removed and inserted again."""
    parts = []
    for name in STAMP_PARTS:
        parts += [Cast(name, TextField()), Value("\x1f")]
    return queryset.annotate(stamp=MD5(Concat(*parts, output_field=TextField())))


def _rows(queryset: QuerySet[Note]):
    return _stamped(queryset).annotate(label=Left("content", 40)).values_list(*ROW_FIELDS)


def _graph_input(context: GraphContext, rows: list[tuple]) -> tuple[GraphInput, dict[str, tuple[NodeInfo, str]]]:
    """The build's input of these rows (after the event filter), and each note's info and stamp."""
    viewer = viewer_of(context.user)
    events = [_event_of(context, viewer, r[8], r[9], r[10], r[7], r[13], r[14]) for r in rows]
    if context.filters.event:
        keep = [i for i, key in enumerate(events) if key == context.filters.event]
        rows, events = [rows[i] for i in keep], [events[i] for i in keep]
    ids = [str(r[0]) for r in rows]
    vectors = np.zeros((0, 0), dtype=np.float32)
    if len(rows):
        vectors = np.array([np.asarray(r[1], dtype=np.float32) for r in rows], dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.where(norms == 0, 1, norms)
    tokens = [frozenset((r[2] or "").split()) | frozenset(k.lower() for k in r[3]) for r in rows]
    details = {
        str(r[0]): (NodeInfo(r[5], r[6], r[7], e, r[11], float(r[4])), r[12]) for r, e in zip(rows, events)
    }
    return GraphInput(ids, vectors, tokens, [float(r[4]) for r in rows]), details


def _titles(context: GraphContext) -> dict[int, str]:
    return dict(Matter.objects.assigned_to(context.user).filter(firm=context.firm).values_list("pk", "title"))


def build(context: GraphContext, queryset: QuerySet[Note], version: str) -> BuiltGraph:
    """A full build of the context's visible notes (deterministic: same notes, same graph)."""
    limit = settings.NAV_MAX_NOTES
    rows = list(_rows(queryset.order_by("-stored_at", "id"))[: limit + 1])
    truncated = len(rows) > limit
    data, details = _graph_input(context, rows[:limit])
    graph = build_graph(data, graph_params())
    info = [details[note_id][0] for note_id in graph.ids]
    stamps = {note_id: details[note_id][1] for note_id in graph.ids}
    return BuiltGraph(graph, info, version, truncated, _titles(context), stamps)


def _listing(context: GraphContext, queryset: QuerySet[Note]) -> tuple[dict[str, str], bool]:
    """What the graph must hold now, without the heavy columns: id → stamp, and truncated."""
    limit = settings.NAV_MAX_NOTES
    fields = ("key", "stamp") + (
        ("tags", "source_type", "source_id", "matter_id", "owner_id", "conversation_id") if context.filters.event else ()
    )
    rows = list(
        _stamped(queryset).annotate(key=Cast("id", TextField()))
        .order_by("-stored_at", "id").values_list(*fields)[: limit + 1]
    )
    truncated = len(rows) > limit
    rows = rows[:limit]
    if context.filters.event:
        viewer = viewer_of(context.user)
        rows = [r for r in rows if _event_of(context, viewer, *r[2:8]) == context.filters.event]
    return {r[0]: r[1] for r in rows}, truncated


def incremental_limits(*, background: bool = False) -> IncrementalLimits:
    return IncrementalLimits(ef_construction=settings.NAV_EF_CONSTRUCTION,
                             max_fraction=settings.NAV_REBUILD_FRACTION, count_drift=background)


def update(context: GraphContext, queryset: QuerySet[Note], version: str, base: BuiltGraph,
           limits: IncrementalLimits) -> tuple[BuiltGraph | None, bool]:
    """``base`` (an older graph of the same key) brought to the current visible set: notes no
    longer there (deleted, superseded, moved behind a wall, filtered out) removed, new and
    changed ones (another stamp) inserted. Returns (graph, whether anything changed);
    (None, True) when the change is too large for an incremental update (→ full build).

    The node set of the result is exactly the current visible set: only notes read through
    ``queryset`` (the visibility rule) are inserted, and every other id is removed."""
    current, truncated = _listing(context, queryset)
    removed = [note_id for note_id, stamp in base.stamps.items() if current.get(note_id) != stamp]
    added = [note_id for note_id, stamp in current.items() if base.stamps.get(note_id) != stamp]
    if not removed and not added:
        return replace(base, version=version, truncated=truncated, matter_titles=_titles(context)), False
    if incremental_blocker(base.graph, len(removed), len(added), limits):
        return None, True
    rows = list(_rows(queryset.filter(pk__in=added).order_by("id")))
    data, details = _graph_input(context, rows)
    graph = apply_delta(base.graph, removed, data, limits)
    info_of = dict(zip(base.graph.ids, base.info))
    stamps = dict(base.stamps)
    for note_id in removed:
        del stamps[note_id]
    for note_id, (info, stamp) in details.items():
        info_of[note_id] = info
        stamps[note_id] = stamp
    info = [info_of[note_id] for note_id in graph.ids]
    return BuiltGraph(graph, info, version, truncated, _titles(context), stamps), True


def stored_graph(context: GraphContext, digest: str, version: str | None) -> BuiltGraph | None:
    """The stored graph of this key at ``version`` (None: the latest stored one), if any."""
    rows = NavigationGraphSnapshot.objects.filter(key_hash=digest)
    if version is not None:
        rows = rows.filter(version=version)
    data = rows.order_by("-created_at").values_list("data", flat=True).first()
    return snapshots.decode(data, matter_titles=_titles(context)) if data is not None else None


def graph_key(context: GraphContext) -> tuple[tuple, str]:
    """The context's visibility fingerprint and its hash (the snapshot key)."""
    fingerprint = _fingerprint(context)
    return fingerprint, snapshots.key_hash(fingerprint)


_marked: dict[str, float] = {}
MARK_EVERY_SECONDS = 300.0


def _mark_used(digest: str) -> None:
    """Tell the background refresh this key is in use (at most every few minutes per process)."""
    now = time.monotonic()
    if now - _marked.get(digest, -MARK_EVERY_SECONDS) >= MARK_EVERY_SECONDS:
        _marked[digest] = now
        NavigationGraphSnapshot.objects.filter(key_hash=digest).update(used_at=timezone.now())


def _refresh(context: GraphContext, queryset: QuerySet[Note], version: str, digest: str,
             previous: BuiltGraph | None) -> tuple[BuiltGraph, str]:
    """Bring the key's graph to ``version``: the stored graph of that version if the background
    refresh made it, else this process's previous graph (or the latest stored one) updated
    incrementally, else — first view of the key, or a large change — a full build, stored."""
    stored = stored_graph(context, digest, version)
    base = stored or previous or stored_graph(context, digest, None)
    if base is not None:
        updated, changed = update(context, queryset, version, base, incremental_limits())
        if updated is not None:
            return updated, "incremental" if changed else ("snapshots" if stored is not None else "unchanged")
    built = build(context, queryset, version)
    from navigation.services import store_snapshot  # the one write of this read path: keep the build

    store_snapshot(context, digest, built)
    return built, "builds"


def built_graph(context: GraphContext) -> BuiltGraph:
    """The graph of the context's visible notes, current to the last committed note change.

    From this process's cache when the notes have not changed; else the stored graph of the new
    version (the background refresh keeps it ready), else an incremental update of the previous
    graph; a full build only on a key's first view or a large change (navigation/README.md)."""
    queryset = visible_notes(context)
    version = notes_version(queryset)
    fingerprint, digest = graph_key(context)
    _mark_used(digest)

    def accept(built: BuiltGraph) -> bool:  # a graph this process made gives way to the stored one
        return built.stored or not NavigationGraphSnapshot.objects.filter(key_hash=digest, version=version).exists()

    return cache.get_or_refresh(
        fingerprint, version, lambda previous: _refresh(context, queryset, version, digest, previous),
        capacity=settings.NAV_CACHE_ENTRIES, accept=accept,
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
