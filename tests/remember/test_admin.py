"""Failed jobs are visible in admin with their error; the wall and privacy hold there too."""
from __future__ import annotations


from memory.models import TurnExtraction
from tests.clients import logged_in
from tests.factories import UserFactory
from tests.remember.conftest import LAPTOP_REPLY, LAPTOP_USER
from tests.remember.factories import ConversationFactory


def failed_turn(world, conversation, make_turn) -> TurnExtraction:
    turn = make_turn(conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    TurnExtraction.objects.filter(pk=turn.pk).update(
        status="failed", attempts=5, last_error="LLMBadOutput: the language model did not return a valid JSON object")
    return turn


def test_firm_admin_sees_the_failed_job_and_its_error_but_not_what_was_said(world, laptop_conversation, make_turn):
    turn = failed_turn(world, laptop_conversation, make_turn)
    alice = logged_in(world.alice)
    listing = alice.get("/admin/memory/turnextraction/?status=failed").content.decode()
    assert "LLMBadOutput" in listing
    page = alice.get(f"/admin/memory/turnextraction/{turn.pk}/change/").content.decode()
    assert "did not return a valid JSON object" in page
    assert "5999" not in page


def test_superuser_sees_items_and_messages(world, laptop_conversation, make_turn):
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    page = logged_in(root).get(f"/admin/memory/turnextraction/{turn.pk}/change/").content.decode()
    assert "5999" in page
    assert "new knowledge" in page


def test_walled_and_foreign_jobs_are_404(world, make_turn):
    secret = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_secret)
    laptop = ConversationFactory(user=world.bob, firm=world.firm_a, matter=world.matter_laptop)
    walled = failed_turn(world, secret, make_turn)
    other_firm = failed_turn(world, laptop, make_turn)
    assert logged_in(world.alice).get(f"/admin/memory/turnextraction/{walled.pk}/change/").status_code == 404
    assert logged_in(world.charlie).get(f"/admin/memory/turnextraction/{other_firm.pk}/change/").status_code == 404


def test_persona_traits_are_private(world, laptop_conversation, make_turn):
    from memory.models import PersonaTrait

    make_turn(laptop_conversation, "我希望你以后先给结论，再列证据清单。", "好的，我记住了，以后会先给结论。")
    trait = PersonaTrait.objects.get()
    assert logged_in(world.alice).get(f"/admin/memory/personatrait/{trait.pk}/change/").status_code == 200
    assert logged_in(world.charlie).get(f"/admin/memory/personatrait/{trait.pk}/change/").status_code == 404
