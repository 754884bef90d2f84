"""The routing decisions already recorded for a source (a turn, a consolidation): each item is
routed once per source and content hash, so a resumed job never writes an item twice. Inside a
bulk import's turn transaction (memory/services/transaction_memo.py) the turn's decisions are
read once, and each new one is added as it is recorded, instead of one read per item."""
from __future__ import annotations

from memory.models import RoutingDecision
from memory.services.transaction_memo import in_memo_scope, remembered


def _of_source(source_key: str) -> dict[str, RoutingDecision]:
    return {d.content_hash: d for d in RoutingDecision.objects.filter(source_key=source_key)}


def recorded_decision(source_key: str, fingerprint: str) -> RoutingDecision | None:
    """The decision already recorded for this item of this source, if any."""
    if not in_memo_scope():
        return RoutingDecision.objects.filter(source_key=source_key, content_hash=fingerprint).first()
    return remembered(("decisions", source_key), lambda: _of_source(source_key)).get(fingerprint)


def remember_decision(decision: RoutingDecision) -> RoutingDecision:
    """Note a decision just recorded (the turn's later items see it without a read)."""
    if in_memo_scope():
        known = remembered(("decisions", decision.source_key), lambda: _of_source(decision.source_key))
        known[decision.content_hash] = decision
    return decision
