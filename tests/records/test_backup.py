"""Backup and restore: a backup of the database restored into a new data folder has the same
notes, messages, audit log, search results and secret key; a folder with data is refused."""
from __future__ import annotations

import os
import subprocess
import sys

import psycopg
import pytest
from django.db import connection
from psycopg.conninfo import make_conninfo

from legalmem_site.backup import create_backup, restore_backup
from legalmem_site.launcher import LaunchError
from memory.models import AuditLog
from tests.records.conftest import SECRET_NAME

pytestmark = pytest.mark.django_db(transaction=True)

READS = {
    "notes": "SELECT id::text, content, status, valid_from, valid_to, embedding::text FROM memory_note ORDER BY id",
    "messages": "SELECT id, conversation_id, role, content, said_at, embedding::text FROM memory_message ORDER BY id",
    "audit": "SELECT id, actor_label, event_type, object_type, object_id, before, after, extra, created_at "
             "FROM memory_auditlog ORDER BY id",
    "full text": "SELECT id FROM memory_message WHERE search_vector @@ plainto_tsquery('english', %(words)s) ORDER BY id",
    "note words": "SELECT id::text FROM memory_note WHERE to_tsvector('english', search_text) "
                  "@@ plainto_tsquery('english', %(words)s) ORDER BY id",
    "nearest": "SELECT id::text FROM memory_note ORDER BY embedding <=> "
               "(SELECT embedding FROM memory_message WHERE content LIKE %(like)s LIMIT 1), id LIMIT 5",
}


def read_all(url: str) -> dict[str, list]:
    params = {"words": "押金", "like": f"%{SECRET_NAME}%"}
    with psycopg.connect(url) as db:
        return {name: db.execute(sql, params if "%(" in sql else None).fetchall() for name, sql in READS.items()}


@pytest.mark.subprocess
def test_backup_then_restore_into_a_new_folder_gives_the_same_memory(world, deposit_memory, tmp_path):
    url = make_conninfo(os.environ["DATABASE_URL"], dbname=connection.settings_dict["NAME"])
    before = read_all(url)
    assert before["notes"]
    assert before["messages"]
    assert before["audit"]
    assert before["full text"]
    assert before["nearest"]
    assert AuditLog.objects.exists()
    archive = tmp_path / "backup.tar"
    manifest = create_backup(url, archive, secret_key="the-key-of-the-old-folder")
    assert manifest["rows"]["memory_note"] == len(before["notes"])

    target = tmp_path / "new-data"
    database = restore_backup(archive, target)
    try:
        assert read_all(database.url) == before
        assert (target / "secret_key").read_text() == "the-key-of-the-old-folder"
        with pytest.raises(LaunchError, match="refused: it already holds a database"):
            restore_backup(archive, target)
        # the append-only trigger came back with the data
        with psycopg.connect(database.url) as db, pytest.raises(psycopg.Error, match="append-only"):
            db.execute("DELETE FROM memory_auditlog")
    finally:
        database.server.cleanup()


@pytest.mark.subprocess
def test_make_restore_refuses_a_folder_with_data_and_names_the_way_out(tmp_path):
    (tmp_path / "secret_key").write_text("x")
    (tmp_path / "b.tar").write_bytes(b"")
    env = {**os.environ, "LEGALMEM_DATA_DIR": str(tmp_path)}
    env.pop("DATABASE_URL")
    result = subprocess.run([sys.executable, "-m", "legalmem_site.backup", "restore", str(tmp_path / "b.tar")],
                            env=env, capture_output=True, text=True)
    assert result.returncode == 2
    assert "refused: it already holds a secret key" in result.stderr
    assert "FORCE=1" in result.stderr


def test_a_file_that_is_not_a_backup_is_refused(tmp_path):
    (tmp_path / "notes.tar").write_bytes(b"not a tar file")
    with pytest.raises(LaunchError, match="not a LegalMem backup"):
        restore_backup(tmp_path / "notes.tar", tmp_path / "empty")
