"""A new offer of the same side replaces the standing one (``remember/routing/offers.py``): with
no word of correction the old offer's note is revised to say what the offer has since become, the
original stays in history, and another side's offer, a wish or the same sum is left alone."""
from __future__ import annotations

import pytest

from memory.models import Note
from remember.routing import compare
from tests.remember.factories import ConversationFactory


@pytest.mark.parametrize("new, old, revised", [
    # the first offer stays a true event; its note says what the offer has since become
    ("公司那边也松口了，HR昨天说可以出5万8。", "周雅琴不想再回恒达精密上班了，只想要钱；公司HR前两天私下找她，说愿意给3万了事，她觉得太少。",
     "周雅琴不想再回恒达精密上班了，只想要钱；公司HR前两天私下找她，说愿意给3万了事，她觉得太少（此后报价已改为5万8）。"),
    ("人事又打来电话，公司又加到了3万5，条件是签一份协议。",
     "他刚看了工资条，月工资是税前8200。另外公司人事昨天打电话，说老板只能一次性给2万，了结所有事情。",
     "他刚看了工资条，月工资是税前8200。另外公司人事昨天打电话，说老板只能一次性给2万，了结所有事情（此后报价已改为3万5）。"),
    ("保险公司那边又涨到8万5了，黄淑芬问我要不要接受。", "对了，保险公司理赔员昨天打电话来，说可以一次性赔6万了结。",
     "对了，保险公司理赔员昨天打电话来，说可以一次性赔6万了结（此后报价已改为8万5）。"),
    ("另外对方司机又降到了1万2，说保险会赔大头，他自己只出1万2。",
     "还有，对方司机昨天打电话，说愿意私了，一次性给胡晓峰2万，让胡晓峰别找保险公司。",
     "还有，对方司机昨天打电话，说愿意私了，一次性给胡晓峰2万，让胡晓峰别找保险公司（此后报价已改为1万2）。"),
])
def test_a_new_offer_replaces_the_standing_one(new, old, revised):
    relation = compare(new, old, said=new)
    assert relation.kind.value == "correction", relation.reason
    assert relation.revised == revised
    assert "new offer" in relation.reason


def test_the_turn_tells_whose_offer_a_split_note_states():
    """What was quoted is never rewritten: the English words go after the quote."""
    said = "Emily sent another offer today. Same wording as before, but the amount is now RMB 150,000."
    relation = compare("Same wording as before, but the amount is now RMB 150,000.",
                       "\"Dear Lei, the Company proposes to pay RMB 132,000 in full and final settlement.\"", said=said)
    assert relation.kind.value == "correction"
    assert relation.revised == ("\"Dear Lei, the Company proposes to pay RMB 132,000 in full and final settlement.\" "
                                "(since changed to RMB 150,000)")


@pytest.mark.parametrize("new, old", [
    ("对方司机昨天说愿意私了，一次性给2万。", "保险公司理赔员昨天打电话来，说可以一次性赔6万了结。"),  # another side
    ("她说公司如果能给到8万，就同意调解。", "公司HR前两天私下找她，说愿意给3万了事。"),               # her floor
    ("公司HR又打电话，还是说愿意给3万。", "公司HR前两天私下找她，说愿意给3万了事。"),                 # the same sum
])
def test_no_new_offer_of_the_same_side_replaces_nothing(new, old):
    assert "new offer" not in compare(new, old, said=new).reason


def test_through_the_write_path_the_raised_offer_is_the_current_one(world, make_turn):
    conversation = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit)
    make_turn(conversation, "林晓雯不想再回公司了，只想要钱；公司HR昨天找她，说愿意给3万了事，她觉得太少。", "好的。")
    first = Note.objects.get(conversation=conversation, content__contains="3万")
    make_turn(conversation, "公司那边松口了，HR今天说可以出5万8。", "好的。")

    first.refresh_from_db()
    assert first.status == Note.Status.SUPERSEDED
    active = list(Note.objects.filter(conversation=conversation, status=Note.Status.ACTIVE).values_list("content", flat=True))
    assert not any("3万" in text and "5万8" not in text for text in active), active
    assert any("愿意给3万了事，她觉得太少（此后报价已改为5万8）" in text for text in active), active
    assert any("只想要钱" in text for text in active) and any(text.endswith("可以出5万8。") for text in active), active
    assert first.superseded_by.status == Note.Status.ACTIVE
