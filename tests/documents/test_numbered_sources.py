"""Numbered sources outside the chat (issue 52, docs/citations.md): ``POST /api/memory/search`` and
the MCP ``search_memory`` number every hit 1…n by rank and every document passage after them, give
each its ``source_url``, and list them under the same numbers in ``system_message`` — so another
assistant can cite ``[n]`` as the chat's does. A token narrowed to one matter gets its own
numbers 1…m, and nothing walled is ever numbered (alice, bob walled from the deposit matter,
charlie of another firm)."""
from __future__ import annotations

import re

import pytest

from memory.models import Conversation
from remember.message_index import index_messages
from tests.clients import client_for
from tests.connectors.conftest import make_token, mcp_calls
from tests.connectors.test_mcp_tools import payload
from tests.documents.conftest import add_document
from tests.documents.files import text_pdf
from tests.documents.test_extraction import LEASE
from tests.recall.test_turn_memory import said

pytestmark = pytest.mark.django_db

URL = "/api/memory/search"
QUERY = "押金 房租 monthly rent deposit"
CITATION = "《房屋租赁合同》第 2 页"
DEPOSIT_SAID = "房东在电话里答应下周五之前把三千元押金退回到我的银行卡。"


@pytest.fixture
def deposit_matter(world):
    """The deposit matter (alice's; bob is walled off from it): its lease, a note, and a turn alice said."""
    lease = add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE), actor=world.alice)
    note = world.note("押金为三千元，房东答应下周五前退还。", matter=world.matter_deposit)
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit)
    message = said(conversation, DEPOSIT_SAID, minute=2)
    assert index_messages() == 1
    return lease, note, message


def numbered_lines(system_message: str) -> dict[int, str]:
    """``- [n] …`` lines of the injected context, by number."""
    return {int(n): line for n, line in re.findall(r"^- \[(\d+)\] (.*)$", system_message, flags=re.MULTILINE)}


def assert_numbered(body: dict) -> None:
    """Hits 1…n by rank, passages n+1…, each with its source_url, and the same numbers in the context."""
    hits, passages = body["hits"], body["passages"]
    assert [hit["number"] for hit in hits] == list(range(1, len(hits) + 1)) == [hit["rank"] for hit in hits]
    assert [p["number"] for p in passages] == list(range(len(hits) + 1, len(hits) + len(passages) + 1))
    lines = numbered_lines(body["system_message"] or "")
    assert set(lines) == {item["number"] for item in hits + passages}
    for hit in hits:
        if hit["kind"] == "message":
            message = hit["message"]
            assert hit["source_url"] == f"/chat/{message['conversation_id']}/#message-{message['id']}"
            assert message["content"] in lines[hit["number"]]
        elif hit["note"]["source_type"] == "document":  # a note made from a document: the viewer at its page
            assert re.fullmatch(r"/documents/\d+/\?page=\d+&start=\d+&end=\d+", hit["source_url"])
            assert hit["note"]["content"] in lines[hit["number"]]
        else:
            assert hit["source_url"] == f"/memory/{hit['note']['id']}/#source-turn"
            assert hit["note"]["content"] in lines[hit["number"]]
    for passage in passages:
        assert passage["source_url"] == passage["url"]
        assert lines[passage["number"]].startswith(f"【{passage['citation']}】")


def test_alice_s_search_numbers_hits_then_passages_with_their_source(world, deposit_matter):
    lease, note, message = deposit_matter
    response = client_for(world.alice).post(URL, {"query": QUERY, "k": 10, "matter": world.matter_deposit.pk},
                                            format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert_numbered(body)
    kinds = {hit["kind"] for hit in body["hits"]}
    assert kinds == {"note", "message"}  # both kinds of hit were numbered and linked
    assert any(hit["note"] and hit["note"]["id"] == str(note.pk) for hit in body["hits"])
    assert any(hit["message"] and hit["message"]["id"] == message.pk for hit in body["hits"])
    assert body["passages"] and body["passages"][0]["citation"] == CITATION
    assert body["passages"][0]["document_id"] == lease.pk


def test_the_mcp_tool_numbers_the_same_way_and_a_narrowed_token_its_own_items(world, deposit_matter):
    _lease, note, message = deposit_matter
    query = {"query": QUERY, "k": 10}
    [alice] = mcp_calls(make_token(world.alice).token, [("search_memory", query)], language="zh-hans")
    assert_numbered(payload(alice))

    laptop_only = make_token(world.alice, matters=[world.matter_laptop]).token
    [narrowed] = mcp_calls(laptop_only, [("search_memory", query)], language="zh-hans")
    body = payload(narrowed)
    assert_numbered(body)  # renumbered 1…m after the token's narrowing: no gap, no stranger
    assert body["passages"] == []
    assert DEPOSIT_SAID not in (body["system_message"] or "") and note.content not in (body["system_message"] or "")


@pytest.mark.parametrize("user_name", ["bob", "charlie"])
def test_nothing_walled_is_numbered(world, deposit_matter, user_name):
    _lease, note, message = deposit_matter
    user = getattr(world, user_name)
    body = client_for(user).post(URL, {"query": QUERY, "k": 50}, format="json").json()
    assert_numbered(body)
    urls = {item["source_url"] for item in body["hits"] + body["passages"]}
    assert f"/memory/{note.pk}/#source-turn" not in urls
    assert not any(url.endswith(f"#message-{message.pk}") for url in urls)
    assert body["passages"] == []
    [mcp] = mcp_calls(make_token(user).token, [("search_memory", {"query": QUERY, "k": 50})])
    assert_numbered(payload(mcp))
    assert {item["source_url"] for item in payload(mcp)["hits"]} == {item["source_url"] for item in body["hits"]}
