"""Rank fusion treats a raw message as well as a note, history questions see the earlier
statement of a subject, and keyword weights follow what was said (docs/evaluation.md)."""
from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

from memory.models import Conversation
from remember.message_index import index_messages
from recall import search_memory
from recall.fusion import (
    DENSE, KEYWORD, NOTES, Entry, fuse, fusion_reason, lift_earlier_statements, raise_first_versions,
)
from recall.messages import Statement
from recall.scoring import ScoreBreakdown, keyword_score
from recall.types import MESSAGE, NOTE
from tests.recall.test_turn_memory import said


def entry(key, total: float, sources: tuple[int, ...] = ()) -> Entry:
    breakdown = ScoreBreakdown(semantic=total, keyword=0.0, importance=0.5, confidence=0.5, graph=0.0,
                               recency=0.0, layer_weight=1.0, total=total)
    return Entry(key, breakdown, "case" if key[0] == NOTE else "conversation", sources)


def test_a_message_without_a_note_is_ranked_in_the_layered_list_too():
    """First in both raw lists and second by layered score beats second in both raw lists and
    first by layered score — a line no note was made of is not a second-class memory."""
    note = entry((NOTE, "n1"), 0.60, sources=(2,))
    lone = entry((MESSAGE, 1), 0.55)
    source = entry((MESSAGE, 2), 0.40)
    slots = fuse([note], [lone, source], dense_rank={1: 1, 2: 2}, keyword_rank={1: 1, 2: 2}, superseded_by={})
    assert [slot.key for slot in slots] == [(MESSAGE, 1), (NOTE, "n1")]
    assert slots[0].ranks == {DENSE: 1, KEYWORD: 1, NOTES: 2}
    assert slots[1].ranks == {DENSE: 2, KEYWORD: 2, NOTES: 1}


def test_note_keywords_are_weighted_by_how_rare_each_word_is():
    words = {"陈志强", "医院"}
    weights = {"陈志强": 0.4, "医院": 3.1}  # the client's name is in every line; the hospital in one
    assert keyword_score(words, "陈志强 骑 电动车 被 撞", weights) < keyword_score(words, "在 医院 住 了 十天", weights)
    assert keyword_score(words, "陈志强 骑 电动车 被 撞") == keyword_score(words, "在 医院 住 了 十天") == 0.5


def statement(vector: list[float], day: int) -> Statement:
    return Statement(np.asarray(vector, dtype=np.float32), datetime(2026, 1, day, tzinfo=timezone.utc))


def test_the_earlier_statement_of_a_top_slots_subject_is_lifted_right_below_it():
    slots = [entry((MESSAGE, pk), 0.0) for pk in range(1, 8)]
    for fused, slot in zip((0.05, 0.04, 0.03, 0.02, 0.015, 0.012, 0.010), slots):
        slot.fused = fused
    statements = {
        1: statement([1.0, 0.0, 0.0], day=20),  # the best slot: the later statement
        2: statement([0.0, 1.0, 0.0], day=20),
        3: statement([0.0, 0.0, 1.0], day=20),
        4: statement([0.6, 0.8, 0.0], day=2),   # earlier, another subject (cosine 0.6)
        5: statement([1.0, 0.2, 0.0], day=25),  # same subject but said after: not an earlier value
        6: statement([1.0, 0.1, 0.0], day=2),   # earlier, same subject (cosine 0.995)
    }
    ordered = lift_earlier_statements(slots, statements)
    assert [slot.key[1] for slot in ordered] == [1, 6, 2, 3, 4, 5, 7]
    assert ordered[1].lifted_below == (MESSAGE, 1)
    assert "同一事项较早的说法" in fusion_reason(ordered[1])
    assert all(slot.lifted_below is None for slot in ordered if slot.key[1] != 6)


def test_for_the_first_version_given_what_a_correction_replaced_ranks_right_above_it():
    """Only above an anchor that says it corrects: above another later statement of the subject
    (the gold already first, say) the earlier one stays below."""
    slots = [entry((MESSAGE, pk), 0.0) for pk in range(1, 7)]
    for fused, slot in zip((0.05, 0.04, 0.03, 0.02, 0.015, 0.01), slots):
        slot.fused = fused
    statements = {
        1: Statement(np.asarray([1.0, 0.0, 0.0], dtype=np.float32), datetime(2026, 1, 20, tzinfo=timezone.utc),
                     corrects=True),  # "更正一下：第二期不是10万元，是12万元"
        2: statement([0.0, 1.0, 0.0], day=20),  # a later statement that corrects nothing
        3: statement([0.0, 0.0, 1.0], day=20),
        4: statement([1.0, 0.1, 0.0], day=2),   # what 1 corrected
        5: statement([0.1, 1.0, 0.0], day=2),   # earlier, of 2's subject
    }
    ordered = lift_earlier_statements(slots, statements, first_version=True)
    assert [slot.key[1] for slot in ordered] == [4, 1, 2, 5, 3, 6]
    assert ordered[0].raised_above == (MESSAGE, 1) and ordered[0].lifted_below is None
    assert ordered[3].lifted_below == (MESSAGE, 2) and ordered[3].raised_above is None
    assert "最初的说法" in fusion_reason(ordered[0])
    plain = [entry((MESSAGE, pk), fused) for pk, fused in zip(range(1, 7), (0.05, 0.04, 0.03, 0.02, 0.015, 0.01))]
    for slot, fused in zip(plain, (0.05, 0.04, 0.03, 0.02, 0.015, 0.01)):
        slot.fused = fused
    assert [slot.key[1] for slot in lift_earlier_statements(plain, statements)][:3] == [1, 4, 2]


