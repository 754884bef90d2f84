"""A message that tells the assistant something is acknowledged, never answered "memory holds
nothing on 王磊" (issue 50): "nothing on X" is said only about a name a question asks for."""
from __future__ import annotations

import pytest

from chat.answering import compose_offline_answer
from legaltext.acts import tells
from recall import search_memory


@pytest.mark.parametrize("message, telling", [
    ("中介叫王磊，电话13912345678。", True),
    ("我的客户林晓雯租了一套房，押金2000元。", True),
    ("The broker is Wang Lei.", True),
    ("王磊", False),                     # search-box words ask
    ("王磊的电话", False),
    ("林晓雯的押金是多少？", False),
    ("中介叫王磊。他的电话是多少？", False),  # a question anywhere asks
    ("帮我整理一下房子的基本情况。", False),  # a request asks for something
    ("请列出我需要准备的证据。", False),
    ("Please summarise the dispute so far.", False),
    ("Remind me of the key dates of the lease.", False),
    ("我帮房东搬过家具，他答应少扣押金。", True),  # "帮" inside a statement is no request
])
def test_telling_is_a_sentence_without_a_question(message, telling):
    assert tells(message) is telling


def test_a_statement_naming_someone_new_is_acknowledged_not_answered_as_unknown():
    answer = compose_offline_answer("中介叫王磊，电话13912345678。", [], nothing_on=[])
    assert "已记下" in answer and "没有任何提到" not in answer


def test_the_search_says_nothing_on_a_name_only_when_asked(world):
    assert search_memory(world.alice, "王磊的电话是多少？", k=10).nothing_on == ["王磊"]
    assert search_memory(world.alice, "中介叫王磊，电话13912345678。", k=10).nothing_on == []
