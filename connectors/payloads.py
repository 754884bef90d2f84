"""What the MCP tools and resources return: the REST API's own representations (the same
serializers, so a search through MCP equals the same search through the web API), and small
plain dictionaries for matters and a note's history and sources."""
from __future__ import annotations

from typing import Any

from memory.disclosure import viewer_of
from memory.models import Matter, Note
from my_memory.pages import NoteDetails
from recall import SearchResult
from my_memory.serializers import NoteSerializer, SearchResponseSerializer


def search_payload(user, result: SearchResult) -> dict[str, Any]:
    """Exactly the body of ``POST /api/memory/search`` for this result and reader."""
    return dict(SearchResponseSerializer(result, context={"viewer": viewer_of(user)}).data)


def note_payload(user, note: Note) -> dict[str, Any]:
    """Exactly the body of ``GET /api/memory/notes/<id>/`` for this reader."""
    return dict(NoteSerializer(note, context={"viewer": viewer_of(user)}).data)


def note_details_payload(user, details: NoteDetails) -> dict[str, Any]:
    """A note with its history in words and the source messages the reader may read."""
    return {
        "note": note_payload(user, details.note),
        "history": [
            {
                "at": entry.at.isoformat() if entry.at else None,
                "event": entry.event,
                "label": str(entry.label),
                "by": str(entry.by),
                "changes": [{"field": str(c.label), "before": str(c.before), "after": str(c.after)}
                            for c in entry.changes],
                "details": [{"label": str(label), "value": str(value)} for label, value in entry.details],
            }
            for entry in details.timeline
        ],
        "sources": [
            {"id": m.pk, "conversation_id": m.conversation_id, "role": m.role, "speaker": m.speaker,
             "said_at": m.said_at.isoformat(), "content": m.content}
            for m in details.source_messages
        ],
        "hidden_sources": details.hidden_sources,
        "can_change": details.can_change,
        "replaced_by": str(details.successor.pk) if details.successor else None,
    }


def matter_payload(matter: Matter) -> dict[str, Any]:
    return {
        "id": matter.pk,
        "reference": matter.reference,
        "title": matter.title,
        "status": matter.status,
        "firm": matter.firm.slug,
        "description": matter.description,
    }
