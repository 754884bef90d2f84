"""Exact identifiers in a question — Chinese ID numbers, case numbers, invoice and contract
numbers, phone numbers, document codes — and the notes and messages that hold them.

A lawyer who types "11010119900307123X" or "(2025)浙0106民初1234号" wants the memories that
hold exactly that string, not the ones that merely read alike (every ID number embeds close to
every other). ``exact_first`` runs after any strategy (``search_memory`` calls it): the notes
and messages the user may search that hold an identifier of the question come first, those the
strategy already found in their order, the others after them (newest first), then the rest of
the strategy's hits. The reads go through the same rule as every search: active notes of
``visible_to(user)`` in the planned layers (``layer_rules.searchable_notes``), messages of the
conversations the search may read, without the forgotten ones and the replies that only repeat
recalled memory (``Message.repeats_memory``). A question whose anchors nothing visible holds is
answered with nothing before this runs (``recall.anchors``).

Matching ignores full-width / half-width forms (NFKC: "（2025）" is "(2025)") and letter case
("…123x" is "…123X"); the text must hold the whole identifier: "1234号" does not match
"(2025)浙0106民初1234号".
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from legaltext.identifiers import PATTERNS, identifier_mentions, normalise
from memory.models import Message, Note
from memory.rules import Rule, register
from memory.models.conversations import SEARCH_CONFIG
from recall.keywords import query_tokens
from recall.layer_rules import searchable_notes
from recall.messages import (
    MessageCandidate, attach_turn_partners, forgotten_source_ids, searchable_conversation_ids,
)
from recall.plan import MESSAGES
from recall.reach import Reach, reach_of
from recall.scoring import QueryWords, score, score_message
from recall.types import Hit, SearchRequest
from memory.segmentation import search_text

#: Why each kind of identifier puts the memories holding it first, in a lawyer's words: the
#: "recall" table of ``memory.rules`` (``manage.py rules``), one rule per row of ``PATTERNS``.
_WHY = {
    "id_number": gettext_lazy("An ID card number names one person: the memories holding exactly it come first."),
    "case_number": gettext_lazy("A case number names one case: the memories holding exactly it come first."),
    "invoice_number": gettext_lazy("An invoice number names one invoice: the memories holding exactly it come first."),
    "contract_number": gettext_lazy("A contract number names one contract: the memories holding exactly it come first."),
    "phone_number": gettext_lazy("A phone number names one person or office: the memories holding exactly it come first."),
    "code": gettext_lazy("A document or transaction code names one record: the memories holding exactly it come first."),
    "number": gettext_lazy("A long number (an e-invoice, an order, an account) is matched exactly, not by resemblance."),
}
for _kind, _pattern in PATTERNS:
    register(Rule("recall", "exact-" + _kind.replace("_", "-"), _WHY[_kind],
                  lambda text, _pattern=_pattern: bool(_pattern.search(normalise(text)))))

#: How many holders of an identifier are read at most, per kind of memory.
MAX_HOLDERS = 50
#: Full-text candidates read before the exact check (the words of an identifier may also occur
#: apart: "2025" and "1234" in other texts).
CANDIDATE_POOL = 400


@dataclass(frozen=True)
class Identifier:
    kind: str
    text: str  # normalised: NFKC, upper case

    def held_by(self, text: str) -> bool:
        return self.text in normalise(text)


def identifiers_in(text: str) -> list[Identifier]:
    """The exact identifiers a text names (``legaltext.identifiers.PATTERNS``), kind by kind,
    each once."""
    found: dict[str, Identifier] = {}
    for mention in identifier_mentions(text, with_account_tails=False):
        found.setdefault(mention.value, Identifier(mention.kind, mention.value))
    return list(found.values())


def holds_identifier(text: str, identifiers: list[Identifier]) -> bool:
    return any(identifier.held_by(text) for identifier in identifiers)


def _full_text(identifiers: list[Identifier]) -> SearchQuery | None:
    """Any identifier's letters-and-digits words, all of them (the GIN index finds the candidates;
    the exact check follows in ``holds_identifier``)."""
    query = None
    for identifier in identifiers:
        words = [w for w in search_text(identifier.text).split() if w.isascii() and w.isalnum()]
        if not words:
            continue
        raw = " & ".join("'" + w.replace("'", "''") + "'" for w in words)
        one = SearchQuery(raw, config=SEARCH_CONFIG, search_type="raw")
        query = one if query is None else query | one
    return query


def _notes_holding(request: SearchRequest, reach: Reach, identifiers: list[Identifier]) -> list[Note]:
    words = _full_text(identifiers)
    if words is None:
        return []
    rows = (
        searchable_notes(request.user, request.plan, reach)
        .annotate(words=SearchVector("search_text", config=SEARCH_CONFIG))
        .filter(words=words)
        .defer(None)
        .select_related("firm", "matter", "owner")
        .order_by(F("said_at").desc(nulls_last=True), "-stored_at")[:CANDIDATE_POOL]
    )
    return [note for note in rows if holds_identifier(note.content, identifiers)][:MAX_HOLDERS]


def _messages_holding(request: SearchRequest, reach: Reach, identifiers: list[Identifier]) -> list[Message]:
    words = _full_text(identifiers)
    conversations = searchable_conversation_ids(request.user, request.plan)
    if words is None or not conversations:
        return []
    excluded = [*request.exclude_message_ids, *forgotten_source_ids(request.user, reach)]
    rows = (
        Message.objects.filter(conversation_id__in=conversations, status=Message.Status.COMPLETE,
                               repeats_memory=False)
        .exclude(pk__in=excluded)
        .filter(search_vector=words)
        .order_by("-said_at", "-id")[:CANDIDATE_POOL]
    )
    return [message for message in rows if holds_identifier(message.content, identifiers)][:MAX_HOLDERS]


def _hit_holds(hit: Hit, identifiers: list[Identifier]) -> bool:
    return holds_identifier(_hit_text(hit), identifiers)


def _hit_text(hit: Hit) -> str:
    if hit.note is not None:
        return hit.note.content
    return "\n".join(m.content for m in hit.turn_messages)


def _cosine_distance(vector: np.ndarray | None, stored) -> float | None:
    if vector is None or stored is None:
        return None
    stored = np.asarray(stored, dtype=np.float32)
    norms = float(np.linalg.norm(vector) * np.linalg.norm(stored)) or 1.0
    return 1.0 - float(np.dot(vector, stored)) / norms


def _exact_reason(identifiers: list[Identifier], text: str) -> str:
    held = [identifier.text for identifier in identifiers if identifier.held_by(text)]
    return gettext("holds exactly %(identifier)s, as the question names it") % {"identifier": "、".join(held)}


def _note_hit(request: SearchRequest, note: Note, identifiers: list[Identifier], now: datetime) -> Hit:
    words = QueryWords(set(query_tokens(request.query)))
    breakdown = score(note, distance=_cosine_distance(request.query_vector, note.embedding), query_words=words,
                      layer_weight=request.plan.layer_weight(note.memory_scope), now=now)
    return Hit(note=note, layer=note.memory_scope, rank=0, breakdown=breakdown,
               reasons=[_exact_reason(identifiers, note.content)])


def _message_hit(request: SearchRequest, found: MessageCandidate, identifiers: list[Identifier], now: datetime) -> Hit:
    message = found.message
    words = QueryWords(set(query_tokens(request.query)))
    breakdown = score_message(message, distance=_cosine_distance(request.query_vector, message.embedding),
                              keyword=words.share_in(message.search_text),
                              layer_weight=request.plan.message_weight(message.conversation_id), now=now)
    return Hit(message=message, partner=found.partner, layer=MESSAGES, rank=0, breakdown=breakdown,
               reasons=[_exact_reason(identifiers, message.content)])


def exact_first(request: SearchRequest, hits: list[Hit]) -> list[Hit]:
    """``hits`` with the memories holding an identifier of the question first (see the module
    docstring); unchanged when the question names none. At most ``request.k`` hits, ranked anew."""
    identifiers = identifiers_in(request.query)
    if not identifiers:
        return hits
    reach = request.reach or reach_of(request.user)
    holding = [replace(hit, reasons=[_exact_reason(identifiers, _hit_text(hit)), *hit.reasons])
               for hit in hits if _hit_holds(hit, identifiers)]
    shown_notes = {hit.note.pk for hit in hits if hit.note is not None}
    shown_messages = {m.pk for hit in hits for m in hit.turn_messages}
    now = timezone.now()
    added = [_note_hit(request, note, identifiers, now)
             for note in _notes_holding(request, reach, identifiers) if note.pk not in shown_notes]
    found = [MessageCandidate(message=m) for m in _messages_holding(request, reach, identifiers)
             if m.pk not in shown_messages]
    attach_turn_partners(found, exclude_ids=request.exclude_message_ids)
    seen_turns: set[int] = set()
    for candidate in found:
        turn = {candidate.message.pk, *([candidate.partner.pk] if candidate.partner else [])}
        if turn & (seen_turns | shown_messages):
            continue  # the other message of a turn already shown or added
        seen_turns |= turn
        added.append(_message_hit(request, candidate, identifiers, now))
    added.sort(key=lambda hit: hit.breakdown.total, reverse=True)
    ordered = [*holding, *added, *(hit for hit in hits if not _hit_holds(hit, identifiers))][: request.k]
    return [replace(hit, rank=rank) for rank, hit in enumerate(ordered, start=1)]
