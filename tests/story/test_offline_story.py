"""The shipped month story, end to end through the real write path (offline engine)."""
from __future__ import annotations

import re
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from memory.models import (
    AuditLog,
    Category,
    Conversation,
    Firm,
    MemoryScope,
    Message,
    Note,
    RoutingDecision,
    SourceType,
    TurnExtraction,
)
from memory.services.notes import NoteDraft, create_note
from showcase.story import load_offline_script
from tests.story.helpers import load, run_folder

SOURCE_ID_RE = re.compile(r"^story-turn-\d{3}$")


def test_the_shipped_script_is_a_month_of_at_least_80_turns_over_5_events():
    script = load_offline_script()
    events = {e["key"]: e for e in script["events"]}
    assert len(script["turns"]) >= 80
    assert len(events) >= 5
    names = {e["name"] for e in events.values()}
    assert {"电脑花屏", "租房押金", "课程退款", "加班费", "维修费"} <= names
    days = {t["at"][:10] for t in script["turns"]}
    assert min(days) == "2026-03-01"
    assert max(days) == "2026-03-30"
    assert len(days) >= 25
    matters = {e["matter"] for e in events.values() if e["matter"]}
    assert matters == {"M-001", "M-002", "M-003", "M-004", "M-005"}


@pytest.mark.end_to_end
def test_offline_story_end_to_end_then_idempotent(demo_firm, no_llm, tmp_path, capsys):
    other = Firm.objects.get(slug="other-firm")
    charlie = get_user_model().objects.get(username="charlie")
    outsider = create_note(NoteDraft(firm=other, content="另一家律所的案件事实：合同于2026年1月签订。",
                                     memory_scope=MemoryScope.CASE, category=Category.FACT,
                                     source_type=SourceType.MANUAL, owner=charlie), actor="system:test")
    outsider_before = (outsider.snapshot(), outsider.updated_at)

    call_command("generate_story", "--firm", "demo-firm", "--user", "alice", "--out", str(tmp_path), "--no-progress")
    out = capsys.readouterr().out
    folder = run_folder(out)
    assert folder.parent == tmp_path
    files = load(folder)
    exchanges, notes_file, summary = (files["03_story_exchanges.json"], files["90_stored_notes.json"],
                                      files["91_graph_summary.json"])
    script = load_offline_script()

    # 01/02: the offline request says so, the response is the script
    assert files["01_story_generation_request.json"]["engine"] == "offline script"
    assert files["02_story_generation_response.json"] == script
    assert "offline script" in files["research"]
    assert "showcase/story/month_story.json" in files["research"]

    # every turn went through the real pipeline
    turns = TurnExtraction.objects.filter(firm=demo_firm)
    assert turns.count() == len(script["turns"]) == exchanges["counts"]["turns"] == len(files["turns"])
    assert set(turns.values_list("status", "source_type")) <= {("done", "chat_story"), ("skipped", "chat_story")}
    assert Message.objects.filter(firm=demo_firm).count() == 2 * len(script["turns"])
    conversations = Conversation.objects.filter(firm=demo_firm, user__username="alice")
    assert {c.title for c in conversations} == {e["name"] for e in script["events"]}
    assert {c.matter.reference for c in conversations if c.matter} == {"M-001", "M-002", "M-003", "M-004", "M-005"}

    # notes: provenance, event tag, source messages of the right turn
    notes = list(Note.objects.filter(firm=demo_firm))
    assert len(notes) == notes_file["count"] == summary["notes"]["total"] > 40
    by_label = {t["turn"]: t for t in exchanges["turns"]}
    for note in notes:
        assert note.source_type == SourceType.CHAT_STORY, note.content
        assert SOURCE_ID_RE.match(note.source_id), note.source_id
        events = [t for t in note.tags if t.startswith("event:")]
        assert len(events) == 1, note.tags
        turn = by_label[note.source_id.removeprefix("story-")]
        assert events[0] == f"event:{turn['event']}"
        assert note.source_message_ids
        assert set(note.source_message_ids) <= set(
            Message.objects.filter(conversation__in=conversations).values_list("pk", flat=True))
        assert note.conversation.title == turn["event"]
        # created with its provenance: nothing re-stamps a note after the pipeline made it
        assert not any(h["event"] == "story_provenance" for h in note.evolution_history)
    created = AuditLog.objects.filter(object_type="note", event_type="note_created", firm=demo_firm)
    assert {a.object_id: (a.after["source_type"], a.after["source_id"]) for a in created} == {
        str(n.pk): (SourceType.CHAT_STORY, n.source_id) for n in notes}
    assert not AuditLog.objects.filter(object_type="note", actor_label="system:story").exists()

    # counts consistent across 03 / turns / 90 / 91
    created = [n["id"] for t in files["turns"].values() for n in t["notes_created"]]
    assert sorted(created) == sorted(n["id"] for n in notes_file["notes"]) == sorted(str(n.pk) for n in notes)
    decisions = Counter(d["action"] for t in files["turns"].values() for d in t["routing"])
    assert decisions == Counter(summary["routing_decisions"]["by_action"])
    assert decisions == Counter(RoutingDecision.objects.filter(firm=demo_firm).values_list("action", flat=True))
    assert summary["turns"]["total"] == exchanges["counts"]["turns"] == len(files["turns"])
    assert Counter(n["event"] for n in notes_file["notes"]) == Counter(summary["notes"]["by_event"])
    assert Counter(n["memory_scope"] for n in notes_file["notes"]) == Counter(summary["notes"]["by_scope"])
    assert all(summary["consistency"][k] for k in ("turns_in_exchanges_equal_turn_files",
                                                   "notes_created_in_turns_equal_stored"))
    for label, record in files["turns"].items():
        assert record["input"]["user"]["content"] == by_label[label]["user"]
        assert record["extraction"]["engine"] in ("offline", "skipped")
        assert all(d["reason"] for d in record["routing"])

    # routing fired for real: an UPDATE (the corrected laptop price) and persona promotions
    assert decisions["update"] >= 1
    assert summary["updates"]["supersessions"]
    old = Note.objects.get(firm=demo_firm, content__contains="6999元买了一台联想笔记本电脑")
    assert old.status == Note.Status.SUPERSEDED
    assert "6499元" in old.superseded_by.content
    assert summary["persona_promotions"]["count"] >= 1
    profile = Note.objects.filter(firm=demo_firm, memory_scope=MemoryScope.USER_PROFILE)
    assert profile.count() == summary["persona_promotions"]["count"]
    assert all(p.mention_count >= 3 and p.owner.username == "alice" for p in profile)
    assert summary["links"]["total"] > 0
    assert summary["links"]["by_type"].get("temporal_next")

    # nothing of another firm touched
    outsider.refresh_from_db()
    assert (outsider.snapshot(), outsider.updated_at) == outsider_before
    assert not Note.objects.filter(firm=other).exclude(pk=outsider.pk).exists()
    assert not Message.objects.filter(firm=other).exists()

    # running again adds nothing
    snapshot = set(Note.objects.values_list("pk", "mention_count", "status", "updated_at"))
    messages = Message.objects.count()
    call_command("generate_story", "--out", str(tmp_path), "--no-progress")
    out = capsys.readouterr().out
    assert "0 processed now, 0 message(s) new" in out
    assert set(Note.objects.values_list("pk", "mention_count", "status", "updated_at")) == snapshot
    assert Message.objects.count() == messages
    again = load(run_folder(out))
    assert again["91_graph_summary.json"]["notes"]["total"] == len(notes)
    assert sorted(again["90_stored_notes.json"]["notes"], key=lambda n: n["id"]) == sorted(
        notes_file["notes"], key=lambda n: n["id"])

    # --if-empty (what make run calls) does nothing now
    call_command("generate_story", "--if-empty", "--no-progress", "--out", str(tmp_path))
    assert "already has story notes; nothing to do" in capsys.readouterr().out


def test_a_user_walled_off_from_a_matter_of_the_story_gets_a_clear_error(demo_firm, no_llm, tmp_path):
    with pytest.raises(CommandError, match="bob is not assigned to matter M-002"):
        call_command("generate_story", "--user", "bob", "--out", str(tmp_path), "--no-progress")
    assert not Conversation.objects.exists()
    assert not Message.objects.exists()
    assert not Note.objects.exists()


def test_unknown_firm_or_outsider_is_refused(demo_firm, no_llm, tmp_path):
    with pytest.raises(CommandError, match="unknown firm 'nope'"):
        call_command("generate_story", "--firm", "nope", "--out", str(tmp_path))
    with pytest.raises(CommandError, match="'charlie' is not a member of firm 'demo-firm'"):
        call_command("generate_story", "--user", "charlie", "--out", str(tmp_path))
