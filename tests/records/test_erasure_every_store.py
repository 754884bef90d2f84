"""Erasure covers every store (docs/records.md, "Erasure", "Physical removal", "Backups and the
replay"): a subject named in chat turns, a note, an uploaded TXT document (its row, pages,
chunks, stored file and the notes made from it) and a story run's copy is erased by subject,
then its matter is erased; ``pg_dump``, ``pg_stats``, a byte scan of the cluster's and the data
folder's files, and a restore of an older backup (replayed from the journal, audit rows
included) hold none of the name, the ID number or the marker."""
from __future__ import annotations

import io
import secrets
import shutil
import tempfile
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection
from django.utils import translation

from legalmem_site.backup import create_backup, restore_backup
from memory.models import AuditEvent, AuditLog, Conversation, Note, SourceType
from documents.models import Document, DocumentChunk
from memory.services.audit import record
from memory.services.notes import NoteDraft, create_note
from documents.services import file_path
from records import journal
from records.erasure import ErasureError, erase, matter_unit, preview, subject_unit
from records.erasure_plan import replay_unit
from records.fingerprints import Fingerprints
from records.services.retention import set_legal_hold
from records.verification import verify
from documents.ingest import process_document, upload_document
from tests.clients import client_for
from tests.factories import AssignmentFactory, MatterFactory
from tests.live_server import test_database_url
from tests.records.conftest import tables_containing
from tests.records.test_verify_erasure import files_holding, pg_dump_text, pgdata


NAME = "穆晓岚"
#: The name the whole-store test erases, written by no other test: its byte search reads every file
#: of the server, the other pytest worker's database and WAL included, while that worker runs.
SEARCHED_NAME = "穆清禾"


@pytest.fixture(autouse=True)
def patient_compaction(settings):
    """As in test_verify_erasure: the other pytest worker's transactions may pin old rows a while."""
    settings.ERASURE_SNAPSHOT_WAIT_SECONDS = 300.0


