"""Reads of navigation: the page's context, the visible note set, its version and listing,
the rows a graph is made of, stored graphs, and the real search on a graph. No writes.

Everything starts from ``Note.objects.visible_to(user)``: a graph is built only from notes
the user may see, so nodes, edges, counts and trace steps of anything else never exist in it.
Which graph a request gets (cache → stored → incremental → build) is ``navigation.freshness``;
how it is shown is ``navigation.serializers`` (docs/navigation.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone as dt_timezone
from typing import Any

import numpy as np
from django.db.models import Count, Max, QuerySet, TextField, Value
from django.db.models.functions import MD5, Cast, Concat, Left
from django.utils.translation import gettext

from memory.disclosure import DISCLOSURE_RULE, ProvenanceRef, Viewer, hides_private_trace, viewer_of
from infra.embeddings import get_embedder
from memory.models import Firm, Matter, MemoryScope, Note
from memory.segmentation import segment
from navigation import snapshots, tuning
from navigation.built import BuiltGraph, NodeInfo
from navigation.events import event_key
from navigation.graph import GraphInput, GraphParams, Trace, query_scorer, trace
from navigation.models import NavigationGraphSnapshot

class NavigationInputError(ValueError):
    """A filter or limit the user gave is not acceptable (→ 400 with this message)."""


@dataclass(frozen=True)
class GraphFilters:
    matter_id: int | None = None
    scope: str | None = None
    event: str | None = None


@dataclass(frozen=True)
class GraphContext:
    """Which graph: a firm of the user's, the filters of the page, and the moment — None for
    now, else the memory as it stood then (system time, ``Note.objects.as_of``)."""

    user: Any
    firm: Firm
    filters: GraphFilters = GraphFilters()
    as_of: datetime | None = None


def graph_params() -> GraphParams:
    return GraphParams(
        m=tuning.NAV_M,
        m0=tuning.NAV_M0,
        ef_search=tuning.NAV_EF_SEARCH,
        lexical_weight=tuning.NAV_LEXICAL_WEIGHT,
        candidates=tuning.NAV_CANDIDATES,
    )


def user_firms(user) -> QuerySet[Firm]:
    return Firm.objects.of_user(user).order_by("name", "id")


def resolve_context(user, *, firm_id: int | None = None, matter_id: int | None = None,
                    scope: str | None = None, event: str | None = None,
                    as_of: datetime | None = None) -> GraphContext | None:
    """Validate the filters against what the user may see; None when the user has no firm.
    ``as_of``: a moment already read by ``memory.as_of.parse_as_of`` (None for now).

    Unknown and walled-off firms or matters get the same message, so nothing is revealed."""
    firms = user_firms(user)
    if firm_id is not None:
        firm = firms.filter(pk=firm_id).first()
        if firm is None:
            raise NavigationInputError(gettext("Unknown firm %(id)s.") % {"id": firm_id})
    else:
        firm = firms.first()
        if firm is None:
            return None
    if matter_id is not None and not Matter.objects.assigned_to(user).filter(pk=matter_id, firm=firm).exists():
        raise NavigationInputError(gettext("Unknown matter %(id)s.") % {"id": matter_id})
    if scope is not None and scope not in MemoryScope.values:
        raise NavigationInputError(gettext("Unknown memory layer %(scope)s; expected one of: %(layers)s.") % {
            "scope": scope, "layers": "、".join(str(label) for label in MemoryScope.labels)})
    if event is not None and (not event or len(event) > 300):
        raise NavigationInputError(gettext("The event must be a non-empty key of at most 300 characters."))
    return GraphContext(user, firm, GraphFilters(matter_id, scope or None, event or None), as_of)


def visible_notes(context: GraphContext) -> QuerySet[Note]:
    """The notes the context's graph is made of: visible to the user (walls, firm, owner), in
    the firm, current now — or, with ``as_of``, current then (stored by then, not yet retired;
    forgotten and erased notes on no date) — and embedded."""
    queryset = (
        Note.objects.visible_to(context.user).filter(firm=context.firm)
        .in_state(Note.Status.ACTIVE, context.as_of).with_embedding()
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
    fingerprint = (context.firm.pk, context.user.pk, matters, context.filters, graph_params(), DISCLOSURE_RULE)
    # A past moment is its own graph; the graph of now keeps the key it always had.
    if context.as_of is None:
        return fingerprint
    return fingerprint + (("as_of", context.as_of.astimezone(dt_timezone.utc).isoformat()),)


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


def stamped(queryset: QuerySet[Note]) -> QuerySet[Note]:
    """``stamp``: an MD5 of what the graph uses of a note, computed by PostgreSQL; a note whose
    stamp differs from the one a graph was made with is removed and inserted again."""
    parts = []
    for name in STAMP_PARTS:
        parts += [Cast(name, TextField()), Value("\x1f")]
    return queryset.annotate(stamp=MD5(Concat(*parts, output_field=TextField())))


#: How much of a note's wording labels its node.
LABEL_CHARS = 40


def note_rows(queryset: QuerySet[Note]):
    return stamped(queryset).annotate(label=Left("content", LABEL_CHARS)).values_list(*ROW_FIELDS)


def graph_input(context: GraphContext, rows: list[tuple]) -> tuple[GraphInput, dict[str, tuple[NodeInfo, str]]]:
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
    labels = _labels_then(context.as_of, ids) if context.as_of is not None else {}
    details = {
        str(r[0]): (NodeInfo(r[5], r[6], r[7], e, labels.get(str(r[0]), r[11]), float(r[4])), r[12])
        for r, e in zip(rows, events)
    }
    return GraphInput(ids, vectors, tokens, [float(r[4]) for r in rows]), details


def _labels_then(as_of: datetime, ids: list[str]) -> dict[str, str]:
    """The labels of the notes a person corrected after ``as_of``, in the wording they had then
    (``Note.content_at``); only a note changed since can have been."""
    changed = Note.objects.filter(pk__in=ids, updated_at__gt=as_of).only("id", "content", "evolution_history")
    return {str(note.pk): note.content_at(as_of)[:LABEL_CHARS] for note in changed}


def matter_titles(context: GraphContext) -> dict[int, str]:
    return dict(Matter.objects.assigned_to(context.user).filter(firm=context.firm).values_list("pk", "title"))


def listing(context: GraphContext, queryset: QuerySet[Note]) -> tuple[dict[str, str], bool]:
    """What the graph must hold now, without the heavy columns: id → stamp, and truncated."""
    limit = tuning.NAV_MAX_NOTES
    fields = ("key", "stamp") + (
        ("tags", "source_type", "source_id", "matter_id", "owner_id", "conversation_id") if context.filters.event else ()
    )
    rows = list(
        stamped(queryset).annotate(key=Cast("id", TextField()))
        .order_by("-stored_at", "id").values_list(*fields)[: limit + 1]
    )
    truncated = len(rows) > limit
    rows = rows[:limit]
    if context.filters.event:
        viewer = viewer_of(context.user)
        rows = [r for r in rows if _event_of(context, viewer, *r[2:8]) == context.filters.event]
    return {r[0]: r[1] for r in rows}, truncated


def stored_graph(context: GraphContext, digest: str, version: str | None) -> BuiltGraph | None:
    """The stored graph of this key at ``version`` (None: the latest stored one), if any."""
    rows = NavigationGraphSnapshot.objects.filter(key_hash=digest)
    if version is not None:
        rows = rows.filter(version=version)
    data = rows.order_by("-created_at").values_list("data", flat=True).first()
    return snapshots.decode(data, matter_titles=matter_titles(context)) if data is not None else None


def stored_pages(firm_id: int) -> list[tuple[int, dict]]:
    """(user id, filters) of every page of the firm with a stored graph."""
    return list(
        NavigationGraphSnapshot.objects.filter(firm_id=firm_id)
        .values_list("user_id", "filters").order_by("user_id").distinct()
    )


def snapshot_exists(digest: str, version: str) -> bool:
    """Whether the graph of this key at this version is stored (every process then serves it)."""
    return NavigationGraphSnapshot.objects.filter(key_hash=digest, version=version).exists()


def graph_key(context: GraphContext) -> tuple[tuple, str]:
    """The context's visibility fingerprint and its hash (the snapshot key)."""
    fingerprint = _fingerprint(context)
    return fingerprint, snapshots.key_hash(fingerprint)


def trace_query(built: BuiltGraph, text: str, *, k: int, target: int | None = None) -> Trace:
    """Run the real search for ``text`` (query encoder + segmented words) on the graph."""
    vector = get_embedder().embed_query(text)
    norm = float(np.linalg.norm(vector)) or 1.0
    scorer = query_scorer(built.graph, np.asarray(vector, dtype=np.float32) / norm, frozenset(segment(text)))
    return trace(built.graph, scorer, k=k, target=target)


def visible_note(user, note_id) -> Note:
    """A note the user may see (Note.DoesNotExist otherwise, whatever the reason)."""
    return Note.objects.visible_to(user).select_related("matter").get(pk=note_id)
