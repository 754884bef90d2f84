"""Step 3: an extracted item becomes a ``NoteDraft`` with its layer and full provenance."""
from __future__ import annotations

from dataclasses import dataclass

from memory.categories import Category
from memory.extraction import ExtractedItem
from memory.models import Conversation, Matter, MemoryScope, Message, SourceType
from memory.services.notes import NoteDraft

class ItemError(ValueError):
    """An extracted item that cannot become a note (e.g. a category no note has)."""


@dataclass(frozen=True)
class TurnSource:
    """Where a batch of items came from: the conversation, its messages and a stable id."""

    conversation: Conversation
    user_message: Message | None
    assistant_message: Message | None
    source_type: str
    source_id: str
    source_key: str  # unique key of the turn / consolidation (idempotency)
    messages: tuple[Message, ...] = ()

    def messages_for(self, speaker: str) -> list[Message]:
        """The messages an item of ``speaker`` (user / assistant / turn) was taken from."""
        if self.messages:
            by_role = [m for m in self.messages if m.role == speaker]
            return by_role or list(self.messages)
        chosen = {
            "user": [self.user_message],
            "assistant": [self.assistant_message],
        }.get(speaker, [self.user_message, self.assistant_message])
        return [m for m in chosen if m is not None]


def category_slug(item: ExtractedItem) -> str:
    """The note category for the item's Chinese label (validated upstream)."""
    parsed = Category.parse(item.category)
    if parsed is None:
        raise ItemError(f"unknown category {item.category!r}")
    return parsed.slug


def is_persona_item(item: ExtractedItem) -> bool:
    """Preferences and user attributes go to persona evidence, not straight to notes."""
    return item.scope_hint == MemoryScope.USER_PROFILE


def draft_for(item: ExtractedItem, source: TurnSource) -> NoteDraft:
    """The note draft for an episodic item. Everything said in a matter's conversation stays
    behind that matter's ethical wall, whatever its layer: an extractor that labels a case
    detail as general law must not publish it firm-wide. Firm-wide notes come from
    conversations without a matter (or from an auditor's correction in admin)."""
    conversation = source.conversation
    scope = item.scope_hint if item.scope_hint in MemoryScope.values else MemoryScope.CASE
    matter: Matter | None = conversation.matter
    messages = source.messages_for(item.speaker)
    speakers = list(dict.fromkeys(m.speaker or m.role for m in messages))
    return NoteDraft(
        firm=conversation.firm,
        content=item.content,
        memory_scope=scope,
        category=category_slug(item),
        source_type=source.source_type if source.source_type in SourceType.values else SourceType.CHAT,
        memory_type=item.memory_type,
        keywords=list(item.keywords),
        tags=list(item.tags),
        context=item.context,
        importance=item.importance,
        confidence=item.confidence,
        matter=matter,
        owner=conversation.user,
        conversation=conversation,
        source_id=source.source_id,
        source_message_ids=[m.pk for m in messages],
        speaker=", ".join(speakers)[:200],
        said_at=messages[0].said_at if messages else None,
    )
