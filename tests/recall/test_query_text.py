"""The query encoder reads bounded texts: short questions whole, long ones head and tail, and,
apart from the question, the latest part of the context (two texts of one batch, vectors summed)
— while keyword search still reads the whole question."""
from __future__ import annotations

import pytest

from recall import search_memory
from infra.tokens import estimate_tokens
import numpy as np

from infra.embeddings import embed_query_in_background, get_embedder
from recall.query_text import query_texts

LONG = "原告与被告于2023年3月签订房屋租赁合同，约定月租金五千元，押金一万元，租期两年。" * 4 + "请问我们应当如何准备证据？"


def test_short_questions_are_encoded_as_they_are():
    assert query_texts("  When did the client sign the lease?  ").question == "When did the client sign the lease?"
    assert query_texts("When did the client sign the lease?").context == ""


def test_a_long_question_keeps_its_head_and_its_ask_within_the_bound(settings):
    settings.SEARCH_QUERY_MAX_TOKENS = 48
    settings.SEARCH_CONTEXT_MAX_TOKENS = 16
    alone = query_texts(LONG).question
    assert 40 <= estimate_tokens(alone) <= 48  # a question alone has the whole budget
    assert alone.startswith("原告与被告于2023年3月")
    assert alone.endswith("请问我们应当如何准备证据？")
    assert " … " in alone
    texts = query_texts(LONG, "上一轮讨论了押金扣留的证据：交接照片、聊天记录和房东的书面承诺。")
    question, context = texts.question, texts.context
    assert estimate_tokens(context) <= 16
    assert estimate_tokens(question) + estimate_tokens(context) <= 48
    assert question.startswith("原告与被告于2023年3月")
    assert question.endswith("准备证据？")
    assert " … " in question
    assert context.endswith("房东的书面承诺。")
    assert not context.startswith("上一轮")


def test_english_is_bounded_by_tokens_not_characters(settings):
    settings.SEARCH_QUERY_MAX_TOKENS = 16
    question = "please summarise " + "the deposition transcript of the witness " * 10 + "about the lease"
    bounded = query_texts(question).question
    assert estimate_tokens(bounded) <= 16 + 1
    assert bounded.endswith("about the lease")


@pytest.mark.django_db
def test_keywords_still_read_the_whole_long_question(world, settings):
    settings.SEARCH_QUERY_MAX_TOKENS = 8
    note = world.note("仲裁委员会受理通知书编号为 HZ2024-118。", matter=world.matter_deposit)
    question = "我们在这个押金纠纷里面已经整理了很多材料，" * 3 + "受理通知书编号是多少，后面还有一些补充说明要讲清楚。"
    result = search_memory(world.alice, question, k=5)
    hit = next(hit for hit in result.hits if hit.note is not None and hit.note.pk == note.pk)
    assert hit.breakdown.keyword > 0


def test_the_context_is_a_second_text_of_one_batch_summed_with_its_weight(settings):
    settings.SEARCH_QUERY_CACHE_SIZE = 0
    question, context = "那这个你上次怎么算的？", "我们刚才在说何先生的加班费，他每周六都要去店里。"
    embedder = get_embedder()
    alone = embed_query_in_background(question).result().vector
    both = embed_query_in_background(question, context, 0.5).result().vector
    expected = embedder.embed_query(question) + 0.5 * embedder.embed_query(context)
    assert np.allclose(alone, embedder.embed_query(question), atol=1e-5)
    assert np.allclose(both, expected / np.linalg.norm(expected), atol=1e-4)
    assert abs(float(np.linalg.norm(both)) - 1.0) < 1e-5
