"""Navigation API: what alice, bob and charlie may see of the graph, traces and search."""
from __future__ import annotations

import uuid

import pytest
from rest_framework.test import APIClient

from memory.models import Category, MemoryScope, SourceType
from memory.services.notes import delete_note
from navigation import cache
from tests.clients import client_for

GRAPH = "/api/navigation/graph"
SEARCH = "/api/navigation/search"


def trace_url(note_id) -> str:
    return f"/api/navigation/trace/{note_id}"


@pytest.fixture
def notes(world):
    """A small firm memory: laptop matter (alice + bob), deposit matter (alice only), firm-wide
    law, a profile note of bob's, and firm B's notes (charlie)."""
    w = world
    made = {
        "laptop": [
            w.note("笔记本电脑购买七天后屏幕出现花屏，商家拒绝退货", matter=w.matter_laptop, tags=["event:电脑花屏"]),
            w.note("张三保留了电脑花屏的视频和购物小票", matter=w.matter_laptop, category=Category.EVIDENCE),
            w.note("商家称花屏是人为损坏，要求张三自费维修", matter=w.matter_laptop),
        ],
        "deposit": [
            w.note("房东以墙面污损为由扣留全部押金三千元", matter=w.matter_deposit,
                   source_type=SourceType.CHAT_STORY, source_id="month-1:turn-3"),
            w.note("租房合同约定押金在退租后七日内退还", matter=w.matter_deposit, category=Category.EVIDENCE),
        ],
        "law": [
            w.note("消费者权益保护法规定七日无理由退货", scope=MemoryScope.GENERAL_LAW, category=Category.LAW),
            w.note("民法典规定租赁物正常损耗由出租人承担", scope=MemoryScope.GENERAL_LAW, category=Category.LAW),
        ],
        "bob_profile": [
            w.note("bob 偏好先发律师函再起诉", scope=MemoryScope.USER_PROFILE, owner=w.bob,
                   category=Category.PREFERENCE),
        ],
        "firm_b": [
            w.note("Beta 所客户的押金纠纷证据", firm=w.firm_b, matter=w.matter_b),
            w.note("Beta 所的内部流程", firm=w.firm_b, scope=MemoryScope.GLOBAL),
        ],
    }
    return made


def ids(items) -> set[str]:
    return {str(note.pk) for note in items}


def graph_of(user, **params) -> dict:
    response = client_for(user).get(GRAPH, params)
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.django_db
def test_each_user_gets_a_graph_of_exactly_what_they_may_see(world, notes):
    alice = {n["id"] for n in graph_of(world.alice)["nodes"]}
    bob = {n["id"] for n in graph_of(world.bob)["nodes"]}
    charlie = {n["id"] for n in graph_of(world.charlie)["nodes"]}
    assert alice == ids(notes["laptop"] + notes["deposit"] + notes["law"])
    assert bob == ids(notes["laptop"] + notes["law"] + notes["bob_profile"])
    assert charlie == ids(notes["firm_b"])


@pytest.mark.django_db
def test_bob_sees_no_node_edge_count_or_event_of_the_walled_matter(world, notes):
    graph = graph_of(world.bob)
    walled = ids(notes["deposit"])
    by_index = {n["i"]: n["id"] for n in graph["nodes"]}
    assert not walled & set(by_index.values())
    for edge in graph["edges"]:
        assert by_index[edge["s"]] not in walled
        assert by_index[edge["t"]] not in walled
    assert graph["total_nodes"] == 6
    assert sum(layer["top_count"] for layer in graph["layers"]) == 6
    assert all(str(world.matter_deposit.pk) not in e["key"] and "month-1" not in e["key"] for e in graph["events"])
    assert "押金三千" not in str(graph)


@pytest.mark.django_db
def test_charlie_sees_nothing_of_firm_a(world, notes):
    graph = graph_of(world.charlie)
    firm_a = ids(notes["laptop"] + notes["deposit"] + notes["law"] + notes["bob_profile"])
    assert not firm_a & {n["id"] for n in graph["nodes"]}
    assert graph["total_nodes"] == 2
    response = client_for(world.charlie).get(GRAPH, {"firm": world.firm_a.pk})
    assert response.status_code == 400
    assert "未知律所" in response.json()["detail"]  # in the reader's language (zh-hans by default)


