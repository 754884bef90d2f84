"""With the local model the memory stays true (issue 56): the fake server is scripted to do
exactly what the live Qwen2.5 1.5B did in alice's 6-turn deposit consultation, and each of its
failures is held here.

- the correction "刚才说错了，押金是3000不是2000" came back only inside an advice note: the
  client's 押金2000元 must still be superseded by 3000;
- a question whose answer was stopped (or whose socket closed) filed four notes of generic
  legal text in alice's name: a message that only asks files nothing;
- the answer's numbered recommendation was filed word for word as alice's claim: it is the
  assistant's advice; a claim nobody in the turn said is refused.

Turns go through the fake OpenAI-compatible server over real HTTP and the real write path
(embeddings, pgvector neighbours, routing, PostgreSQL)."""
from __future__ import annotations

import pytest

from memory.models import Message, Note, RoutingDecision
from tests.fake_llm import json_reply
from tests.remember.factories import ConversationFactory

FIRST_TURN = "我2025年3月租了一套房子，月租金1500元，押金2000元。现在退租了，房东一直不退押金。"
FIRST_REPLY = "房东无正当理由扣留押金属于违约。建议您先书面催告房东退还押金，并保留租赁合同和转账记录。"
STOPPED_QUESTION = "房东有哪些权利？我作为租客能要求他做什么？"
#: What the live model filed from the stopped question, in alice's name.
GENERIC_ITEMS = (
    ("房东的全部权利包括但不限于：提供合适的住宿环境、及时清理卫生、收取租金和押金", "事实"),
    ("租客可以采取的全部维权途径包括但不限于：协商、投诉、向人民法院起诉", "诉求"),
    ("房东应当保障房屋及其附属设施处于安全可用的状态", "证据"),
    ("租客应当按时缴纳房租并爱护房屋设施", "行动建议"),
)


@pytest.fixture
def deposit_conversation(world):
    return ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit, title="押金")


def _item(content: str, category: str = "事实", speaker: str = "user") -> dict:
    return {"content": content, "category": category, "speaker": speaker}


def _turn(fake_llm, make_turn, conversation, said: str, reply: str, *items: dict):
    fake_llm.script(json_reply({"knowledge": list(items)}))
    turn = make_turn(conversation, said, reply)
    assert turn.status == "done", turn.last_error
    return turn


def test_a_correction_the_model_files_only_as_advice_still_replaces_the_amount(
    world, deposit_conversation, make_turn, fake_llm, llm_settings
):
    _turn(fake_llm, make_turn, deposit_conversation, FIRST_TURN, FIRST_REPLY,
          _item("租客2025年3月租了一套房子，交纳了押金2000元，月租金1500元"),
          _item("建议先书面催告房东退还押金", "行动建议", "assistant"))
    old = Note.objects.get(content__contains="押金2000元")

    correction = _turn(
        fake_llm, make_turn, deposit_conversation, "刚才说错了，押金是3000不是2000。",
        "好的，押金是3000元。根据《租赁合同示范文本》，房东应在租期结束后退还押金。",
        _item("押金是3000元，但根据《租赁合同示范文本》，房东应在租期结束后退还押金", "行动建议", "assistant"),
    )

    old.refresh_from_db()
    assert old.status == "superseded", [d.reason for d in RoutingDecision.objects.filter(turn=correction)]
    assert "3000" in old.superseded_by.content and "2000" not in old.superseded_by.content
    assert old.superseded_by.speaker == world.alice.username  # the client's, not the assistant's
    active_client = Note.objects.filter(status="active", speaker=world.alice.username, content__contains="押金")
    assert not active_client.filter(content__contains="2000").exists()


