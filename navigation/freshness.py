"""Which navigation graph a request gets: one orchestrator for freshness (docs/navigation.md,
"Keeping the graph current").

``current_graph(context)``: this process's cache when the visible notes have not changed;
else the stored graph of the new version (the background refresh keeps it ready); else the
previous graph (this process's, or the latest stored one) updated incrementally; else — a
key's first view or a large change — a full build, stored at once. ``refresh_firm`` is the
same steps for the background task (``navigation.tasks``), for every page of a firm used
recently. Reads come from ``navigation.selectors``, writes go through
``navigation.services``; the graph itself is pure numpy (``graph``, ``incremental``).
"""
from __future__ import annotations

import logging
from dataclasses import replace
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.utils import timezone

from infra import metrics
from memory.models import Note
from navigation import cache, selectors, services, tuning
from navigation.built import BuiltGraph
from navigation.graph import build_graph
from navigation.incremental import IncrementalLimits, apply_delta, incremental_blocker
from navigation.selectors import GraphContext, NavigationInputError

logger = logging.getLogger("legalmem.navigation")


def current_graph(context: GraphContext) -> BuiltGraph:
    """The graph of the context's visible notes, current to the last committed note change:
    cache → stored → incremental → build. With ``as_of``, the graph of that moment (``_past``)."""
    queryset = selectors.visible_notes(context)
    version = selectors.notes_version(queryset)
    fingerprint, digest = selectors.graph_key(context)
    if context.as_of is not None:
        return cache.get_or_refresh(
            fingerprint, version, lambda previous: _past(context, queryset, version, previous),
            capacity=tuning.NAV_CACHE_ENTRIES,
        )
    services.mark_used(digest)

    def accept(built: BuiltGraph) -> bool:  # a graph this process made gives way to the stored one
        return built.stored or not selectors.snapshot_exists(digest, version)

    return cache.get_or_refresh(
        fingerprint, version, lambda previous: _refresh(context, queryset, version, digest, previous),
        capacity=tuning.NAV_CACHE_ENTRIES, accept=accept,
    )


def _refresh(context: GraphContext, queryset: QuerySet[Note], version: str, digest: str,
             previous: BuiltGraph | None) -> tuple[BuiltGraph, str]:
    """Bring the key's graph to ``version``: the stored graph of that version if the background
    refresh made it, else this process's previous graph (or the latest stored one) updated
    incrementally, else a full build, stored so no other process repeats it. Returns the graph
    and which of these it was (``cache.stats`` counts them)."""
    stored = selectors.stored_graph(context, digest, version)
    base = stored or previous or selectors.stored_graph(context, digest, None)
    if base is not None:
        updated, changed = update(context, queryset, version, base, incremental_limits())
        if updated is not None:
            return updated, "incremental" if changed else ("snapshots" if stored is not None else "unchanged")
    built = build(context, queryset, version)
    services.store_snapshot(context, digest, built)
    return built, "builds"


def _past(context: GraphContext, queryset: QuerySet[Note], version: str,
          previous: BuiltGraph | None) -> tuple[BuiltGraph, str]:
    """The graph of the memory as it stood at ``context.as_of``: always a full build, never
    stored. A full build is deterministic, so every process serves the same graph of a moment
    without a snapshot (and the background refresh never sees one); no history of updates
    shapes it. This process's previous graph of the moment is kept while it holds exactly the
    same notes (the version also moves when a note of then is superseded today); an erased or
    deleted note changes the set, so the graph is built again without it."""
    if previous is not None:
        current, truncated = selectors.listing(context, queryset)
        if current == previous.stamps:
            return replace(previous, version=version, truncated=truncated,
                           matter_titles=selectors.matter_titles(context)), "unchanged"
    return build(context, queryset, version), "builds"


def build(context: GraphContext, queryset: QuerySet[Note], version: str) -> BuiltGraph:
    """A full build of the context's visible notes (deterministic: same notes, same graph)."""
    limit = tuning.NAV_MAX_NOTES
    rows = list(selectors.note_rows(queryset.order_by("-stored_at", "id"))[: limit + 1])
    truncated = len(rows) > limit
    data, details = selectors.graph_input(context, rows[:limit])
    graph = build_graph(data, selectors.graph_params())
    metrics.NAVIGATION_BUILDS.labels("full").inc()
    info = [details[note_id][0] for note_id in graph.ids]
    stamps = {note_id: details[note_id][1] for note_id in graph.ids}
    return BuiltGraph(graph, info, version, truncated, selectors.matter_titles(context), stamps)


