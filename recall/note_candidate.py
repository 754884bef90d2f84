"""What one note candidate is: ``NoteCandidate`` (the note with its distance to the query, its
keyword rank and which read found it) and ``CANDIDATE_FIELDS``, the light fields such a note
carries. Shared by every read that finds note candidates (recall/candidate_sql.py,
recall/note_loading.py, recall/graph.py) and the strategies that score them, so none of those
reads has to import another to name its result.
"""
from __future__ import annotations

from dataclasses import dataclass

from memory.models import Note

# Candidates carry only what scoring and reasons need; the final hits are loaded in full
# (``hydrate``) — a few hundred light rows instead of a few hundred full notes.
CANDIDATE_FIELDS = (
    "id", "firm_id", "content", "memory_scope", "category", "matter_id", "owner_id", "importance",
    "confidence", "said_at", "stored_at", "search_text", "source_message_ids", "status",
)


@dataclass
class NoteCandidate:
    note: Note
    distance: float | None = None  # cosine distance to the query (1 - similarity)
    keyword_rank: float | None = None
    via_vector: bool = False
    via_keyword: bool = False
    via_message: bool = False
