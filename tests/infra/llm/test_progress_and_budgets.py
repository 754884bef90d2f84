"""Never leave a generation behind (issue 30, item 1), against the fake server's ``slow`` and
``stall`` profiles over real HTTP (no mocks): every request is streamed and judged by progress;
a stalled stream is closed within the stall bound and the server sees the disconnect; a slow
stream that keeps making progress is not abandoned; the measured speed is remembered per
server and sets the next request's budget; a retry starts only after the previous stream was
closed; the JSON modes still fall back through streaming."""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator

import pytest

from remember.extraction import KNOWLEDGE_ENVELOPE, KNOWLEDGE_SCHEMA
from infra.llm import LLMClient, LLMConfig, LLMTooSlow, Role
from infra.llm.config import BUDGET_SPEED_MARGIN
from memory.models import LLMServerSpeed
from tests.fake_llm import FakeLLMServer, json_reply, tokenize

GOOD = {"knowledge": [{"content": "笔记本电脑在购买后约两周出现大面积花屏，商家拒绝退货。", "category": "事实"}]}
LONG = {"knowledge": [{"content": "房东于2024年6月30日租期届满后拒绝退还押金八千元，理由是墙面有污渍需要重新粉刷。",
                       "category": "事实"}]}
#: The old fixed total of a request in these tests (LLM_TIMEOUT_SECONDS's former meaning).
OLD_TIMEOUT = 0.5


def ask(client: LLMClient, **options) -> dict:
    return client.complete_json("提取知识", schema=KNOWLEDGE_SCHEMA, schema_name="knowledge_extraction",
                                envelope=KNOWLEDGE_ENVELOPE, **options)


def reply_tokens(obj: dict) -> int:
    return len(tokenize(json_reply(obj).content or ""))


@pytest.fixture
def slow_config(llm_config: LLMConfig) -> LLMConfig:
    """First token within 0.5 s, no silence over 0.5 s, no retries."""
    return dataclasses.replace(llm_config, timeout_seconds=OLD_TIMEOUT, stall_seconds=OLD_TIMEOUT, max_retries=0)


@pytest.fixture
def client(slow_config: LLMConfig) -> Iterator[LLMClient]:
    c = LLMClient(slow_config)
    yield c
    c.close()


def test_a_stalled_extraction_stream_is_closed_within_the_stall_bound(fake_llm: FakeLLMServer, client: LLMClient):
    fake_llm.profile = "stall"  # llama.cpp: json_schema → 500, then a json_object stream that stops after 3 tokens
    fake_llm.stall_after_tokens, fake_llm.ping_seconds = 3, 0.05  # keep-alive comments keep bytes flowing
    fake_llm.script(json_reply(GOOD))

    started = time.monotonic()
    with pytest.raises(LLMTooSlow, match="stalled: no token for 0.5s after 3 tokens") as info:
        ask(client)

    assert info.value.reason == "stalled"
    assert time.monotonic() - started < 3
    refused, stalled = fake_llm.wait_for_requests(2)
    assert (refused.status, refused.response_format_type) == (500, "json_schema")
    assert stalled.stream
    assert stalled.chunks_sent == 3
    assert stalled.disconnected, "the server never saw the client go: it would still be generating"
    silence = stalled.disconnected_at - stalled.token_times[-1]
    assert OLD_TIMEOUT <= silence < OLD_TIMEOUT + 0.5
    assert fake_llm.generating() == []


def test_a_slow_stream_that_keeps_making_progress_is_not_abandoned(fake_llm: FakeLLMServer, client: LLMClient):
    fake_llm.profile = "slow"
    fake_llm.slow_token_seconds = 0.04  # well inside the 0.5 s stall bound
    fake_llm.script(json_reply(LONG))
    tokens = reply_tokens(LONG)

    started = time.monotonic()
    assert ask(client) == LONG
    took = time.monotonic() - started

    assert took > 2 * OLD_TIMEOUT  # far longer than the old fixed total would have allowed
    streamed = fake_llm.chat_requests()[-1]
    assert streamed.response_format_type == "json_object"
    assert streamed.chunks_sent >= tokens
    assert not streamed.disconnected