@pytest.mark.django_db
def test_trace_to_a_note_is_the_real_search_and_stays_behind_the_wall(world, notes):
    target = notes["law"][0]
    for user, allowed in ((world.alice, ids(notes["laptop"] + notes["deposit"] + notes["law"])),
                          (world.bob, ids(notes["laptop"] + notes["law"] + notes["bob_profile"]))):
        response = client_for(user).get(trace_url(target.pk))
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["note"]["content"] == target.content
        assert body["query"] == target.content
        t = body["trace"]
        assert t["reached"]
        assert t["path_nodes"][0] == t["entry"]
        assert (t["path_nodes"][-1] == str(target.pk)) or t["entry"] == str(target.pk)
        mentioned = {v["id"] for v in t["visited"]} | {c["id"] for c in t["candidates"]} | {n["id"] for n in t["nodes"]}
        mentioned |= {s["source"] for s in t["path"]} | {s["target"] for s in t["path"]}
        assert mentioned <= allowed, "a trace step or candidate outside what the user may see"
    # Charlie: someone else's firm is a 404, just like an unknown id.
    assert client_for(world.charlie).get(trace_url(target.pk)).status_code == 404
    assert client_for(world.alice).get(trace_url(uuid.uuid4())).status_code == 404


@pytest.mark.django_db
def test_walled_and_private_notes_are_404_for_those_outside(world, notes):
    deposit = notes["deposit"][0]
    profile = notes["bob_profile"][0]
    assert client_for(world.bob).get(trace_url(deposit.pk)).status_code == 404
    assert client_for(world.charlie).get(trace_url(deposit.pk)).status_code == 404
    assert client_for(world.alice).get(trace_url(profile.pk)).status_code == 404
    assert client_for(world.alice).get(trace_url(deposit.pk)).status_code == 200
    assert client_for(world.bob).get(trace_url(profile.pk)).status_code == 200
    assert client_for(world.bob).get(trace_url("not-a-uuid")).status_code == 404


@pytest.mark.django_db
def test_anonymous_users_get_nothing(world, notes):
    client = APIClient()
    assert client.get(GRAPH).status_code in (401, 403)
    assert client.get(trace_url(notes["law"][0].pk)).status_code in (401, 403)
    page = client.get("/navigation/")
    assert page.status_code == 302
    assert "/accounts/login/" in page["Location"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "params, message",
    [
        ({"l0_limit": 999_999}, "l0_limit"),
        ({"l0_limit": -1}, "l0_limit"),
        ({"l0_offset": "x"}, "l0_offset"),
        ({"scope": "secret"}, "scope"),
        ({"matter": "abc"}, "matter"),
    ],
)
def test_graph_limits_and_filters_are_validated(world, notes, params, message):
    response = client_for(world.alice).get(GRAPH, params)
    assert response.status_code == 400
    assert message in str(response.json())


@pytest.mark.django_db
def test_a_walled_matter_filter_is_the_same_400_as_an_unknown_one(world, notes):
    bob = client_for(world.bob)
    walled = bob.get(GRAPH, {"matter": world.matter_deposit.pk}).json()
    unknown = bob.get(GRAPH, {"matter": 999_999}).json()
    assert walled["detail"].replace(str(world.matter_deposit.pk), "N") == unknown["detail"].replace("999999", "N")
    assert client_for(world.charlie).get(GRAPH, {"matter": world.matter_laptop.pk}).status_code == 400
    assert client_for(world.alice).get(GRAPH, {"matter": world.matter_deposit.pk}).status_code == 200


@pytest.mark.django_db
def test_filters_by_matter_scope_and_event(world, notes):
    by_matter = graph_of(world.alice, matter=world.matter_laptop.pk)
    assert {n["id"] for n in by_matter["nodes"]} == ids(notes["laptop"])
    by_scope = graph_of(world.alice, scope=MemoryScope.GENERAL_LAW)
    assert {n["id"] for n in by_scope["nodes"]} == ids(notes["law"])
    story = graph_of(world.alice, event="story:month-1")
    assert {n["id"] for n in story["nodes"]} == {str(notes["deposit"][0].pk)}
    tagged = graph_of(world.alice, event="tag:电脑花屏")
    assert {n["id"] for n in tagged["nodes"]} == {str(notes["laptop"][0].pk)}
    keys = {e["key"] for e in graph_of(world.alice)["events"]}
    assert {"tag:电脑花屏", "story:month-1", f"matter:{world.matter_laptop.pk}", f"matter:{world.matter_deposit.pk}"} <= keys
    # A trace under a filter that excludes the note: 404 (not in this graph).
    response = client_for(world.alice).get(trace_url(notes["law"][0].pk), {"scope": MemoryScope.CASE})
    assert response.status_code == 404


