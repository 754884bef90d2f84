"""The client against the ways real servers differ (issue 12), over real HTTP with the fake
server: format refusals that are not 400, echoed schemas, items checked one by one, streams
that end without a finish reason, budgets sent to the server, the JSON mode re-probed."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from remember.extraction import KNOWLEDGE_ENVELOPE, KNOWLEDGE_EXAMPLE, KNOWLEDGE_SCHEMA, validate_items
from infra.llm import JSONMode, LLMClient, LLMConfig, LLMStreamIncomplete, LLMUnavailable
from infra.llm.modes import KnownMode, ProcessModeStore
from infra.llm.structured import RETRY_HINT, unwrap_schema_echo
from tests.fake_llm import FakeLLMServer, error_reply, json_reply, text_reply
from tests.fake_llm.profiles import LLAMACPP_SCHEMA_ERROR

PROMPT = "从下面的对话交互中提取结构化知识点。"
ITEMS = [
    {"content": "用户于2024年3月5日以5999元购买笔记本电脑", "category": "事实"},
    {"content": "《消费者权益保护法》第二十四条规定不符合质量要求的商品可以退货", "category": "法律依据"},
]


@pytest.fixture
def client(llm_config: LLMConfig) -> Iterator[LLMClient]:
    c = LLMClient(llm_config)
    yield c
    c.close()


def extract(client: LLMClient) -> dict:
    return client.complete_json(
        PROMPT, schema=KNOWLEDGE_SCHEMA, schema_name="knowledge_extraction",
        envelope=KNOWLEDGE_ENVELOPE, example=KNOWLEDGE_EXAMPLE,
    )


# --- format refusals --------------------------------------------------------------------


def test_llamacpp_500_naming_response_format_falls_back_at_once(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    """llama-cpp-python answers json_schema with HTTP 500: one request, then json_object —
    not four attempts of the same refused format."""
    fake_llm.profile = "llamacpp"
    fake_llm.script(json_reply({"knowledge": ITEMS}))

    data = extract(client)

    requests = fake_llm.chat_requests()
    assert [(r.response_format_type, r.status) for r in requests] == [("json_schema", 500), ("json_object", 200)]
    assert unwrap_schema_echo(data) == {"knowledge": ITEMS}
    assert client.json_mode is JSONMode.JSON_OBJECT


def test_a_500_that_does_not_name_the_format_is_still_retried(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script(error_reply(500, "CUDA out of memory"), json_reply({"knowledge": ITEMS}))

    assert extract(client) == {"knowledge": ITEMS}
    assert [(r.response_format_type, r.status) for r in fake_llm.chat_requests()] == [
        ("json_schema", 500), ("json_schema", 200)]
    assert client.json_mode is JSONMode.JSON_SCHEMA


def test_a_500_naming_the_format_in_plain_mode_is_not_a_format_refusal(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    """Only a request that carries a response_format can be refused for it."""
    client.modes.save(client.config.base_url, client.config.model, JSONMode.PLAIN)
    fake_llm.script(error_reply(500, LLAMACPP_SCHEMA_ERROR), json_reply({"knowledge": ITEMS}))

    assert extract(client) == {"knowledge": ITEMS}
    assert [r.status for r in fake_llm.chat_requests()] == [500, 200]


# --- replies small models give -------------------------------------------------------------


def test_echoed_schema_wrapper_is_unwrapped_without_asking_again(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.reject_json_schema = True
    fake_llm.script(json_reply({"type": "object", "properties": {"knowledge": ITEMS}}))

    assert extract(client) == {"knowledge": ITEMS}
    assert [r.status for r in fake_llm.chat_requests()] == [400, 200]


def test_a_bare_schema_echo_is_asked_again_with_a_sharper_instruction(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.reject_json_schema = True
    fake_llm.script(json_reply(KNOWLEDGE_SCHEMA), json_reply({"knowledge": ITEMS}))

    assert extract(client) == {"knowledge": ITEMS}
    first, second = fake_llm.chat_requests()[1:]
    sharper = RETRY_HINT.split("{problems}")[0]
    assert sharper not in first.user_content
    assert sharper in second.user_content
    assert "不要返回 schema" in second.user_content


def test_one_unknown_category_costs_one_item_not_the_reply(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script(json_reply({"knowledge": [*ITEMS, {"content": "天气不错", "category": "闲聊"}]}))

    data = extract(client)
    items, reasons = validate_items(data["knowledge"])

    assert len(fake_llm.chat_requests()) == 1
    assert [i.category for i in items] == ["事实", "法条"]  # 法律依据 is an alias of 法条
    assert reasons == ["item 3: unknown category '闲聊' for '天气不错' [known-category]"]


def test_example_reply_replaces_the_schema_in_the_prompt(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.profile = "deepseek"
    fake_llm.script(json_reply({"knowledge": ITEMS}))

    extract(client)

    refused, answered = fake_llm.chat_requests()
    assert refused.status == 400
    assert answered.response_format_type == "json_object"
    assert json.dumps(KNOWLEDGE_EXAMPLE, ensure_ascii=False) in answered.user_content
    assert '"enum"' not in answered.user_content
    assert '"properties"' not in answered.user_content


# --- JSON mode memory --------------------------------------------------------------------


def test_a_remembered_mode_is_probed_again_after_the_interval(fake_llm: FakeLLMServer, llm_config: LLMConfig) -> None:
    store = ProcessModeStore()
    client = LLMClient(dataclasses.replace(llm_config, reprobe_seconds=3600), modes=store)
    key = (llm_config.base_url, llm_config.model)
    store._known[key] = KnownMode(JSONMode.JSON_OBJECT, datetime.now(timezone.utc) - timedelta(minutes=5))
    fake_llm.script(json_reply({"knowledge": ITEMS}), json_reply({"knowledge": ITEMS}))

    extract(client)  # fresh: json_object straight away
    store._known[key] = KnownMode(JSONMode.JSON_OBJECT, datetime.now(timezone.utc) - timedelta(hours=2))
    extract(client)  # stale: json_schema is tried again, and this server now takes it

    assert [r.response_format_type for r in fake_llm.chat_requests()] == ["json_object", "json_schema"]
    assert store.load(*key).mode is JSONMode.JSON_SCHEMA
    client.close()


# --- budgets -------------------------------------------------------------------------------


def test_max_tokens_of_the_role_reaches_the_server(fake_llm: FakeLLMServer, llm_config: LLMConfig) -> None:
    client = LLMClient(dataclasses.replace(llm_config, max_tokens=300))
    fake_llm.script(json_reply({"knowledge": ITEMS}), json_reply({"knowledge": ITEMS}))

    extract(client)
    client.complete_json(PROMPT, schema=KNOWLEDGE_SCHEMA, schema_name="k", envelope=KNOWLEDGE_ENVELOPE, max_tokens=120)

    assert [r.body.get("max_tokens") for r in fake_llm.chat_requests()] == [300, 120]
    client.close()


# --- streams that end without a finish reason ------------------------------------------------


async def stream(client: LLMClient, received: list[str] | None = None) -> str:
    """Consume ``astream_chat`` (the chat consumer's call) into ``received``; the joined text."""
    received = [] if received is None else received
    async for token in client.astream_chat([{"role": "user", "content": "押金"}]):
        received.append(token)
    await client.aclose()
    return "".join(received)


@pytest.mark.asyncio
async def test_stream_without_finish_reason_is_incomplete(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script(text_reply("押金应当在退房后返还", finish_reason=None))

    received: list[str] = []
    with pytest.raises(LLMStreamIncomplete) as info:
        await stream(client, received)

    assert "".join(received) == "押金应当在退房后返还"
    assert info.value.chunks == len(received)
    assert len(fake_llm.chat_requests()) == 1  # text already shown: never repeated


@pytest.mark.asyncio
async def test_llamacpp_interrupted_stream_raises_and_keeps_what_arrived(
    fake_llm: FakeLLMServer, llm_config: LLMConfig
) -> None:
    """llama.cpp ends a running stream with [DONE] when another request arrives."""
    fake_llm.profile = "llamacpp"
    fake_llm.script(text_reply("一" * 200, token_delay=0.02), json_reply({"knowledge": ITEMS}))
    client = LLMClient(llm_config)
    other = LLMClient(llm_config)
    received: list[str] = []

    with pytest.raises(LLMStreamIncomplete):
        async for token in client.astream_chat([{"role": "user", "content": "长回答"}]):
            received.append(token)
            if len(received) == 3:
                await asyncio.to_thread(extract, other)  # background extraction on the same server

    assert 3 <= len(received) < 200
    assert fake_llm.chat_requests()[0].interrupted
    await client.aclose()
    other.close()


@pytest.mark.asyncio
async def test_stream_without_finish_reason_and_no_text_is_retried(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script(text_reply("", finish_reason=None), text_reply("第二次成功"))

    assert await stream(client) == "第二次成功"
    assert len(fake_llm.chat_requests()) == 2


@pytest.mark.asyncio
async def test_stream_without_finish_reason_every_time_is_unavailable(
    fake_llm: FakeLLMServer, llm_config: LLMConfig
) -> None:
    client = LLMClient(dataclasses.replace(llm_config, max_retries=1))
    fake_llm.set_default(text_reply("", finish_reason=None))

    with pytest.raises(LLMUnavailable, match="without a finish reason"):
        await stream(client)
    assert len(fake_llm.chat_requests()) == 2


# --- what a structured request reports -------------------------------------------------------


def test_ask_json_reports_the_mode_the_replies_and_the_refused_formats(
    fake_llm: FakeLLMServer, client: LLMClient
) -> None:
    fake_llm.profile = "deepseek"  # refuses json_schema with a 400
    fake_llm.script(json_reply({"knowledge": ITEMS}))

    first = client.ask_json(PROMPT, schema=KNOWLEDGE_SCHEMA, schema_name="k", envelope=KNOWLEDGE_ENVELOPE)

    assert (first.mode, first.attempts, first.refused) == (JSONMode.JSON_OBJECT, 1, ("json_schema",))
    assert first.data == {"knowledge": ITEMS}

    fake_llm.script("不是 JSON", json_reply({"knowledge": ITEMS}))
    second = client.ask_json(PROMPT, schema=KNOWLEDGE_SCHEMA, schema_name="k", envelope=KNOWLEDGE_ENVELOPE)

    assert (second.mode, second.attempts, second.refused) == (JSONMode.JSON_OBJECT, 2, ())
