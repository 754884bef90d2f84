"""Writes of navigation: the stored graphs (NavigationGraphSnapshot) and their refresh.

A snapshot is written after a full build on a page request (so that build is never repeated by
another process) and by the background refresh (navigation.tasks) shortly after notes change,
for every key of the firm a page used recently: the page view that follows finds its graph
ready and only reads it.
"""
from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from navigation import snapshots
from navigation.built import BuiltGraph
from navigation.models import NavigationGraphSnapshot
from navigation.selectors import (
    GraphContext,
    NavigationInputError,
    build,
    graph_key,
    incremental_limits,
    notes_version,
    resolve_context,
    stored_graph,
    update,
    visible_notes,
)

logger = logging.getLogger("legalmem.navigation")


def _filters(context: GraphContext) -> dict:
    f = context.filters
    return {"matter_id": f.matter_id, "scope": f.scope, "event": f.event}


def store_snapshot(context: GraphContext, digest: str, built: BuiltGraph, *, used_at: datetime | None = None) -> bool:
    """Keep ``built`` as the graph of its key and version (the first one stored for a version
    wins, so every process serves the same graph); older versions of the key are dropped.
    Returns whether this graph is now the stored one."""
    data = snapshots.encode(built)
    same_page = NavigationGraphSnapshot.objects.filter(firm=context.firm, user=context.user, filters=_filters(context))
    with transaction.atomic():
        used_at = used_at or same_page.aggregate(last=Max("used_at"))["last"] or timezone.now()
        row, created = NavigationGraphSnapshot.objects.get_or_create(
            key_hash=digest, version=built.version,
            defaults={
                "firm": context.firm, "user": context.user, "filters": _filters(context),
                "node_count": built.graph.size, "changes_since_build": built.graph.changes_since_build,
                "data": data, "used_at": used_at,
            },
        )
        # Older versions of this key, and keys of this page that are no longer the user's
        # (another set of assigned matters, other parameters): never served again.
        same_page.filter(key_hash=digest, created_at__lt=row.created_at).delete()
        same_page.exclude(key_hash=digest).delete()
    built.stored = created
    return created


def refresh_key(context: GraphContext) -> str:
    """Store the graph of the context's current notes unless it is stored already: the latest
    stored graph of the key updated incrementally, or a full build when the change — or the
    drift since the last full build — is large. Returns what was done."""
    queryset = visible_notes(context)
    version = notes_version(queryset)
    _fingerprint, digest = graph_key(context)
    if NavigationGraphSnapshot.objects.filter(key_hash=digest, version=version).exists():
        return "current"
    base = stored_graph(context, digest, None)
    built, kind = None, "builds"
    if base is not None:
        built, changed = update(context, queryset, version, base, incremental_limits(background=True))
        kind = "incremental" if changed else "unchanged"
    if built is None:
        built, kind = build(context, queryset, version), "builds"
    store_snapshot(context, digest, built)
    return kind


def refresh_firm(firm_id: int) -> dict[str, int]:
    """Bring every recently used stored graph of the firm up to date; forget the unused ones
    and those of pages the user may no longer open (left the firm, lost the matter)."""
    cutoff = timezone.now() - timedelta(days=settings.NAV_SNAPSHOT_TTL_DAYS)
    NavigationGraphSnapshot.objects.filter(firm_id=firm_id, used_at__lt=cutoff).delete()
    pages = (
        NavigationGraphSnapshot.objects.filter(firm_id=firm_id)
        .values_list("user_id", "filters").order_by("user_id").distinct()
    )
    done: dict[str, int] = {}
    users = get_user_model().objects.in_bulk({user_id for user_id, _ in pages})
    for user_id, filters in list(pages):
        user = users.get(user_id)
        try:
            context = resolve_context(
                user, firm_id=firm_id, matter_id=filters.get("matter_id"), scope=filters.get("scope"),
                event=filters.get("event"),
            ) if user is not None and user.is_active else None
        except NavigationInputError:
            context = None
        if context is None:
            NavigationGraphSnapshot.objects.filter(firm_id=firm_id, user_id=user_id, filters=filters).delete()
            done["dropped"] = done.get("dropped", 0) + 1
            continue
        kind = refresh_key(context)
        done[kind] = done.get(kind, 0) + 1
    logger.info("navigation graphs of firm %s refreshed: %s", firm_id, done)
    return done
