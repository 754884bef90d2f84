"""Working memory: raw messages, FIFO of N, consolidation of the overflow, archived search."""
from __future__ import annotations

import importlib

import pytest
from django.contrib.postgres.search import SearchQuery, SearchVector

from memory.models import ConsolidatedMessage, Consolidation, Message, Note, TurnExtraction
from remember.services.consolidation import do_consolidate_overflow
from memory.services.conversations import save_message
from remember.working_memory import working_memory
from remember.working_memory import unconsolidated
from memory.services.conversations import MessageError
from tests.remember.factories import at

working_memory_module = importlib.import_module("remember.working_memory")

FILLER_USER = "好的"
FILLER_REPLY = "收到。"


def test_save_message_fills_search_text_and_is_idempotent_by_external_id(world, laptop_conversation):
    m = save_message(laptop_conversation, "user", "商家拒绝退换笔记本电脑", speaker="alice", external_id="m1")
    assert "笔记本" in m.search_text.split()
    assert m.firm_id == world.firm_a.pk
    again = save_message(laptop_conversation, "user", "different text", speaker="alice", external_id="m1")
    assert again.pk == m.pk
    assert Message.objects.count() == 1
    found = Message.objects.annotate(v=SearchVector("search_text", config="simple")).filter(
        v=SearchQuery("退换", config="simple"))
    assert list(found) == [m]


def test_save_message_refuses_an_unknown_role(world, laptop_conversation):
    with pytest.raises(MessageError, match="unknown role"):
        save_message(laptop_conversation, "robot", "hi", speaker="x")


def test_working_memory_is_the_last_n_messages(world, laptop_conversation, settings):
    settings.WORKING_MEMORY_SIZE = 4
    for i in range(6):
        save_message(laptop_conversation, "user", f"消息{i}", speaker="alice", said_at=at(1, 10, i))
    assert [m.content for m in working_memory(laptop_conversation)] == ["消息2", "消息3", "消息4", "消息5"]


def test_overflow_is_consolidated_in_batches_and_messages_stay(world, laptop_conversation, make_turn, settings):
    settings.WORKING_MEMORY_SIZE = 20
    settings.CONSOLIDATION_BATCH = 5
    # a question that never got its reply: only consolidation can bring it into long-term memory
    lone = save_message(laptop_conversation, "user", "我在2024年3月5日花5999元买了一台笔记本电脑。",
                        speaker="alice", said_at=at(1, 9))
    for _ in range(10):  # 20 more messages in 10 trivial turns
        make_turn(laptop_conversation, FILLER_USER, FILLER_REPLY)
    assert Message.objects.count() == 21
    consolidation = Consolidation.objects.get()
    assert ConsolidatedMessage.objects.count() == 5
    assert unconsolidated(laptop_conversation).count() == 16
    assert ConsolidatedMessage.objects.filter(message=lone).exists()
    note = Note.objects.get()
    assert note.source_id == f"consolidation:{consolidation.pk}"
    assert note.source_message_ids == [lone.pk]
    assert consolidation.engine == "offline"
    assert consolidation.decisions[0]["action"] == "add"
    # the turns' own messages were already extracted and are only archived
    assert TurnExtraction.objects.filter(status="skipped").count() == 10
    assert Message.objects.count() == 21  # nothing deleted


def test_consolidation_does_nothing_within_capacity(world, laptop_conversation):
    save_message(laptop_conversation, "user", "你好", speaker="alice")
    assert do_consolidate_overflow(laptop_conversation, actor="system:test") == []
