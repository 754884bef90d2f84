"""Working-memory overflow (docs/write-path.md, step 7): the oldest messages beyond the last
N leave working memory in batches, and what was never extracted is extracted first. The turn
job calls ``do_consolidate_overflow`` after each turn; it uses ``apply`` and
``working_memory``, neither uses it. The action owns its rows (``Consolidation``,
``ConsolidatedMessage``; the notes it makes go through ``memory.services.notes``, audited) and
records what it extracted and decided on the consolidation."""
from __future__ import annotations

import dataclasses

from django.db import transaction
from django.utils import timezone

from memory.models import ConsolidatedMessage, Consolidation, Conversation, Message, RoutingDecision, SourceType, TurnExtraction
from remember.apply import apply_items, reply_speaker
from remember.client_name import client_name_before, relayed_client_before
from remember.drafts import Provenance, TurnSource
from remember.extract import extract_turn, extractable_reply
from remember.working_memory import overflow_limits, unconsolidated


def do_consolidate_overflow(
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
        with transaction.atomic(savepoint=False):
            consolidation = Consolidation.objects.create(firm_id=conversation.firm_id, conversation=conversation)
        if leftover:
            extract_leftover(consolidation, leftover, actor=actor, provenance=provenance)  # may raise: nothing is marked then
        _mark_consolidated(oldest, consolidation)
        made.append(consolidation)
    return made


def _mark_consolidated(messages: list[Message], consolidation: Consolidation) -> None:
    """Mark the messages as consolidated by ``consolidation`` (a message marked before keeps its mark)."""
    with transaction.atomic():
        for message in messages:
            ConsolidatedMessage.objects.get_or_create(message=message, defaults={"consolidation": consolidation})


def extract_leftover(
    consolidation: Consolidation, messages: list[Message], *, actor, provenance: Provenance | None = None
) -> list[RoutingDecision]:
    """Extract and route messages that left working memory without a turn of their own."""
    user_text = "\n".join(m.content for m in messages if m.role == Message.Role.USER)
    reply_text = "\n".join(extractable_reply(m) for m in messages if m.role == Message.Role.ASSISTANT).strip()
    source_type = SourceType.IMPORT if consolidation.conversation.external_id else SourceType.CHAT
    first_user = next((m for m in messages if m.role == Message.Role.USER), None)
    first_reply = next((m for m in messages if m.role == Message.Role.ASSISTANT), None)
    outcome = extract_turn(
        user_text, reply_text, user_name=first_user.speaker if first_user else "",
        reply_name=reply_speaker(source_type, first_reply) if first_reply else "",
        client_name=client_name_before(first_user) if first_user else "",
        relayed_client=relayed_client_before(first_user) if first_user else "",
        said_on=timezone.localtime(messages[0].said_at).date() if messages and messages[0].said_at else None,
    )
    consolidation.engine = outcome.engine
    consolidation.items = [dataclasses.asdict(item) for item in outcome.items]
    with transaction.atomic(savepoint=False):
        consolidation.save(update_fields=["engine", "items"])
    source = TurnSource(
        conversation=consolidation.conversation,
        user_message=None,
        assistant_message=None,
        source_type=source_type,
        source_id=consolidation.source_key,
        source_key=consolidation.source_key,
        messages=tuple(messages),
    ).with_provenance(provenance)
    decisions = apply_items(outcome.items, source, actor=actor, consolidation=consolidation)
    consolidation.decisions = [d.as_dict() for d in decisions]
    with transaction.atomic(savepoint=False):
        consolidation.save(update_fields=["decisions"])
    return decisions
