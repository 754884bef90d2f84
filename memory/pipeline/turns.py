"""The turn job: durable, idempotent, retried extraction of one chat turn into memory.

Life of a ``TurnExtraction``: ``pending`` → ``running`` → ``done`` / ``skipped``; on an
LLM or embedding outage (or any other error) it goes back to ``pending`` with exponential
backoff (``TURN_RETRY_BACKOFF_SECONDS`` × 2^(attempt−1)) and a new background task, until
``TURN_MAX_ATTEMPTS`` — then ``failed``, with the error on the row and a JOB_FAILED audit
entry. A job left ``running`` longer than ``TURN_LEASE_SECONDS`` belongs to a dead worker:
``process_turn`` takes it over and ``resume_stalled_turns`` re-enqueues it.

Idempotent: one row per assistant message; extracted items are stored before routing, so
a resumed job routes the same items; each item's routing decision is unique per turn and
content hash and commits with its note, so no item is written twice.
"""
from __future__ import annotations

import dataclasses
import logging
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from memory.embeddings import get_embedder
from memory.extraction import ExtractedItem
from memory.models import (
    AuditEvent,
    Consolidation,
    Message,
    RoutingDecision,
    SourceType,
    TurnExtraction,
)
from memory.pipeline.drafts import ItemError, TurnSource, draft_for, is_persona_item
from memory.llm import LLMRejected
from memory.pipeline.extract import ENGINE_SKIPPED, extract_turn, extractable_reply
from memory.pipeline.message_index import index_conversation
from memory.pipeline.persona import episodic_twins, record_persona_item
from memory.pipeline.routing import route_and_write
from memory.services.audit import record
from memory.services.notes import NoteValidationError, content_hash

logger = logging.getLogger("legalmem.pipeline")

SYSTEM_ACTOR = "system:pipeline"


class TurnError(ValueError):
    """The two messages do not form a turn (roles, conversation)."""


# --- enqueue ------------------------------------------------------------------------


def enqueue_turn_extraction(
    user_message: Message, assistant_message: Message, *, source_type: str = SourceType.CHAT
) -> TurnExtraction:
    """Record the turn's job and enqueue its background task once the transaction commits.
    Calling it again for the same assistant message returns the same job (no second task
    unless it is still pending)."""
    turn, created = _get_or_create_turn(user_message, assistant_message, source_type=source_type)
    if created or turn.status == TurnExtraction.Status.PENDING:
        transaction.on_commit(partial(_enqueue_task, turn.pk))
    return turn


def _get_or_create_turn(
    user_message: Message, assistant_message: Message, *, source_type: str
) -> tuple[TurnExtraction, bool]:
    if user_message.conversation_id != assistant_message.conversation_id:
        raise TurnError("the user message and the reply belong to different conversations")
    if user_message.role != Message.Role.USER or assistant_message.role != Message.Role.ASSISTANT:
        raise TurnError("a turn is a user message followed by an assistant reply")
    try:
        with transaction.atomic():
            return TurnExtraction.objects.get_or_create(
                assistant_message=assistant_message,
                defaults={
                    "firm_id": assistant_message.firm_id,
                    "conversation_id": assistant_message.conversation_id,
                    "user_message": user_message,
                    "source_type": source_type,
                },
            )
    except IntegrityError:
        return TurnExtraction.objects.get(assistant_message=assistant_message), False


def _enqueue_task(turn_id: int, run_after: datetime | None = None) -> None:
    """Put the job on the durable queue; if that fails the turn stays pending for resume."""
    from memory.tasks import extract_turn_task

    try:
        task = extract_turn_task.using(run_after=run_after) if run_after else extract_turn_task
        result = task.enqueue(turn_id)
    except Exception:  # the row is the source of truth; resume_stalled_turns re-enqueues
        logger.exception("could not enqueue extraction of turn %s; it stays pending", turn_id)
        return
    TurnExtraction.objects.filter(pk=turn_id).update(task_id=str(result.id)[:64])


# --- run --------------------------------------------------------------------------------


