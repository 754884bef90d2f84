"""The turn job against the servers firms run (issue 12): every server profile writes notes
with at most two requests for the first turn and one after; a format refusal is never a
retried job; only completed replies are read; advice never becomes firm-wide law; extraction
may use its own server."""
from __future__ import annotations

import pytest

from memory.models import LLMServerMode, Message, Note, TurnExtraction
from remember.turns import enqueue_turn_extraction, process_turn
from memory.services.conversations import save_message
from tests.fake_llm import FakeLLMServer, error_reply, json_reply
from tests.remember.conftest import LAPTOP_REPLY, LAPTOP_USER

KNOWLEDGE = {
    "knowledge": [
        {"content": "用户于2024年3月5日以5999元购买笔记本电脑", "category": "事实"},
        {"content": "用户保存了电子发票和花屏照片", "category": "证据"},
    ]
}
SECOND = {"knowledge": [{"content": "商家在2024年3月20日拒绝退货", "category": "事实"}]}


def turn_with_reply(conversation, user_text: str, reply_text: str, status: str) -> TurnExtraction:
    """A turn whose reply ended as ``status`` (complete, cancelled, failed), run now."""
    user = save_message(conversation, "user", user_text, speaker=conversation.user.username)
    reply = save_message(conversation, "assistant", reply_text, speaker="assistant", status=status)
    return process_turn(enqueue_turn_extraction(user, reply).pk)


def test_every_server_profile_writes_notes_in_at_most_two_requests(
    world, laptop_conversation, make_turn, fake_llm, llm_settings, llm_profile
):
    fake_llm.script(json_reply(KNOWLEDGE), json_reply(SECOND))

    first = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    after_first = len(fake_llm.chat_requests())
    second = make_turn(laptop_conversation, "商家在2024年3月20日拒绝退货，说是人为损坏。", "您可以要求商家出具检测报告。")

    assert (first.status, second.status) == ("done", "done"), (first.last_error, second.last_error)
    assert first.attempts == second.attempts == 1
    assert after_first <= 2
    assert len(fake_llm.chat_requests()) - after_first == 1
    assert Note.objects.filter(content__contains="5999元").exists()
    assert Note.objects.filter(content__contains="拒绝退货").exists()
    expected = "json_object" if llm_profile in ("deepseek", "llamacpp") else "json_schema"
    assert LLMServerMode.objects.get(base_url=fake_llm.base_url).json_mode == expected


def test_llamacpp_format_refusal_is_not_a_retried_job(world, laptop_conversation, make_turn, fake_llm, llm_settings):
    """The 500 to json_schema used to be retried 4 times per attempt and 5 attempts per job."""
    fake_llm.profile = "llamacpp"
    fake_llm.script(json_reply(KNOWLEDGE))

    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)

    assert (turn.status, turn.attempts, turn.last_error) == ("done", 1, "")
    assert [(r.response_format_type, r.status) for r in fake_llm.chat_requests()] == [
        ("json_schema", 500), ("json_object", 200)]


def test_a_server_refusing_every_mode_fails_the_job_at_once(world, laptop_conversation, make_turn, fake_llm, llm_settings):
    fake_llm.script(error_reply(401, "Incorrect API key provided."))

    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)

    assert (turn.status, turn.attempts) == ("failed", 1)
    assert "LLMRejected" in turn.last_error
    assert len(fake_llm.chat_requests()) == 1
    assert Message.objects.filter(conversation=laptop_conversation).count() == 2  # nothing said is lost


@pytest.mark.parametrize("status", ["cancelled", "failed"])
def test_an_unfinished_reply_is_not_read_only_the_user_message(
    world, laptop_conversation, fake_llm, llm_settings, status
):
    fake_llm.script(json_reply({"knowledge": [KNOWLEDGE["knowledge"][0]]}))

    turn = turn_with_reply(laptop_conversation, LAPTOP_USER, "根据《消费者权益保护法》第二十四条，建议您", status)

    assert turn.status == "done", turn.last_error
    prompt = fake_llm.chat_requests()[0].user_content
    assert "5999" in prompt
    assert "消费者权益保护法" not in prompt
    note = Note.objects.get()
    assert note.source_message_ids == [turn.user_message_id]  # the user's words, not the reply's


