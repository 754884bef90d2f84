"""The raw floor on the real search (docs/read-path.md, "The raw floor"): for generated
conversations, notes and questions, each of the first ``RAW_FLOOR_N`` messages of the raw-turn
search (``raw_turn_search``: dense + BM25 fusion over the asker's visible messages) is named by
the provenance of one of ``search_memory``'s first ten hits — the message itself, or a note whose
source messages include it. And a walled message is never the floor: bob, walled off the
deposit matter, and charlie, of another firm, never get one of its messages from either."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.models import Conversation, Message, Note
from recall import raw_turn_search, search_memory
from recall.fusion import RAW_FLOOR_N
from remember.message_index import index_messages
from tests.recall.test_turn_memory import said

PHONE = "13812345678"
# Lines of a lease dispute, a labour dispute and a renovation, client's and assistant's, so that
# questions share words and meaning with several of them and notes compete with the raw lines.
CLIENT_LINES = [
    "房东说墙面有污渍，要扣押金2000元。", "押金是5000元，合同去年3月15日签的。", "刚才说错了，押金是6000元不是5000元。",
    "公司让我每周六加班，一共加了31个周六。", "入职时间是2021年7月，月工资18000元。", "装修公司报价18万8，说防水另算。",
    "中介小刘说墙面最多扣两三百，我有录音。", "I was dismissed on Friday by e-mail, HR cited Article 40(3).",
    "我平时最喜欢用微信沟通，电话经常接不了。", "The landlord kept 1,800 of my deposit in the end.",
]
ASSISTANT_LINES = [
    "建议先向房东寄送书面催告函，限期七日内返还押金。", "押金纠纷应向房屋所在地的西湖区人民法院起诉。",
    "加班费按日工资的200%计算，周六加班没有调休的应当支付。", "劳动仲裁应向用人单位所在地的劳动人事争议仲裁委员会申请。",
    "装修合同里建议约定卫生间防水保修五年。", "Bring the contract, payslips and the dismissal letter to the arbitration.",
    "正常使用造成的自然损耗不应由承租人承担。", "经济补偿按工作年限每满一年支付一个月工资。",
]
QUESTIONS = [
    "押金到底是多少？", "房东能扣我多少押金？", "律师建议我怎么催房东退押金？", "加班费怎么算？", "去哪个仲裁委申请仲裁？",
    "装修防水保修几年？", "What did you tell me to bring to the arbitration?", "中介对墙面扣款怎么说的？",
    "你们用什么方式联系我？", "How much of the deposit did the landlord keep?", "我什么时候入职的？",
    f"房东电话{PHONE}，押金的事他怎么说？",
]


@st.composite
def conversations(draw):
    """Turns of a client's line and an assistant's reply, on the deposit matter or in a
    matter-less conversation; notes citing some client lines, worded like the question; and up
    to 14 notes with no provenance holding the phone number one question names (what holds a
    question's identifier ranks first: it would push the floor out if nothing kept it)."""
    turns = draw(st.lists(st.tuples(st.sampled_from(CLIENT_LINES), st.sampled_from(ASSISTANT_LINES),
                                    st.booleans()), min_size=6, max_size=16))
    noted = draw(st.lists(st.integers(0, len(turns) - 1), max_size=len(turns), unique=True))
    question = draw(st.sampled_from(QUESTIONS))
    decoys = draw(st.integers(0, 14))
    return turns, noted, question, decoys


def covered(result) -> set[int]:
    return {message_id for hit in result.hits for message_id in hit.source_message_ids}


@pytest.mark.django_db
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=conversations())
def test_the_raw_turn_searchs_first_messages_are_in_the_first_ten(world, example):
    turns, noted, question, decoys = example
    Message.objects.filter(conversation__firm=world.firm_a).delete()
    Note.objects.filter(firm=world.firm_a).delete()
    on_matter = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit)
    private = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=None)
    walled: set[int] = set()
    for position, (client, reply, in_matter) in enumerate(turns):
        conversation = on_matter if in_matter else private
        asked = said(conversation, client, minute=2 * position)
        answered = said(conversation, reply, role="assistant", minute=2 * position + 1)
        if in_matter:
            walled |= {asked.pk, answered.pk}
        if position in noted:  # a note on the question's subject, citing the client's line
            world.note(f"{question}（林晓雯：{client}）", owner=world.alice, matter=conversation.matter,
                       source_message_ids=[asked.pk])
    # Notes with no message behind them (typed on My memory) that hold the question's phone
    # number: the search puts what holds an identifier of the question first.
    for number in range(decoys):
        world.note(f"房东的电话是{PHONE}（第{number + 1}次记下）。", owner=world.alice)
    index_messages()

    raw = raw_turn_search(world.alice, question)
    result = search_memory(world.alice, question, k=10)
    if result.nothing_on:  # the question names what nothing alice may see holds: nothing at all
        assert not result.hits
        return
    floor = raw[:RAW_FLOOR_N]
    # the raw search's first messages, then the dense list's first ones it did not rank so high
    assert result.raw_floor[:len(floor)] == tuple(floor)
    missing = [m for m in result.raw_floor if m not in covered(result)]
    assert not missing, (question, floor, [(hit.kind, hit.source_message_ids) for hit in result.hits])

    for outsider in (world.bob, world.charlie):  # never the floor, never a hit
        assert not walled & set(raw_turn_search(outsider, question))
        assert not walled & covered(search_memory(outsider, question, k=10))


@pytest.mark.django_db
def test_what_holds_the_questions_identifier_goes_first_and_the_floor_stays(world):
    """Fourteen notes hold the phone number the question names: they rank first, and the
    raw-turn search's first messages still come back within the ten."""
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit)
    for position, (client, reply) in enumerate(zip(CLIENT_LINES, ASSISTANT_LINES)):
        said(conversation, client, minute=2 * position)
        said(conversation, reply, role="assistant", minute=2 * position + 1)
    for number in range(14):
        world.note(f"房东的电话是{PHONE}（第{number + 1}次记下）。", owner=world.alice)
    index_messages()
    question = f"房东电话{PHONE}，押金的事他怎么说？"
    result = search_memory(world.alice, question, k=10)
    floor = raw_turn_search(world.alice, question)[:RAW_FLOOR_N]
    assert PHONE in result.hits[0].note.content
    assert not [m for m in floor if m not in covered(result)], [(h.kind, h.source_message_ids) for h in result.hits]