@pytest.mark.parametrize("status, partial", [
    (Message.Status.CANCELLED, "房东的权利主要包括"),  # the Stop button
    (Message.Status.FAILED, ""),  # the websocket closed before an answer
])
def test_a_question_whose_answer_stopped_files_nothing(
    world, deposit_conversation, make_turn, fake_llm, llm_settings, status, partial
):
    _turn(fake_llm, make_turn, deposit_conversation, FIRST_TURN, FIRST_REPLY, _item("租客交纳了押金2000元"))
    before = Note.objects.count()
    fake_llm.script(json_reply({"knowledge": [_item(content, category) for content, category in GENERIC_ITEMS]}))
    user, reply = make_turn.save(deposit_conversation, STOPPED_QUESTION, partial)
    Message.objects.filter(pk=reply.pk).update(status=status)
    from remember.turns import enqueue_turn_extraction, process_turn
    turn = process_turn(enqueue_turn_extraction(user, Message.objects.get(pk=reply.pk)).pk)

    assert turn.status == "done", turn.last_error
    assert Note.objects.count() == before
    assert len(turn.rejected) == len(GENERIC_ITEMS)
    assert all("[a-question-states-no-fact]" in reason for reason in turn.rejected), turn.rejected


def test_generic_text_for_a_statement_turn_is_nobodys(world, deposit_conversation, make_turn, fake_llm, llm_settings):
    """A turn that states something: the model's generic text is still not what alice said."""
    turn = _turn(fake_llm, make_turn, deposit_conversation, FIRST_TURN, "",
                 _item("租客交纳了押金2000元，月租金1500元"),
                 *(_item(content, category) for content, category in GENERIC_ITEMS[:2]))

    assert not any("全部" in item["content"] for item in turn.items)
    assert not Note.objects.filter(content__contains="全部").exists()
    assert sum("[the-clients-words-are-the-clients]" in reason for reason in turn.rejected) == 2, turn.rejected


def test_the_answers_recommendation_is_the_assistants_advice_and_an_unsaid_claim_is_refused(
    world, deposit_conversation, make_turn, fake_llm, llm_settings
):
    said = "房子的热水器坏了，我自己花了800元修好。合同写明设施维修由房东负责，房东还欠我这笔维修费。"
    reply = ("建议：1. 与房东协商，要求其按合同约定承担维修费800元；2. 保留维修发票和聊天记录；"
             "3. 协商不成可以申请调解。")
    turn = _turn(
        fake_llm, make_turn, deposit_conversation, said, reply,
        _item("热水器维修费800元由房东负责，房东欠租客维修费"),
        _item("1. 与房东协商，要求其按合同约定承担维修费800元", "诉求", "user"),
        _item("可以向被告所在地的法院提起诉讼", "诉求", "user"),
        _item("租客应承担维修费800元"),  # the answer's wording: now the tenant owes, not the landlord
    )

    kept = {item["content"]: item for item in turn.items}
    assert kept["热水器维修费800元由房东负责，房东欠租客维修费"]["speaker"] == "user"
    recommendation = kept["1. 与房东协商，要求其按合同约定承担维修费800元"]
    assert (recommendation["speaker"], recommendation["category"]) == ("assistant", "行动建议")
    assert "可以向被告所在地的法院提起诉讼" not in kept
    assert "租客应承担维修费800元" not in kept
    assert any("[the-answers-words-are-the-answers]" in reason and "租客应承担" in reason for reason in turn.rejected)
    assert any("[the-clients-words-are-the-clients]" in reason
               for reason in turn.rejected), turn.rejected
    assert not Note.objects.filter(speaker=world.alice.username, content__contains="与房东协商").exists()


def test_a_correction_replaces_the_amount_in_every_note_that_holds_it(
    world, deposit_conversation, make_turn, fake_llm, llm_settings
):
    """The model's item leaves out the lease date, so the rules' floor notes the turn too: two
    current notes say 押金2000元, and the correction must leave neither current (live, the floor's
    stayed)."""
    first = _turn(fake_llm, make_turn, deposit_conversation, FIRST_TURN, FIRST_REPLY,
                  _item("租客交纳了押金2000元，月租金1500元"))
    assert [item["origin"] for item in first.items].count("rules") == 1
    assert Note.objects.filter(status="active", content__contains="押金2000元").count() == 2

    _turn(fake_llm, make_turn, deposit_conversation, "刚才说错了，押金是3000不是2000。", "好的，押金是3000元。",
          _item("押金是3000元", "事实", "user"))

    assert not Note.objects.filter(status="active", content__contains="2000").exists()
    revised = Note.objects.filter(status="active", content__contains="押金3000元")
    assert revised.count() >= 2
    assert all(note.supersedes.exists() for note in revised if "1500" in note.content)


