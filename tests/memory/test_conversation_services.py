"""memory.services.conversations: the one place conversations and messages are written."""
from __future__ import annotations

import pytest

from memory.models import Message
from memory.services.conversations import (
    ConversationConflict,
    MessageError,
    finish_reply,
    keyed_conversation,
    save_message,
    start_conversation,
)


def test_a_keyed_conversation_is_found_again_and_never_taken_over(world):
    first, created = keyed_conversation(firm=world.firm_a, external_id="case-7", user=world.alice,
                                        matter=world.matter_laptop, title="电脑花屏")
    again, created_again = keyed_conversation(firm=world.firm_a, external_id="case-7", user=world.alice,
                                              matter=world.matter_laptop, title="another title")
    assert (created, created_again, again.pk, again.title) == (True, False, first.pk, "电脑花屏")
    with pytest.raises(ConversationConflict, match="another user or matter"):
        keyed_conversation(firm=world.firm_a, external_id="case-7", user=world.bob, matter=world.matter_laptop)
    with pytest.raises(ConversationConflict):
        keyed_conversation(firm=world.firm_a, external_id="case-7", user=world.alice, matter=None)
    # the same key in another firm is another conversation
    other, created_other = keyed_conversation(firm=world.firm_b, external_id="case-7", user=world.charlie)
    assert created_other
    assert other.pk != first.pk
    assert other.firm == world.firm_b


def test_a_finished_reply_records_how_it_was_made(world):
    conversation = start_conversation(firm=world.firm_a, user=world.alice, title="押金")
    question = save_message(conversation, Message.Role.USER, "押金不退怎么办？", speaker="alice")
    reply = save_message(conversation, Message.Role.ASSISTANT, "先协商", speaker="offline",
                         status=Message.Status.FAILED)
    recalled = [{"id": "5f0c6c9e-4c47-4a53-9d0a-5a8f7f6f3f01", "layer": "case", "score": {"total": 0.5}}]
    finished = finish_reply(reply, recalled=recalled, timings={"recall_ms": 3.5}, engine="offline",
                            error="x" * 600)
    stored = Message.objects.get(pk=reply.pk)
    assert (stored.recalled, stored.timings, stored.engine) == (recalled, {"recall_ms": 3.5}, "offline")
    assert stored.error == "x" * 500
    assert finished.error == stored.error
    assert question.said_at <= stored.said_at
    assert stored.status == Message.Status.FAILED


def test_bad_messages_are_refused_with_a_reason_and_store_nothing(world):
    conversation = start_conversation(firm=world.firm_a, user=world.alice)
    with pytest.raises(MessageError, match="unknown role"):
        save_message(conversation, "robot", "hi", speaker="x")
    with pytest.raises(MessageError, match="unknown status"):
        save_message(conversation, Message.Role.USER, "hi", speaker="alice", status="lost")
    with pytest.raises(MessageError, match="must be text"):
        save_message(conversation, Message.Role.USER, None, speaker="alice")
    assert not Message.objects.filter(conversation=conversation).exists()