@pytest.mark.django_db
def test_l0_is_paged_in_layout_order_and_upper_levels_always_come(world):
    for i in range(40):
        world.note(f"第{i}条：押金纠纷中房东扣留押金的理由之{i}", scope=MemoryScope.GLOBAL)
    full = graph_of(world.alice, l0_limit=5000)
    upper = {n["id"] for n in full["nodes"] if n["level"] >= 1}
    assert full["l0_page"]["next_offset"] is None
    assert len(full["nodes"]) == 40
    first = graph_of(world.alice, l0_limit=10)
    assert first["l0_page"] == {"offset": 0, "limit": 10, "returned": 10, "total": 40, "next_offset": 10}
    assert upper <= {n["id"] for n in first["nodes"]}
    only_upper = graph_of(world.alice, l0_limit=0)
    assert {n["id"] for n in only_upper["nodes"]} == upper
    seen = set()
    offset = 0
    while offset is not None:
        page = graph_of(world.alice, l0_offset=offset, l0_limit=10)
        seen |= {n["id"] for n in page["nodes"]}
        index = {n["i"] for n in page["nodes"]}
        assert all(e["s"] in index and e["t"] in index for e in page["edges"])
        offset = page["l0_page"]["next_offset"]
    assert seen == {n["id"] for n in full["nodes"]}
    assert full["params"]["M"] == 4
    assert full["params"]["M0"] == 4
    assert full["params"]["EF_SEARCH"] == 16


@pytest.mark.django_db
def test_the_graph_is_cached_and_updated_when_a_note_is_added_or_deleted(world, notes):
    first = graph_of(world.alice)
    builds = cache.stats["builds"]
    again = graph_of(world.alice)
    assert cache.stats["builds"] == builds, "an unchanged visible set is served from the cache"
    assert again == first
    added = world.note("新证据：商家客服承认屏幕批次有缺陷", matter=world.matter_laptop)
    after_add = graph_of(world.alice)
    assert cache.stats["builds"] == builds, "a small change is applied, not rebuilt"
    assert cache.stats["incremental"] == 1, "a small change is applied, not rebuilt"
    assert str(added.pk) in {n["id"] for n in after_add["nodes"]}
    assert after_add["version"] != first["version"]
    delete_note(added, actor="system:test")
    after_delete = graph_of(world.alice)
    assert str(added.pk) not in {n["id"] for n in after_delete["nodes"]}
    # Back to the first version's notes: the graph stored for that version is served again.
    assert after_delete["nodes"] == first["nodes"]
    assert after_delete["edges"] == first["edges"]
    assert cache.stats["builds"] == builds
    assert cache.stats["snapshots"] == 1
    # A note added behind bob's wall changes alice's graph, never bob's nodes.
    bob_before = {n["id"] for n in graph_of(world.bob)["nodes"]}
    world.note("押金案：房东提供了照片", matter=world.matter_deposit)
    assert {n["id"] for n in graph_of(world.bob)["nodes"]} == bob_before


@pytest.mark.django_db
def test_assignment_change_gives_a_different_visibility_set(world, notes):
    from tests.factories import AssignmentFactory

    before = {n["id"] for n in graph_of(world.bob)["nodes"]}
    AssignmentFactory(matter=world.matter_deposit, user=world.bob)
    after = {n["id"] for n in graph_of(world.bob)["nodes"]}
    assert after == before | ids(notes["deposit"])


