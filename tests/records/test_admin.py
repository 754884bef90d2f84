"""Records in admin: the erasure confirmation page names the counts before anything goes; legal
hold and retention changes are audited; charlie cannot act on firm A's matters."""
from __future__ import annotations

import pytest

from memory.models import AuditEvent, AuditLog, Firm, Matter
from tests.clients import client_for
from tests.records.conftest import SECRET_NAME, tables_containing

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/memory/matter/"


def act(user, action: str, matter, language: str = "en", **extra):
    return client_for(user).post(CHANGELIST, {"action": action, "_selected_action": [matter.pk], **extra},
                                 HTTP_ACCEPT_LANGUAGE=language)


def test_erasure_in_admin_asks_first_with_the_counts_then_erases(world, deposit_memory):
    page = act(world.alice, "erase_matters", world.matter_deposit)
    assert page.status_code == 200
    text = page.content.decode()
    assert "2 messages" in text
    assert "notes" in text
    assert 'name="reason"' in text
    chinese = act(world.alice, "erase_matters", world.matter_deposit, language="zh-hans").content.decode()
    assert "2 消息" in chinese
    assert "理由（记入审计日志）" in chinese
    assert "确认删除" in chinese
    assert tables_containing(SECRET_NAME)  # nothing happened yet
    done = act(world.alice, "erase_matters", world.matter_deposit, confirm="yes", reason="client's request")
    assert done.status_code == 302
    assert tables_containing(SECRET_NAME) == {}
    tombstone = AuditLog.objects.get(event_type=AuditEvent.ERASED)
    assert tombstone.actor == world.alice
    assert tombstone.extra["reason"] == "client's request"


def test_a_held_matter_shows_why_it_cannot_be_erased(world, deposit_memory):
    act(world.alice, "place_legal_hold", world.matter_deposit, confirm="yes", reason="lawsuit filed")
    assert Matter.objects.get(pk=world.matter_deposit.pk).legal_hold
    page = act(world.alice, "erase_matters", world.matter_deposit)
    assert "legal hold" in page.content.decode()
    assert 'name="reason"' not in page.content.decode()
    act(world.alice, "lift_legal_holds", world.matter_deposit)
    assert not Matter.objects.get(pk=world.matter_deposit.pk).legal_hold
    events = AuditLog.objects.filter(object_type="matter", object_id=str(world.matter_deposit.pk)).values_list(
        "event_type", flat=True)
    assert {AuditEvent.LEGAL_HOLD_SET, AuditEvent.LEGAL_HOLD_LIFTED} <= set(events)


def test_charlie_cannot_erase_or_hold_firm_a_matters(world, deposit_memory):
    act(world.charlie, "erase_matters", world.matter_deposit, confirm="yes", reason="x")
    act(world.charlie, "place_legal_hold", world.matter_deposit, confirm="yes", reason="x")
    assert tables_containing(SECRET_NAME)
    assert not Matter.objects.get(pk=world.matter_deposit.pk).legal_hold
    assert not AuditLog.objects.filter(actor=world.charlie).exists()


def test_a_firm_admin_sets_the_retention_period_and_it_is_audited(world):
    url = f"/admin/memory/firm/{world.firm_a.pk}/change/"
    response = client_for(world.alice).post(url, {"retention_days": "365"})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Firm.objects.get(pk=world.firm_a.pk).retention_days == 365
    entry = AuditLog.objects.get(event_type=AuditEvent.FIRM_UPDATED)
    assert entry.after == {"retention_days": 365}
    assert entry.actor == world.alice
    assert client_for(world.charlie).post(url, {"retention_days": "1"}).status_code == 404
    assert Firm.objects.get(pk=world.firm_a.pk).retention_days == 365


def test_a_member_s_data_is_erased_from_the_membership_list(world, make_turn):
    from memory.models import Conversation, Membership
    from tests.records.conftest import SECRET_REPLY, SECRET_TURN

    talk = Conversation.objects.create(firm=world.firm_a, user=world.bob, matter=world.matter_laptop)
    make_turn(talk, SECRET_TURN, SECRET_REPLY)
    membership = Membership.objects.get(user=world.bob, firm=world.firm_a)
    client = client_for(world.alice)
    page = client.post("/admin/memory/membership/", {"action": "erase_member_data", "_selected_action": [membership.pk]},
                       HTTP_ACCEPT_LANGUAGE="en")
    assert "1 conversations" in page.content.decode()
    client.post("/admin/memory/membership/", {"action": "erase_member_data", "_selected_action": [membership.pk],
                                              "confirm": "yes", "reason": "left the firm"})
    assert tables_containing(SECRET_NAME) == {}


def test_the_matter_page_offers_the_export_and_shows_hold_and_closing(world):
    page = client_for(world.alice).get(f"/admin/memory/matter/{world.matter_deposit.pk}/change/",
                                       HTTP_ACCEPT_LANGUAGE="en")
    text = page.content.decode()
    assert page.status_code == 200
    assert f"/admin/memory/matter/{world.matter_deposit.pk}/export/?format=json" in text
    assert "Markdown" in text
    assert "legal hold" in text.lower()
    assert "closed at" in text.lower()
    firm_page = client_for(world.alice).get(f"/admin/memory/firm/{world.firm_a.pk}/change/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert firm_page.status_code == 200
    assert 'name="retention_days"' in firm_page.content.decode()
    assert "保存期限（天）" in firm_page.content.decode()


def test_the_admin_refuses_a_reason_naming_the_matter_then_shows_the_verification_verdict(world, deposit_memory):
    client = client_for(world.alice)

    def erase_with(reason: str) -> str:
        response = client.post(CHANGELIST, {"action": "erase_matters", "_selected_action": [world.matter_deposit.pk],
                                            "confirm": "yes", "reason": reason},
                               HTTP_ACCEPT_LANGUAGE="en", follow=True)
        assert response.status_code == 200
        return response.content.decode()

    refused = erase_with(f"{world.matter_deposit.title}: the client asked us to")
    assert "the reason names what is being erased" in refused
    assert tables_containing(SECRET_NAME)
    done = erase_with("the client's written request")
    assert "nothing remains" in done
    assert tables_containing(SECRET_NAME) == {}
