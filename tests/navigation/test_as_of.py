"""The navigation page and its API as of a date (issue 54): the graph of the memory as it stood at
the end of that day — a note written after it absent, a note superseded after it present, edges
only among those notes — behind the same walls as now (bob sees nothing of the deposit matter at
any date, charlie nothing of the firm); an erased note is on no date; a bad date is a 400 on the
API and a form error on the page, in the reader's language."""
from __future__ import annotations

import re
from datetime import timedelta
from html import unescape

import pytest
from django.utils import timezone

from memory.models import Category, Firm, MemoryScope, Note
from memory.services.notes import supersede_note
from navigation import cache
from tests.clients import client_for, logged_in

GRAPH = "/api/navigation/graph"
SEARCH = "/api/navigation/search"
PAGE = "/navigation/"


def trace_url(note_id) -> str:
    return f"/api/navigation/trace/{note_id}"


@pytest.fixture
def history(world):
    """Five days ago: the deposit said as 2000 (deposit matter, alice only), the lease's refund
    term, a law note (firm-wide) and a laptop note (alice and bob). Today: alice corrects the
    deposit to 3000 (the 2000 superseded now) and a new note about the landlord is written.
    ``day``: three days ago, as the date field sends it."""
    Firm.objects.filter(pk__in=[world.firm_a.pk, world.firm_b.pk]).update(created_at=timezone.now() - timedelta(days=30))
    old = world.note("林晓雯交的押金是2000元。", matter=world.matter_deposit, owner=world.alice)
    refund = world.note("租房合同约定押金在退租后七日内退还。", matter=world.matter_deposit, category=Category.EVIDENCE)
    law = world.note("民法典规定租赁物正常损耗由出租人承担。", scope=MemoryScope.GENERAL_LAW, category=Category.LAW)
    laptop = world.note("笔记本电脑购买七天后屏幕出现花屏，商家拒绝退货。", matter=world.matter_laptop)
    then = [old, refund, law, laptop]
    Note.objects.filter(pk__in=[n.pk for n in then]).update(stored_at=timezone.now() - timedelta(days=5))
    new = world.note("林晓雯交的押金是3000元。", matter=world.matter_deposit, owner=world.alice)
    supersede_note(Note.objects.get(pk=old.pk), new, actor=world.alice, reason="押金是3000不是2000")
    later = world.note("房东同意先退还一半押金。", matter=world.matter_deposit)
    day = f"{timezone.localdate() - timedelta(days=3):%Y-%m-%d}"
    return {"old": old, "refund": refund, "law": law, "laptop": laptop, "new": new, "later": later, "day": day}


def ids(*notes: Note) -> set[str]:
    return {str(note.pk) for note in notes}


def graph_of(user, **params) -> dict:
    response = client_for(user).get(GRAPH, {"l0_limit": 5000, **params})
    assert response.status_code == 200, response.content
    return response.json()


def node_ids(graph: dict) -> set[str]:
    return {node["id"] for node in graph["nodes"]}


def test_the_graph_as_of_a_day_is_the_memory_as_it_stood_then(world, history):
    h = history
    past = graph_of(world.alice, as_of=h["day"])
    assert node_ids(past) == ids(h["old"], h["refund"], h["law"], h["laptop"])  # the 2000, not the 3000
    assert past["total_nodes"] == 4
    by_index = {node["i"] for node in past["nodes"]}
    assert past["edges"] and all(edge["s"] in by_index and edge["t"] in by_index for edge in past["edges"])
    assert "3000" not in str(past) and "一半" not in str(past)
    now = graph_of(world.alice)
    assert node_ids(now) == ids(h["refund"], h["law"], h["laptop"], h["new"], h["later"])
    # An ISO moment works the same way; a moment before everything shows nothing.
    assert node_ids(graph_of(world.alice, as_of=timezone.now().isoformat())) == node_ids(now)
    first_day = f"{timezone.localdate() - timedelta(days=29):%Y-%m-%d}"
    assert graph_of(world.alice, as_of=first_day)["total_nodes"] == 0