def test_what_a_correction_replaced_is_raised_from_just_below_it_and_never_over_a_better_slot():
    """The replaced statement ranked 2nd, right under the correction: it goes first. A
    correction ranked 2nd raises what it replaced between the 1st slot and itself."""
    def ranked(*fused_values: float) -> list[Entry]:
        slots = [entry((MESSAGE, pk), 0.0) for pk in range(1, len(fused_values) + 1)]
        for slot, fused in zip(slots, fused_values):
            slot.fused = fused
        return slots

    correction = Statement(np.asarray([1.0, 0.0, 0.0], dtype=np.float32), datetime(2026, 1, 20, tzinfo=timezone.utc),
                           corrects=True)
    replaced = statement([1.0, 0.1, 0.0], day=2)
    ordered = lift_earlier_statements(ranked(0.05, 0.04, 0.03), {1: correction, 2: replaced}, first_version=True)
    assert [slot.key[1] for slot in ordered] == [2, 1, 3]
    ordered = lift_earlier_statements(ranked(0.05, 0.04, 0.03, 0.02, 0.01),
                                      {2: correction, 5: replaced, 1: statement([0.0, 1.0, 0.0], day=25)},
                                      first_version=True)
    assert [slot.key[1] for slot in ordered] == [1, 5, 2, 3, 4]
    assert 0.04 < ordered[1].fused < 0.05


def test_for_the_first_version_given_each_corrected_note_ranks_right_above_its_correction():
    """first (corrected by second, corrected by current): the chain ends with the first on top;
    an unrelated slot keeps its place, and a pair whose note is not a slot moves nothing."""
    current, second, first, aside, lonely = (entry((NOTE, pk), 0.0) for pk in (1, 2, 3, 4, 5))
    for fused, slot in zip((0.05, 0.03, 0.01, 0.04, 0.02), (current, second, first, aside, lonely)):
        slot.fused = fused
    superseded_by = {3: 2, 2: 1, 5: 99}  # 99 is not among the slots
    ordered = raise_first_versions([current, second, first, aside, lonely], superseded_by)
    assert [slot.key[1] for slot in ordered] == [3, 2, 1, 4, 5]
    assert first.raised_above == (NOTE, 2) and second.raised_above == (NOTE, 1)
    assert current.raised_above is None and lonely.raised_above is None and lonely.fused == 0.02
    assert "最初的说法" in fusion_reason(first)


EARLIER = "I collect Lily from school at 3:15 on Tuesdays and Thursdays, so no late calls on those days."
LATER = "Lily's school pick-up days have changed: Mondays and Fridays now, still at 3:15."
ASIDES = [
    "Lily's school play is on 12 December at 2 pm; I will leave early that day.",
    "The school asked parents to pack a raincoat for the Friday trip.",
    "Please draft the reply to Greenway about the deposit deduction.",
    "I cycle to the office, so early meetings across town are a pain.",
    "My dentist appointment is on 3 December at 8:30.",
]


@pytest.fixture
def pick_ups(world):
    """alice said one thing in September, other school things since, and the change in November."""
    private = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=None)
    earlier = said(private, EARLIER, day=2)
    for minute, text in enumerate(ASIDES):
        said(private, text, day=10, minute=minute)
    later = said(private, LATER, day=25)
    index_messages()
    return earlier, later


def position_of(result, message_id: int) -> int:
    return next(i for i, hit in enumerate(result.hits) if message_id in hit.source_message_ids)


def test_a_history_question_ranks_the_earlier_statement_right_below_the_later(world, pick_ups):
    earlier, later = pick_ups
    result = search_memory(world.alice, "Which days did I originally do the school pick-up?", k=5)
    assert result.plan.history
    assert position_of(result, earlier.pk) == position_of(result, later.pk) + 1


def test_without_a_history_cue_nothing_is_lifted(world, pick_ups):
    result = search_memory(world.alice, "Which days do I do the school pick-up?", k=5)
    assert not result.plan.history
    assert not any("同一事项较早的说法" in r for hit in result.hits for r in hit.reasons)


def test_when_what_a_correction_replaced_already_ranks_above_it_nothing_else_is_raised(world):
    """The later message says it corrects (its words are read for a first-version question
    only), and the statement it replaced already ranks above it: no other earlier line of the
    subject (an aside about Lily's school) is pushed over the correction."""
    private = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=None)
    earlier = said(private, EARLIER, day=2)
    for minute, text in enumerate(ASIDES):
        said(private, text, day=10, minute=minute)
    correction = said(private, "Correction: I collect Lily from school on Mondays and Fridays, actually, "
                               "not Tuesdays and Thursdays.", day=25)
    index_messages()
    first = search_memory(world.alice, "Which days did I originally say I collect Lily from school?", k=5)
    assert first.plan.first_version
    assert position_of(first, earlier.pk) + 1 == position_of(first, correction.pk)
    assert not any("最初的说法" in r for hit in first.hits for r in hit.reasons)


@pytest.mark.parametrize("who", ["bob", "charlie"])
def test_others_never_get_alices_earlier_statements(world, pick_ups, who):
    result = search_memory(getattr(world, who), "Which days did I originally do the school pick-up?", k=5)
    earlier, later = pick_ups
    assert not {earlier.pk, later.pk} & {i for hit in result.hits for i in hit.source_message_ids}
