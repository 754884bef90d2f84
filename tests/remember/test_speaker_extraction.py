"""A turn through the fake LLM server with the items a small model wrote for it (issue 30): only
what the client said becomes the client's facts, and every refused item's reason is on the turn."""
from __future__ import annotations

import pytest

from memory.models import Note, RoutingDecision
from tests.fake_llm import json_reply
from tests.remember.factories import ConversationFactory

USER = "我叫王磊，2024年3月1日租了房子，月租金8,000元，押金八千元。租约到期房东不退押金，这合法吗？"
REPLY = (
    "押金一共是14000元（8000元+7000元）。房东无正当理由不退押金属于违约。"
    "建议您先书面催告房东退还押金。房东到期不退押金，王磊可以按照以下方式进行主张："
)
#: What a 1.5B model returned for such a turn: every kind of mistake, and three good items.
ITEMS = [
    {"content": "用户于2024年3月1日租了房子，月租金8000元。", "category": "事实", "speaker": "user"},
    {"content": "用户的押金一共是14000元。", "category": "事实", "speaker": "turn"},
    {"content": "房东到期不退押金不合法。", "category": "事实", "speaker": "user"},
    {"content": "建议用户先书面催告房东退还押金。", "category": "事实", "speaker": "assistant"},
    {"content": "房东无正当理由不退押金属于违约。", "category": "事实", "speaker": "assistant"},
    {"content": "提出违约", "category": "诉求", "speaker": "user"},
    {"content": "房东到期不退押金，王磊可以按照以下方式进行主张：", "category": "法条", "speaker": "assistant"},
    {"content": "用户要求房东退还押金8000元。", "category": "诉求", "speaker": "user"},
]


@pytest.fixture
def deposit_conversation(world):
    """alice's conversation about matter_deposit (bob is not on that matter)."""
    return ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit, title="押金")


def test_only_the_clients_own_words_become_the_clients_facts(
    world, deposit_conversation, make_turn, fake_llm, llm_settings
):
    fake_llm.script(json_reply({"knowledge": ITEMS}))
    turn = make_turn(deposit_conversation, USER, REPLY)
    assert turn.status == "done", turn.last_error

    assert turn.rejected == [
        "item 2: the number 14000元 is not in what the client said: '王磊的押金一共是14000元。' [numbers-were-said]",
        "item 3: turns the question '租约到期房东不退押金，这合法吗？' into an assertion: '房东到期不退押金不合法。' [questions-stay-questions]",
        "item 5: said by the assistant: an answer is advice or law, never the client's 事实: '房东无正当理由不退押金属于违约。' [answers-are-not-client-facts]",
        "item 6: a fragment, not a sentence (under 6 characters): '提出违约' [whole-statement]",
        "item 7: a fragment: it ends with a colon, introducing what is not there: '房东到期不退押金，王磊可以按照以下方式进行主张：' [whole-statement]",
    ]
    assert [(i["content"], i["category"], i["speaker"]) for i in turn.items] == [
        ("王磊于2024年3月1日租了房子，月租金8000元。", "事实", "user"),
        ("建议王磊先书面催告房东退还押金。", "行动建议", "assistant"),
        ("王磊要求房东退还押金8000元。", "诉求", "user"),
    ]

    rent = Note.objects.get(content="王磊于2024年3月1日租了房子，月租金8000元。")
    assert (rent.category, rent.speaker, rent.source_message_ids) == ("fact", "alice", [turn.user_message_id])
    advice = Note.objects.get(content="建议王磊先书面催告房东退还押金。")
    assert (advice.category, advice.speaker, advice.source_message_ids) == (
        "action", "assistant", [turn.assistant_message_id])
    claim = Note.objects.get(content="王磊要求房东退还押金8000元。")
    assert claim.category == "claim"
    assert claim.matter == world.matter_deposit
    for said in ("14000", "不合法", "违约", "用户", "主张："):
        assert not Note.objects.filter(content__contains=said).exists(), said
    assert RoutingDecision.objects.filter(turn=turn).count() == 3

    # the notes stay behind the matter's wall: bob is not on matter_deposit, charlie is another firm
    assert Note.objects.visible_to(world.alice).count() == 3
    assert not Note.objects.visible_to(world.bob).exists()
    assert not Note.objects.visible_to(world.charlie).exists()

    request = fake_llm.chat_requests()[0]
    assert "5. 每条附 speaker" in request.user_content
    assert "【用户消息】我叫王磊" in request.user_content
