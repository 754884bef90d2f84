"""A correction that rejects a word, not a value, revises the stored note that says it
(``remember/routing/replaced_word.py``): "不是出租车，是网约车" rewrites the accident note, the
old note stays in history, and nothing is revised when the word cannot be placed once."""
from __future__ import annotations

import pytest

from memory.models import Note
from remember.routing import compare
from remember.routing.replaced_word import revised_by_replaced_word
from tests.remember.factories import ConversationFactory

ACCIDENT = "1月10号晚上胡晓峰骑电动车下班，在南京江宁区双龙大道被一辆出租车右转时撞了，右腿胫骨骨折。"


@pytest.mark.parametrize("said, old, revised", [
    ("不是出租车，是网约车，我刚看了认定书。", ACCIDENT, ACCIDENT.replace("出租车", "网约车")),
    ("更正一下，案子现在是二审，不是一审。", "周明的案子一审在杭州中院审理。", "周明的案子二审在杭州中院审理。"),
    # the day the rejected word was resolved to goes with it; words the new one repeats are said once
    ("哦不对，Kevin说的是“春节前一定付”，不是下个月。", "Kevin上周在微信里说“下个月（2026年2月）一定付”。",
     "Kevin上周在微信里说“春节前一定付”。"),
    ("Sorry, it was a van, not a taxi.", "Tom was hit by a taxi on Monday evening.",
     "Tom was hit by a van on Monday evening."),
])
def test_the_rejected_word_is_replaced_in_the_stored_note(said, old, revised):
    relation = compare(said, old, said=said)
    assert relation.kind.value == "correction", relation.reason
    assert relation.revised == revised
    assert "not" in relation.reason


@pytest.mark.parametrize("said, old", [
    ("不是出租车，是网约车。", "胡晓峰的电动车被撞坏了。"),                       # the note says no 出租车
    ("不是出租车，是网约车。", "出租车右转时撞了他，出租车司机逃逸。"),            # twice: which one cannot be told
    ("不是出租车，是网约车。", "网约车司机说出租车也在场。"),                      # already says the new word
    ("不是很清楚，是他说的。", "他很清楚合同的内容。"),                            # a stance, not a thing
    ("不是3000，是5000。", "押金3000元。"),                                       # a value is the rejected-value rule's
    ("我同事李明坐的不是出租车，是网约车。", ACCIDENT),                              # another person
    ("不是我不想去，是没时间去谈。", "他说我不想去公司谈。"),                      # a clause, not a word
])
def test_nothing_is_revised_when_the_word_cannot_be_placed(said, old):
    assert revised_by_replaced_word(said, said, old) is None


def test_through_the_write_path_the_vehicle_is_corrected(world, make_turn):
    conversation = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit)
    assert make_turn(conversation, ACCIDENT, "好的。").status == "done"
    assert make_turn(conversation, "不是出租车，是网约车，我刚看了认定书，车挂在一家汽车租赁公司名下。",
                     "好的。").status == "done"
    notes = Note.objects.filter(conversation=conversation)
    old = next(note for note in notes if "出租车右转" in note.content)
    assert old.status == Note.Status.SUPERSEDED
    assert "网约车右转" in old.superseded_by.content and "胫骨骨折" in old.superseded_by.content
    assert not notes.filter(status=Note.Status.ACTIVE, content__contains="出租车右转").exists()


def test_the_replaced_word_is_a_named_routing_rule():
    import remember.routing.rules  # noqa: F401  (registers the routing table)
    from memory.rules import rule

    replaced = rule("routing", "replaced-word")
    assert replaced is not None and str(replaced.why)
    assert replaced.check(("不是出租车，是网约车。", ACCIDENT))
    assert not replaced.check(("是网约车。", ACCIDENT))