def claim_turn(turn_id: int, *, now: datetime | None = None) -> TurnExtraction | None:
    """Mark the job running for this worker, or None if it is finished, not yet due, or held
    by a live worker. A ``running`` job older than the lease is taken over (crash-and-resume)."""
    now = now or timezone.now()
    with transaction.atomic():
        turn = TurnExtraction.objects.select_for_update().get(pk=turn_id)
        if not claimable(turn, now):
            return None
        mark_running(turn, now)
        turn.save(update_fields=["status", "attempts", "started_at", "updated_at"])
    return turn


def claimable(turn: TurnExtraction, now: datetime) -> bool:
    """May a worker run this (locked) job now? Not when finished, not yet due, or held by a
    live worker; a ``running`` job older than the lease belonged to a dead worker."""
    if turn.status in (TurnExtraction.Status.DONE, TurnExtraction.Status.SKIPPED, TurnExtraction.Status.FAILED):
        return False
    if turn.status == TurnExtraction.Status.RUNNING:
        if turn.started_at and turn.started_at > now - timedelta(seconds=settings.TURN_LEASE_SECONDS):
            return False
        logger.warning("turn %s was left running since %s by a dead worker; resuming", turn.pk, turn.started_at)
    elif turn.next_attempt_at and turn.next_attempt_at > now:
        return False
    return True


def mark_running(turn: TurnExtraction, now: datetime) -> None:
    """The claimed job's new state (the caller saves it)."""
    turn.status = TurnExtraction.Status.RUNNING
    turn.attempts += 1
    turn.started_at = now


def process_turn(turn_id: int) -> TurnExtraction:
    """The job body (also callable synchronously): embed the conversation's new messages,
    extract, route, link, update the persona, then consolidate working-memory overflow. Errors never escape: they are recorded on the
    row and retried or failed. Returns the row in its new state."""
    turn = claim_turn(turn_id)
    if turn is None:
        return TurnExtraction.objects.get(pk=turn_id)
    index_conversation(turn.conversation_id)  # every turn is memory, whatever extraction makes of it
    try:
        _run(turn)
    except Exception as exc:  # noqa: BLE001 - every failure is recorded, retried or failed
        _after_failure(turn, exc)
        return TurnExtraction.objects.get(pk=turn_id)
    from memory.pipeline.working_memory import consolidate_overflow

    try:
        consolidate_overflow(turn.conversation, actor=SYSTEM_ACTOR)
    except Exception:  # noqa: BLE001 - the turn is done; the overflow is retried after the next turn
        logger.exception("consolidation of conversation %s failed; will retry after the next turn", turn.conversation_id)
    return TurnExtraction.objects.get(pk=turn_id)


def _source_for(turn: TurnExtraction) -> TurnSource:
    conversation, user_msg, reply = turn.conversation, turn.user_message, turn.assistant_message
    if turn.source_type == SourceType.IMPORT and conversation.external_id:
        source_id = f"{conversation.external_id}:{user_msg.external_id or user_msg.pk}-{reply.external_id or reply.pk}"
    else:
        source_id = f"turn:{turn.pk}"
    return TurnSource(
        conversation=conversation,
        user_message=user_msg,
        assistant_message=reply,
        source_type=turn.source_type,
        source_id=source_id[:200],
        source_key=turn.source_key,
    )


def _run(turn: TurnExtraction) -> None:
    if extract_items(turn):
        apply_turn(turn)


def extract_items(turn: TurnExtraction) -> bool:
    """Extract the turn's items once (stored on the row, so a resumed job routes the same
    items); False when the engine skipped the turn (it is finished as ``skipped``)."""
    if turn.items is None:
        user_msg, reply = turn.user_message, turn.assistant_message
        outcome = extract_turn(
            user_msg.content, extractable_reply(reply),
            user_name=user_msg.speaker, reply_name=_reply_speaker(turn.source_type, reply),
            said_on=timezone.localtime(user_msg.said_at).date() if user_msg.said_at else None,
        )
        turn.items = [dataclasses.asdict(item) for item in outcome.items]
        turn.rejected = outcome.rejected_reasons
        turn.engine = outcome.engine
        turn.save(update_fields=["items", "rejected", "engine", "updated_at"])
    if turn.engine == ENGINE_SKIPPED:
        _finish(turn, TurnExtraction.Status.SKIPPED)
        return False
    return True


