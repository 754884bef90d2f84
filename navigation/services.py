"""Writes of navigation: the stored graphs (NavigationGraphSnapshot).

A snapshot is written after a full build on a page request (so that build is never repeated by
another process) and by the background refresh shortly after notes change; both are decided by
``navigation.freshness``. Keys a page no longer uses are forgotten here.
"""
from __future__ import annotations

import time
from datetime import datetime

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from navigation import snapshots
from navigation.built import BuiltGraph
from navigation.models import NavigationGraphSnapshot
from navigation.selectors import GraphContext


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


_marked: dict[str, float] = {}
MARK_EVERY_SECONDS = 300.0


def mark_used(digest: str) -> None:
    """Tell the background refresh this key is in use (at most every few minutes per process)."""
    now = time.monotonic()
    if now - _marked.get(digest, -MARK_EVERY_SECONDS) >= MARK_EVERY_SECONDS:
        _marked[digest] = now
        NavigationGraphSnapshot.objects.filter(key_hash=digest).update(used_at=timezone.now())


def forget_unused(firm_id: int, *, before: datetime) -> int:
    """Drop the firm's stored graphs no page has used since ``before``. Returns how many."""
    deleted, _ = NavigationGraphSnapshot.objects.filter(firm_id=firm_id, used_at__lt=before).delete()
    return deleted


def forget_page(firm_id: int, user_id: int, filters: dict) -> None:
    """Drop the stored graphs of a page its user may no longer open."""
    NavigationGraphSnapshot.objects.filter(firm_id=firm_id, user_id=user_id, filters=filters).delete()


def erase_firm_snapshots(unit) -> int:
    """An erasure's hook (``memory.erasure_hooks``, registered in ``NavigationConfig.ready``):
    stored graphs of the unit's firm hold note text; they are rebuilt on the next page view.
    Runs inside the erasure's transaction; returns how many snapshots went."""
    deleted, _ = NavigationGraphSnapshot.objects.filter(firm=unit.firm).delete()
    return deleted
