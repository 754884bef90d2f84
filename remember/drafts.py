"""Step 3: an extracted item becomes a ``NoteDraft`` with its layer and full provenance."""
from __future__ import annotations

from dataclasses import dataclass, replace

from memory.categories import Category
from memory.labels import EVENT_TAG_PREFIX
from remember.extraction import ExtractedItem
from memory.models import Conversation, Matter, MemoryScope, Message, SourceType
from memory.services.notes import NoteDraft

class ItemError(ValueError):
    """An extracted item that cannot become a note (e.g. a category no note has)."""


@dataclass(frozen=True)
class Provenance:
    """What the caller names a turn (e.g. the demo story: ``story-turn-017`` and the tag
    ``event:电脑花屏``). Every note derived from that turn — its items, a persona promotion or a
    consolidation it triggers — is created with this ``source_id`` and these tags, so nothing
    re-stamps notes afterwards (docs/memory-model.md, Provenance)."""

    source_id: str
    tags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        plain = [tag for tag in self.tags if not is_source_tag(tag)]
        if plain:
            raise ValueError(f"a source tag names its kind, e.g. 'event:…'; got {plain}")


def event_tag(event_name: str) -> str:
    """The tag the graph page filters by: ``event:电脑花屏``."""
    return f"{EVENT_TAG_PREFIX}{event_name}"


def is_source_tag(tag: str) -> bool:
    """A tag naming where a note came from (``event:电脑花屏``), as a ``Provenance`` gives it.
    It describes the source, not the knowledge, so evolution never hands it to a neighbour."""
    kind, separator, value = tag.partition(":")
    return bool(kind and separator and value)


@dataclass(frozen=True)
class TurnSource:
    """Where a batch of items came from: the conversation, its messages and a stable id.
    ``named`` says the ``source_id`` and ``tags`` were given by the caller (``Provenance``)
    rather than made from the pipeline's own job."""

    conversation: Conversation
    user_message: Message | None
    assistant_message: Message | None
    source_type: str
    source_id: str
    source_key: str  # unique key of the turn / consolidation (idempotency)
    messages: tuple[Message, ...] = ()
    tags: tuple[str, ...] = ()
    named: bool = False

    def with_provenance(self, provenance: "Provenance | None") -> "TurnSource":
        """This source under the caller's name, or unchanged without one."""
        if provenance is None:
            return self
        return replace(self, source_id=provenance.source_id[:200], tags=tuple(provenance.tags), named=True)

    def note_tags(self, tags: list[str]) -> list[str]:
        """An item's tags plus the source's, each once."""
        return list(dict.fromkeys([*tags, *self.tags]))

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
        tags=source.note_tags(list(item.tags)),
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
        said="\n".join(m.content for m in messages if m.role == Message.Role.USER),
    )
