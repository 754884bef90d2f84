"""Writing routing decisions (``RoutingDecision``): what the write path decided for each item
of a turn or a consolidation — itself the record of the decision (admin and ``my memory`` show
it), so not audited again. Each write joins the caller's transaction."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction

from memory.models import RoutingDecision


def routing_decision_create(**fields: Any) -> RoutingDecision:
    with transaction.atomic(savepoint=False):
        return RoutingDecision.objects.create(**fields)


def routing_decisions_create(decisions: Sequence[RoutingDecision]) -> None:
    """Insert decisions kept in memory during a bulk turn, in one statement."""
    with transaction.atomic(savepoint=False):
        RoutingDecision.objects.bulk_create(decisions)


def routing_decision_get_or_create(*, source_key: str, content_hash: str,
                                   defaults: dict[str, Any]) -> tuple[RoutingDecision, bool]:
    """The decision of this item of this source, recorded now with ``defaults`` if it is not yet."""
    with transaction.atomic(savepoint=False):
        return RoutingDecision.objects.get_or_create(source_key=source_key, content_hash=content_hash,
                                                     defaults=defaults)
