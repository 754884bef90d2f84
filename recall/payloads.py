"""The client's view of a recalled raw message (chat ``recalled`` frame), beside the notes', of a
note hit's contradictions, and where a numbered source's marker leads (docs/citations.md)."""
from __future__ import annotations

import uuid
from typing import Any

from django.urls import reverse
from django.utils.timezone import localtime
from django.utils.translation import pgettext

from memory.models import Message
from recall.types import Hit


def said_payload(message: Message) -> dict[str, Any]:
    """One message of a turn: who said what, when."""
    return {
        "message_id": message.pk,
        "speaker": message.speaker or message.role,
        "role": message.role,
        "content": message.content,
        "said_at": localtime(message.said_at).isoformat(),
    }


def note_page_url(note_id: uuid.UUID) -> str:
    """Where a recalled note's provenance link leads: its page on *My memory* (what it says, the
    turn it came from, its history), never the API's browsable view."""
    return reverse("my-memory-note", args=[note_id]) + "#source-turn"


def message_url(conversation_id: int, message_id: int) -> str:
    """A message in its conversation, scrolled to and outlined by the chat page."""
    return reverse("chat-conversation", args=[conversation_id]) + f"#message-{message_id}"


def source_url(item: dict[str, Any]) -> str:
    """Where a numbered item's marker leads: a recalled turn to its place in its conversation,
    a document passage (or a note made from a document) to the viewer at its page, a note to
    its page, which shows the turn it came from."""
    if item.get("kind") == "message" and item.get("conversation_id"):
        return message_url(item["conversation_id"], item["message_id"])
    return item.get("document_url") or item.get("url") or item.get("provenance_url") or ""


def hit_source_url(hit: Hit) -> str:
    """``source_url`` of a hit itself (the search API and MCP number their hits too)."""
    if hit.message is not None:
        return message_url(hit.message.conversation_id, hit.message.pk)
    return hit.note.document_url() or note_page_url(hit.note.pk)


def contradictions_payload(hit: Hit) -> list[dict[str, Any]]:
    """A note hit's open contradictions as the client shows them: the other current note of the
    same slot (its words, when it was said, its page) and which of the two is the newer statement."""
    return [
        {
            "id": str(c.other.pk),
            "content": c.other.content,
            "said_at": localtime(c.other.said_at or c.other.stored_at).isoformat(),
            "other_is_newer": not c.newer,
            "url": f"/memory/{c.other.pk}/",
        }
        for c in hit.contradictions
    ]


def message_hit_payload(hit: Hit) -> dict[str, Any]:
    """A message hit as the chat client sees it: ``kind`` "message", what was said, by whom, when,
    and ``partner``: the other message of its turn (the reply, or the question), or None."""
    message = hit.message
    return {
        "kind": hit.kind,
        "id": f"message:{message.pk}",
        "message_id": message.pk,
        "conversation_id": message.conversation_id,
        "content": message.content,
        "speaker": message.speaker or message.role,
        "role": message.role,
        "said_at": localtime(message.said_at).isoformat(),
        "layer": hit.layer,
        "layer_label": pgettext("memory layer", "What was said"),
        "rank": hit.rank,
        "score": hit.breakdown.as_dict(),
        "reasons": list(hit.reasons),
        "source_message_ids": hit.source_message_ids,
        "partner": said_payload(hit.partner) if hit.partner is not None else None,
    }
