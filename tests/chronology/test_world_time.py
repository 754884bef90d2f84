"""The chronology "valid at" a day (world time, issue 54): the facts whose value held then as the
memory knows them now — a value replaced later shown as it held, with when, by whom and with what
it was replaced — beside "as of" (system time), either or both; the page, the Markdown and CSV
exports and the API say the same; a bad date is a 400 in the reader's language; bob (walled) and
charlie (another firm) get a 404 at every date."""
from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

import pytest
from django.db.models import F
from django.http import Http404
from django.utils import timezone

from chronology.selectors import matter_chronology, parse_valid_at
from memory.models import AuditEvent, AuditLog, Firm, Note

CJK = re.compile(r"[\u4e00-\u9fff]")


def _by_note(chronology):
    return {entry.note_id: entry for entry in chronology.entries if entry.kind == "fact"}


def _day(days_ago: int) -> str:
    return f"{timezone.localdate() - timedelta(days=days_ago):%Y-%m-%d}"


@pytest.fixture
def recorded_when_said(world, deposit):
    """The deposit notes recorded when they were said, as in a live first hour (system time then
    tells something apart from world time), the firm's memory begun a year ago."""
    lease, old, new = deposit
    Firm.objects.filter(pk=world.firm_a.pk).update(created_at=timezone.now() - timedelta(days=365))
    world.matter_deposit.firm.refresh_from_db()
    Note.objects.filter(pk__in=[old.pk, new.pk]).update(stored_at=F("said_at"))
    Note.objects.filter(pk=old.pk).update(retired_at=new.said_at)
    return lease, old, new


def test_valid_at_shows_the_value_that_held_then_and_not_the_later_one(world, deposit):
    lease, old, new = deposit
    then = _by_note(matter_chronology(world.alice, world.matter_deposit.pk, valid_at=parse_valid_at(_day(5))))
    assert str(new.pk) not in then  # said two days ago: it did not hold five days ago
    held = then[str(old.pk)]
    assert held.current and held.state == "replaced_later"  # shown as it held, not struck through
    assert held.replacement.by == "alice" and held.replacement.content == new.content
    assert held.replacement.held_until == Note.objects.get(pk=old.pk).valid_to
    assert then[str(lease.pk)].current and then[str(lease.pk)].replacement is None

    today = _by_note(matter_chronology(world.alice, world.matter_deposit.pk, valid_at=parse_valid_at(_day(0))))
    assert str(old.pk) not in today and today[str(new.pk)].state == "current"
    assert matter_chronology(world.alice, world.matter_deposit.pk, valid_at=parse_valid_at("2026-02-01")).entries == []


