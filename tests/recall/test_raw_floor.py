"""The raw floor: whatever the note scores, the first messages of the plain raw fusion (dense +
keyword RRF over the same candidates) are covered by the first k slots (docs/evaluation.md,
"The raw floor"). A property test over random rankings, plus the cases a person reads."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.models import Conversation, Note
from remember.message_index import index_messages
from recall import search_memory
from recall.injection import build_system_message

from recall.fusion import RAW_FLOOR_DENSE_N, RAW_FLOOR_N, Entry, RawFloor, fuse, keep_raw_floor, select
from recall.plan import RetrievalPlan
from recall.scoring import ScoreBreakdown
from recall.types import MESSAGE, NOTE
from evaluation.metrics import rrf_fuse
from tests.recall.test_turn_memory import NOISE_ZH, said

LAYERS = ("case", "user_profile", "cross_case", "general_law", "global")


def entry(key, total: float, layer: str = "case", sources: tuple[int, ...] = ()) -> Entry:
    breakdown = ScoreBreakdown(semantic=total, keyword=0.0, importance=0.5, confidence=0.5, graph=0.0,
                               recency=0.0, layer_weight=1.0, total=total)
    return Entry(key, breakdown, layer if key[0] == NOTE else "conversation", sources)


def plan() -> RetrievalPlan:
    return RetrievalPlan(layers=LAYERS, matter_id=None, conversation_id=None, persona_first=False,
                         search_messages=False, graph_expansion=False)


@st.composite
def searches(draw):
    """A random search: messages in turns of two, notes citing random messages of them, random
    dense / keyword ranks over random subsets, random layered totals."""
    turn_count = draw(st.integers(1, 14))
    message_ids = list(range(1, 2 * turn_count + 1))
    turns = {m: ((m, m + 1) if m % 2 else (m - 1, m)) for m in message_ids}
    candidates = draw(st.lists(st.sampled_from(message_ids), min_size=1, unique=True))
    dense = draw(st.permutations(candidates))
    keyword = draw(st.lists(st.sampled_from(candidates), unique=True))
    note_count = draw(st.integers(0, 25))
    notes = [
        entry((NOTE, f"n{i}"), draw(st.floats(0.0, 1.0)), draw(st.sampled_from(LAYERS)),
              tuple(draw(st.lists(st.sampled_from(message_ids), min_size=1, max_size=3, unique=True))))
        for i in range(note_count)
    ]
    messages = [entry((MESSAGE, m), draw(st.floats(0.0, 1.0))) for m in candidates]
    k = draw(st.integers(1, 12))
    return notes, messages, {m: r for r, m in enumerate(dense, 1)}, {m: r for r, m in enumerate(keyword, 1)}, turns, k


@settings(max_examples=400, deadline=None)
@given(searches())
def test_the_raw_fusions_first_messages_are_always_in_the_first_k(search):
    notes, messages, dense_rank, keyword_rank, turns, k = search
    slots = fuse(notes, messages, dense_rank, keyword_rank, superseded_by={},
                 turns={m.key[1]: turns[m.key[1]] for m in messages})
    floor = RawFloor.of(dense_rank, keyword_rank)
    chosen = select(slots, plan(), k, floor)
    assert len(chosen) == min(k, len(slots))
    assert len({slot.key for slot in chosen}) == len(chosen), "a slot twice"
    covered = {message_id for slot in chosen for message_id in slot.covers}
    for slot in chosen:  # a note stands only for what its provenance names
        if slot.kind == NOTE:
            assert set(slot.covers) <= set(slot.source_message_ids)
    must = floor.kept(k)
    assert must[:min(RAW_FLOOR_N, k)] == floor.ranked[:min(RAW_FLOOR_N, k)]
    dense_first = sorted(dense_rank, key=dense_rank.get)[:RAW_FLOOR_DENSE_N]
    assert set(dense_first) <= set(must) or len(must) == k, "the dense list's first messages are floor too"
    missing = [m for m in must if m not in covered]
    assert not missing, f"raw floor {must}: {missing} not in the first {k}"
    assert [s.fused for s in chosen] == sorted((s.fused for s in chosen), reverse=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 60), unique=True), st.lists(st.integers(1, 60), unique=True))
def test_the_floor_is_the_raw_rrf_baseline(dense, keyword):
    """The floor's order is the evaluation's raw RRF (``rrf_fuse``) over the same two lists."""
    floor = RawFloor.of({m: r for r, m in enumerate(dense, 1)}, {m: r for r, m in enumerate(keyword, 1)})
    expected = rrf_fuse([dense, keyword])
    scores = {m: sum(1 / (60 + lst.index(m) + 1) for lst in (dense, keyword) if m in lst) for m in expected}
    assert [round(scores[m], 12) for m in floor.ranked] == [round(scores[m], 12) for m in expected]
    assert set(floor.ranked) == set(expected)


def test_notes_about_the_same_subject_do_not_push_out_the_reply_that_answers():
    """Ten notes made from the client's own lines outscore everything by layered score; the
    assistant's reply is first in both raw lists: it keeps a place, the last note gives way."""
    notes = [entry((NOTE, f"client-{i}"), 0.9 - i / 100, sources=(100 + 2 * i,)) for i in range(10)]
    reply = entry((MESSAGE, 7), 0.2)
    dense_rank, keyword_rank = {7: 1, 100: 2}, {7: 1}
    slots = fuse(notes, [reply, entry((MESSAGE, 100), 0.3)], dense_rank, keyword_rank, superseded_by={})
    chosen = select(slots, plan(), 10, RawFloor.of(dense_rank, keyword_rank))
    assert any(7 in slot.covers for slot in chosen)
    assert (NOTE, "client-9") not in {slot.key for slot in chosen}