def items_to_write(turn: TurnExtraction) -> list[ExtractedItem]:
    """The extracted items plus their episodic twins, in routing order (what gets embedded)."""
    items = [ExtractedItem(**data) for data in turn.items or []]
    return [*items, *episodic_twins(items, _source_for(turn))] if items else []


def apply_turn(turn: TurnExtraction, vectors=None) -> None:
    """Route the extracted items (``vectors``: their embeddings in ``items_to_write`` order,
    when already computed) and finish the job as done."""
    items = [ExtractedItem(**data) for data in turn.items]
    apply_items(items, _source_for(turn), actor=SYSTEM_ACTOR, turn=turn, vectors=vectors)
    _finish(turn, TurnExtraction.Status.DONE)


def _reply_speaker(source_type: str, reply: Message) -> str:
    """Who wrote the reply, for the offline engine: in an imported conversation a named
    speaker is a second person; in live chat the reply is the product's assistant
    (whatever engine name it is stored under)."""
    return reply.speaker if source_type == SourceType.IMPORT else ""


def _finish(turn: TurnExtraction, status: str) -> None:
    turn.status = status
    turn.finished_at = timezone.now()
    turn.next_attempt_at = None
    turn.decisions = [d.as_dict() for d in RoutingDecision.objects.filter(source_key=turn.source_key)]
    turn.save(update_fields=["status", "finished_at", "next_attempt_at", "decisions", "updated_at"])


def apply_items(
    items: list[ExtractedItem], source: TurnSource, *, actor, turn=None, consolidation=None, vectors=None
) -> list[RoutingDecision]:
    """Embed the items in one batch (unless ``vectors`` already holds the embeddings of the
    items and their twins, as the bulk import computes them), then route each (episodic) or
    record it (persona), one transaction per item. An item the note model refuses is recorded
    as IGNORE with the reason."""
    if not items:
        return []
    items = [*items, *episodic_twins(items, source)]  # persona evidence is also kept as what was said
    if vectors is None:
        vectors = get_embedder().embed_passages([item.content for item in items])
    decisions = []
    for index, (item, vector) in enumerate(zip(items, vectors)):
        try:
            if is_persona_item(item):
                decision = record_persona_item(
                    item, vector, source, actor=actor, item_index=index, turn=turn, consolidation=consolidation
                )
            else:
                decision = route_and_write(
                    draft_for(item, source), vector, actor=actor, source_key=source.source_key,
                    item_index=index, turn=turn, consolidation=consolidation,
                )
        except (NoteValidationError, ItemError) as exc:
            logger.warning("item %d of %s refused: %s", index, source.source_key, exc)
            decision, _ = RoutingDecision.objects.get_or_create(
                source_key=source.source_key,
                content_hash=content_hash(item.content),
                defaults=dict(
                    firm=source.conversation.firm, owner=source.conversation.user, turn=turn,
                    consolidation=consolidation, item_index=index, content=item.content,
                    category=str(item.category)[:20], action=RoutingDecision.Action.IGNORE,
                    reason=f"invalid item: {exc}"[:500],
                ),
            )
        decisions.append(decision)
    return decisions