def test_valid_at_on_the_page_the_exports_and_the_api(world, deposit, client):
    lease, old, new = deposit
    client.force_login(world.alice)
    url = f"/matters/{world.matter_deposit.pk}"
    page = client.get(f"{url}/chronology/", {"valid_at": _day(5)}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    html = page.content.decode()
    assert page.status_code == 200
    assert f"{_day(5)} 实际有效的事实" in html and 'class="as-of-chip"' in html  # the chip says which
    assert f'data-note="{old.pk}"' in html and f'data-note="{new.pk}"' not in html
    assert f"<del>{old.content}</del>" not in html and "当时有效，之后被更正" in html
    assert f"由 alice 更正为：{new.content}" in html
    assert f"chronology.csv?valid_at={_day(5)}" in html  # the exports keep the day

    english = client.get(f"{url}/chronology/", {"valid_at": _day(5)}, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert f"As it held in the world on {_day(5)}" in english and "held then, replaced later" in english

    api = client.get(f"/api{url}/chronology/", {"valid_at": _day(5)}).json()
    assert api["valid_at"] and api["as_of"] is None
    states = {e["note_id"]: e["state"] for e in api["entries"] if e["kind"] == "fact"}
    assert states[str(old.pk)] == "replaced_later" and str(new.pk) not in states

    markdown = client.get(f"{url}/chronology.md", {"valid_at": _day(5)}).content.decode()
    assert "~~" not in markdown and old.content in markdown and "当时有效，之后被更正" in markdown
    response = client.get(f"{url}/chronology.csv", {"valid_at": _day(5)})
    assert f"held-at-{_day(5)}" in response["Content-Disposition"]
    header, *rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert header[-1] == "类型" and {row[-1] for row in rows} == {"fact"}
    [replaced] = [row for row in rows if row[4] == old.content]
    assert replaced[7] == "当时有效，之后被更正" and replaced[10] == new.content
    exported = AuditLog.objects.filter(event_type=AuditEvent.CHRONOLOGY_EXPORTED).order_by("pk")
    assert [e.after["valid_at"] is not None for e in exported] == [True, True]


def test_as_of_and_valid_at_together_read_the_world_as_the_memory_knew_it_then(world, recorded_when_said, client):
    """Five days ago the memory held the 2000 with no successor: as it knew it then, the 2000 held
    today too. Known yesterday (after the correction), the 2000 held five days ago and was replaced
    later; today alone it no longer holds."""
    lease, old, new = recorded_when_said
    known_then = _by_note(matter_chronology(world.alice, world.matter_deposit.pk,
                                            as_of=parse_valid_at(_day(5)), valid_at=parse_valid_at(_day(0))))
    assert known_then[str(old.pk)].state == "current" and str(new.pk) not in known_then
    now_known = _by_note(matter_chronology(world.alice, world.matter_deposit.pk, valid_at=parse_valid_at(_day(0))))
    assert str(old.pk) not in now_known and str(new.pk) in now_known

    client.force_login(world.alice)
    api = client.get(f"/api/matters/{world.matter_deposit.pk}/chronology/",
                     {"as_of": _day(1), "valid_at": _day(5)}).json()
    assert api["as_of"] and api["valid_at"]
    entries = {e["note_id"]: e for e in api["entries"] if e["kind"] == "fact"}
    assert entries[str(old.pk)]["state"] == "replaced_later" and str(new.pk) not in entries
    html = client.get(f"/matters/{world.matter_deposit.pk}/chronology/", {"as_of": _day(5), "valid_at": _day(0)},
                      HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert f"本所记忆截至 {_day(5)}" in html and f"{_day(0)} 实际有效的事实" in html
    assert f'data-note="{old.pk}"' in html and "当时有效，之后被更正" not in html


@pytest.mark.parametrize("query", [{"valid_at": "2026-01-01"}, {"valid_at": "2026-01-01", "as_of": "2026-06-01"},
                                   {"valid_at": "2026-02-30"}])
def test_bob_and_charlie_get_a_404_at_every_world_date(world, deposit, client, query):
    for user in (world.bob, world.charlie):
        with pytest.raises(Http404):
            matter_chronology(user, world.matter_deposit.pk, valid_at=parse_valid_at("2026-01-01"))
        client.force_login(user)
        for path in ("chronology/", "chronology.md", "chronology.csv"):
            assert client.get(f"/matters/{world.matter_deposit.pk}/{path}", query).status_code == 404, (user, path)
        assert client.get(f"/api/matters/{world.matter_deposit.pk}/chronology/", query).status_code == 404
    assert not AuditLog.objects.filter(event_type=AuditEvent.CHRONOLOGY_EXPORTED).exists()


@pytest.mark.parametrize("valid_at", ["2026-02-30", "2月30日", "yesterday", "2026-13-01", "2026-01-01T25:00",
                                      "'; DROP TABLE memory_note; --"])
def test_a_bad_valid_at_is_a_400_and_a_form_error_in_the_readers_language(world, deposit, client, valid_at):
    client.force_login(world.alice)
    url = f"/matters/{world.matter_deposit.pk}"
    page = client.get(f"{url}/chronology/", {"valid_at": valid_at}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    html = page.content.decode()
    assert page.status_code == 400
    assert re.search(r'<p class="error" role="alert">[^<]*不是日期[^<]*</p>', html)
    assert 'class="chronology"' not in html  # nothing is read
    api = client.get(f"/api{url}/chronology/", {"valid_at": valid_at}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert api.status_code == 400 and "不是日期" in api.json()["valid_at"][0] and "as_of" not in api.json()
    english = client.get(f"/api{url}/chronology/", {"valid_at": valid_at}, HTTP_ACCEPT_LANGUAGE="en").json()
    assert "is not a date" in english["valid_at"][0]
    assert not CJK.search(english["valid_at"][0].replace(valid_at[:40], ""))
    csv_response = client.get(f"{url}/chronology.csv", {"valid_at": valid_at}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert csv_response.status_code == 400 and "不是日期" in csv_response.content.decode()
    assert not AuditLog.objects.filter(event_type=AuditEvent.CHRONOLOGY_EXPORTED).exists()


def test_a_valid_at_may_be_any_real_date_and_both_bad_dates_are_said(world, deposit, client):
    client.force_login(world.alice)
    url = f"/api/matters/{world.matter_deposit.pk}/chronology/"
    for day in ("1999-01-01", "2999-12-31"):  # before the firm's memory, and in the future: a world date
        assert client.get(url, {"valid_at": day}).status_code == 200
    assert client.get(url, {"as_of": "2999-12-31"}).status_code == 400  # the memory's own time is refused
    both = client.get(url, {"as_of": "2026-02-30", "valid_at": "2026-02-30"}, HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    assert set(both) == {"as_of", "valid_at"}
    page = client.get(f"/matters/{world.matter_deposit.pk}/chronology/", {"as_of": "2999-01-01", "valid_at": "x"},
                      HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "将来" in page and "不是日期" in page
