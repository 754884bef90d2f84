"""Firm-wide notes drawn from a colleague's private (matter-less) conversation (issue 13, finding 8):
the knowledge is shared with the firm, the conversation's traces are not — its id, its message
ids, the note's source id and event tags reach only the owner and the firm's auditors. Over the
notes API, search, the chat's recalled frame and the navigation graph; charlie sees nothing."""
from __future__ import annotations

import pytest

from memory.models import Category, Conversation, MemoryScope, Message, Role, SourceType
from memory.services.conversations import save_message
from tests.chat.test_consumer import connected, frames_until
from tests.clients import client_for
from tests.factories import MembershipFactory, UserFactory

EVENT_TAG = "event:快递丢件"


@pytest.fixture
def private_note(world):
    """bob's private conversation (no matter) taught the firm a cross-case lesson."""
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.bob, title="快递")
    question = save_message(conversation, Message.Role.USER, "我的快递丢了，快递公司只肯按运费三倍赔。", speaker="bob")
    note = world.note(
        "快递丢件时，保价条款之外仍可主张按实际损失赔偿。", scope=MemoryScope.CROSS_CASE, category=Category.LAW,
        owner=world.bob, conversation=conversation, source_type=SourceType.CHAT, source_id="turn:41",
        source_message_ids=[question.pk], tags=[EVENT_TAG, "快递"], keywords=["快递", "丢件", "赔偿"],
    )
    note.append_history("evolved", {"tags": [["快递"], [EVENT_TAG, "快递"]]}, triggered_by="x", source="turn:41")
    note.save(update_fields=["evolution_history"])
    return note


@pytest.fixture
def erin(world):
    """A lawyer of firm A: sees firm-wide knowledge, is neither the owner nor an auditor."""
    user = UserFactory(username="erin")
    MembershipFactory(user=user, firm=world.firm_a, role=Role.LAWYER)
    return user


def assert_hidden(payload: dict) -> None:
    assert payload["provenance_hidden"] is True
    assert payload["conversation_id"] is None
    assert payload["source_message_ids"] == []
    assert payload["source_id"] == ""
    assert payload["tags"] == ["快递"]
    history = payload["evolution_history"][-1]
    assert history["changes"] == {"tags": [["快递"], ["快递"]]}
    assert "source" not in history


def assert_full(payload: dict, note) -> None:
    assert payload["provenance_hidden"] is False
    assert payload["conversation_id"] == note.conversation_id
    assert payload["source_message_ids"] == note.source_message_ids
    assert payload["source_id"] == "turn:41"
    assert EVENT_TAG in payload["tags"]


def test_notes_api_hides_the_private_trace_from_colleagues_only(world, private_note, erin):
    url = f"/api/memory/notes/{private_note.pk}/"
    assert_hidden(client_for(erin).get(url).json())
    assert_full(client_for(world.bob).get(url).json(), private_note)  # the owner
    assert_full(client_for(world.alice).get(url).json(), private_note)  # staff firm admin: the auditor
    assert client_for(world.charlie).get(url).status_code == 404
    listed = {n["id"]: n for n in client_for(erin).get("/api/memory/notes/").json()["results"]}
    assert_hidden(listed[str(private_note.pk)])


def test_search_hits_hide_the_private_trace(world, private_note, erin):
    def hit_of(user):
        response = client_for(user).post("/api/memory/search", {"query": "快递丢件怎么赔偿", "k": 10}, format="json")
        return next(h for h in response.json()["hits"] if h["note"] and h["note"]["id"] == str(private_note.pk))

    hit = hit_of(erin)
    assert_hidden(hit["note"])
    assert hit["source_message_ids"] == []
    assert hit_of(world.bob)["source_message_ids"] == private_note.source_message_ids
    charlie = client_for(world.charlie).post("/api/memory/search", {"query": "快递丢件怎么赔偿"}, format="json").json()
    assert all(h["note"] is None or h["note"]["id"] != str(private_note.pk) for h in charlie["hits"])


def test_navigation_trace_and_events_hide_the_private_trace(world, private_note, erin):
    trace = client_for(erin).get(f"/api/navigation/trace/{private_note.pk}").json()["note"]
    assert trace["source_id"] == ""
    assert trace["event"] == ""
    assert trace["provenance_hidden"] is True
    assert "tag:快递丢件" not in {e["key"] for e in client_for(erin).get("/api/navigation/graph").json()["events"]}
    assert client_for(erin).get("/api/navigation/graph", {"event": "tag:快递丢件"}).json()["total_nodes"] == 0
    owner_trace = client_for(world.bob).get(f"/api/navigation/trace/{private_note.pk}").json()["note"]
    assert owner_trace["event"] == "tag:快递丢件"
    assert owner_trace["source_id"] == "turn:41"
    assert "tag:快递丢件" in {e["key"] for e in client_for(world.alice).get("/api/navigation/graph").json()["events"]}
    assert client_for(world.charlie).get(f"/api/navigation/trace/{private_note.pk}").status_code == 404


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_chat_recalled_frame_hides_the_private_trace(world, private_note, llm_offline, erin):
    note = private_note
    communicator, _ = await connected(erin)
    await communicator.send_json_to({"type": "ask", "question": "快递丢件，快递公司只赔三倍运费，怎么办？"})
    frames = await frames_until(communicator, "done")
    recalled = next(f for f in frames if f["type"] == "recalled")["notes"]
    shown = next(n for n in recalled if n["id"] == str(note.pk))
    assert shown["source_id"] == ""
    assert shown["provenance_hidden"] is True
    await communicator.disconnect()
