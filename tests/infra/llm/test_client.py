"""LLMClient against the fake OpenAI-compatible server (real HTTP, no mocks).

No database and no Django settings needed: run with ``-p no:django`` if
pytest-django is not configured yet.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
import types
from collections.abc import Iterator

import pytest

from infra.llm import (
    JSONMode,
    LLMBadOutput,
    LLMClient,
    LLMConfig,
    LLMError,
    LLMRejected,
    LLMUnavailable,
    parse_json_object,
    validate_json,
)
from infra.llm.structured import EXAMPLE_HINT_PREFIX, example_for
from tests.fake_llm import (
    FakeLLMServer,
    error_reply,
    json_reply,
    stream_break_reply,
    stream_error_reply,
    stream_stall_reply,
    text_reply,
    tokenize,
)

MESSAGES = [{"role": "user", "content": "合同纠纷怎么处理?"}]

KNOWLEDGE_SCHEMA = {
    "type": "object",
    "required": ["knowledge"],
    "properties": {
        "knowledge": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["content", "category"],
                "properties": {
                    "content": {"type": "string"},
                    "category": {"type": "string", "enum": ["事实", "证据", "法条", "诉求", "偏好", "行动建议"]},
                },
            },
        }
    },
}
GOOD = {"knowledge": [{"content": "笔记本电脑在购买后约两周出现大面积花屏。", "category": "事实"}]}
PROMPT = "从下面的对话交互中提取结构化知识点。"


@pytest.fixture
def client(llm_config: LLMConfig) -> Iterator[LLMClient]:
    c = LLMClient(llm_config)
    yield c
    c.close()


def extract(client: LLMClient) -> dict:
    return client.complete_json(PROMPT, schema=KNOWLEDGE_SCHEMA, schema_name="knowledge_extraction")


# ---------------------------------------------------------------------------
# streaming
# ---------------------------------------------------------------------------


async def collect(client: LLMClient, got: list[str] | None = None) -> list[str]:
    """Consume ``astream_chat`` (what the chat consumer calls) into ``got``."""
    got = [] if got is None else got
    async for token in client.astream_chat(MESSAGES):
        got.append(token)
    await client.aclose()
    return got


@pytest.mark.asyncio
async def test_stream_sends_the_messages_and_key(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script(text_reply("根据《民法典》第577条, the seller is liable 违约责任。"))

    assert len(await collect(client)) > 10

    (request,) = fake_llm.chat_requests()
    assert request.stream is True
    assert request.body["model"] == "fake-model"
    assert request.messages == MESSAGES
    assert request.headers.get("authorization") == "Bearer test-key"


@pytest.mark.asyncio
@pytest.mark.parametrize("status", [429, 503])
async def test_stream_request_refused_for_now_is_retried_by_the_package(
    fake_llm: FakeLLMServer, client: LLMClient, status: int
) -> None:
    fake_llm.script(error_reply(status), "恢复了")

    assert "".join(await collect(client)) == "恢复了"
    assert [r.status for r in fake_llm.chat_requests()] == [status, 200]
    assert fake_llm.chat_requests()[1].headers.get("x-stainless-retry-count") == "1"


@pytest.mark.asyncio
async def test_stream_broken_after_tokens_is_not_retried(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script(stream_break_reply("one two three four five", after=2))

    got: list[str] = []
    with pytest.raises(LLMUnavailable, match="broke off after 2 chunks"):
        await collect(client, got)

    assert got == ["one", " two"]
    assert len(fake_llm.chat_requests()) == 1  # no retry: text was already shown


@pytest.mark.asyncio
async def test_stream_error_event_after_tokens(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script(stream_error_reply("one two three", after=1, message="GPU fell over"))

    with pytest.raises(LLMUnavailable, match="GPU fell over"):
        await collect(client)


@pytest.mark.asyncio
async def test_stream_error_event_before_any_token_is_asked_again(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script(stream_error_reply("one two", after=0, message="GPU fell over"), "第二次")

    assert "".join(await collect(client)) == "第二次"
    assert len(fake_llm.chat_requests()) == 2


@pytest.mark.asyncio
async def test_astream_chat_yields_tokens_in_order(fake_llm: FakeLLMServer, llm_config: LLMConfig) -> None:
    reply = "先给结论, then the evidence list: 发票、付款截图、录音。"
    fake_llm.script(text_reply(reply, token_delay=0.005))
    client = LLMClient(llm_config)

    tokens = [t async for t in client.astream_chat(MESSAGES)]
    await client.aclose()

    assert tokens == tokenize(reply)
    assert "".join(tokens) == reply
    assert fake_llm.chat_requests()[0].stream is True


@pytest.mark.asyncio
async def test_cancelling_async_stream_closes_http_stream(fake_llm: FakeLLMServer, llm_config: LLMConfig) -> None:
    total = 200
    fake_llm.script(text_reply(" ".join(f"w{i}" for i in range(total)), token_delay=0.02))
    client = LLMClient(llm_config)
    got: list[str] = []
    three = asyncio.Event()

    async def consume() -> None:
        async for token in client.astream_chat(MESSAGES):
            got.append(token)
            if len(got) == 3:
                three.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(three.wait(), timeout=5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    consumed = len(got)

    (request,) = fake_llm.chat_requests()
    assert await asyncio.to_thread(request.done.wait, 5), "server kept streaming after cancel"
    assert request.disconnected  # the server saw the connection close
    assert request.chunks_sent < 20 < total
    await asyncio.sleep(0.1)
    assert len(got) == consumed <= 4  # nothing consumed after the cancel
    await client.aclose()


@pytest.mark.asyncio
async def test_async_stream_stall_mid_stream_raises_unavailable(
    fake_llm: FakeLLMServer, llm_config: LLMConfig
) -> None:
    fake_llm.script(stream_stall_reply("a b c d e", after=2, seconds=5))
    client = LLMClient(dataclasses.replace(llm_config, timeout_seconds=0.3))

    got: list[str] = []
    started = time.monotonic()
    with pytest.raises(LLMUnavailable):
        async for token in client.astream_chat(MESSAGES):
            got.append(token)
    await client.aclose()

    assert got == ["a", " b"]
    assert time.monotonic() - started < 3


# ---------------------------------------------------------------------------
# structured output: the JSON-mode fallback chain (docs/llm-servers.md)
# ---------------------------------------------------------------------------


def test_json_schema_accepted(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script(GOOD)

    assert extract(client) == GOOD

    (request,) = fake_llm.chat_requests()
    assert request.response_format == {
        "type": "json_schema",
        "json_schema": {"name": "knowledge_extraction", "schema": KNOWLEDGE_SCHEMA},
    }
    assert request.stream is True  # every request is streamed (so giving up can stop the server)
    assert request.system_content == "You must respond with a JSON object."
    assert request.user_content == PROMPT  # the server enforces the schema: no hint needed
    assert client.json_mode is JSONMode.JSON_SCHEMA


def test_json_schema_rejected_falls_back_to_json_object_with_hint(
    fake_llm: FakeLLMServer, client: LLMClient
) -> None:
    fake_llm.reject_json_schema = True
    fake_llm.script(GOOD)

    assert extract(client) == GOOD

    first, second = fake_llm.chat_requests()
    assert (first.response_format_type, first.status) == ("json_schema", 400)
    assert (second.response_format_type, second.status) == ("json_object", 200)
    assert second.user_content.startswith(PROMPT)
    # an example reply, never the raw schema (small models echo a schema back)
    assert second.user_content == PROMPT + EXAMPLE_HINT_PREFIX + json.dumps(example_for(KNOWLEDGE_SCHEMA), ensure_ascii=False)
    assert '"properties"' not in second.user_content
    assert '"type"' not in second.user_content
    assert client.json_mode is JSONMode.JSON_OBJECT


def test_unprocessable_entity_also_means_format_rejected(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script(error_reply(422, "json_schema is not supported"), GOOD)

    assert extract(client) == GOOD
    assert [r.response_format_type for r in fake_llm.chat_requests()] == ["json_schema", "json_object"]


def test_both_formats_rejected_falls_back_to_plain_request(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.reject_json_schema = True
    fake_llm.reject_json_object = True
    fake_llm.script(GOOD)

    assert extract(client) == GOOD

    requests = fake_llm.chat_requests()
    assert [r.response_format_type for r in requests] == ["json_schema", "json_object", None]
    assert [r.status for r in requests] == [400, 400, 200]
    assert "response_format" not in requests[2].body
    assert requests[2].user_content == PROMPT + EXAMPLE_HINT_PREFIX + json.dumps(example_for(KNOWLEDGE_SCHEMA), ensure_ascii=False)
    assert client.json_mode is JSONMode.PLAIN


def test_working_mode_is_remembered(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.reject_json_schema = True
    fake_llm.script(GOOD, GOOD)

    extract(client)
    extract(client)

    assert [r.response_format_type for r in fake_llm.chat_requests()] == ["json_schema", "json_object", "json_object"]
    # A hand-built client remembers in its own process-local store: a new one starts over
    # (the app's clients share the database store, see tests/infra/llm/test_modes.py).
    other = LLMClient(client.config)
    assert other.json_mode is JSONMode.JSON_SCHEMA
    other.close()


def test_plain_mode_rejection_is_not_swallowed(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.reject_json_schema = True
    fake_llm.reject_json_object = True
    fake_llm.script(error_reply(400, "context length exceeded"))

    with pytest.raises(LLMRejected, match="context length exceeded") as info:
        extract(client)
    assert info.value.status_code == 400


def test_malformed_json_is_retried_then_succeeds(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script_malformed()
    fake_llm.script(GOOD)

    assert extract(client) == GOOD
    assert [r.response_format_type for r in fake_llm.chat_requests()] == ["json_schema", "json_schema"]


def test_always_malformed_raises_bad_output(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    raw = '{"knowledge": [{"content": "合同于2023年签订'
    fake_llm.set_default(raw)

    with pytest.raises(LLMBadOutput) as info:
        extract(client)

    assert len(fake_llm.chat_requests()) == client.config.max_retries + 1
    assert raw in str(info.value)
    assert info.value.raw == raw
    assert any("not valid JSON" in p for p in info.value.problems)


def test_missing_required_key_raises_bad_output(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.set_default({"items": []})

    with pytest.raises(LLMBadOutput, match="'knowledge' is a required property"):
        extract(client)
    assert len(fake_llm.chat_requests()) == client.config.max_retries + 1


def test_wrong_nested_value_is_retried(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script({"knowledge": [{"content": "x", "category": "闲聊"}]}, GOOD)

    assert extract(client) == GOOD
    assert len(fake_llm.chat_requests()) == 2


def test_fenced_json_is_accepted(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script("```json\n" + json.dumps(GOOD, ensure_ascii=False) + "\n```")

    assert extract(client) == GOOD


def test_json_with_prose_is_not_repaired(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.set_default("好的,结果如下: " + json.dumps(GOOD, ensure_ascii=False))

    with pytest.raises(LLMBadOutput):
        extract(client)


def test_non_object_json_is_bad_output(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.set_default(json_reply([GOOD]))

    with pytest.raises(LLMBadOutput, match="expected a JSON object, got array"):
        extract(client)


# ---------------------------------------------------------------------------
# transient failures and rejections
# ---------------------------------------------------------------------------


def test_server_error_then_success_is_retried(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script(error_reply(500), GOOD)

    assert extract(client) == GOOD

    assert [r.status for r in fake_llm.chat_requests()] == [500, 200]
    # A 5xx to a JSON request is retried by the client, not the package: only the error's body
    # (read after the package gave the response up) tells a crash from a format refusal.
    assert [r.response_format_type for r in fake_llm.chat_requests()] == ["json_schema", "json_schema"]


def test_rate_limited_until_exhausted_raises_unavailable(
    fake_llm: FakeLLMServer, client: LLMClient, caplog: pytest.LogCaptureFixture
) -> None:
    fake_llm.script_error(429, times=10)

    with caplog.at_level(logging.WARNING, logger="legalmem.llm"), pytest.raises(LLMUnavailable) as info:
        extract(client)

    attempts = client.config.max_retries + 1
    assert len(fake_llm.chat_requests()) == attempts  # the openai package's retries, max_retries of them
    assert info.value.status_code == 429
    assert info.value.attempts == attempts
    assert "HTTP 429" in str(info.value)
    assert any(r.levelno == logging.ERROR and r.name == "legalmem.llm" for r in caplog.records)


def test_stall_longer_than_timeout_raises_unavailable(fake_llm: FakeLLMServer, llm_config: LLMConfig) -> None:
    client = LLMClient(dataclasses.replace(llm_config, timeout_seconds=0.2, max_retries=1))
    fake_llm.script_stall(5, times=2)

    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="no answer within 0.2s"):
        extract(client)

    assert time.monotonic() - started < 2
    assert len(fake_llm.chat_requests()) == 2
    client.close()


def test_stall_then_answer_is_retried(fake_llm: FakeLLMServer, llm_config: LLMConfig) -> None:
    client = LLMClient(dataclasses.replace(llm_config, timeout_seconds=0.2))
    fake_llm.script_stall(5)
    fake_llm.script(GOOD)

    assert extract(client) == GOOD
    client.close()


def test_connection_refused_raises_unavailable(llm_config: LLMConfig) -> None:
    dead = FakeLLMServer().start()
    url = dead.base_url
    dead.stop()
    client = LLMClient(dataclasses.replace(llm_config, base_url=url))

    with pytest.raises(LLMUnavailable, match="cannot connect"):
        extract(client)
    client.close()


def test_unauthorized_raises_rejected_without_retry(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    fake_llm.script_error(401)

    with pytest.raises(LLMRejected, match="Check LLM_API_KEY") as info:
        extract(client)

    assert info.value.status_code == 401
    assert len(fake_llm.chat_requests()) == 1
    assert "test-key" not in str(info.value)


def test_real_api_key_check(fake_llm: FakeLLMServer, llm_config: LLMConfig) -> None:
    fake_llm.api_key = "right-key"
    bad = LLMClient(dataclasses.replace(llm_config, api_key="wrong-key"))
    good = LLMClient(dataclasses.replace(llm_config, api_key="right-key"))

    fake_llm.set_default(GOOD)
    with pytest.raises(LLMRejected):
        extract(bad)
    assert extract(good) == GOOD
    bad.close()
    good.close()


def test_retry_after_from_the_server_is_honoured(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    # Without the header the package would wait ~0.5 s before its first retry.
    fake_llm.script(error_reply(429, headers={"retry-after-ms": "1500"}), GOOD)

    started = time.monotonic()
    assert extract(client) == GOOD

    assert time.monotonic() - started >= 1.4
    assert [r.status for r in fake_llm.chat_requests()] == [429, 200]


def test_every_failure_reaches_the_caller_as_an_llm_error(fake_llm: FakeLLMServer, client: LLMClient) -> None:
    """Callers catch ``LLMError`` alone: no ``openai`` or HTTP exception escapes the client."""
    fake_llm.script_error(401)
    fake_llm.script_error(503, times=client.config.max_retries + 1)
    fake_llm.script_malformed(times=client.config.max_retries + 1)
    caught = []
    for _ in range(3):
        try:
            extract(client)
        except LLMError as exc:
            caught.append(type(exc))
    assert caught == [LLMRejected, LLMUnavailable, LLMBadOutput]


# ---------------------------------------------------------------------------
# configuration, validator
# ---------------------------------------------------------------------------


def test_config_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_settings = types.SimpleNamespace(
        LLM_BASE_URL="", LLM_API_KEY="sk-secret", LLM_MODEL="deepseek-chat", LLM_TIMEOUT_SECONDS=30, LLM_MAX_RETRIES=5
    )
    monkeypatch.setattr("django.conf.settings", fake_settings)
    assert LLMConfig.from_settings() is None
    assert LLMClient.from_settings() is None

    fake_settings.LLM_BASE_URL = "https://api.deepseek.com/v1"
    config = LLMConfig.from_settings()
    assert config == LLMConfig(
        base_url="https://api.deepseek.com/v1", api_key="sk-secret", model="deepseek-chat", timeout_seconds=30, max_retries=5
    )
    assert "sk-secret" not in repr(config)


def test_replies_are_checked_against_the_whole_json_schema() -> None:
    schema = {
        "type": "object",
        "required": ["n", "tags"],
        "properties": {
            "n": {"type": "number", "minimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            "kind": {"enum": ["a", "b"]},
        },
        "additionalProperties": False,
    }
    assert validate_json({"n": 1.5, "tags": ["x"], "kind": "a"}, schema) == []
    problems = validate_json({"n": True, "tags": ["x", 2], "kind": "c"}, schema)
    assert [p.split(":")[0] for p in problems] == ["$.n", "$.tags[1]", "$.kind"]
    # Keywords beyond type / required / enum are enforced too (jsonschema, not a subset).
    assert validate_json({"n": -1, "tags": ["a", "b", "c"], "extra": 1}, schema) != []
    assert len(validate_json({"n": -1, "tags": ["a", "b", "c"], "extra": 1}, schema)) == 3
    with pytest.raises(ValueError, match="'tags' is a required property"):
        parse_json_object('{"n": 1}', schema)


def test_parse_json_object_only_strips_fence() -> None:
    schema = {"type": "object"}
    assert parse_json_object('  {"a": 1}\n', schema) == {"a": 1}
    assert parse_json_object('```json\n{"a": 1}\n```', schema) == {"a": 1}
    assert parse_json_object('```\n{"a": 1}\n```', schema) == {"a": 1}
    for bad in ['{"a": 1} trailing', "```json\n{'a': 1}\n```", "", None, '{"a": 1'] :
        with pytest.raises(ValueError):
            parse_json_object(bad, schema)
