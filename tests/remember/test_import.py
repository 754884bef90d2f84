"""import_conversation: the transcript format, the same pipeline, idempotent re-import, bad files."""
from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from django.utils import translation

from memory.models import Conversation, Message, Note, TurnExtraction
from remember.ingest import import_transcript
from remember.ingest import TranscriptError
from tests.fake_llm.replies import error_reply, json_reply


def transcript(world, **conversation_overrides) -> dict:
    conversation = {
        "id": "conv-1", "user": "alice", "matter": world.matter_laptop.reference, "title": "电脑花屏",
        "messages": [
            {"id": "m1", "role": "user", "speaker": "alice", "timestamp": "2026-03-01T10:00:00+08:00",
             "content": "我在2024年3月5日花5999元买了一台笔记本电脑，笔记本电脑在购买后约两周出现大面积花屏。"},
            {"id": "m2", "role": "assistant", "speaker": "assistant", "timestamp": "2026-03-01T10:00:30+08:00",
             "content": "根据《消费者权益保护法》第二十四条，您可以要求商家退货。"},
            {"id": "m3", "role": "user", "speaker": "alice", "timestamp": "2026-03-01T10:05:00+08:00",
             "content": "我已经保存了电子发票、付款截图、花屏照片和三次客服录音。"},
            {"id": "m4", "role": "assistant", "speaker": "assistant", "timestamp": "2026-03-01T10:05:30+08:00",
             "content": "这些证据很关键，请妥善保存原件。"},
        ],
    }
    conversation.update(conversation_overrides)
    return {"firm": "alpha", "conversations": [conversation]}


def write(tmp_path, data) -> str:
    path = tmp_path / "transcript.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return str(path)


@translation.override("en")  # asserts the command's English output
def test_import_runs_the_pipeline_and_reimport_changes_nothing(world, tmp_path, capsys):
    path = write(tmp_path, transcript(world))
    call_command("import_conversation", path)
    out = capsys.readouterr()
    assert "2 turn(s), 2 processed now" in out.out
    assert "importing" in out.err  # tqdm bar on stderr
    assert "extraction: 2 succeeded (done 2, skipped 0), 0 failed" in out.out
    assert "0 still pending" in out.out
    conversation = Conversation.objects.get(external_id="conv-1")
    assert (conversation.user, conversation.matter) == (world.alice, world.matter_laptop)
    assert Message.objects.filter(conversation=conversation).count() == 4
    assert set(TurnExtraction.objects.values_list("status", flat=True)) == {"done"}
    purchase = Note.objects.get(content__contains="5999元")
    assert purchase.source_type == "import"
    assert purchase.source_id == "conv-1:m1-m2"
    assert purchase.said_at.isoformat() == "2026-03-01T02:00:00+00:00"
    snapshot = set(Note.objects.values_list("pk", "mention_count", "status"))
    call_command("import_conversation", path)
    out = capsys.readouterr().out
    assert "0 message(s) new, 4 already there" in out
    assert "0 processed now" in out
    assert set(Note.objects.values_list("pk", "mention_count", "status")) == snapshot
    assert Message.objects.count() == 4
    assert TurnExtraction.objects.count() == 2


def test_import_transcript_api_reports_counts(world):
    progress = []
    result = import_transcript(transcript(world), actor="system:eval", progress=lambda d, t: progress.append((d, t)))
    assert (result.conversations, result.messages_created, result.turns) == (1, 4, 2)
    assert result.notes_written == Note.objects.count() >= 3
    assert progress[0] == (0, 2)
    assert progress[-1] == (2, 2)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(firm="nope"), "unknown firm 'nope'"),
        (lambda d: d.update(firm="beta"), "'alice' is not a member of firm 'beta'"),
        (lambda d: d["conversations"][0].update(user="mallory"), "unknown user 'mallory'"),
        (lambda d: d["conversations"][0].update(matter="X-999"), "unknown matter 'X-999'"),
        (lambda d: d["conversations"][0]["messages"][1].pop("content"), "messages[1]: missing 'content'"),
        (lambda d: d["conversations"][0]["messages"][2].update(timestamp="yesterday"), "not ISO 8601"),
        (lambda d: d["conversations"][0]["messages"][3].update(role="robot"), "role must be one of"),
        (lambda d: d["conversations"][0]["messages"][3].update(id="m1"), "appears twice"),
        (lambda d: d.pop("conversations"), "'conversations' must be a non-empty list"),
    ],
)
@translation.override("en")  # asserts the English message of remember.ingest
def test_bad_transcripts_are_refused_before_anything_is_written(world, tmp_path, mutate, message):
    data = transcript(world)
    mutate(data)
    with pytest.raises(CommandError, match=message.replace("[", r"\[").replace("]", r"\]")):
        call_command("import_conversation", write(tmp_path, data), "--no-progress")
    assert not Conversation.objects.exists()
    assert not Message.objects.exists()


