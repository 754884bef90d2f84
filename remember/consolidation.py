"""Working-memory overflow (docs/write-path.md, step 7): the oldest messages beyond the last
N leave working memory in batches, and what was never extracted is extracted first. The turn
job calls this after each turn; it uses ``apply`` and ``working_memory``, neither uses it."""
from __future__ import annotations

from memory.models import Consolidation, Conversation, Message, TurnExtraction
from memory.services.consolidations import consolidated_messages_mark, consolidation_create
from remember.apply import process_batch
from remember.drafts import Provenance
from remember.working_memory import overflow_limits, unconsolidated


def consolidate_overflow(
    conversation: Conversation, *, actor, provenance: Provenance | None = None
) -> list[Consolidation]:
    """While more than N messages are unconsolidated, move the oldest batch (5) out of working
    memory. Messages whose turn was already extracted are only archived; the rest (a question
    never answered, a cancelled reply…) go through the same extraction first, so nothing said
    is lost to long-term memory. Notes made carry the caller's ``provenance`` when given.
    Returns the consolidations made."""
    made: list[Consolidation] = []
    size, batch = overflow_limits()
    while unconsolidated(conversation).count() > size:
        oldest = list(unconsolidated(conversation)[:batch])
        turns = TurnExtraction.objects.filter(conversation=conversation)
        extracted = set(turns.values_list("user_message_id", flat=True)) | set(
            turns.values_list("assistant_message_id", flat=True)
        )
        leftover = [m for m in oldest if m.pk not in extracted and m.status == Message.Status.COMPLETE]
        consolidation = consolidation_create(conversation=conversation)
        if leftover:
            process_batch(consolidation, leftover, actor=actor, provenance=provenance)  # may raise: nothing is marked then
        consolidated_messages_mark(oldest, consolidation)
        made.append(consolidation)
    return made
