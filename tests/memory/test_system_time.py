"""System time (issue 54, part 1): when the memory learned a note (``stored_at``) and when it left
the current memory (``retired_at``: superseded, forgotten; cleared by a restore) — columns that
replaying the append-only audit log gives back, and the "as of" reads built on them."""
from __future__ import annotations

import importlib
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

from memory.models import Note
from memory.selectors import system_times_from_audit
from memory.services.notes import forget_note, restore_forgotten_note, supersede_note

CLOSE = timedelta(seconds=2)  # a column and its audit entry are written in one transaction


def _close(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) < CLOSE)


def _lives(world):
    """Four notes with four histories: superseded; forgotten; forgotten then restored; superseded,
    forgotten and restored (superseded again)."""
    matter = world.matter_deposit
    superseded = world.note("押金是2000元。", matter=matter, owner=world.alice)
    replacement = world.note("押金是3000元。", matter=matter, owner=world.alice)
    supersede_note(superseded, replacement, actor=world.alice, reason="更正")
    forgotten = world.note("房东姓周。", matter=matter, owner=world.alice)
    forget_note(forgotten, user=world.alice, reason="不需要")
    restored = world.note("租期一年。", matter=matter, owner=world.alice)
    forget_note(restored, user=world.alice)
    restore_forgotten_note(restored, actor="auditor")
    twice = world.note("月租4200元。", matter=matter, owner=world.alice)
    newer = world.note("月租4500元。", matter=matter, owner=world.alice)
    supersede_note(twice, newer, actor=world.alice, reason="涨租")
    forget_note(Note.objects.get(pk=twice.pk), user=world.alice)
    restore_forgotten_note(Note.objects.get(pk=twice.pk), actor="auditor")
    return {name: Note.objects.get(pk=note.pk) for name, note in (
        ("superseded", superseded), ("replacement", replacement), ("forgotten", forgotten),
        ("restored", restored), ("twice", twice), ("newer", newer))}


def test_replaying_the_audit_gives_the_columns_back(world):
    notes = _lives(world)
    assert notes["superseded"].retired_at and notes["forgotten"].retired_at and notes["twice"].retired_at
    assert notes["restored"].retired_at is None and notes["replacement"].retired_at is None
    replayed = system_times_from_audit([n.pk for n in notes.values()])
    for name, note in notes.items():
        stored, retired = replayed[str(note.pk)]
        assert _close(stored, note.stored_at), name
        assert _close(retired, note.retired_at), (name, retired, note.retired_at)
    # restored to superseded: retired when it was superseded, not when it was forgotten
    assert notes["twice"].status == Note.Status.SUPERSEDED
    step = next(s for s in notes["twice"].evolution_history if s["event"] == "superseded")
    assert abs(notes["twice"].retired_at - datetime.fromisoformat(step["at"])) < CLOSE


def test_as_of_is_the_memory_as_it_stood(world):
    before = timezone.now()
    old = world.note("押金是2000元。", matter=world.matter_deposit)
    stored = timezone.now()
    new = world.note("押金是3000元。", matter=world.matter_deposit)
    between = timezone.now()
    supersede_note(old, new, actor=world.alice, reason="更正")
    after = timezone.now()
    mine = Note.objects.filter(matter=world.matter_deposit)
    assert set(mine.as_of(before)) == set()
    assert set(mine.as_of(stored)) == {old}
    assert set(mine.as_of(between)) == {old, new}
    assert set(mine.as_of(after)) == {new}
    assert set(mine.known_at(after)) == {old, new}
    forget_note(Note.objects.get(pk=new.pk), user=world.alice)
    assert set(mine.as_of(between)) == {old}  # a forgotten note is on no date
    # the walls hold at every date
    for moment in (stored, between, after):
        assert not Note.objects.visible_to(world.bob).filter(matter=world.matter_deposit).as_of(moment).exists()
        assert not Note.objects.visible_to(world.charlie).as_of(moment).exists()


def test_the_migration_fills_in_notes_retired_before_the_column_existed(world):
    old = world.note("押金是2000元。", matter=world.matter_deposit)
    new = world.note("押金是3000元。", matter=world.matter_deposit)
    supersede_note(old, new, actor=world.alice, reason="更正")
    retired = Note.objects.get(pk=old.pk).retired_at
    Note.objects.filter(pk=old.pk).update(retired_at=None)
    migration = importlib.import_module("memory.migrations.0034_note_retired_at")
    with connection.cursor() as cursor:
        cursor.execute(migration.BACKFILL)
    assert _close(Note.objects.get(pk=old.pk).retired_at, retired)
    assert Note.objects.get(pk=new.pk).retired_at is None
