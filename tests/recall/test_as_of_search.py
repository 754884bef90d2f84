"""Search "as of" a date (issue 54, part 2): the notes current in memory then — a corrected deposit
answers with the old value and says when it was superseded; now it answers with the new one. The
web API and the MCP tool take ``as_of`` alike; bob (walled) and charlie (another firm) get
nothing of the matter at any date; a bad date is a clear error in the reader's language."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from memory.models import Firm, Note
from memory.services.notes import supersede_note
from recall import search_memory
from tests.clients import client_for
from tests.connectors.conftest import make_token, mcp_calls

QUESTION = "林晓雯的押金是多少？"


@pytest.fixture
def corrected(world):
    """The deposit said as 2000, then corrected to 3000 by alice: (old, new, a moment between)."""
    Firm.objects.filter(pk__in=[world.firm_a.pk, world.firm_b.pk]).update(created_at=timezone.now() - timedelta(days=30))
    old = world.note("林晓雯交的押金是2000元。", matter=world.matter_deposit, speaker="林晓雯")
    between = timezone.now()
    new = world.note("林晓雯交的押金是3000元。", matter=world.matter_deposit, speaker="林晓雯")
    supersede_note(old, new, actor=world.alice, reason="刚才说错了，押金是3000不是2000")
    return Note.objects.get(pk=old.pk), new, between


def _post(user, body: dict, language: str = "zh-hans"):
    return client_for(user).post("/api/memory/search", data=json.dumps(body), content_type="application/json",
                                 HTTP_ACCEPT_LANGUAGE=language)


def test_as_of_before_the_correction_answers_with_the_old_value_and_says_it_was_superseded(world, corrected):
    old, new, between = corrected
    then = search_memory(world.alice, QUESTION, k=5, as_of=between)
    assert [h.note.pk for h in then.hits] == [old.pk]  # the 3000 was not yet said
    assert any("之后于" in r or "superseded later" in r for r in then.hits[0].reasons)
    assert then.passages == [] and then.hits[0].note.retired_at > between
    now = search_memory(world.alice, QUESTION, k=5)
    assert now.hits[0].note.pk == new.pk and old.pk not in [h.note.pk for h in now.hits if h.note is not None]
    body = _post(world.alice, {"query": QUESTION, "as_of": between.isoformat()}).json()
    assert body["hits"][0]["note"]["id"] == str(old.pk) and body["hits"][0]["note"]["retired_at"]


def test_before_anything_was_said_there_is_nothing(world, corrected):
    old, new, between = corrected
    assert search_memory(world.alice, QUESTION, k=5, as_of=old.stored_at - timedelta(seconds=1)).hits == []


def test_bob_and_charlie_get_nothing_of_the_matter_at_any_date(world, corrected):
    old, new, between = corrected
    for user in (world.bob, world.charlie):
        for as_of in (between, timezone.now()):
            hits = search_memory(user, QUESTION, k=10, as_of=as_of).hits
            assert not {h.note.pk for h in hits if h.note is not None} & {old.pk, new.pk}, user.username


def test_the_mcp_tool_takes_as_of_as_the_web_does(world, corrected):
    old, new, between = corrected
    token = make_token(world.alice).token
    [result] = mcp_calls(token, [("search_memory", {"query": QUESTION, "as_of": between.isoformat()})])
    data = result.structuredContent if result.structuredContent is not None else json.loads(result.content[0].text)
    assert data["hits"][0]["note"]["id"] == str(old.pk)
    [bad] = mcp_calls(token, [("search_memory", {"query": QUESTION, "as_of": "2026-02-30"})], language="zh-hans")
    assert bad.isError and "as_of" in bad.content[0].text and "不是日期" in bad.content[0].text


@pytest.mark.parametrize("as_of, words", [("2026-02-30", "不是日期"), ("2999-01-01", "将来"),
                                          ("2001-01-01", "早于本所记忆"), ("下周", "不是日期")])
def test_a_bad_as_of_is_a_400_in_the_readers_language(world, corrected, as_of, words):
    response = _post(world.alice, {"query": QUESTION, "as_of": as_of})
    assert response.status_code == 400 and words in response.json()["as_of"][0]
    assert Note.objects.filter(matter=world.matter_deposit).count() == 2


def test_both_times_what_held_then_as_the_memory_knew_it_later(world, corrected):
    """valid_at before the correction, as_of after it: the 2000 held then, and the memory already
    knew it was replaced — it is still what held then (not dropped as no longer current)."""
    old, new, between = corrected
    hits = search_memory(world.alice, QUESTION, k=5, as_of=timezone.now(), valid_at=between).hits
    assert [h.note.pk for h in hits] == [old.pk]
    assert [h.note.pk for h in search_memory(world.alice, QUESTION, k=5, as_of=between, valid_at=between).hits] == [old.pk]
