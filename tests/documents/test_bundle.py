"""A matter's bundle carries its documents' files: alice downloads it (bob and charlie get 404),
and an installation that imports it has the documents back — the file under its hash, the
pages as exported, chunks searchable, the notes made from a document pointing at its new copy.
A damaged or foreign bundle is refused before anything is written, and an import that fails
halfway leaves no file in the store."""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import translation

from memory.models import AuditEvent, AuditLog, Matter, Note, SourceType
from documents.models import Document, DocumentChunk, DocumentPage
from documents.services import file_path
from documents.search import search_documents
from records.services.matter_bundle import BUNDLE_JSON, BundleError, read_bundle
from records.services.matter_transfer import TransferError, import_matter
from tests.clients import client_for
from tests.documents.conftest import add_document
from tests.documents.files import docx_bytes
from tests.factories import AssignmentFactory, FirmFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

LEASE_TERMS = ["租客张三的月租金为8000元，押金为16000元。", "租赁期限为一年，自2026年3月1日起至2027年2月28日止。"]


@pytest.fixture
def lease(world):
    return add_document(world.matter_deposit, "房屋租赁合同.docx", docx_bytes("房屋租赁合同", LEASE_TERMS),
                        actor=world.alice)


def download_bundle(user, matter):
    return client_for(user).get(f"/api/memory/matters/{matter.pk}/export", {"format": "bundle"})


def bundle_file(world, tmp_path, lease) -> Path:
    """alice's bundle of the deposit matter, downloaded into a file."""
    response = download_bundle(world.alice, world.matter_deposit)
    assert response.status_code == 200, response.content[:300]
    path = tmp_path / "matter.zip"
    path.write_bytes(b"".join(response.streaming_content))
    return path


@pytest.fixture
def another_installation(settings, tmp_path):
    """A firm with one member, dave, and a call that moves the test onto an installation whose
    document store is empty (after the bundle was made)."""
    firm = FirmFactory(slug="gamma", name="Gamma 律所")
    dave = UserFactory(username="dave")
    MembershipFactory(firm=firm, user=dave)

    def move() -> tuple:
        settings.DOCUMENT_STORE_DIR = tmp_path / "elsewhere"
        return firm, dave
    return move


def test_alice_downloads_the_bundle_with_the_files_and_outsiders_get_404(world, lease, tmp_path):
    response = download_bundle(world.alice, world.matter_deposit)
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as bundle:
        assert sorted(bundle.namelist()) == [f"documents/{lease.sha256}", BUNDLE_JSON]
        assert bundle.read(f"documents/{lease.sha256}") == file_path(lease.sha256).read_bytes()
        exported = json.loads(bundle.read(BUNDLE_JSON))
    assert [item["sha256"] for item in exported["documents"]] == [lease.sha256]
    entry = AuditLog.objects.filter(event_type=AuditEvent.MATTER_EXPORTED).latest("id")
    assert entry.after == {"format": "bundle", "notes": len(exported["notes"]), "documents": 1}
    for outsider in (world.bob, world.charlie):  # walled off from the matter; another firm
        assert download_bundle(outsider, world.matter_deposit).status_code == 404


def test_a_bundle_imported_elsewhere_brings_the_documents_back_with_their_notes(world, lease, tmp_path,
                                                                               another_installation):
    path = bundle_file(world, tmp_path, lease)
    firm, dave = another_installation()
    assert not file_path(lease.sha256).exists()  # this installation's store is empty

    document, files = read_bundle(path)
    matter = import_matter(document, firm=firm, actor=dave, fallback_user=dave, files=files)

    [copy] = Document.objects.filter(matter=matter)
    assert (copy.sha256, copy.filename, copy.status, copy.page_count) == (lease.sha256, lease.filename, "indexed", 1)
    assert file_path(lease.sha256).read_bytes() == files.read(lease.sha256)
    assert list(DocumentPage.objects.filter(document=copy).values_list("text", flat=True)) == list(
        DocumentPage.objects.filter(document=lease).values_list("text", flat=True))
    assert DocumentChunk.objects.filter(document=copy, embedding__isnull=False).count() == \
        DocumentChunk.objects.filter(document=lease).count()
    made = Note.objects.filter(matter=matter, source_type=SourceType.DOCUMENT)
    assert made.exists() and all(note.document_source()[0] == copy.pk for note in made)
    AssignmentFactory(matter=matter, user=dave)
    [hit] = search_documents(dave, "月租金", matter_id=matter.pk, limit=1)
    assert hit.document_id == copy.pk and hit.citation == "《房屋租赁合同》第 1 页"


