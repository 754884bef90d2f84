"""Recording audit entries: the only way rows reach the append-only audit log."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

from memory.models import AuditEvent, AuditLog, Firm, Note

_batch = threading.local()


def actor_label(actor) -> str:
    """A readable name for whoever made a change: a user, or ``system:<component>``."""
    if isinstance(actor, str):
        return actor
    if actor is None:
        return "system"
    return actor.get_username()


def record(
    *,
    actor,
    event: AuditEvent,
    firm: Firm | None = None,
    firm_id: int | None = None,
    object_type: str,
    object_id: Any,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    matter_id: int | None = None,
    private_to_id: int | None = None,
    **extra: Any,
) -> AuditLog:
    """Append one entry. ``actor`` is a user, or a ``"system:<component>"`` string; the firm is
    given as ``firm`` or, when only its id is at hand, ``firm_id`` (no read of the firm row).
    Inside ``batched()`` the entry is inserted with the others at the end of the block."""
    entry = AuditLog(
        firm_id=firm.pk if firm is not None else firm_id,
        matter_id=matter_id,
        private_to_id=private_to_id,
        actor=None if isinstance(actor, str) or actor is None else actor,
        actor_label=actor_label(actor),
        event_type=event,
        object_type=object_type,
        object_id=str(object_id),
        before=before,
        after=after,
        extra=extra,
    )
    batch = getattr(_batch, "entries", None)
    if batch is None:
        entry.save()
    else:
        batch.append(entry)
    return entry


@contextmanager
def batched() -> Iterator[None]:
    """Collect the entries recorded inside the block and insert them in one statement when it
    ends (same rows, same order and timestamps). Use it inside the transaction that makes the
    changes they describe, so both commit or roll back together (routing's one transaction per
    item: docs/performance.md). On an error nothing is inserted."""
    if getattr(_batch, "entries", None) is not None:  # already batching: the outer block inserts
        yield
        return
    _batch.entries = []
    try:
        yield
        entries = _batch.entries
    finally:
        _batch.entries = None
    if entries:
        AuditLog.objects.bulk_create(entries)


def record_note_event(
    *,
    actor,
    event: AuditEvent,
    note: Note,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    **extra: Any,
) -> AuditLog:
    """Append an entry about a note; it inherits the note's wall (matter, private owner)."""
    private_to = note.private_to()
    return record(
        actor=actor,
        event=event,
        firm_id=note.firm_id,
        object_type="note",
        object_id=note.pk,
        before=before,
        after=after,
        matter_id=note.matter_id,
        private_to_id=private_to.pk if private_to else None,
        **extra,
    )
