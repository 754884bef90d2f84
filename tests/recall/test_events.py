"""``recall.message_of_event``: the message where the firm did what a question names ("我们第一次
建议…的时候") — the best match, or the earliest of the best with "第一次 / first" — under the same
walls as every search: bob (walled from the matter) and charlie (another firm) find nothing."""
from __future__ import annotations

import pytest

from memory.models import Conversation
from recall import NotFound, message_of_event
from remember.message_index import index_messages
from tests.recall.test_turn_memory import said

pytestmark = pytest.mark.django_db

FIRST_ADVICE = "建议您先给房东发一封书面通知，要求他七日内修好热水器，押金2000元到期照常退还。"
SECOND_ADVICE = "押金按3000元算。建议您再给房东发一封书面通知，写明热水器仍未修好并保留维修记录。"


@pytest.fixture
def advised(world):
    """alice's deposit-matter conversation: the same advice given twice, a day apart, with other
    talk between and after; every message indexed as the turn job indexes it."""
    talk = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit)
    messages = {
        "told": said(talk, "房东不修热水器，我押金交了2000元。", day=2, minute=0),
        "first": said(talk, FIRST_ADVICE, role="assistant", day=2, minute=1),
        "corrected": said(talk, "更正一下，押金是3000元，不是2000元。", day=3, minute=0),
        "second": said(talk, SECOND_ADVICE, role="assistant", day=4, minute=1),
        "asked": said(talk, "我们第一次建议发书面通知的时候，押金是多少？", day=5, minute=0),
        "noise": said(talk, "明天上午十点要去法院立案庭交材料。", day=5, minute=3),
    }
    index_messages()
    return messages


def test_first_finds_the_earlier_of_two_pieces_of_the_same_advice(world, advised):
    # the words are nearer the second advice; "第一次" asks for the earlier one
    found = message_of_event(world.alice, "建议再给房东发一封书面通知", first=True, matter_id=world.matter_deposit.pk)
    assert found == advised["first"]


def test_without_first_the_best_match_is_the_moment(world, advised):
    found = message_of_event(world.alice, "建议再发一封书面通知写明热水器仍未修好", first=False,
                             matter_id=world.matter_deposit.pk)
    assert found == advised["second"]


def test_a_question_never_names_its_own_moment(world, advised):
    found = message_of_event(world.alice, "我们第一次建议发书面通知的时候押金是多少", first=False,
                             exclude_message_ids=(advised["first"].pk, advised["second"].pk))
    assert found is not None and found.pk != advised["asked"].pk


def test_bob_and_charlie_find_no_moment_of_a_matter_they_may_not_see(world, advised):
    for user in (world.bob, world.charlie):
        assert message_of_event(user, "建议发书面通知", first=True) is None, user.username
        with pytest.raises(NotFound):
            message_of_event(user, "建议发书面通知", first=True, matter_id=world.matter_deposit.pk)


def test_the_moment_rules_are_listed_and_each_reads_its_own_way_of_asking():
    from memory.rules import load_rules

    moment = {r.name: r for r in load_rules()["recall"] if r.stage == "moment"}
    assert set(moment) >= {"zh-jiezhi", "zh-then", "en-as-of", "zh-when-we-did", "zh-first-time-did",
                           "en-when-you-did", "en-your-advice"}
    asked = "我们第一次建议发书面通知的时候，押金是多少？"
    assert [name for name, r in moment.items() if r.check(asked)] == ["zh-when-we-did"]
    assert [name for name, r in moment.items() if r.check("截至2026年3月1日，押金是多少？")] == ["zh-jiezhi"]
    assert not any(r.check("押金是多少？") for r in moment.values())
