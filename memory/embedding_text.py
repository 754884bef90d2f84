"""What the encoder reads for a message: the live write path (``remember.message_index``) and a
re-embedding run (``memory.services.reembed``) must encode the same text."""
from __future__ import annotations

from memory.models import Message


def embedding_text(message: Message) -> str:
    """What the encoder reads for a message: who said it, then what was said. The speaker's
    name matters to questions such as "what did Caroline say about …"; a chat reply is labelled
    by its role, not by the engine that wrote it."""
    speaker = message.speaker if message.role == Message.Role.USER or message.external_id else message.role
    return f"{speaker}: {message.content}" if speaker else message.content
