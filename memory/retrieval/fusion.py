"""Selecting k hits from scored notes and raw messages together.

Notes and messages are ranked by the same fused score (``memory.retrieval.scoring``). Rules:

- per-layer quotas (``plan.quota``) keep one note layer from crowding out the rest; raw messages
  have no quota (the memory never recalls less than a plain index over the raw turns would);
- a note and a message it came from (``note.source_message_ids``) take ONE slot: the note (the
  sharper, explained form) holds the slot at the better of the two positions, and says so;
- a superseded note (history questions) ranks below its successor when both are candidates.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory.retrieval.plan import RetrievalPlan
from memory.retrieval.scoring import ScoreBreakdown
from memory.retrieval.types import MESSAGE, NOTE

# A superseded version without its successor among the candidates keeps this share of its score.
HISTORY_WEIGHT = 0.9
# ... and with its successor there, at most this share of the successor's.
BELOW_SUCCESSOR = 0.99


@dataclass
class Entry:
    """One scored candidate: ``key`` is ("note", uuid) or ("message", id)."""

    key: tuple[str, Any]
    breakdown: ScoreBreakdown
    layer: str
    source_message_ids: tuple[int, ...] = ()
    absorbed: list["Entry"] = field(default_factory=list)  # source messages sharing this slot
    slot_total: float = 0.0  # the better of its own score and its absorbed messages'

    @property
    def kind(self) -> str:
        return self.key[0]

    @property
    def total(self) -> float:
        return self.breakdown.total


def rank_history(entries: dict[tuple[str, Any], Entry], superseded_by: dict[Any, Any]) -> None:
    """Put each superseded version below its successor (or discount it when that is absent)."""
    for note_id, successor_id in superseded_by.items():
        entry = entries.get((NOTE, note_id))
        if entry is None:
            continue
        successor = entries.get((NOTE, successor_id))
        cap = successor.total * BELOW_SUCCESSOR if successor else entry.total * HISTORY_WEIGHT
        entry.breakdown = ScoreBreakdown(**{**entry.breakdown.as_dict(), "total": round(min(entry.total * HISTORY_WEIGHT, cap), 6)})


def select(entries: list[Entry], plan: RetrievalPlan, k: int) -> list[Entry]:
    """Best-first under the note layers' quotas, then back-filled up to k; one slot per note and its
    source messages; returned best slot first."""
    ordered = sorted(entries, key=lambda e: e.total, reverse=True)
    taken: list[Entry] = []
    per_layer: dict[str, int] = {}
    chosen: set[tuple[str, Any]] = set()

    def place(entry: Entry) -> None:
        entry.slot_total = entry.total
        if entry.kind == MESSAGE:
            holder = next((t for t in taken if t.kind == NOTE and entry.key[1] in t.source_message_ids), None)
            if holder is not None:  # the note that came from it already holds the slot
                holder.absorbed.append(entry)
                chosen.add(entry.key)
                return
            taken.append(entry)
        else:
            mine = [t for t in taken if t.kind == MESSAGE and t.key[1] in entry.source_message_ids]
            if mine:  # the note takes over its source message's slot (and position)
                position = taken.index(mine[0])
                for message in mine:
                    taken.remove(message)
                entry.absorbed.extend(mine)
                entry.slot_total = max(entry.total, *(m.total for m in mine))
                taken.insert(min(position, len(taken)), entry)
            else:
                taken.append(entry)
            per_layer[entry.layer] = per_layer.get(entry.layer, 0) + 1
        chosen.add(entry.key)

    for entry in ordered:
        if len(taken) == k:
            break
        if entry.kind == NOTE and per_layer.get(entry.layer, 0) >= plan.quota(entry.layer, k):
            continue
        place(entry)
    for entry in ordered:
        if len(taken) == k:
            break
        if entry.key not in chosen:
            place(entry)
    return sorted(taken, key=lambda e: e.slot_total, reverse=True)

