"""Export: JSON that imports back into another firm with equal notes, a Markdown report, and the
ethical wall (a walled matter is a 404 for bob and charlie, on the web and in admin)."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import translation

from memory.models import AuditEvent, AuditLog, Matter, Note, NoteLink, Role
from records.erasure import erase, matter_unit
from records.services.matter_transfer import TransferError, import_matter
from memory.services.notes import supersede_note
from tests.clients import client_for
from tests.factories import FirmFactory, MembershipFactory, UserFactory
from tests.records.conftest import SECRET_NAME

pytestmark = pytest.mark.django_db


def export_url(matter) -> str:
    return f"/api/memory/matters/{matter.pk}/export"


def comparable(notes) -> list[tuple]:
    return sorted(
        (n.content, n.memory_scope, n.category, n.memory_type, n.status, n.valid_from, n.valid_to, n.speaker,
         n.said_at, tuple(n.tags), n.mention_count, n.superseded_by.content if n.superseded_by else None)
        for n in notes
    )


def sources(notes) -> list[tuple]:
    return sorted((n.content, tuple(m.content for m in n.source_messages())) for n in notes)


def test_a_json_export_imports_into_another_firm_with_equal_notes(world, deposit_memory, tmp_path):
    old = world.note("押金条约定退租后七日内退还", matter=world.matter_deposit)
    new = world.note("押金条约定退租后十五日内退还", matter=world.matter_deposit)
    supersede_note(old, new, actor=world.alice, reason="corrected by the client")
    exported = Note.objects.filter(matter=world.matter_deposit)
    assert exported.count() >= 4
    assert NoteLink.objects.filter(source__matter=world.matter_deposit).exists()
    path = tmp_path / "deposit.json"
    call_command("export_matter", world.matter_deposit.reference, "--firm", "alpha", "--format", "json",
                 "--output", str(path))
    fresh = FirmFactory(slug="gamma")
    dave = UserFactory(username="dave")
    MembershipFactory(user=dave, firm=fresh, role=Role.ADMIN)

    call_command("import_matter", str(path), "--firm", "gamma", "--user", "dave")

    imported = Matter.objects.get(firm=fresh)
    assert imported.title == world.matter_deposit.title
    assert imported.reference == world.matter_deposit.reference
    assert comparable(Note.objects.filter(matter=imported)) == comparable(exported)
    assert sources(Note.objects.filter(matter=imported)) == sources(exported)
    assert (sorted(NoteLink.objects.filter(source__matter=imported).values_list("link_type", flat=True))
            == sorted(NoteLink.objects.filter(source__matter=world.matter_deposit).values_list("link_type", flat=True)))
    assert all(n.embedding is not None for n in Note.objects.filter(matter=imported))
    assert AuditLog.objects.filter(event_type=AuditEvent.MATTER_IMPORTED, firm=fresh).exists()
    assert AuditLog.objects.filter(event_type=AuditEvent.MATTER_EXPORTED, matter=world.matter_deposit).exists()
    with pytest.raises(Exception, match="already has a matter"):
        call_command("import_matter", str(path), "--firm", "gamma", "--user", "dave")


def test_a_lawyer_s_export_carries_only_their_own_raw_messages(world, deposit_memory):
    _, laptop_talk = deposit_memory  # alice's conversation on the laptop matter (bob is assigned too)
    said = set(laptop_talk.messages.values_list("content", flat=True))
    as_bob = client_for(world.bob).get(export_url(world.matter_laptop)).json()
    as_alice = client_for(world.alice).get(export_url(world.matter_laptop)).json()
    assert as_bob["notes"]
    assert as_bob["notes"] == as_alice["notes"]
    assert {m["content"] for c in as_alice["conversations"] for m in c["messages"]} == said
    assert as_bob["conversations"] == []  # alice's raw conversation is hers (and the firm admins')


def test_import_refuses_what_is_not_an_export(world):
    with pytest.raises(TransferError, match="not a LegalMem matter export"):
        import_matter({"notes": []}, firm=world.firm_b, actor=world.charlie, fallback_user=world.charlie)
    with pytest.raises(TransferError, match="not a member"):
        import_matter({"format": "legalmem-matter", "version": 1, "matter": {}, "notes": [], "links": [],
                       "conversations": []}, firm=world.firm_b, actor=world.alice, fallback_user=world.alice)


def test_the_markdown_report_lists_current_and_superseded_notes_with_sources(world, deposit_memory):
    response = client_for(world.alice).get(export_url(world.matter_deposit), {"format": "markdown"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/markdown")
    text = response.content.decode()
    assert text.startswith(f"# {world.matter_deposit.reference}")
    assert "## Current notes" in text
    assert SECRET_NAME in text
    assert "> " in text  # a source message is quoted under its note


def test_a_walled_matter_is_not_found_for_bob_charlie_and_strangers(world, deposit_memory):
    ok = client_for(world.alice).get(export_url(world.matter_deposit))
    assert ok.status_code == 200
    assert SECRET_NAME in json.dumps(ok.json(), ensure_ascii=False)
    assert client_for(world.bob).get(export_url(world.matter_deposit)).status_code == 404
    assert client_for(world.charlie).get(export_url(world.matter_deposit)).status_code == 404
    assert client_for(world.bob).get(export_url(world.matter_laptop)).status_code == 200
    assert Client().get(export_url(world.matter_deposit)).status_code == 302  # to the login page
    admin_url = f"/admin/memory/matter/{world.matter_deposit.pk}/export/"
    assert client_for(world.alice).get(admin_url, {"format": "json"}).status_code == 200
    assert client_for(world.charlie).get(admin_url, {"format": "json"}).status_code == 404
    with translation.override("en"), pytest.raises(Exception, match="may see"):  # the pages left zh-hans active
        call_command("export_matter", world.matter_deposit.reference, "--firm", "alpha", "--user", "bob")
    assert client_for(world.alice).get(export_url(world.matter_deposit), {"format": "pdf"}).status_code == 400


def test_an_erased_matter_exports_nothing(world, deposit_memory):
    erase(matter_unit(world.matter_deposit), actor=world.alice, reason="request")
    assert client_for(world.alice).get(export_url(world.matter_deposit)).status_code == 404
    with translation.override("en"), pytest.raises(Exception, match="was erased"):  # the pages left zh-hans active
        call_command("export_matter", world.matter_deposit.reference, "--firm", "alpha")
