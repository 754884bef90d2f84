"""The matter chronology (issue 54, part 3): a matter's facts by the date they held, the
replaced value struck through with when, by whom and by what, contradictions side by side,
"as of" a date as the memory stood then; Markdown, CSV and the API say the same; alice sees her
matter, bob (same firm, walled) and charlie (another firm) get a 404 at every date."""
from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.utils import timezone

from chronology.exports import to_csv, to_markdown
from chronology.selectors import matter_chronology, parse_as_of
from memory.as_of import BadDate
from memory.models import AuditEvent, AuditLog, Note
from memory.services.notes import supersede_note


def _by_note(chronology):
    return {entry.note_id: entry for entry in chronology.entries}


def test_facts_sit_at_the_dates_their_words_state_and_the_replaced_value_is_struck_through(world, deposit):
    lease, old, new = deposit
    chronology = matter_chronology(world.alice, world.matter_deposit.pk)
    lease_days = [(e.on.isoformat(), e.dated_by, e.date_words) for e in chronology.entries if e.note_id == str(lease.pk)]
    assert lease_days == [("2025-03-15", "words", "去年3月15日"), ("2027-03-14", "words", "2027年3月14日")]
    entries = _by_note(chronology)
    assert entries[str(new.pk)].current and entries[str(new.pk)].dated_by == "said"
    replaced = entries[str(old.pk)]
    assert not replaced.current
    assert replaced.replacement.by == "alice" and replaced.replacement.content == new.content
    assert replaced.replacement.at is not None
    ordered = [e.note_id for e in chronology.entries]
    assert ordered.index(str(lease.pk)) < ordered.index(str(old.pk)) < ordered.index(str(new.pk))
    assert all(e.source_url for e in chronology.entries)


def test_as_of_before_the_correction_shows_the_old_value_current_and_before_a_note_existed_nothing(world, deposit):
    lease, old, new = deposit
    corrected_at = _by_note(matter_chronology(world.alice, world.matter_deposit.pk))[str(old.pk)].replacement.at
    before = matter_chronology(world.alice, world.matter_deposit.pk, as_of=corrected_at - timedelta(microseconds=1))
    then = _by_note(before)
    assert then[str(old.pk)].current and then[str(old.pk)].replacement is None
    assert str(new.pk) in then  # stored just before the correction linked them
    Note.objects.filter(pk=new.pk).update(stored_at=corrected_at + timedelta(seconds=1))
    assert str(new.pk) not in _by_note(matter_chronology(world.alice, world.matter_deposit.pk, as_of=corrected_at))
    first = min(n.stored_at for n in Note.objects.filter(matter=world.matter_deposit))
    assert matter_chronology(world.alice, world.matter_deposit.pk, as_of=first - timedelta(seconds=1)).entries == []


def test_contradicting_current_values_name_each_other(world, contradicting_deposit):
    old, new = contradicting_deposit
    entries = _by_note(matter_chronology(world.alice, world.matter_deposit.pk))
    assert entries[str(old.pk)].conflicts == ((str(new.pk), new.content),)
    assert entries[str(new.pk)].conflicts == ((str(old.pk), old.content),)


def test_bob_and_charlie_get_a_404_for_the_matter_at_every_date(world, deposit, client):
    from django.http import Http404

    for user in (world.bob, world.charlie):
        for as_of in (None, timezone.now() - timedelta(days=5)):
            with pytest.raises(Http404):
                matter_chronology(user, world.matter_deposit.pk, as_of=as_of)
        client.force_login(user)
        for url in (f"/matters/{world.matter_deposit.pk}/chronology/", f"/matters/{world.matter_deposit.pk}/chronology.md",
                    f"/matters/{world.matter_deposit.pk}/chronology.csv", f"/api/matters/{world.matter_deposit.pk}/chronology/",
                    f"/matters/{world.matter_deposit.pk}/chronology/?as_of=2026-01-01"):
            assert client.get(url).status_code == 404, (user.username, url)
    assert not AuditLog.objects.filter(event_type=AuditEvent.CHRONOLOGY_EXPORTED).exists()
    client.logout()
    assert client.get(f"/matters/{world.matter_deposit.pk}/chronology/").status_code == 302  # to the login page