def test_a_reply_only_the_meaning_list_finds_keeps_its_place():
    """The reply that answers in other words is second by meaning and holds no query word: the
    fusion ranks it below every message both lists hold, but the dense floor keeps it."""
    notes = [entry((NOTE, f"client-{i}"), 0.9 - i / 100, sources=(200 + i,)) for i in range(10)]
    others = list(range(100, 112))
    dense_rank = {100: 1, 7: 2, **{m: r for r, m in enumerate(others[1:], 3)}}
    keyword_rank = {m: r for r, m in enumerate(others, 1)}
    messages = [entry((MESSAGE, 7), 0.1)] + [entry((MESSAGE, m), 0.1) for m in others]
    slots = fuse(notes, messages, dense_rank, keyword_rank, superseded_by={})
    floor = RawFloor.of(dense_rank, keyword_rank)
    assert 7 not in floor.ranked[:RAW_FLOOR_N]
    chosen = select(slots, plan(), 10, floor)
    assert any(7 in slot.covers for slot in chosen)


def test_a_note_holds_only_what_it_cites_and_the_reply_keeps_its_own_place():
    """The note of a question cites the question only: the turn's reply, which no note cites,
    stays a slot of its own (standing for the turn), and it is the floor's first message."""
    note = entry((NOTE, "question-note"), 0.8, sources=(1,))
    question, reply = entry((MESSAGE, 1), 0.5), entry((MESSAGE, 2), 0.4)
    slots = fuse([note], [question, reply], {2: 1, 1: 2}, {2: 1}, superseded_by={}, turns={1: (1, 2), 2: (1, 2)})
    by_key = {slot.key: slot for slot in slots}
    assert by_key[(NOTE, "question-note")].covers == (1,)
    assert by_key[(MESSAGE, 2)].covers == (1, 2)
    taken = [by_key[(NOTE, "question-note")]]
    chosen = keep_raw_floor(taken, slots, RawFloor.of({2: 1, 1: 2}, {2: 1}), 1)
    assert [slot.key for slot in chosen] == [(MESSAGE, 2)]


@pytest.mark.django_db
def test_the_advice_that_answered_a_noted_question_is_recalled_as_itself(world):
    """The client's question became a note; the question asked later is about the assistant's
    advice in the same turn: a hit whose provenance names that reply comes back to alice; bob,
    walled off the matter, and charlie, of another firm, get none of it."""
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit)
    question = said(conversation, "房东扣了押金不退，我该怎么办？", minute=1)
    advice = said(conversation, "建议先向房东寄送书面催告函，限期七日内返还押金；逾期可向租赁房屋所在地的区人民法院起诉。",
                  role="assistant", minute=2)
    for minute, text in enumerate(NOISE_ZH, start=3):
        said(conversation, text, minute=minute)
    index_messages()
    Note.objects.create(firm=world.firm_a, content="房东扣留押金不退还。", memory_scope="case", category="fact",
                        owner=world.alice, matter=world.matter_deposit, conversation=conversation,
                        source_message_ids=[question.pk])
    result = search_memory(world.alice, "你上次说催告函要限期几天，逾期去哪个法院？", k=5, matter_id=world.matter_deposit.pk)
    holding = [hit for hit in result.hits if advice.pk in hit.source_message_ids]
    assert holding, [(hit.kind, hit.source_message_ids) for hit in result.hits]
    assert "催告函" in build_system_message(result)["content"]
    assert not result.uncovered_floor()
    for outsider in (world.bob, world.charlie):
        hits = search_memory(outsider, "你上次说催告函要限期几天，逾期去哪个法院？", k=5).hits
        assert not [hit for hit in hits if advice.pk in hit.source_message_ids]
