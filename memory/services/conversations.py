"""Writes of conversations and messages: what was said (docs/memory-model.md, Conversations).

The one place a conversation is started or a message stored, whoever the caller is: the chat
(``chat.turns``), transcript import (``remember.ingest``) and the demo story
(``showcase.story.runner``). Messages are evidence: stored as said, never rewritten by the
pipeline; each write is one transaction. Messages are not audited one by one (they are the
conversation itself); the notes derived from them are.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from memory.models import AuditEvent, Conversation, Firm, Matter, Message
from memory.services import audit
from memory.segmentation import search_text


class MessageError(ValueError):
    """A message that cannot be stored (unknown role, empty content, wrong conversation)."""


class ConversationConflict(ValueError):
    """A keyed conversation already exists with another user or matter."""


def start_conversation(*, firm: Firm, user, matter: Matter | None = None, title: str = "") -> Conversation:
    """A new live conversation of ``user`` (the caller has checked access to firm and matter)."""
    return Conversation.objects.create(firm=firm, user=user, matter=matter, title=title)


def keyed_conversation(
    *, firm: Firm, external_id: str, user, matter: Matter | None = None, title: str = ""
) -> tuple[Conversation, bool]:
    """The conversation with this ``external_id`` in ``firm`` (an import or a story), created
    when missing: re-running the same import or story finds it again. Returns (conversation,
    created); raises ConversationConflict when it exists for another user or matter."""
    conversation, created = Conversation.objects.get_or_create(
        firm=firm, external_id=external_id, defaults={"user": user, "matter": matter, "title": title},
    )
    if conversation.user_id != user.pk or conversation.matter_id != (matter.pk if matter else None):
        raise ConversationConflict(f"conversation {external_id} already exists with another user or matter")
    return conversation, created


def _storable(text: str) -> str:
    """PostgreSQL text cannot hold NUL; lone surrogates cannot be encoded. Everything else is
    kept as said (newlines, tabs, emoji): the raw message is the evidence."""
    text = text.replace("\x00", "")
    return text.encode("utf-8", "replace").decode("utf-8") if any(0xD800 <= ord(c) <= 0xDFFF for c in text) else text


def save_message(
    conversation: Conversation,
    role: str,
    content: str,
    *,
    speaker: str,
    said_at: datetime | None = None,
    status: str = Message.Status.COMPLETE,
    external_id: str = "",
) -> Message:
    """Store one raw message with its segmented search text. With an ``external_id`` already
    stored in this conversation the existing message is returned (idempotent import)."""
    _check(role, status, content)
    content = _storable(content)
    if external_id:
        found = Message.objects.filter(conversation=conversation, external_id=external_id).first()
        if found is not None:
            return found
    try:
        with transaction.atomic():
            message = Message.objects.create(
                conversation=conversation,
                firm_id=conversation.firm_id,
                role=role,
                speaker=(speaker or role)[:200],
                content=content,
                status=status,
                external_id=external_id[:200],
                said_at=said_at or timezone.now(),
                search_text=search_text(content),
            )
            Conversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now())
    except IntegrityError:
        if not external_id:
            raise
        return Message.objects.get(conversation=conversation, external_id=external_id)
    return message


def _check(role: str, status: str, content: Any) -> None:
    if role not in Message.Role.values:
        raise MessageError(f"unknown role {role!r}; expected one of {', '.join(Message.Role.values)}")
    if status not in Message.Status.values:
        raise MessageError(f"unknown status {status!r}")
    if not isinstance(content, str):
        raise MessageError("message content must be text")


@dataclass(frozen=True)
class NewMessage:
    """One message to store with ``save_messages`` (the arguments of ``save_message``)."""

    role: str
    content: str
    speaker: str
    said_at: datetime | None = None
    external_id: str = ""


def save_messages(conversation: Conversation, messages: list[NewMessage]) -> list[Message]:
    """``save_message`` for many messages of one conversation (an import), in order: those whose
    ``external_id`` is already stored are returned as they are, the others inserted in one
    statement (docs/performance.md). If another import stores the same messages at the same
    moment, falls back to one ``save_message`` each."""
    for message in messages:
        _check(message.role, Message.Status.COMPLETE, message.content)
    keys = [m.external_id[:200] for m in messages if m.external_id]
    known = {m.external_id: m for m in Message.objects.filter(conversation=conversation, external_id__in=keys)}
    stored: list[Message] = []
    new: list[Message] = []
    for message in messages:
        row = known.get(message.external_id[:200]) if message.external_id else None
        if row is None:
            content = _storable(message.content)
            row = Message(
                conversation=conversation, firm_id=conversation.firm_id, role=message.role,
                speaker=(message.speaker or message.role)[:200], content=content, status=Message.Status.COMPLETE,
                external_id=message.external_id[:200], said_at=message.said_at or timezone.now(),
                search_text=search_text(content),
            )
            new.append(row)
            if message.external_id:
                known[row.external_id] = row
        stored.append(row)
    if not new:
        return stored
    try:
        with transaction.atomic():
            Message.objects.bulk_create(new)
            Conversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now())
    except IntegrityError:  # stored meanwhile by a concurrent import of the same file
        return [save_message(conversation, m.role, m.content, speaker=m.speaker, said_at=m.said_at,
                             external_id=m.external_id) for m in messages]
    return stored


def finish_reply(
    reply: Message,
    *,
    recalled: list[dict[str, Any]],
    recall_plan: dict[str, Any] | None = None,
    timings: dict[str, float],
    engine: str,
    error: str = "",
    citations: dict[str, Any] | None = None,
) -> Message:
    """Record how a saved chat reply was made: the memories recalled for it as they were shown
    (content, rank, scores, reasons) and the retrieval plan, timings, the engine, and the error
    of a failed reply. An answer the offline engine composed repeats memory. ``citations``: the
    sources the answer cited and the sentences its check marked, kept on the reply and in the
    audit log (owner-private, behind the matter's wall). Returns the reply as stored."""
    with transaction.atomic():
        _finish_reply(reply, recalled=recalled, recall_plan=recall_plan, timings=timings, engine=engine,
                      error=error, citations=citations)
    reply.refresh_from_db()
    return reply


def _finish_reply(reply: Message, *, recalled, recall_plan, timings, engine, error, citations) -> None:
    Message.objects.filter(pk=reply.pk).update(
        recalled=recalled, recall_plan=recall_plan or {}, timings=timings, engine=engine, error=error[:500],
        repeats_memory=engine == Message.OFFLINE_ENGINE, citations=citations or {},
    )
    if citations is not None:
        conversation = reply.conversation
        audit.record(
            actor="system:chat", event=AuditEvent.ANSWER_CHECKED, firm_id=reply.firm_id, object_type="message",
            object_id=reply.pk, matter_id=conversation.matter_id, private_to_id=conversation.user_id,
            after={"cited": citations.get("cited", []), "marked": citations.get("marked", []),
                   "unverified_citations": citations.get("unverified_citations", [])},
            conversation_id=conversation.pk,
        )


def mark_repeats_memory(reply: Message) -> None:
    """The turn job found nothing in this reply but quotations of what was recalled for it:
    from now on it is not recalled (the memories it quoted are), so a search never returns the
    quotation beside the original."""
    Message.objects.filter(pk=reply.pk).update(repeats_memory=True)
    reply.repeats_memory = True


def message_embeddings_save(messages: list[Message]) -> None:
    """Store the ``embedding`` and ``embedding_model`` set on each message, in one statement
    (the message index; the caller holds the rows' locks)."""
    with transaction.atomic(savepoint=False):
        Message.objects.bulk_update(messages, ["embedding", "embedding_model"])