def test_the_page_the_exports_and_the_api_say_the_same_and_exports_are_audited(world, deposit, client):
    lease, old, new = deposit
    client.force_login(world.alice)
    page = client.get(f"/matters/{world.matter_deposit.pk}/chronology/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert page.status_code == 200
    html = page.content.decode()
    assert f"<del>{old.content}</del>" in html and "案件时间线" in html and "由 alice 更正为" in html

    markdown = client.get(f"/matters/{world.matter_deposit.pk}/chronology.md").content.decode()
    assert "~~林晓雯交的押金是2000元。~~" in markdown and "林晓雯交的押金是3000元。" in markdown
    rows = list(csv.reader(io.StringIO(client.get(f"/matters/{world.matter_deposit.pk}/chronology.csv")
                                       .content.decode("utf-8-sig"))))
    assert len(rows) == 1 + len(matter_chronology(world.alice, world.matter_deposit.pk).entries)
    api = client.get(f"/api/matters/{world.matter_deposit.pk}/chronology/").json()
    states = {e["note_id"]: e["state"] for e in api["entries"]}
    assert states[str(old.pk)] == "superseded" and states[str(new.pk)] == "current"
    exported = AuditLog.objects.filter(event_type=AuditEvent.CHRONOLOGY_EXPORTED, actor_id=world.alice.pk)
    assert sorted(e.after["format"] for e in exported) == ["csv", "markdown"]
    assert {e.matter_id for e in exported} == {world.matter_deposit.pk}


@pytest.mark.parametrize("as_of, words", [
    ("2026-02-30", "不是日期"), ("yesterday", "不是日期"), ("2999-01-01", "将来"), ("1999-01-01", "早于本所记忆"),
    ("2026-01-01T25:00", "不是日期"), ("'; DROP TABLE memory_note; --", "不是日期"),
])
def test_a_bad_as_of_is_a_clear_400_in_the_users_language(world, deposit, client, as_of, words):
    client.force_login(world.alice)
    page = client.get(f"/matters/{world.matter_deposit.pk}/chronology/", {"as_of": as_of},
                      HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert page.status_code == 400 and words in page.content.decode()
    api = client.get(f"/api/matters/{world.matter_deposit.pk}/chronology/", {"as_of": as_of},
                     HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert api.status_code == 400 and words in api.json()["as_of"][0]
    assert client.get(f"/matters/{world.matter_deposit.pk}/chronology.csv", {"as_of": as_of}).status_code == 400
    assert Note.objects.filter(matter=world.matter_deposit).count() == 3


def test_as_of_a_day_means_the_end_of_that_day(world):
    from memory.models import Firm

    Firm.objects.filter(pk=world.firm_a.pk).update(created_at=timezone.now() - timedelta(days=2000))
    world.matter_deposit.firm.refresh_from_db()
    moment = parse_as_of("2026-03-01", world.matter_deposit)
    local = timezone.localtime(moment)
    assert (local.year, local.month, local.day, local.hour, local.minute) == (2026, 3, 1, 23, 59)
    assert parse_as_of("", world.matter_deposit) is None
    with pytest.raises(BadDate):
        parse_as_of("2026-13-01", world.matter_deposit)


def test_text_from_a_conversation_is_never_markdown_structure_or_a_spreadsheet_formula(world):
    world.note("=HYPERLINK(\"http://evil\") | # 标题 [链接](http://x) 押金2000元", matter=world.matter_deposit)
    chronology = matter_chronology(world.alice, world.matter_deposit.pk)
    markdown = to_markdown(chronology)
    assert "\\# 标题 \\[链接\\]" in markdown and "\\|" in markdown
    [header, row] = list(csv.reader(io.StringIO(to_csv(chronology).lstrip("\ufeff"))))
    assert row[4].startswith("'=HYPERLINK")


def test_an_erased_subject_is_on_no_date_and_the_page_says_nothing_of_it(world, deposit, client):
    from records.erasure_plan import subject_unit
    from records.services.erasure import erase

    corrected_at = _by_note(matter_chronology(world.alice, world.matter_deposit.pk))[str(deposit[1].pk)].replacement.at
    erase(subject_unit(world.firm_a, "林晓雯"), actor=world.alice, reason="data subject request")
    for as_of in (None, corrected_at - timedelta(seconds=1), corrected_at + timedelta(seconds=1)):
        assert matter_chronology(world.alice, world.matter_deposit.pk, as_of=as_of).entries == []
    client.force_login(world.alice)
    page = client.get(f"/matters/{world.matter_deposit.pk}/chronology/",
                      {"as_of": f"{timezone.localtime(corrected_at):%Y-%m-%d}"}).content.decode()
    assert "林晓雯" not in page and "2000" not in page


def test_a_value_replaced_by_a_note_the_reader_may_not_see_is_not_quoted(world):
    """bob sees the laptop matter; its value was replaced by a note of the deposit matter he is
    walled from: his chronology says it was replaced, never what with."""
    old = world.note("笔记本电脑的维修押金是500元。", matter=world.matter_laptop)
    walled = world.note("陈露的押金是8800元（保密）。", matter=world.matter_deposit)
    supersede_note(old, walled, actor="system:test", reason="test")
    [entry] = [e for e in matter_chronology(world.bob, world.matter_laptop.pk).entries if e.note_id == str(old.pk)]
    assert not entry.current and entry.replacement.content == "" and entry.replacement.note_id is None
    [seen] = [e for e in matter_chronology(world.alice, world.matter_laptop.pk).entries if e.note_id == str(old.pk)]
    assert seen.replacement.content == walled.content
