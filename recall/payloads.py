"""The client's view of a recalled raw message (chat ``recalled`` frame), beside the notes', and of a
note hit's contradictions."""
from __future__ import annotations

from typing import Any

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
