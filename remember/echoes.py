"""Notes the write path should never have made: echoes of what a reply was given from memory
(``manage.py clean_echo_notes`` finds and removes them)."""
from __future__ import annotations

from memory.models import Firm, Message, Note
from remember.extract import OFFLINE_ANSWER_ENGINE, recalled_texts
from remember.extraction.quotes import new_in_reply


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
