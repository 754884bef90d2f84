"""*My memory* as of a date (issue 54): the page's date control and ``GET /api/memory/notes/?as_of=``
list the notes as they stood then — the deposit before alice corrected it, marked as superseded
later — through the same rule as now (``Note.objects.in_state``); bob and charlie see nothing of
the matter at any date; a bad date is said in the reader's language."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.models import Firm, Note
from memory.services.notes import forget_note, supersede_note
from tests.clients import client_for


@pytest.fixture
def corrected(world):
    Firm.objects.filter(pk__in=[world.firm_a.pk, world.firm_b.pk]).update(created_at=timezone.now() - timedelta(days=30))
    old = world.note("林晓雯交的押金是2000元。", matter=world.matter_deposit, owner=world.alice)
    between = timezone.now()
    new = world.note("林晓雯交的押金是3000元。", matter=world.matter_deposit, owner=world.alice)
    supersede_note(old, new, actor=world.alice, reason="更正")
    return Note.objects.get(pk=old.pk), new, between


def _ids(response) -> set[str]:
    return {note["id"] for note in response.json()["results"]} if "results" in response.json() \
        else {note["id"] for note in response.json()}


def test_the_page_as_of_a_moment_lists_the_old_value_marked_superseded_later(world, corrected, client):
    old, new, between = corrected
    client.force_login(world.alice)
    page = client.get("/memory/", {"as_of": between.isoformat()}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    html = page.content.decode()
    assert page.status_code == 200
    assert old.content in html and new.content not in html and "之后于" in html
    now = client.get("/memory/").content.decode()
    assert new.content in now and old.content not in now


def test_the_api_as_of_a_moment_and_the_status_filter_agree(world, corrected):
    old, new, between = corrected
    api = client_for(world.alice)
    assert _ids(api.get("/api/memory/notes/", {"as_of": between.isoformat()})) == {str(old.pk)}
    assert _ids(api.get("/api/memory/notes/", {"as_of": between.isoformat(), "status": "superseded"})) == set()
    assert _ids(api.get("/api/memory/notes/", {"status": "superseded"})) == {str(old.pk)}
    assert _ids(api.get("/api/memory/notes/")) == {str(new.pk)}
    forget_note(Note.objects.get(pk=new.pk), user=world.alice)
    later = timezone.now() + timedelta(seconds=1)
    assert _ids(api.get("/api/memory/notes/", {"as_of": later.isoformat()})) == set()  # forgotten: on no date
    assert _ids(api.get("/api/memory/notes/", {"as_of": later.isoformat(), "status": "forgotten"})) == set()


def test_bob_and_charlie_see_nothing_of_the_matter_at_any_date(world, corrected, client):
    old, new, between = corrected
    for user in (world.bob, world.charlie):
        for as_of in (between.isoformat(), timezone.now().isoformat()):
            assert not _ids(client_for(user).get("/api/memory/notes/", {"as_of": as_of})) & {str(old.pk), str(new.pk)}
        client.force_login(user)
        html = client.get("/memory/", {"as_of": between.isoformat()}).content.decode()
        assert "押金" not in html


@pytest.mark.parametrize("as_of, words", [("2026-02-30", "不是日期"), ("2999-01-01", "将来"), ("2001-01-01", "早于本所记忆")])
def test_a_bad_date_is_said_in_the_readers_language(world, corrected, client, as_of, words):
    client.force_login(world.alice)
    page = client.get("/memory/", {"as_of": as_of}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert page.status_code == 400 and words in page.content.decode()
    api = client_for(world.alice).get("/api/memory/notes/", {"as_of": as_of}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert api.status_code == 400 and words in api.json()["as_of"][0]
