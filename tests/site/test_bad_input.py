"""Bad input to the HTTP side (issue 13, findings 1, 2 and 7): every API answers a JSON 4xx, never
a 500 or an HTML page; NUL and lone surrogates are refused naming the field, also in admin and
import; the API schema and docs need a login."""
from __future__ import annotations

import http.client
import json
import re

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from memory.models import Conversation, Message
from tests.clients import client_for

JSON_APIS = ["/api/memory/search", "/api/navigation/search"]


def post_raw(client, path: str, body: str | bytes, **headers):
    return client.generic("POST", path, body, content_type="application/json", **headers)


def assert_json_error(response, status: int) -> dict:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    return response.json()


@pytest.mark.parametrize("path", JSON_APIS)
def test_deeply_nested_json_is_a_400_not_a_recursion_error(world, path):
    client = client_for(world.alice)
    deep = '{"query": "押金", "k": 5, "x": ' + "[" * 2000 + "]" * 2000 + "}"
    assert "32" in str(assert_json_error(post_raw(client, path, deep), 400))  # the depth bound, in any language
    shallow_but_over_the_bound = '{"query": "押金", "x": ' + "[" * 40 + "]" * 40 + "}"
    assert "x[0]" in str(assert_json_error(post_raw(client, path, shallow_but_over_the_bound), 400))


@pytest.mark.parametrize("path", JSON_APIS)
@pytest.mark.parametrize("body, field", [
    ('{"query": "押金\\u0000问题"}', "query"),
    ('{"query": "\\ud800"}', "query"),
    ('{"query": "押金", "extra": {"k\\u0000": 1}}', "extra.k\\u0000"),
    # a key that is itself a lone surrogate is named by its escape (the 400 must be encodable)
    ('{"query": "押金", "\\ud800": 2249}', "\\ud800"),
    ('{"query": "押金", "scopes": ["case", "\\udc00"]}', "scopes[1]"),
])
def test_nul_and_lone_surrogates_in_a_body_are_a_400_naming_the_field(world, path, body, field):
    errors = assert_json_error(post_raw(client_for(world.alice), path, body), 400)
    assert field in errors
    assert "U+" in errors[field][0]
    english = post_raw(client_for(world.alice), path, body, HTTP_ACCEPT_LANGUAGE="en")
    assert "which cannot be stored" in english.json()[field][0]


def test_nul_in_a_query_string_is_a_400_naming_the_parameter_everywhere(world):
    client = client_for(world.alice)
    errors = assert_json_error(client.get("/api/navigation/graph", {"event": "tag:押金\x00"}), 400)
    assert "event" in errors
    # Admin's search box and filters went straight to PostgreSQL ("cannot contain NUL" → 500).
    admin = client.get("/admin/memory/note/", {"q": "押金\x00"})
    assert admin.status_code == 400
    assert admin.content.decode().startswith("q: ")
    assert "U+0000" in admin.content.decode()
    login = Client().post("/accounts/login/", {"username": "alice\x00", "password": "x"})
    assert login.status_code == 400
    assert b"username" in login.content


def test_huge_pagination_is_clamped_or_refused_not_bigint_out_of_range(world, settings):
    client = client_for(world.alice)
    for index in range(3):
        world.note(f"第{index}条关于押金的笔记。", matter=world.matter_laptop)
    page = client.get("/api/memory/notes/", {"limit": "999999999999999999999"})
    assert page.status_code == 200
    assert len(page.json()["results"]) == 3
    settings.INPUT_MAX_PAGE_LIMIT = 2
    page = client.get("/api/memory/notes/", {"limit": "999999999999999999999"}).json()
    assert len(page["results"]) == 2
    assert "limit=2" in page["next"]  # clamped
    errors = assert_json_error(client.get("/api/memory/notes/", {"offset": "999999999999999999999"}), 400)
    assert "offset" in errors
    assert "matter" in assert_json_error(client.get("/api/memory/notes/", {"matter": "99999999999999999999"}), 400)
    assert "matter" in assert_json_error(client.get("/api/memory/notes/", {"matter": "²"}), 400)
    assert_json_error(client.get("/api/chat/conversations/99999999999999999999/messages/"), 404)
    assert_json_error(client.get("/api/chat/conversations/", {"offset": "10000000000000000000000"}), 400)
    for name in ("firm", "matter", "l0_offset"):
        assert name in assert_json_error(client.get("/api/navigation/graph", {name: "99999999999999999999"}), 400)


@pytest.mark.live_server
def test_an_oversized_body_is_a_json_413_over_real_http(world, live_daphne, cookie_of):
    body = json.dumps({"query": "押金" * 400_000}).encode()  # ~2.4 MB, over INPUT_MAX_BODY_BYTES
    for path in JSON_APIS:
        connection = http.client.HTTPConnection(live_daphne.host, live_daphne.port, timeout=30)
        connection.request("POST", path, body=body, headers={
            "Content-Type": "application/json", "Cookie": cookie_of(world.alice),
        })
        response = connection.getresponse()
        payload = response.read()
        connection.close()
        assert response.status == 413
        assert response.getheader("Content-Type").startswith("application/json")
        assert "larger than" in json.loads(payload)["detail"]


def test_api_errors_are_json_never_an_html_page(world):
    client = client_for(world.alice)
    assert_json_error(client.get("/api/memory/no-such-endpoint/"), 404)
    assert_json_error(client.get("/api/navigation/trace/not-a-uuid"), 404)


def test_schema_and_docs_need_a_login(world):
    anonymous = Client()
    assert anonymous.get("/api/schema/").status_code in (401, 403)
    docs = anonymous.get("/api/docs/")
    assert docs.status_code == 302
    assert "/accounts/login/" in docs["Location"]
    assert client_for(world.bob).get("/api/schema/").status_code == 200
    assert client_for(world.charlie).get("/api/docs/").status_code == 200


@pytest.mark.parametrize("content, where", [
    ("押金\u0000问题", "conversations[0].messages[0].content"),
    ("\ud800", "conversations[0].messages[0].content"),
])
def test_import_refuses_nul_and_lone_surrogates_naming_the_place_and_stores_nothing(world, tmp_path, content, where):
    transcript = {"firm": "alpha", "conversations": [{
        "id": "conv-1", "user": "alice", "title": "押金",
        "messages": [
            {"id": "m1", "role": "user", "speaker": "alice", "timestamp": "2026-03-01T10:00:00+08:00", "content": content},
            {"id": "m2", "role": "assistant", "speaker": "assistant", "timestamp": "2026-03-01T10:00:30+08:00",
             "content": "好的。"},
        ],
    }]}
    path = tmp_path / "transcript.json"
    path.write_text(json.dumps(transcript), encoding="utf-8")  # ASCII-escaped: \u0000 and \ud800 survive
    with pytest.raises(CommandError, match=re.escape(f"{where}: ") + ".*U\\+"):
        call_command("import_conversation", str(path), "--no-progress")
    assert Conversation.objects.count() == 0
    assert Message.objects.count() == 0
