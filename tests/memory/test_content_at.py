"""A note corrected in place reads, at a moment before the correction, in the wording it had then
(``Note.content_at``): the search, *My memory* and its API and the chronology "as of" that moment
show what the memory said then, not the later wording; a history step an erasure redacted gives
no wording back. bob (walled from the matter) sees neither wording at any moment."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from chronology.selectors import matter_chronology
from memory.models import Note
from memory.services.notes import correct_note
from recall import search_memory
from tests.clients import client_for

pytestmark = pytest.mark.django_db

OLD, MIDDLE, NEW = "林晓雯交的押金是2000元。", "林晓雯交的押金是2500元。", "林晓雯交的押金是3000元。"


@pytest.fixture
def corrected(world):
    """The deposit note as first written, corrected twice by alice: (note, a moment before the
    first correction, a moment between the two)."""
    note = world.note(OLD, matter=world.matter_deposit, speaker="林晓雯")
    before = timezone.now()
    correct_note(note, {"content": MIDDLE}, actor=world.alice, reason="更正")
    between = timezone.now()
    correct_note(note, {"content": NEW}, actor=world.alice, reason="再次更正")
    return Note.objects.get(pk=note.pk), before, between


def test_the_wording_at_each_moment(corrected):
    note, before, between = corrected
    assert [note.content_at(before), note.content_at(between), note.content_at(timezone.now()),
            note.content_at(None)] == [OLD, MIDDLE, NEW, NEW]


def test_a_step_an_erasure_redacted_gives_no_wording_back(corrected):
    note, before, between = corrected
    note.evolution_history = [{"at": step["at"], "event": step["event"], "redacted_by": 1}
                              for step in note.evolution_history]
    assert note.content_at(before) == NEW


def test_the_search_the_notes_api_and_the_chronology_read_the_wording_of_then(world, corrected):
    note, before, between = corrected
    hits = search_memory(world.alice, "林晓雯的押金是多少？", k=5, as_of=before).hits
    assert [h.note.content for h in hits if h.note is not None and h.note.pk == note.pk] == [OLD]
    client = client_for(world.alice)
    listed = client.get("/api/memory/notes/", {"as_of": between.isoformat(), "matter": world.matter_deposit.pk}).json()
    assert [n["content"] for n in listed["results"] if n["id"] == str(note.pk)] == [MIDDLE]
    now = client.get("/api/memory/notes/", {"matter": world.matter_deposit.pk}).json()
    assert [n["content"] for n in now["results"] if n["id"] == str(note.pk)] == [NEW]
    page = client.get("/memory/", {"as_of": f"{timezone.localdate():%Y-%m-%d}"})
    assert NEW in page.content.decode()  # the end of today: after both corrections
    then = matter_chronology(world.alice, world.matter_deposit.pk, as_of=before)
    assert [e.content for e in then.entries if e.note_id == str(note.pk)][:1] == [OLD]
    assert Note.objects.get(pk=note.pk).content == NEW  # nothing was saved


def test_bob_sees_no_wording_of_the_walled_matter_at_any_moment(world, corrected):
    note, before, between = corrected
    for moment in (before, between, timezone.now() - timedelta(seconds=1)):
        hits = search_memory(world.bob, "林晓雯的押金是多少？", k=10, as_of=moment).hits
        assert note.pk not in {h.note.pk for h in hits if h.note is not None}
        listed = client_for(world.bob).get("/api/memory/notes/", {"as_of": moment.isoformat()}).json()
        assert str(note.pk) not in {n["id"] for n in listed["results"]}