def test_without_the_files_a_document_made_note_keeps_its_citation_but_no_link(world, lease, tmp_path,
                                                                             another_installation):
    firm, dave = another_installation()
    exported = json.loads(client_for(world.alice).get(
        f"/api/memory/matters/{world.matter_deposit.pk}/export", {"format": "json"}).content)
    matter = import_matter(exported, firm=firm, actor=dave, fallback_user=dave)
    assert not Document.objects.filter(matter=matter).exists()
    made = Note.objects.filter(matter=matter, source_type=SourceType.DOCUMENT)
    assert made.exists() and all(note.source_id == "" and note.document_url() == "" for note in made)
    assert all(note.speaker == "《房屋租赁合同》第 1 页" for note in made)


def rewrite(path, *, drop: str | None = None, replace: dict[str, bytes] | None = None, add: dict[str, bytes] = {}):
    """``path``'s bundle with a member dropped, replaced or added."""
    with zipfile.ZipFile(path) as bundle:
        members = {name: bundle.read(name) for name in bundle.namelist() if name != drop}
    members.update(replace or {})
    members.update(add)
    with zipfile.ZipFile(path, "w") as bundle:
        for name, content in members.items():
            bundle.writestr(name, content)


@pytest.mark.parametrize("change, reason", [
    ({"replace": "altered"}, "does not hash to its name"),
    ({"drop": "file"}, "lacks the file of 1 document"),
    ({"add": {"../../etc/passwd": b"x"}}, "unexpected member"),
    ({"drop": BUNDLE_JSON}, f"no {BUNDLE_JSON}"),
])
def test_a_damaged_or_foreign_bundle_is_refused_and_nothing_is_written(world, lease, tmp_path, another_installation,
                                                                      change, reason):
    path = bundle_file(world, tmp_path, lease)
    firm, dave = another_installation()
    member = f"documents/{lease.sha256}"
    if change.get("replace"):
        rewrite(path, replace={member: b"%PDF-1.4 not the lease"})
    elif change.get("drop") == "file":
        rewrite(path, drop=member)
    else:
        rewrite(path, drop=change.get("drop"), add=change.get("add", {}))

    # the English reason; the download above left the page's zh-hans active
    with translation.override("en"), pytest.raises((BundleError, TransferError), match=reason):
        document, files = read_bundle(path)
        import_matter(document, firm=firm, actor=dave, fallback_user=dave, files=files)
    assert not Matter.objects.filter(firm=firm).exists()
    assert not file_path(lease.sha256).exists()


def test_an_import_that_fails_after_storing_a_file_leaves_no_file(world, lease, tmp_path, another_installation):
    path = bundle_file(world, tmp_path, lease)
    firm, dave = another_installation()
    document, files = read_bundle(path)
    document["notes"][-1]["memory_scope"] = "no-such-layer"  # fails after the documents are in
    Document.objects.filter(pk=lease.pk).delete()  # (this database is both installations: only the copy may hold it)

    with pytest.raises(TransferError):
        import_matter(document, firm=firm, actor=dave, fallback_user=dave, files=files)
    assert not Matter.objects.filter(firm=firm).exists() and not Document.objects.filter(firm=firm).exists()
    assert not file_path(lease.sha256).exists()


def test_the_commands_write_and_read_a_bundle(world, lease, tmp_path, another_installation):
    path = tmp_path / "deposit.zip"
    with translation.override("en"):
        call_command("export_matter", world.matter_deposit.reference, "--firm", world.firm_a.slug, "--format", "bundle",
                     "--output", str(path), stderr=(err := io.StringIO()))
        assert "(1 documents, 1 files)" in err.getvalue()
        with pytest.raises(CommandError, match="give --output"):
            call_command("export_matter", world.matter_deposit.reference, "--firm", world.firm_a.slug,
                         "--format", "bundle")
        firm, dave = another_installation()
        call_command("import_matter", str(path), "--firm", "gamma", "--user", "dave", stdout=(out := io.StringIO()))
    assert ", 1 documents" in out.getvalue()
    [copy] = Document.objects.filter(firm=firm)
    assert copy.sha256 == lease.sha256 and file_path(copy.sha256).exists()
