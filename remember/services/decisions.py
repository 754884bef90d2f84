"""The routing decisions already recorded for a source (a turn, a consolidation): each item is
routed once per source and content hash, so a resumed job never writes an item twice.

Inside a bulk import's turn transaction (memory/transaction_memo.py) the turn's
decisions are read once; a new one is kept in memory and the turn's new decisions are inserted
together (``flush_decisions``, before the turn finishes) instead of one read and one insert per
item. Outside it every decision is read and inserted at once, as before.

A decision is itself the record of what the write path decided (admin and *my memory* show it),
so it is not audited again; each write joins the caller's transaction.
"""
from __future__ import annotations

from typing import Any

from django.db import transaction

from memory.models import RoutingDecision
from memory.transaction_memo import in_memo_scope, remembered


def _of_source(source_key: str) -> dict[str, RoutingDecision]:
    return {d.content_hash: d for d in RoutingDecision.objects.filter(source_key=source_key)}


def _known(source_key: str) -> dict[str, RoutingDecision]:
    return remembered(("decisions", source_key), lambda: _of_source(source_key))


def _unsaved() -> list[RoutingDecision]:
    return remembered("unsaved-decisions", list)


def recorded_decision(source_key: str, fingerprint: str) -> RoutingDecision | None:
    """The decision already recorded for this item of this source, if any."""
    if not in_memo_scope():
        return RoutingDecision.objects.filter(source_key=source_key, content_hash=fingerprint).first()
    return _known(source_key).get(fingerprint)


def record_decision(**fields) -> RoutingDecision:
    """Record a routing decision: inserted now, or with the turn's others in a bulk import."""
    if not in_memo_scope():
        with transaction.atomic(savepoint=False):
            return RoutingDecision.objects.create(**fields)
    decision = RoutingDecision(**fields)
    _known(decision.source_key)[decision.content_hash] = decision
    _unsaved().append(decision)
    return decision


def flush_decisions() -> None:
    """Insert the decisions kept in memory (one statement); nothing to do outside a bulk turn."""
    if not in_memo_scope():
        return
    unsaved = _unsaved()
    if unsaved:
        with transaction.atomic(savepoint=False):
            RoutingDecision.objects.bulk_create(unsaved)
        unsaved.clear()


def record_refusal(*, source_key: str, content_hash: str, fields: dict[str, Any]) -> RoutingDecision:
    """The IGNORE decision of an item the checks refused (``fields``: its firm, owner, reason …),
    recorded now unless this item of this source has one already; later items of a bulk turn
    find it (``remember_decision``)."""
    flush_decisions()  # a decision kept in memory is found by the read below
    with transaction.atomic(savepoint=False):
        decision, _ = RoutingDecision.objects.get_or_create(source_key=source_key, content_hash=content_hash,
                                                            defaults=fields)
    return remember_decision(decision)


def remember_decision(decision: RoutingDecision) -> RoutingDecision:
    """Note a decision inserted elsewhere (an invalid item's IGNORE) for the turn's later items."""
    if in_memo_scope():
        _known(decision.source_key)[decision.content_hash] = decision
    return decision


def read_decisions_of(source_key: str) -> None:
    """Read the source's decisions at the start of a bulk turn, outside any savepoint, so the
    turn's items — persona items run in a savepoint of their own — share one record of them."""
    _known(source_key)
    _unsaved()