def test_an_empty_failed_reply_adds_nothing_of_its_own(world, laptop_conversation, fake_llm, llm_settings):
    """A model asked about an empty reply invented advice (issue 12): a short question with
    an empty failed reply is trivial and the LLM is not asked at all."""
    turn = turn_with_reply(laptop_conversation, "押金条丢了", "", "failed")

    assert turn.status == "skipped"
    assert fake_llm.chat_requests() == []
    assert not Note.objects.exists()


def test_advice_labelled_as_law_stays_out_of_the_firm_wide_layer(world, private_conversation, make_turn, fake_llm, llm_settings):
    fake_llm.script(json_reply({"knowledge": [
        {"content": "押金条丢了，应立即联系银行冻结账户", "category": "法条"},
        {"content": "《民法典》第五百零九条规定当事人应当按照约定全面履行自己的义务", "category": "法律依据"},
        {"content": "建议先与房东协商退还押金", "category": "行动建议", "scope_hint": "general_law"},
    ]}))

    turn = make_turn(private_conversation, "房东不退押金，押金条也丢了，我该怎么办？",
                     "可以先协商，再考虑诉讼。《民法典》第五百零九条规定当事人应当按照约定全面履行自己的义务。")

    assert turn.status == "done", turn.last_error
    layers = dict(Note.objects.values_list("content", "memory_scope"))
    categories = dict(Note.objects.values_list("content", "category"))
    assert layers["押金条丢了，应立即联系银行冻结账户"] == "case"
    assert categories["押金条丢了，应立即联系银行冻结账户"] == "action"
    assert layers["建议先与房东协商退还押金"] == "case"
    assert layers["《民法典》第五百零九条规定当事人应当按照约定全面履行自己的义务"] == "general_law"
    firm_wide = Note.objects.visible_to(world.alice).filter(memory_scope="general_law")
    assert list(firm_wide.values_list("category", flat=True)) == ["law"]
    assert not Note.objects.visible_to(world.charlie).exists()


def test_extraction_can_use_its_own_server_and_model(world, laptop_conversation, make_turn, fake_llm, llm_settings, settings):
    with FakeLLMServer(model="extractor-small") as extractor:
        settings.LLM_EXTRACTION_BASE_URL = extractor.base_url
        settings.LLM_EXTRACTION_MODEL = "extractor-small"
        settings.LLM_EXTRACTION_MAX_TOKENS = 333
        extractor.script(json_reply(KNOWLEDGE))

        turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)

        assert turn.status == "done"
        assert turn.engine == "llm:extractor-small"
        (request,) = extractor.chat_requests()
        assert request.body["model"] == "extractor-small"
        assert request.body["max_tokens"] == 333
        assert fake_llm.chat_requests() == []


def test_consolidation_reads_only_completed_replies(world, laptop_conversation, fake_llm, llm_settings):
    from memory.models import Consolidation
    from remember.services.consolidation import extract_leftover

    messages = [
        save_message(laptop_conversation, "user", LAPTOP_USER, speaker="alice"),
        save_message(laptop_conversation, "assistant", "建议您立即报警并冻结银行卡", speaker="assistant", status="failed"),
        save_message(laptop_conversation, "assistant", LAPTOP_REPLY, speaker="assistant"),
    ]
    consolidation = Consolidation.objects.create(firm=world.firm_a, conversation=laptop_conversation)
    fake_llm.script(json_reply({"knowledge": [KNOWLEDGE["knowledge"][0]]}))

    extract_leftover(consolidation, messages, actor="system:test")

    prompt = fake_llm.chat_requests()[0].user_content
    assert "报警" not in prompt
    assert "消费者权益保护法" in prompt
    assert "5999" in prompt
