"""Chat REST API and page: a user reads only their own conversations; others get 404."""
from __future__ import annotations

import pytest
from django.test import Client

from memory.models import Conversation
from memory.services.conversations import save_message
from tests.clients import logged_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def conversation(world):
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit, title="押金")
    save_message(conversation, "user", "房东扣了我3000元押金。", speaker="alice")
    save_message(conversation, "assistant", "结论：可以要求返还。", speaker="offline", status="cancelled")
    return conversation


def test_owner_reads_messages_in_order_with_status(world, conversation):
    data = logged_in(world.alice).get(f"/api/chat/conversations/{conversation.pk}/messages/").json()
    assert [(m["role"], m["content"], m["status"]) for m in data["results"]] == [
        ("user", "房东扣了我3000元押金。", "complete"), ("assistant", "结论：可以要求返还。", "cancelled")]


def test_other_users_and_firms_get_404(world, conversation):
    for user in (world.bob, world.charlie):
        response = logged_in(user).get(f"/api/chat/conversations/{conversation.pk}/messages/")
        assert response.status_code == 404
        assert "3000" not in response.content.decode()
        assert logged_in(user).get("/api/chat/conversations/").json()["count"] == 0


def test_a_conversation_behind_a_wall_the_owner_left_is_hidden(world, conversation):
    world.matter_deposit.assignments.filter(user=world.alice).delete()
    assert logged_in(world.alice).get(f"/api/chat/conversations/{conversation.pk}/messages/").status_code == 404


def test_chat_page_lists_own_conversations_and_assigned_matters(world, conversation):
    page = logged_in(world.alice).get("/chat/").content.decode()
    assert "押金" in page
    assert "电脑花屏退货纠纷" in page
    assert "保密并购案" not in page
    page = logged_in(world.bob).get("/chat/").content.decode()
    assert 'data-conversation="%d"' % conversation.pk not in page
    assert "租房押金返还纠纷" not in page


def test_chat_page_requires_login():
    assert Client().get("/chat/").status_code == 302