@pytest.mark.django_db
def test_layered_nav_search_fuses_graph_route_and_vector_search(world, notes):
    response = client_for(world.alice).post(SEARCH, {"query": "房东扣押金不退怎么办", "k": 3}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["strategy"] == "layered_nav"
    assert len(body["hits"]) == 3
    assert body["hits"][0]["note_id"] in ids(notes["deposit"] + notes["law"])
    assert all(h["graph_rank"] is not None or h["vector_rank"] is not None for h in body["hits"])
    assert body["trace"]["path_nodes"][0] == body["trace"]["entry"]
    # Bob's search never returns or traverses the walled matter.
    bob = client_for(world.bob).post(SEARCH, {"query": "房东扣押金不退怎么办", "k": 10}, format="json").json()
    walled = ids(notes["deposit"])
    assert not walled & {h["note_id"] for h in bob["hits"]}
    assert not walled & ({v["id"] for v in bob["trace"]["visited"]} | {n["id"] for n in bob["trace"]["nodes"]})
    charlie = client_for(world.charlie).post(SEARCH, {"query": "押金", "k": 10}, format="json").json()
    assert {h["note_id"] for h in charlie["hits"]} <= ids(notes["firm_b"])


@pytest.mark.django_db
def test_search_filters_and_limits(world, notes):
    alice = client_for(world.alice)
    scoped = alice.post(SEARCH, {"query": "退货", "k": 10, "scopes": ["general_law"]}, format="json").json()
    assert {h["note_id"] for h in scoped["hits"]} == ids(notes["law"])
    in_matter = alice.post(SEARCH, {"query": "押金", "k": 10, "matter": world.matter_laptop.pk}, format="json").json()
    assert not ids(notes["deposit"]) & {h["note_id"] for h in in_matter["hits"]}
    for body, field in (({"query": "", "k": 3}, "query"), ({"query": "x", "k": 0}, "k"),
                        ({"query": "x", "k": 101}, "k"), ({"query": "x" * 2001}, "query"),
                        ({"query": "x", "strategy": "bm25"}, "strategy"),
                        ({"query": "x", "scopes": ["nope"]}, "scopes")):
        response = alice.post(SEARCH, body, format="json")
        assert response.status_code == 400, (body, response.content)
        assert field in response.json(), (body, response.content)
    walled = client_for(world.bob).post(SEARCH, {"query": "x", "matter": world.matter_deposit.pk}, format="json")
    assert walled.status_code == 400
    assert "未知案件" in walled.json()["detail"]


@pytest.mark.django_db
def test_navigation_endpoints_are_in_the_openapi_schema(world):
    response = client_for(world.alice).get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    text = response.content.decode()
    for path in ("/api/navigation/graph", "/api/navigation/trace/{note_id}", "/api/navigation/search"):
        assert path in text


@pytest.mark.django_db
def test_the_page_renders_in_chinese_with_vendored_d3(world, notes):
    client = APIClient()
    client.force_login(world.bob)
    page = client.get("/navigation/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "记忆导航图" in html
    assert "vendor/d3/d3.min.js" in html
    assert "cdn" not in html.lower()
    assert world.matter_deposit.title not in html
    assert world.matter_laptop.title in html


@pytest.mark.django_db
def test_layered_nav_is_a_strategy_of_the_memory_search_api(world, notes):
    from recall import registered_strategies

    assert "layered_nav" in registered_strategies()
    body = {"query": "电脑花屏商家不给退货", "k": 5, "strategy": "layered_nav", "matter": world.matter_laptop.pk}
    response = client_for(world.bob).post("/api/memory/search", body, format="json")
    assert response.status_code == 200, response.content
    data = response.json()
    returned = {hit["note"]["id"] if isinstance(hit.get("note"), dict) else hit.get("id") for hit in data["hits"]}
    assert returned
    assert returned <= ids(notes["laptop"] + notes["law"] + notes["bob_profile"])
    assert any("沿导航图找到" in reason or "语义检索" in reason for hit in data["hits"] for reason in hit["reasons"])
    walled = client_for(world.bob).post(
        "/api/memory/search", {**body, "matter": world.matter_deposit.pk}, format="json"
    )
    assert walled.status_code == 404
    charlie = client_for(world.charlie).post("/api/memory/search", {**body, "matter": None}, format="json")
    assert charlie.status_code == 200
    charlie_ids = {hit["note"]["id"] if isinstance(hit.get("note"), dict) else hit.get("id") for hit in charlie.json()["hits"]}
    assert charlie_ids <= ids(notes["firm_b"])


@pytest.mark.django_db
def test_layered_nav_also_recalls_what_was_said(world, notes):
    """layered_nav reads the raw messages too, fused with its graph-and-vector note order."""
    from memory.models import Conversation
    from memory.services.conversations import save_message
    from remember.message_index import index_messages
    from recall import search_memory

    conversation = Conversation.objects.create(firm=world.firm_a, user=world.bob, matter=world.matter_laptop)
    message = save_message(conversation, "user", "商家客服在电话里承认屏幕花屏是出厂质量问题。", speaker="bob")
    index_messages()
    result = search_memory(world.bob, "客服承认花屏是质量问题", k=5, strategy="layered_nav",
                           matter_id=world.matter_laptop.pk)
    standing_for = [hit for hit in result.hits if message.pk in hit.source_message_ids]
    assert standing_for
    assert any(reason.startswith("综合排名") for reason in standing_for[0].reasons)
    assert result.stats["message_candidates"] >= 1
    others = search_memory(world.charlie, "客服承认花屏是质量问题", k=10, strategy="layered_nav")
    assert all(message.pk not in hit.source_message_ids for hit in others.hits)
