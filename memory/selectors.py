"""Reads of memory, always through the visibility rule."""
from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.db.models import Count, QuerySet

from remember.extraction.quotes import new_in_reply
from memory.models import Firm, Matter, MemoryScope, Message, Note
from remember.extract import OFFLINE_ANSWER_ENGINE, recalled_texts


def visible_notes(user) -> QuerySet[Note]:
    return Note.objects.visible_to(user).select_related("firm", "matter", "owner")


def get_visible_note(user, note_id: UUID | str) -> Note:
    """The note if the user may see it; ``Note.DoesNotExist`` otherwise (another firm, wall, owner)."""
    return visible_notes(user).get(pk=note_id)


@dataclass(frozen=True)
class ScopeCount:
    scope: str
    label: str
    count: int


@dataclass(frozen=True)
class HomeSummary:
    firms: list[Firm]
    matters: list[Matter]
    scope_counts: list[ScopeCount]
    is_firm_admin: bool


def home_summary(user) -> HomeSummary:
    """What the home page shows: the user's firms, their matters and how much memory they can reach."""
    counts = dict(
        Note.objects.visible_to(user)
        .active()
        .values_list("memory_scope")
        .annotate(n=Count("id"))
        .values_list("memory_scope", "n")
    )
    return HomeSummary(
        firms=list(Firm.objects.of_user(user)),
        matters=list(
            Matter.objects.assigned_to(user).select_related("firm").order_by("firm__name", "reference", "title")
        ),
        scope_counts=[
            ScopeCount(scope=value, label=label, count=counts.get(value, 0))
            for value, label in MemoryScope.choices
        ],
        is_firm_admin=Firm.objects.administered_by(user).exists(),
    )



def echo_notes(firm: Firm | None = None) -> list[Note]:
    """Current notes the write path should never have made: every source message is an
    assistant reply, and the note only repeats what that reply was given from memory (an answer
    the offline engine composed repeats nothing else; an LLM's sentence that quotes a recalled
    text is judged as the write path judges it — ``remember.extraction.quotes``)."""
    notes = Note.objects.active().exclude(source_message_ids=[]).order_by("stored_at")
    if firm is not None:
        notes = notes.filter(firm=firm)
    notes = list(notes.only("id", "content", "source_message_ids", "firm_id", "memory_scope"))
    message_ids = {pk for note in notes for pk in note.source_message_ids}
    replies = {m.pk: m for m in Message.objects.filter(pk__in=message_ids, role=Message.Role.ASSISTANT)
               .only("id", "engine", "recalled")}
    echoes = []
    for note in notes:
        sources = [replies.get(pk) for pk in note.source_message_ids]
        if any(reply is None for reply in sources):
            continue  # a user's message (or one gone) is among its sources: not an echo
        composed = all(reply.engine == OFFLINE_ANSWER_ENGINE for reply in sources)
        recalled = [text for reply in sources for text in recalled_texts(reply.recalled)]
        if composed or not new_in_reply(note.content, recalled):
            echoes.append(note)
    return echoes