def test_the_trace_and_the_search_as_of_a_day_run_on_that_days_graph(world, history):
    h = history
    alice = client_for(world.alice)
    found = alice.get(trace_url(h["old"].pk), {"as_of": h["day"]})
    assert found.status_code == 200, found.content
    assert found.json()["note"]["content"] == h["old"].content and found.json()["trace"]["reached"]
    mentioned = {node["id"] for node in found.json()["trace"]["nodes"]}
    assert mentioned <= ids(h["old"], h["refund"], h["law"], h["laptop"])
    assert alice.get(trace_url(h["old"].pk)).status_code == 404  # superseded: not in today's graph
    missing = alice.get(trace_url(h["later"].pk), {"as_of": h["day"]}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert missing.status_code == 404 and "那个时间点的记忆中没有这条笔记" in missing.json()["detail"]
    search = alice.post(SEARCH, {"query": "押金是多少", "k": 10, "as_of": h["day"]}, format="json")
    assert search.status_code == 200, search.content
    hits = {hit["note_id"] for hit in search.json()["hits"]}
    assert str(h["old"].pk) in hits and not hits & ids(h["new"], h["later"])


def test_bob_and_charlie_see_nothing_of_the_walled_matter_at_a_past_date(world, history):
    h = history
    deposit = ids(h["old"], h["refund"], h["new"], h["later"])
    for as_of in (h["day"], None):
        params = {"as_of": as_of} if as_of else {}
        bob = graph_of(world.bob, **params)
        assert not node_ids(bob) & deposit and "押金" not in str(bob)
        assert not node_ids(graph_of(world.charlie, **params)) & (deposit | ids(h["law"], h["laptop"]))
    assert node_ids(graph_of(world.bob, as_of=h["day"])) == ids(h["law"], h["laptop"])
    bob = client_for(world.bob)
    assert bob.get(trace_url(h["old"].pk), {"as_of": h["day"]}).status_code == 404
    assert client_for(world.charlie).get(trace_url(h["old"].pk), {"as_of": h["day"]}).status_code == 404
    search = bob.post(SEARCH, {"query": "林晓雯交的押金是2000元", "k": 10, "as_of": h["day"]}, format="json")
    assert search.status_code == 200 and not {hit["note_id"] for hit in search.json()["hits"]} & deposit
    walled = bob.get(GRAPH, {"as_of": h["day"], "matter": world.matter_deposit.pk})
    assert walled.status_code == 400 and "押金" not in walled.content.decode()
    page = logged_in(world.bob).get(PAGE, {"as_of": h["day"]}).content.decode()
    assert world.matter_deposit.title not in page and "林晓雯" not in page  # not even in the matter menu


def test_an_erased_note_is_absent_at_a_past_date_even_from_a_graph_already_drawn(world, history):
    from records.erasure_plan import subject_unit
    from records.services.erasure import erase

    h = history
    assert str(h["old"].pk) in node_ids(graph_of(world.alice, as_of=h["day"]))  # drawn, and cached
    erase(subject_unit(world.firm_a, "林晓雯"), actor=world.alice, reason="data subject request")
    past = graph_of(world.alice, as_of=h["day"])
    assert node_ids(past) == ids(h["refund"], h["law"], h["laptop"])
    assert "林晓雯" not in str(past) and "2000" not in str(past)
    cache.clear()  # and in a process that never drew it
    assert node_ids(graph_of(world.alice, as_of=h["day"])) == ids(h["refund"], h["law"], h["laptop"])
    assert client_for(world.alice).get(trace_url(h["old"].pk), {"as_of": h["day"]}).status_code == 404


def test_the_page_shows_the_day_as_a_chip_with_a_link_back_to_now(world, history):
    h = history
    client = logged_in(world.alice)
    page = client.get(PAGE, {"as_of": h["day"]}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="nav-as-of-chip"' in html and f"截至 {h['day']}" in html
    assert f'<a href="{PAGE}" id="nav-now">回到现在</a>' in html
    assert f'value="{h["day"]}"' in html and 'data-as-of="' in html and "data-refused" not in html
    english = client.get(PAGE, {"as_of": h["day"]}, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert f"As of {h['day']}" in english and "Back to now" in english and "截至" not in english
    now = client.get(PAGE).content.decode()
    assert 'id="nav-as-of-chip"' not in now and "data-as-of" not in now


BAD_DATES = [
    ("2026-02-30", "不是日期", "is not a date"),
    ("yesterday", "不是日期", "is not a date"),
    ("2999-01-01", "将来", "in the future"),
    ("2001-01-01", "早于本所记忆", "before the firm's memory began"),
]


@pytest.mark.parametrize("as_of, chinese, english", BAD_DATES)
def test_a_bad_date_is_a_400_on_the_api_in_the_readers_language(world, history, as_of, chinese, english):
    alice = client_for(world.alice)
    for language, words in (("zh-hans", chinese), ("en", english)):
        for response in (alice.get(GRAPH, {"as_of": as_of}, HTTP_ACCEPT_LANGUAGE=language),
                         alice.get(trace_url(history["law"].pk), {"as_of": as_of}, HTTP_ACCEPT_LANGUAGE=language),
                         alice.post(SEARCH, {"query": "押金", "as_of": as_of}, format="json",
                                    HTTP_ACCEPT_LANGUAGE=language)):
            assert response.status_code == 400, response.content
            assert words in response.json()["as_of"][0]
    assert cache.stats["builds"] == 0  # nothing was read


@pytest.mark.parametrize("as_of, chinese, english", BAD_DATES)
def test_a_bad_date_is_a_form_error_on_the_page_in_the_readers_language(world, history, as_of, chinese, english):
    client = logged_in(world.alice)
    for language, words in (("zh-hans", chinese), ("en", english)):
        page = client.get(PAGE, {"as_of": as_of}, HTTP_ACCEPT_LANGUAGE=language)
        html = unescape(page.content.decode())
        assert page.status_code == 400
        [error] = re.findall(r'<p class="error nav-error" role="alert">(.*?)</p>', html)
        assert words in error
        if language == "en":
            assert not re.search(r"[\u4e00-\u9fff]", error), error
        assert 'data-refused="1"' in html and 'id="nav-as-of-chip"' not in html  # no graph of another moment


def test_a_note_corrected_since_is_labelled_in_the_wording_of_that_day(world, history):
    """The refund term, corrected in place today, is labelled and traced at the day before in its
    old words."""
    from memory.services.notes import correct_note

    h = history
    correct_note(Note.objects.get(pk=h["refund"].pk), {"content": "租房合同约定押金在退租后十五日内退还。"},
                 actor=world.alice, reason="更正")
    labels = {node["id"]: node["label"] for node in graph_of(world.alice, as_of=h["day"])["nodes"]}
    assert "七日" in labels[str(h["refund"].pk)] and "十五日" not in str(labels)
    now = {node["id"]: node["label"] for node in graph_of(world.alice)["nodes"]}
    assert "十五日" in now[str(h["refund"].pk)]
    traced = client_for(world.alice).get(trace_url(h["refund"].pk), {"as_of": h["day"]})
    assert traced.status_code == 200 and "七日" in traced.json()["note"]["content"]
    assert "十五日" in client_for(world.alice).get(trace_url(h["refund"].pk)).json()["note"]["content"]
