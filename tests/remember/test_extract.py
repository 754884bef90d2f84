"""extract_turn: offline engine without an LLM, the LLM path through the fake server, errors propagate."""
from __future__ import annotations

import pytest

from infra.llm import LLMBadOutput, LLMUnavailable
from remember.extract import extract_turn
from tests.fake_llm import json_reply
from tests.remember.conftest import LAPTOP_REPLY, LAPTOP_USER


def test_offline_engine_without_llm(settings):
    settings.LLM_BASE_URL = ""
    outcome = extract_turn(LAPTOP_USER, LAPTOP_REPLY)
    assert outcome.engine == "offline"
    assert not outcome.skipped
    assert [i.category for i in outcome.items][:2] == ["事实", "事实"]
    assert outcome.items[0].content == "当事人在2024年3月5日花5999元买了一台笔记本电脑。"


def test_trivial_turn_is_skipped_without_calling_the_llm(fake_llm, llm_settings):
    outcome = extract_turn("好的", "收到，谢谢。")
    assert outcome.skipped
    assert outcome.items == []
    assert fake_llm.chat_requests() == []


def test_llm_items_keep_chinese_and_at_most_five(db, fake_llm, llm_settings):
    fake_llm.script(json_reply({"knowledge": [
        {"content": f"用户第{i}次联系商家，商家仍拒绝退货。", "category": "事实"} for i in range(1, 8)
    ]}))
    outcome = extract_turn(LAPTOP_USER, LAPTOP_REPLY)
    assert outcome.engine == "llm:fake-model"
    assert len(outcome.items) == 5
    assert outcome.items[0].content.startswith("当事人第1次")
    assert outcome.items[0].confidence == 0.8
    # the client's date and price, which no item of the model states, are kept first (the floor)
    assert [item.origin for item in outcome.items].count("rules") == 1
    assert sum("dropped: over the limit" in r for r in outcome.rejected_reasons) == 3
    request = fake_llm.chat_requests()[0]
    assert request.system_content == "You must respond with a JSON object."


def test_llm_errors_propagate(db, fake_llm, llm_settings):
    fake_llm.script_error(503, times=2)
    with pytest.raises(LLMUnavailable):
        extract_turn(LAPTOP_USER, LAPTOP_REPLY)
    fake_llm.script_malformed(times=4)
    with pytest.raises(LLMBadOutput):
        extract_turn(LAPTOP_USER, LAPTOP_REPLY)