def test_the_measured_speed_sets_the_next_requests_budget(fake_llm: FakeLLMServer, slow_config: LLMConfig):
    client = LLMClient(dataclasses.replace(slow_config, timeout_seconds=0.3, stall_seconds=1.0))
    fake_llm.profile = "slow"
    fake_llm.slow_token_seconds = 0.02
    fake_llm.script(json_reply(LONG))
    assert client.tokens_per_second is None
    assert client.budget_seconds(64) == client.config.max_request_seconds  # unknown speed: the ceiling

    assert ask(client) == LONG
    speed = client.tokens_per_second
    assert speed is not None
    assert 15 < speed < 60  # a token every 20 ms, give or take a loaded machine
    assert client.budget_seconds(64) == pytest.approx(0.3 + BUDGET_SPEED_MARGIN * 64 / speed)

    # The same server slows to a token every 100 ms (no stall: under the 1 s bound). With
    # max_tokens 20 the budget is 0.3 s + 2 × 20 / speed ≈ 1–3 s: the long reply (5 s) is cut there.
    fake_llm.slow_token_seconds = 0.1
    fake_llm.script(json_reply(LONG))
    budget = client.budget_seconds(20)
    started = time.monotonic()
    with pytest.raises(LLMTooSlow, match="budget") as info:
        ask(client, max_tokens=20)
    assert info.value.reason == "budget"
    assert budget - 0.1 <= time.monotonic() - started < budget + 1.0
    cut = fake_llm.chat_requests()[-1]
    assert cut.body["max_tokens"] == 20
    assert cut.done.wait(2)
    assert cut.disconnected
    assert fake_llm.generating() == []
    assert client.tokens_per_second < speed  # the slow attempt was measured too: the next budget grows


@pytest.mark.django_db
def test_the_speed_is_remembered_per_server_for_every_client(llm_online: FakeLLMServer, settings):
    llm_online.profile = "slow"
    llm_online.slow_token_seconds = 0.02
    llm_online.script(json_reply(LONG))

    ask(LLMClient.from_settings(Role.EXTRACTION))

    row = LLMServerSpeed.objects.get(base_url=llm_online.base_url, model=llm_online.model)
    assert row.samples == 1
    assert 15 < row.tokens_per_second < 60
    another = LLMClient.from_settings(Role.CHAT)  # another process: a new client, same database
    assert another.tokens_per_second == row.tokens_per_second
    assert another.budget_seconds(768) == pytest.approx(
        settings.LLM_TIMEOUT_SECONDS + BUDGET_SPEED_MARGIN * 768 / row.tokens_per_second)


@pytest.mark.django_db(transaction=True)
def test_a_retry_starts_only_after_the_previous_stream_was_closed(llm_online: FakeLLMServer, settings):
    settings.LLM_MAX_CONCURRENT_REQUESTS = 1  # README's llama.cpp block
    settings.LLM_MAX_RETRIES = 2
    settings.LLM_STALL_SECONDS = 0.4
    llm_online.profile = "stall"
    llm_online.ping_seconds = 0.05
    llm_online.set_default(json_reply(GOOD))

    with pytest.raises(LLMTooSlow, match="after 3 attempts") as info:
        ask(LLMClient.from_settings(Role.EXTRACTION))

    assert info.value.reason == "stalled"
    requests = llm_online.wait_for_requests(4)
    assert [(r.response_format_type, r.status) for r in requests] == [
        ("json_schema", 500), ("json_object", 200), ("json_object", 200), ("json_object", 200)]
    streams = requests[1:]
    assert all(r.disconnected for r in streams)
    for previous, retry in zip(streams, streams[1:]):
        # the retry reached the server after it had seen the previous stream closed: nothing queued behind it
        assert retry.received_at >= previous.disconnected_at
        assert retry.received_at >= previous.ended_at
    assert not any(r.interrupted for r in requests)  # no request ever cut another one short
    assert llm_online.generating() == []


@pytest.mark.parametrize(
    "profile, reject_object, modes",
    [
        ("openai", False, ["json_schema"]),
        ("deepseek", False, ["json_schema", "json_object"]),
        ("llamacpp", False, ["json_schema", "json_object"]),
        ("slow", False, ["json_schema", "json_object"]),
        ("openai", True, ["json_schema", "json_object", None]),
    ],
    ids=["openai", "deepseek", "llamacpp", "slow", "plain-fallback"],
)
def test_json_modes_fall_back_through_streaming(
    fake_llm: FakeLLMServer, client: LLMClient, profile: str, reject_object: bool, modes: list
):
    fake_llm.profile = profile
    fake_llm.slow_token_seconds = 0.005
    fake_llm.reject_json_schema = reject_object  # with json_object refused too: plain
    fake_llm.reject_json_object = reject_object
    fake_llm.script(json_reply(GOOD))

    assert ask(client) == GOOD

    requests = fake_llm.chat_requests()
    assert [r.response_format_type for r in requests] == modes
    assert all(r.stream for r in requests)
    assert client.json_mode.value == (modes[-1] or "plain")