@translation.override("en")  # asserts the English message of remember.ingest
def test_user_must_be_assigned_to_the_matter(world, tmp_path):
    data = transcript(world, user="bob", matter=world.matter_deposit.reference)
    with pytest.raises(CommandError, match="'bob' is not assigned to matter"):
        call_command("import_conversation", write(tmp_path, data), "--no-progress")


@translation.override("en")  # asserts the command's English output
def test_not_json_and_missing_file(world, tmp_path):
    with pytest.raises(CommandError, match="not valid JSON"):
        call_command("import_conversation", write(tmp_path, '{"firm": "alpha", "conv'))
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_conversation", str(tmp_path / "missing.json"))


@translation.override("en")  # asserts the English message of remember.ingest
def test_firm_option(world, tmp_path):
    data = transcript(world)
    data.pop("firm")
    with pytest.raises(CommandError, match="missing 'firm'"):
        call_command("import_conversation", write(tmp_path, data), "--no-progress")
    call_command("import_conversation", write(tmp_path, data), "--firm", "alpha", "--no-progress")
    assert Conversation.objects.filter(firm=world.firm_a).count() == 1
    with pytest.raises(TranscriptError, match="not 'beta'"):
        import_transcript({**data, "firm": "alpha"}, actor="x", firm="beta")


@translation.override("en")  # asserts the command's English output
def test_failed_extractions_are_counted_listed_and_exit_non_zero(world, tmp_path, capsys, llm_online, settings):
    """The LLM fails on the first turn (HTTP 500) and answers the second: the summary says so,
    the failed turn's error is listed, the exit status is 1 — and nothing is lost."""
    settings.TURN_MAX_ATTEMPTS = 2
    llm_online.script(error_reply(500, "model crashed"),
                      json_reply({"knowledge": [{"content": "用户保存了电子发票、付款截图和三次客服录音。",
                                                 "category": "证据", "confidence": 0.9}]}))
    path = write(tmp_path, transcript(world))
    with pytest.raises(CommandError, match="1 of 2 turn\\(s\\) failed extraction; their messages are stored"):
        call_command("import_conversation", path, "--no-progress")
    out = capsys.readouterr()
    assert "extraction: 1 succeeded (done 1, skipped 0), 1 failed (0 for good, 1 to be retried by the worker)" in out.out
    assert "conv-1:m1-m2 [pending]: LLMUnavailable:" in out.err
    assert "model crashed" in out.err
    assert Message.objects.count() == 4
    assert Note.objects.filter(content__contains="客服录音").exists()
    assert not Note.objects.filter(firm=world.firm_b).exists()  # charlie's firm untouched

    # the second failure is the last attempt: failed for good, still reported, still exit 1
    llm_online.script(error_reply(500, "model crashed again"))
    TurnExtraction.objects.filter(status="pending").update(next_attempt_at=None)
    with pytest.raises(CommandError, match="1 of 2 turn"):
        call_command("import_conversation", path, "--no-progress")
    out = capsys.readouterr()
    assert "1 failed (1 for good, 0 to be retried by the worker)" in out.out
    assert "conv-1:m1-m2 [failed]:" in out.err
    assert "model crashed again" in out.err
    assert Message.objects.count() == 4
