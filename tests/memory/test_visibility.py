"""One rule decides who sees a note: firm, ethical wall, owner. Checked through the model,
the API and the home page with alice, bob (walled off from one matter) and charlie (outsider)."""
from __future__ import annotations

import pytest
from django.test import Client

from memory.models import MemoryScope, Note
from tests.clients import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def notes(world):
    w = world
    return {
        "laptop_fact": w.note("笔记本电脑在购买后约两周出现大面积花屏。", matter=w.matter_laptop),
        "deposit_fact": w.note("房东扣留押金3000元。", matter=w.matter_deposit),
        "secret_fact": w.note("并购目标的估值为两亿元。", matter=w.matter_secret),
        "alice_profile": w.note("alice 希望先给结论，再列证据清单。", scope=MemoryScope.USER_PROFILE,
                                owner=w.alice, category="preference"),
        "bob_profile": w.note("bob 偏好低成本维权。", scope=MemoryScope.USER_PROFILE, owner=w.bob,
                              category="preference"),
        "firm_procedure": w.note("先固定事实，再补证据，再匹配法条。", scope=MemoryScope.GLOBAL),
        "law": w.note("消费者可就质量问题主张退换修。", scope=MemoryScope.GENERAL_LAW, category="law"),
        "cross_case_walled": w.note("押金扣减案件中交接照片权重高。", scope=MemoryScope.CROSS_CASE,
                                    matter=w.matter_deposit),
        "loose_case_of_bob": w.note("bob 的一个未归档案件事实。", owner=w.bob),
        "beta_fact": w.note("Beta 客户的机密事实。", firm=w.firm_b, matter=w.matter_b),
        "beta_law": w.note("Beta 的法条笔记。", firm=w.firm_b, scope=MemoryScope.GENERAL_LAW, category="law"),
    }


def visible_keys(user, notes) -> set[str]:
    ids = set(Note.objects.visible_to(user).values_list("id", flat=True))
    return {key for key, note in notes.items() if note.id in ids}


def test_alice_sees_her_matters_her_profile_and_firm_wide_layers(world, notes):
    assert visible_keys(world.alice, notes) == {
        "laptop_fact", "deposit_fact", "alice_profile", "firm_procedure", "law", "cross_case_walled",
    }


def test_bob_is_walled_off_from_the_deposit_matter_and_alices_profile(world, notes):
    assert visible_keys(world.bob, notes) == {
        "laptop_fact", "bob_profile", "firm_procedure", "law", "loose_case_of_bob",
    }


def test_charlie_of_another_firm_sees_nothing_of_firm_a(world, notes):
    assert visible_keys(world.charlie, notes) == {"beta_fact", "beta_law"}


def test_anonymous_sees_nothing(notes):
    from django.contrib.auth.models import AnonymousUser

    assert not Note.objects.visible_to(AnonymousUser()).exists()


def test_removing_an_assignment_closes_the_wall_at_once(world, notes):
    world.matter_laptop.assignments.filter(user=world.bob).delete()
    assert "laptop_fact" not in visible_keys(world.bob, notes)


def test_note_detail_api_is_404_across_firms_and_walls(world, notes):
    url = lambda key: f"/api/memory/notes/{notes[key].id}/"  # noqa: E731
    alice, bob, charlie = client_for(world.alice), client_for(world.bob), client_for(world.charlie)
    response = alice.get(url("laptop_fact"))
    assert response.status_code == 200
    assert response.json()["content"] == notes["laptop_fact"].content
    assert response.json()["matter"]["title"] == "电脑花屏退货纠纷"
    assert bob.get(url("deposit_fact")).status_code == 404
    assert bob.get(url("alice_profile")).status_code == 404
    for key in ("laptop_fact", "law", "firm_procedure"):
        response = charlie.get(url(key))
        assert response.status_code == 404
        assert notes[key].content not in response.content.decode()
    assert alice.get(url("beta_fact")).status_code == 404
    assert alice.get("/api/memory/notes/00000000-0000-0000-0000-000000000000/").status_code == 404


def test_note_list_api_lists_only_visible_notes_and_rejects_bad_filters(world, notes):
    bob = client_for(world.bob)
    listed = {row["content"] for row in bob.get("/api/memory/notes/?limit=100").json()["results"]}
    assert listed == {notes[k].content for k in ("laptop_fact", "bob_profile", "firm_procedure", "law", "loose_case_of_bob")}
    # Filtering by a matter bob may not open yields nothing — not even a count.
    response = bob.get(f"/api/memory/notes/?matter={world.matter_deposit.pk}")
    assert response.json()["count"] == 0
    assert bob.get("/api/memory/notes/?scope=everything").status_code == 400
    assert bob.get("/api/memory/notes/?matter=abc").status_code == 400


def test_api_requires_login(notes):
    response = Client().get("/api/memory/notes/")
    assert response.status_code in (401, 403)
    assert "花屏" not in response.content.decode()


def test_home_page_lists_only_assigned_matters_and_reachable_counts(world, notes):
    page = client_for(world.bob).get("/").content.decode()
    assert "电脑花屏退货纠纷" in page
    assert "租房押金返还纠纷" not in page
    assert "保密并购案" not in page
    assert "Beta" not in page
    page = client_for(world.charlie).get("/").content.decode()
    assert "Beta 的案件" in page
    assert "电脑花屏" not in page
    assert "Alpha" not in page
