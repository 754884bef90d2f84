"""A caller's name for a turn (Provenance) is given to every note the turn makes, when it is
made: nothing re-stamps notes afterwards (docs/memory-model.md, Provenance)."""
from __future__ import annotations

import pytest

from memory.models import AuditEvent, AuditLog, Note
from remember.turns import enqueue_turn_extraction, process_turn
from remember.drafts import Provenance, is_source_tag
from tests.remember.conftest import LAPTOP_REPLY, LAPTOP_USER

FOLLOW_UP = "我在2024年3月20日把笔记本电脑送到商家维修点，商家说花屏是人为损坏，拒绝免费维修。"
FOLLOW_UP_REPLY = "商家主张人为损坏应当举证。建议保留维修单和聊天记录，并申请第三方检测。"


def test_notes_are_created_with_the_callers_source_id_and_tags(world, laptop_conversation, make_turn):
    earlier = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)  # a plain chat turn first
    earlier_notes = set(Note.objects.filter(source_id=f"turn:{earlier.pk}").values_list("pk", flat=True))
    assert earlier_notes

    user, reply = make_turn.save(laptop_conversation, FOLLOW_UP, FOLLOW_UP_REPLY)
    turn = enqueue_turn_extraction(user, reply)
    done = process_turn(turn.pk, provenance=Provenance("case-file-7:turn-2", ("event:送修",)))
    assert done.status == "done"

    made = list(Note.objects.exclude(pk__in=earlier_notes))
    assert made
    assert not Note.objects.filter(source_id=f"turn:{turn.pk}").exists()
    for note in made:
        assert note.source_id == "case-file-7:turn-2"
        assert [t for t in note.tags if is_source_tag(t)] == ["event:送修"]
        created = AuditLog.objects.get(object_type="note", object_id=str(note.pk), event_type=AuditEvent.NOTE_CREATED)
        assert (created.after["source_id"], "event:送修" in created.after["tags"]) == ("case-file-7:turn-2", True)
    # a source tag describes where a note came from: evolution never hands it to the earlier notes
    for note in Note.objects.filter(pk__in=earlier_notes):
        assert not any(is_source_tag(t) for t in note.tags), note.tags
        assert note.source_id == f"turn:{earlier.pk}"


def test_without_a_name_the_pipeline_names_the_source_after_its_job(world, laptop_conversation, make_turn):
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    notes = Note.objects.filter(conversation=laptop_conversation)
    assert notes.exists()
    assert {n.source_id for n in notes} == {f"turn:{turn.pk}"}
    assert not any(is_source_tag(t) for n in notes for t in n.tags)


@pytest.mark.parametrize("tag", ["送修", "event:", ":送修"])
def test_a_source_tag_must_name_its_kind(tag):
    with pytest.raises(ValueError, match="names its kind"):
        Provenance("x", (tag,))
