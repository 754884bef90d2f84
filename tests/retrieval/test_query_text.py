"""The query encoder reads a bounded text: short questions whole, long ones head and tail, plus
the latest part of the context — while keyword search still reads the whole question."""
from __future__ import annotations

import pytest

from memory.retrieval import search_memory
from memory.retrieval.injection import estimate_tokens
from memory.retrieval.query_text import encoding_text

LONG = "原告与被告于2023年3月签订房屋租赁合同，约定月租金五千元，押金一万元，租期两年。" * 4 + "请问我们应当如何准备证据？"


def test_short_questions_are_encoded_as_they_are():
    assert encoding_text("  When did the client sign the lease?  ") == "When did the client sign the lease?"


def test_a_long_question_keeps_its_head_and_its_ask_within_the_bound(settings):
    settings.SEARCH_QUERY_MAX_TOKENS, settings.SEARCH_CONTEXT_MAX_TOKENS = 48, 16
    text = encoding_text(LONG, "上一轮讨论了押金扣留的证据：交接照片、聊天记录和房东的书面承诺。")
    question, context = text.split("\n")
    assert estimate_tokens(question) <= 48 and estimate_tokens(context) <= 16
    assert question.startswith("原告与被告于2023年3月") and question.endswith("请问我们应当如何准备证据？")
    assert " … " in question
    assert context.endswith("房东的书面承诺。") and not context.startswith("上一轮")


def test_english_is_bounded_by_tokens_not_characters(settings):
    settings.SEARCH_QUERY_MAX_TOKENS = 16
    question = "please summarise " + "the deposition transcript of the witness " * 10 + "about the lease"
    bounded = encoding_text(question)
    assert estimate_tokens(bounded) <= 16 + 1 and bounded.endswith("about the lease")


@pytest.mark.django_db
def test_keywords_still_read_the_whole_long_question(world, settings):
    settings.SEARCH_QUERY_MAX_TOKENS = 8
    note = world.note("仲裁委员会受理通知书编号为 HZ2024-118。", matter=world.matter_deposit)
    question = "我们在这个押金纠纷里面已经整理了很多材料，" * 3 + "受理通知书编号是多少，后面还有一些补充说明要讲清楚。"
    result = search_memory(world.alice, question, k=5)
    hit = next(hit for hit in result.hits if hit.note is not None and hit.note.pk == note.pk)
    assert hit.breakdown.keyword > 0