def test_half_clauses_the_model_cut_are_refused_and_the_whole_sentence_noted(
    world, deposit_conversation, make_turn, fake_llm, llm_settings
):
    """The live run of 6 Dec: "现在还欠着我" and "林晓雯花了800元" — who owes, and 800 for what?"""
    said = "我叫林晓雯。热水器坏了是房东让我自己找人修的，我花了800元，他答应这钱他出，到现在还欠着我。"
    turn = _turn(fake_llm, make_turn, deposit_conversation, said, "", _item("现在还欠着我"), _item("林晓雯花了800元"))

    assert sum("[no-clause-cut-from-its-point]" in reason for reason in turn.rejected) == 2, turn.rejected
    contents = [item["content"] for item in turn.items]
    assert len(contents) == 1 and "800元" in contents[0] and "热水器" in contents[0], contents
    assert not Note.objects.filter(content__endswith="我").exists()


def test_the_clients_correction_never_puts_the_assistants_words_in_her_name(
    world, deposit_conversation, make_turn, fake_llm, llm_settings
):
    """Live (run 5), the answer "房东应当退还押金2000元和剩余的800元" came back after the correction as
    a note in alice's name with 3000: a correction revises what its speaker said, and the
    assistant's advice stays the assistant's."""
    _turn(fake_llm, make_turn, deposit_conversation, FIRST_TURN, FIRST_REPLY,
          _item("租客交纳了押金2000元，月租金1500元"))
    _turn(fake_llm, make_turn, deposit_conversation, "扣清洁费300元和维修费500元，那他还应该退我多少？",
          "房东应当退还押金2000元和剩余的800元。",
          _item("房东应当退还押金2000元和剩余的800元", "事实", "assistant"),
          _item("房东应当退还押金2000元和剩余的800元", "行动建议", "assistant"),
          _item("房东应当退还押金2000元和剩余的800元", "事实", "user"))
    _turn(fake_llm, make_turn, deposit_conversation, "刚才说错了，押金是3000不是2000。", "好的，押金是3000元。",
          _item("押金是3000元", "事实", "user"))

    for note in Note.objects.filter(status="active", content__contains="剩余的800元"):
        assert note.speaker != world.alice.username, (note.speaker, note.category, note.content)
        assert "3000" not in note.content, (note.speaker, note.content)  # nobody said 3000 there


def test_a_revised_note_stays_in_its_speakers_name_and_the_assistants_words_are_not_rewritten(world):
    """The decision and the revision draft alone (the live note's path, run 6 of
    docs/story-and-real-llm.md): the stored note's speaker keeps the revised note, and a
    note the assistant said is never revised by the client's correction."""
    from memory.models import Category, MemoryScope, SourceType
    from memory.services.notes import NoteDraft
    from remember.routing.decide import decide
    from remember.routing.neighbours import Neighbour
    from remember.routing.write import _revision_draft

    said = "刚才说错了，押金是3000不是2000。"
    draft = NoteDraft(firm=world.firm_a, content="押金是3000元", memory_scope=MemoryScope.CASE, category=Category.FACT,
                      source_type=SourceType.CHAT, speaker=world.alice.username, said=said,
                      matter=world.matter_deposit, owner=world.alice)
    client_note = world.note("林晓雯租了一套房子，月租金1500元，押金2000元。", owner=world.alice,
                             matter=world.matter_deposit, speaker="林晓雯")
    assistant_note = world.note("房东应当退还押金2000元和剩余的800元。", owner=world.alice,
                                matter=world.matter_deposit, speaker="assistant")

    revising = decide(draft, [Neighbour(client_note, 0.95)])
    assert revising.action == RoutingDecision.Action.UPDATE and "3000" in revising.revised
    assert _revision_draft(draft, revising).speaker == "林晓雯"
    assert decide(draft, [Neighbour(assistant_note, 0.95)]).action != RoutingDecision.Action.UPDATE
