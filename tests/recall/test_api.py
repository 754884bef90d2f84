"""POST /api/memory/search: explained results for alice, nothing across walls or firms, and a clear
400 / 404 (never a 500, never data) for bad input."""
from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from tests.clients import client_for

pytestmark = pytest.mark.django_db
URL = "/api/memory/search"


def post(client: Client, body) -> tuple[int, dict]:
    response = client.post(URL, data=json.dumps(body), content_type="application/json")
    return response.status_code, response.json()


def test_search_returns_notes_plan_and_per_note_explanation(world, memory):
    status, data = post(client_for(world.alice), {
        "query": "这个电脑花屏纠纷下一步怎么走？", "k": 5, "matter": world.matter_laptop.pk})
    assert status == 200
    assert data["strategy"] == "layered"
    assert data["plan"]["layers"][0] == "case"
    assert data["plan"]["matter_id"] == world.matter_laptop.pk
    assert 0 < len(data["hits"]) <= 5
    first = data["hits"][0]
    assert first["note"]["content"] in {memory["laptop_screen"].content, memory["laptop_report"].content}
    assert set(first["score"]) >= {"semantic", "keyword", "importance", "confidence", "graph", "recency", "total"}
    assert first["layer"] == "case"
    assert first["reasons"]
    assert data["system_message"].startswith("以下是从长期记忆中按层检索到的内容")
    # the injected context is shown by the API: no internal word, no English slug (issue 51)
    assert not re.search(r"agent|what was said|user_profile|general_law|importance=|[a-z]_[a-z]",
                         data["system_message"]), data["system_message"]
    assert data["timings"]["total"] > 0


@pytest.mark.parametrize("user_name, forbidden", [
    ("alice", {"secret_fact", "bob_profile", "beta_fact", "beta_law"}),
    ("bob", {"secret_fact", "alice_profile", "deposit_fact", "deposit_photos", "beta_fact", "beta_law"}),
    ("charlie", {"laptop_screen", "laptop_report", "deposit_fact", "deposit_photos", "secret_fact",
                 "alice_profile", "bob_profile", "law", "cross", "procedure"}),
])
def test_no_leaks_across_walls_owners_or_firms(world, memory, user_name, forbidden):
    client = client_for(getattr(world, user_name))
    forbidden_ids = {str(memory[key].id) for key in forbidden}
    forbidden_text = {memory[key].content for key in forbidden}
    for query in ("电脑花屏 检测报告", "押金 交接照片", "并购 估值", "我的偏好", "为什么退货", "Beta 客户"):
        for strategy in ("layered", "semantic"):
            status, data = post(client, {"query": query, "k": 50, "strategy": strategy})
            assert status == 200
            assert not {hit["note"]["id"] for hit in data["hits"]} & forbidden_ids
            assert not any(text in (data["system_message"] or "") for text in forbidden_text)


@pytest.mark.parametrize("body, field", [
    ({"query": ""}, "query"),
    ({"query": "   "}, "query"),
    ({}, "query"),
    ({"query": "电" * 100_000}, "query"),
    ({"query": "x", "k": 0}, "k"),
    ({"query": "x", "k": -3}, "k"),
    ({"query": "x", "k": 51}, "k"),
    ({"query": "x", "k": 10**12}, "k"),
    ({"query": "x", "k": "ten"}, "k"),
    ({"query": "x", "strategy": "magic"}, "strategy"),
    ({"query": "x", "scopes": ["secret_layer"]}, "scopes"),
    ({"query": "x", "scopes": "case"}, "scopes"),
    ({"query": "x", "matter": "abc"}, "matter"),
    ({"query": "x", "matter": 1.5}, "matter"),
    ({"query": "x", "matter": 10**30}, "matter"),
    ({"query": "x", "matter": -1}, "matter"),
    ({"query": "x", "conversation": "1; drop table"}, "conversation"),
])
def test_bad_input_is_a_clear_400(world, body, field):
    status, data = post(client_for(world.alice), body)
    assert status == 400
    assert field in data


def test_unknown_strategy_message_lists_the_registered_ones(world):
    status, data = post(client_for(world.alice), {"query": "x", "strategy": "magic"})
    assert status == 400
    assert "layered" in data["strategy"][0]
    assert "semantic" in data["strategy"][0]


def test_a_body_that_is_not_an_object_is_a_400(world):
    client = client_for(world.alice)
    for raw in ("[1, 2]", "\"text\"", "{not json"):
        response = client.post(URL, data=raw, content_type="application/json")
        assert response.status_code == 400


def test_other_firms_and_walled_matters_are_404_without_data(world, memory):
    cases = [
        (world.alice, world.matter_b.pk),
        (world.alice, world.matter_secret.pk),
        (world.bob, world.matter_deposit.pk),
        (world.charlie, world.matter_laptop.pk),
        (world.charlie, 999_999),
    ]
    for user, matter_id in cases:
        response = client_for(user).post(URL, data=json.dumps({"query": "押金", "matter": matter_id}),
                                         content_type="application/json")
        assert response.status_code == 404, (user, matter_id)
        assert "押金" not in response.content.decode()
        assert "电脑" not in response.content.decode()


def test_other_users_conversations_are_404(world, memory, laptop_conversation):
    conversation, _ = laptop_conversation
    for user in (world.bob, world.charlie):
        status, _ = post(client_for(user), {"query": "你之前说过什么", "conversation": conversation.pk})
        assert status == 404
    status, data = post(client_for(world.alice), {"query": "你之前说过检测报告", "conversation": conversation.pk})
    assert status == 200
    assert data["plan"]["search_messages"]
    assert data["messages"]


def test_scope_filter(world, memory):
    status, data = post(client_for(world.alice), {"query": "法律 质量问题", "scopes": ["general_law"]})
    assert status == 200
    assert data["hits"]
    assert {hit["layer"] for hit in data["hits"]} == {"general_law"}


def test_login_required():
    response = Client().post(URL, data=json.dumps({"query": "电脑"}), content_type="application/json")
    assert response.status_code in (401, 403)


def test_search_is_in_the_openapi_schema(world):
    response = client_for(world.alice).get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    schema = json.loads(response.content)
    operation = schema["paths"]["/api/memory/search"]["post"]
    assert "requestBody" in operation
    assert "200" in operation["responses"]
    assert "404" in operation["responses"]
    components = schema["components"]["schemas"]
    assert "SearchRequest" in components
    assert "SearchResponse" in components


@pytest.mark.parametrize("language, expected", [
    ("zh-hans", "没有名为 'magic' 的检索策略；可用的策略："),
    ("en", "unknown strategy 'magic'; the strategies are: "),
])
def test_an_unknown_strategy_is_named_in_the_readers_language(world, language, expected):
    client = client_for(world.alice)
    client.cookies["django_language"] = language
    status, data = post(client, {"query": "x", "strategy": "magic"})
    assert status == 400 and data["strategy"][0].startswith(expected) and "layered" in data["strategy"][0], data