def _after_failure(turn: TurnExtraction, exc: Exception) -> None:
    """Record the error; schedule a retry with backoff, or fail for good after max attempts."""
    error = f"{type(exc).__name__}: {exc}"[:4000]
    with transaction.atomic():
        turn = TurnExtraction.objects.select_for_update().select_related("conversation").get(pk=turn.pk)
        turn.last_error = error
        # A refusal (bad key, unknown model, every JSON mode refused) is the same on every
        # attempt: fail now instead of asking the server again over the next minutes.
        if turn.attempts >= settings.TURN_MAX_ATTEMPTS or isinstance(exc, LLMRejected):
            logger.error("turn %s failed after %d attempts: %s", turn.pk, turn.attempts, error, exc_info=exc)
            turn.status = TurnExtraction.Status.FAILED
            turn.finished_at = timezone.now()
            turn.next_attempt_at = None
            turn.save(update_fields=["status", "last_error", "finished_at", "next_attempt_at", "updated_at"])
            record(
                actor=SYSTEM_ACTOR,
                event=AuditEvent.JOB_FAILED,
                firm=turn.firm,
                object_type="turn_extraction",
                object_id=turn.pk,
                after={"status": turn.status, "attempts": turn.attempts, "error": error},
                matter_id=turn.conversation.matter_id,
            )
            return
        delay = settings.TURN_RETRY_BACKOFF_SECONDS * (2 ** (turn.attempts - 1))
        turn.status = TurnExtraction.Status.PENDING
        turn.next_attempt_at = timezone.now() + timedelta(seconds=delay)
        turn.save(update_fields=["status", "last_error", "next_attempt_at", "updated_at"])
        logger.warning(
            "turn %s attempt %d/%d failed (%s); retrying in %.0f s",
            turn.pk, turn.attempts, settings.TURN_MAX_ATTEMPTS, error, delay,
        )
        transaction.on_commit(partial(_enqueue_task, turn.pk, turn.next_attempt_at))


def resume_stalled_turns(*, now: datetime | None = None, limit: int = 100) -> list[int]:
    """Re-enqueue jobs whose worker died (``running`` past the lease) or whose task was lost
    (``pending`` and overdue by a lease). Safe to run any time, from any process."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.TURN_LEASE_SECONDS)
    stalled = TurnExtraction.objects.filter(_stalled(cutoff)).order_by("created_at").values_list("pk", flat=True)[:limit]
    ids = list(stalled)
    for turn_id in ids:
        _enqueue_task(turn_id)
    if ids:
        logger.warning("re-enqueued %d stalled turn extraction(s): %s", len(ids), ids)
    return ids


def _stalled(cutoff: datetime) -> Q:
    running = Q(status=TurnExtraction.Status.RUNNING, started_at__lt=cutoff)
    overdue = Q(status=TurnExtraction.Status.PENDING) & (
        Q(next_attempt_at__lt=cutoff) | Q(next_attempt_at__isnull=True, created_at__lt=cutoff)
    )
    return running | overdue


# --- consolidation batches ------------------------------------------------------------------


def process_batch(consolidation: Consolidation, messages: list[Message], *, actor) -> list[RoutingDecision]:
    """Extract and route messages that left working memory without a turn of their own."""
    user_text = "\n".join(m.content for m in messages if m.role == Message.Role.USER)
    reply_text = "\n".join(extractable_reply(m) for m in messages if m.role == Message.Role.ASSISTANT).strip()
    source_type = SourceType.IMPORT if consolidation.conversation.external_id else SourceType.CHAT
    first_user = next((m for m in messages if m.role == Message.Role.USER), None)
    first_reply = next((m for m in messages if m.role == Message.Role.ASSISTANT), None)
    outcome = extract_turn(
        user_text, reply_text, user_name=first_user.speaker if first_user else "",
        reply_name=_reply_speaker(source_type, first_reply) if first_reply else "",
        said_on=timezone.localtime(messages[0].said_at).date() if messages and messages[0].said_at else None,
    )
    consolidation.engine = outcome.engine
    consolidation.items = [dataclasses.asdict(item) for item in outcome.items]
    consolidation.save(update_fields=["engine", "items"])
    source = TurnSource(
        conversation=consolidation.conversation,
        user_message=None,
        assistant_message=None,
        source_type=source_type,
        source_id=consolidation.source_key,
        source_key=consolidation.source_key,
        messages=tuple(messages),
    )
    decisions = apply_items(outcome.items, source, actor=actor, consolidation=consolidation)
    consolidation.decisions = [d.as_dict() for d in decisions]
    consolidation.save(update_fields=["decisions"])
    return decisions
