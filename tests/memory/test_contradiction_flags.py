"""Contradicting notes are flagged on the my-memory list and note page and in admin, for those
who may see both — alice (assigned), never bob (same firm, walled off from the deposit matter)
or charlie (another firm); and the my-memory search list is sorted by the relevance it shows."""
from __future__ import annotations

import re

import pytest

from tests.clients import client_for

pytestmark = pytest.mark.django_db


def test_my_memory_flags_both_notes_for_alice(world, contradicting_deposit):
    old, new = contradicting_deposit
    client = client_for(world.alice)
    client.cookies["django_language"] = "zh-hans"
    page = client.get("/memory/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert page.count("说法矛盾") == 2
    assert "较新的一条笔记说法不同" in page and "较早的一条笔记说法不同" in page
    detail = client.get(f"/memory/{old.pk}/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "较新的一条笔记说法不同" in detail and f"/memory/{new.pk}/" in detail


def test_my_memory_flag_in_english(world, contradicting_deposit):
    old, _new = contradicting_deposit
    page = client_for(world.alice).get(f"/memory/{old.pk}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "A newer note says otherwise:" in page


def test_outsiders_see_neither_note_nor_flag(world, contradicting_deposit):
    old, new = contradicting_deposit
    for outsider in (world.bob, world.charlie):
        client = client_for(outsider)
        page = client.get("/memory/").content.decode()
        assert str(old.pk) not in page and str(new.pk) not in page and "2000元押金" not in page
        assert client.get(f"/memory/{old.pk}/").status_code == 404


def test_admin_flags_both_in_the_list_and_on_the_note(world, contradicting_deposit):
    old, new = contradicting_deposit
    client = client_for(world.alice)
    listing = client.get("/admin/memory/note/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert listing.count("class='conflict'") == 2
    change = client.get(f"/admin/memory/note/{new.pk}/change/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert 'id="contradictions"' in change and "较早的一条笔记说法不同" in change
    assert "同一事项前后说法不一（3000 与 2000）" in change  # the link's reason in words
    charlie = client_for(world.charlie)
    assert charlie.get(f"/admin/memory/note/{new.pk}/change/").status_code == 404
    assert "class='conflict'" not in charlie.get("/admin/memory/note/").content.decode()


def test_a_correction_in_my_memory_removes_the_flag(world, contradicting_deposit):
    old, _new = contradicting_deposit
    client = client_for(world.alice)
    response = client.post(f"/memory/{old.pk}/correct/", {"content": "房东起初要扣2000元押金，后改口为3000元。",
                                                         "category": "fact", "reason": "核实"})
    assert response.status_code == 302
    assert "class=\"badge conflict\"" not in client.get("/memory/").content.decode()


def test_my_memory_search_is_sorted_by_the_relevance_it_shows(world, contradicting_deposit, memory_notes):
    page = client_for(world.alice).get("/memory/", {"q": "押金 墙面 污渍"}).content.decode()
    shown = [float(value) for value in re.findall(r'<td class="relevance">([0-9.]+)</td>', page)]
    assert len(shown) >= 2
    assert shown == sorted(shown, reverse=True)