def incremental_limits(*, background: bool = False) -> IncrementalLimits:
    return IncrementalLimits(ef_construction=tuning.NAV_EF_CONSTRUCTION,
                             max_fraction=tuning.NAV_REBUILD_FRACTION, count_drift=background)


def update(context: GraphContext, queryset: QuerySet[Note], version: str, base: BuiltGraph,
           limits: IncrementalLimits) -> tuple[BuiltGraph | None, bool]:
    """``base`` (an older graph of the same key) brought to the current visible set: notes no
    longer there (deleted, superseded, moved behind a wall, filtered out) removed, new and
    changed ones (another stamp) inserted. Returns (graph, whether anything changed);
    (None, True) when the change is too large for an incremental update (→ full build).

    The node set of the result is exactly the current visible set: only notes read through
    ``queryset`` (the visibility rule) are inserted, and every other id is removed."""
    current, truncated = selectors.listing(context, queryset)
    removed = [note_id for note_id, stamp in base.stamps.items() if current.get(note_id) != stamp]
    added = [note_id for note_id, stamp in current.items() if base.stamps.get(note_id) != stamp]
    if not removed and not added:
        return replace(base, version=version, truncated=truncated, matter_titles=selectors.matter_titles(context)), False
    if incremental_blocker(base.graph, len(removed), len(added), limits):
        return None, True
    rows = list(selectors.note_rows(queryset.filter(pk__in=added).order_by("id")))
    data, details = selectors.graph_input(context, rows)
    graph = apply_delta(base.graph, removed, data, limits)
    metrics.NAVIGATION_BUILDS.labels("incremental").inc()
    info_of = dict(zip(base.graph.ids, base.info))
    stamps = dict(base.stamps)
    for note_id in removed:
        del stamps[note_id]
    for note_id, (info, stamp) in details.items():
        info_of[note_id] = info
        stamps[note_id] = stamp
    info = [info_of[note_id] for note_id in graph.ids]
    return BuiltGraph(graph, info, version, truncated, selectors.matter_titles(context), stamps), True


def refresh_key(context: GraphContext) -> str:
    """Store the graph of the context's current notes unless it is stored already: the latest
    stored graph of the key updated incrementally, or a full build when the change — or the
    drift since the last full build — is large. Returns what was done."""
    queryset = selectors.visible_notes(context)
    version = selectors.notes_version(queryset)
    _fingerprint, digest = selectors.graph_key(context)
    if selectors.snapshot_exists(digest, version):
        return "current"
    base = selectors.stored_graph(context, digest, None)
    built, kind = None, "builds"
    if base is not None:
        built, changed = update(context, queryset, version, base, incremental_limits(background=True))
        kind = "incremental" if changed else "unchanged"
    if built is None:
        built, kind = build(context, queryset, version), "builds"
    services.store_snapshot(context, digest, built)
    return kind


def refresh_firm(firm_id: int) -> dict[str, int]:
    """Bring every recently used stored graph of the firm up to date; forget the unused ones
    and those of pages the user may no longer open (left the firm, lost the matter)."""
    services.forget_unused(firm_id, before=timezone.now() - timedelta(days=tuning.NAV_SNAPSHOT_TTL_DAYS))
    pages = selectors.stored_pages(firm_id)
    done: dict[str, int] = {}
    users = get_user_model().objects.in_bulk({user_id for user_id, _ in pages})
    for user_id, filters in pages:
        user = users.get(user_id)
        try:
            context = selectors.resolve_context(
                user, firm_id=firm_id, matter_id=filters.get("matter_id"), scope=filters.get("scope"),
                event=filters.get("event"),
            ) if user is not None and user.is_active else None
        except NavigationInputError:
            context = None
        if context is None:
            services.forget_page(firm_id, user_id, filters)
            done["dropped"] = done.get("dropped", 0) + 1
            continue
        kind = refresh_key(context)
        done[kind] = done.get(kind, 0) + 1
    logger.info("navigation graphs of firm %s refreshed: %s", firm_id, done)
    return done