def pg_stats_holding(needles: list[str]) -> list[str]:
    """The planner statistics (what any role that may read a table sees in ``pg_stats``)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename, attname, concat_ws(' ', most_common_vals::text, histogram_bounds::text, "
                       "most_common_elems::text) FROM pg_stats WHERE schemaname = 'public'")
        rows = cursor.fetchall()
    return [f"{table}.{column}: {needle}" for table, column, text in rows for needle in needles
            if needle.casefold() in (text or "").casefold()]


def analyze() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


@pytest.mark.django_db(transaction=True)
@pytest.mark.subprocess
def test_a_subject_and_its_matter_leave_nothing_in_any_store(world, make_turn, settings, data_folder):
    settings.DOCUMENT_STORE_DIR = data_folder / "documents"
    id_number = f"11010519{secrets.randbelow(10**10):010d}"
    marker = f"MARKS{secrets.token_hex(4).upper()}"
    name = SEARCHED_NAME
    needles = [name, id_number, marker]
    matter = MatterFactory(firm=world.firm_a, title=f"股权代持纠纷（{secrets.token_hex(4)}）")
    AssignmentFactory(matter=matter, user=world.alice)
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=matter, title="股权代持")
    make_turn(conversation, f"委托人{name}在2022年3月{secrets.randbelow(28) + 1}日把公司股权交给表哥代持，她的身份证号是"
                            f"{id_number}，案件标记{marker}。", f"好的，已记下{name}的身份证号和案件标记{marker}。")
    text = (f"股权代持协议\n\n委托方{name}（身份证号{id_number}）将其持有的公司百分之三十股权交由受托方代为持有。"
            f"\n\n案件标记{marker}。受托方不得擅自处分代持股权。\n")
    uploaded = client_for(world.alice).post(
        f"/api/matters/{matter.pk}/documents/",
        {"file": SimpleUploadedFile(f"{name}代持协议.txt", text.encode(), "text/plain")}, format="multipart")
    assert uploaded.status_code == 202, uploaded.content
    [created] = uploaded.json()
    assert process_document(created["id"]) == "indexed"
    document = Document.objects.get(pk=created["id"])
    assert DocumentChunk.objects.filter(document=document).exists() and file_path(document.sha256).exists()
    notes_made = Note.objects.filter(source_type=SourceType.DOCUMENT, source_id__startswith=f"document:{document.pk}:")
    notes_made = notes_made.count()
    story_copy = data_folder / "story_runs" / "20261201-100000-000000" / "turns" / "0001.json"
    story_copy.parent.mkdir(parents=True)
    story_copy.write_text(f'{{"user": "委托人{name}的身份证号{id_number}"}}\n', encoding="utf-8")
    search = client_for(world.alice).post("/api/memory/search", {"query": f"{name} {id_number}", "k": 10},
                                          format="json")
    assert search.status_code == 200 and name in search.content.decode()
    analyze()  # the planner's statistics sample the rows, as autovacuum would
    assert pg_stats_holding(needles) and id_number.encode() in pg_dump_text()
    older_backup = data_folder.parent / "older.tar"
    create_backup(test_database_url(), older_backup, secret_key=settings.SECRET_KEY,
                  documents=settings.DOCUMENT_STORE_DIR)

    out = io.StringIO()
    with translation.override("en"):  # the upload's request left the product's language active
        call_command("erase", "--subject", name, "--firm", world.firm_a.slug, "--reason", "本人书面要求", stdout=out)
    subject = AuditLog.objects.get(event_type=AuditEvent.ERASED, object_type="subject")
    counts = subject.extra["counts"]
    assert (counts["documents"], counts["document_files"], counts["file_copies"]) == (1, 1, 1), counts
    assert counts["document_pages"] >= 1 and counts["document_chunks"] >= 1, counts
    assert counts["notes_from_documents"] == notes_made, counts
    assert not Document.objects.filter(pk=document.pk).exists() and not file_path(document.sha256).exists()
    assert not story_copy.exists()
    assert "nothing remains" in out.getvalue(), out.getvalue()
    assert tables_containing(name) == {}

    out = io.StringIO()
    with translation.override("en"):
        call_command("erase", "--matter", matter.reference, "--firm", world.firm_a.slug,
                     "--reason", "the client's written request", stdout=out)
    assert "nothing remains" in out.getvalue(), out.getvalue()

    for needle in needles:
        assert tables_containing(needle) == {}
        assert needle.encode() not in pg_dump_text()
    assert pg_stats_holding(needles) == []
    assert files_holding(pgdata(), needles) == []
    assert files_holding(data_folder, needles) == []
    entries = journal.entries()
    assert len(entries) == 2 and all(entry["fingerprints"]["tokens"] for entry in entries)
    assert not [needle for needle in needles if needle in journal.journal_path().read_text()]

    # the backup from before both erasures, restored: the journal's replay leaves nothing, the
    # document_uploaded audit row that named the file included
    restored_folder = Path(tempfile.mkdtemp(prefix="legalmem-restored-"))
    restored_folder.chmod(0o755)
    database = restore_backup(older_backup, restored_folder, journals=[journal.journal_path()])
    running = True
    try:
        restored = pg_dump_text(database.url)
        assert not [needle for needle in needles if needle.encode() in restored]
        assert files_holding(restored_folder, needles) == []
        database.server.cleanup()  # a clean shutdown (its checkpoint) writes none of it back either
        running = False
        assert not (restored_folder / "pgdata" / "postmaster.pid").exists()  # stopped, not left running
        assert files_holding(restored_folder, needles) == []
    finally:
        if running:
            database.server.cleanup()
        shutil.rmtree(restored_folder, ignore_errors=True)


@pytest.mark.django_db
def test_verify_erasure_tells_residue_from_words_another_matter_still_holds(world, tmp_path):
    """A sentence both matters hold is a shared word after one is erased, never residue; a copy
    of what only the erased matter held is residue and fails the verdict."""
    tag = secrets.token_hex(4)
    habit = f"用户习惯先看结论再看证据清单{tag}"
    unique = f"MKU{secrets.token_hex(4).upper()}"
    erased = MatterFactory(firm=world.firm_a, title=f"合同纠纷（{secrets.token_hex(4)}）")
    kept = MatterFactory(firm=world.firm_a, title=f"劳动争议（{secrets.token_hex(4)}）")
    for matter, text in ((erased, f"备注：{habit}。委托编号{unique}。"), (kept, f"{habit}。")):
        create_note(NoteDraft(firm=world.firm_a, matter=matter, content=text, memory_scope="case", category="fact",
                              source_type="manual"), actor="system:test")

    result = erase(matter_unit(erased), actor="system:test", reason="the client's written request")
    verdict = verify(result.tombstone)
    assert verdict.clean, verdict.found
    assert "memory_note.content" in verdict.shared, verdict.shared
    assert habit not in str(result.tombstone.extra) and unique not in str(result.tombstone.extra)

    (tmp_path / "app.log").write_text(f"exported {unique} at noon\n{habit}\n", encoding="utf-8")
    verdict = verify(result.tombstone, folders=[tmp_path])
    assert list(verdict.found) == [str(tmp_path / "app.log")], verdict.found
    assert verdict.found[str(tmp_path / "app.log")] == 1  # the identifier; the shared sentence is not residue
    with translation.override("en"):
        lines = "\n".join(verdict.lines())
    assert "content remains" in lines and "shared words" in lines


@pytest.mark.django_db
def test_a_replayed_erasure_redacts_audit_rows_its_fingerprints_find(world):
    """After a restore, an audit row the journal does not name by id (a document_uploaded entry
    whose file name names the subject) is found by the journal's fingerprints and redacted."""
    matter = MatterFactory(firm=world.firm_a)
    uploaded = record(actor=world.alice, event=AuditEvent.DOCUMENT_UPLOADED, firm=world.firm_a, matter_id=matter.pk,
                      object_type="document", object_id=987654, after={"filename": f"{NAME}代持协议.txt"})
    other = record(actor=world.alice, event=AuditEvent.DOCUMENT_UPLOADED, firm=world.firm_a, matter_id=matter.pk,
                   object_type="document", object_id=987655, after={"filename": "租赁合同.txt"})
    entry = {"tombstone": 1, "firm": world.firm_a.pk, "kind": "subject", "object_type": "subject",
             "object_id": "0" * 64, "label": "subject 000000000000", "matter": None,
             "rows": {name: [] for name in ("conversations", "messages", "notes", "retitled_conversations",
                                            "traits", "evidence", "documents", "audit_entries")},
             "fingerprints": Fingerprints.of([], [NAME]).to_json()}

    result = erase(replay_unit(entry), actor="system:erase", reason="replay of erasure 1 after a restore")

    assert result.counts["audit_entries_redacted"] == 1
    uploaded.refresh_from_db()
    other.refresh_from_db()
    assert uploaded.after is None and uploaded.extra == {"redacted_by": result.tombstone.pk}
    assert other.after == {"filename": "租赁合同.txt"}


@pytest.mark.django_db
def test_a_subject_named_only_in_a_held_matters_document_is_refused_and_counted_in_the_dry_run(world, settings,
                                                                                               tmp_path):
    settings.DOCUMENT_STORE_DIR = tmp_path / "documents"
    matter = MatterFactory(firm=world.firm_a)
    document = upload_document(actor="system:test", matter=matter, filename="代持协议.txt",  # no notes made
                               stream=io.BytesIO(f"委托方{NAME}将股权交由受托方代为持有。\n".encode()))
    assert process_document(document.pk) == "indexed"
    unit = subject_unit(world.firm_a, NAME)
    assert preview(unit).counts["documents"] == 1
    set_legal_hold(matter, actor=world.alice, reason="appeal pending")
    with pytest.raises(ErasureError, match="legal hold"):
        erase(unit, actor="system:test", reason="本人书面要求")
    assert Document.objects.filter(pk=document.pk).exists() and file_path(document.sha256).exists()
