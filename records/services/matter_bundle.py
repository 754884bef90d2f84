"""A matter with its documents' files: the export bundle, and reading one back
(docs/records.md, "Export and the round trip").

A bundle is a zip a person can open with any tool: ``matter.json`` (the JSON export,
``records.export.matter_document``) and ``documents/<sha256>``, each original file once under its
hash. ``import_matter`` of a bundle re-creates the documents — file, pages as exported, chunks
and embeddings made by the importing installation — and points the notes made from a document
at its new copy. Reading checks every member before anything is imported: only those two kinds
of names, no file over the upload limit, no JSON over ``BUNDLE_MAX_JSON_BYTES``, and each file's
bytes must hash to its name.
"""
from __future__ import annotations

import hashlib
import json
import re
import zipfile
from pathlib import Path
from typing import IO

from django.conf import settings
from django.utils.translation import gettext

from memory.models import AuditEvent, Matter
from memory.services.audit import record
from documents.services import file_path
from records.export import matter_document

BUNDLE = "bundle"  # the export format's name (``?format=bundle``, ``--format bundle``)
BUNDLE_JSON = "matter.json"
BUNDLE_MAX_JSON_BYTES = 512 * 1024 * 1024
_MEMBER_FILE = re.compile(r"documents/([0-9a-f]{64})")


class BundleError(ValueError):
    """The file is not a bundle this installation can read (the reason says which member, in the
    active language: the operator reads it as it is)."""


def write_bundle(matter: Matter, *, actor, path: Path | IO[bytes]) -> tuple[int, int]:
    """Write ``matter``'s bundle to ``path`` (or an open binary file), audited (``matter_exported``, format ``bundle``);
    returns (documents, files). A document whose file is missing from the store is listed
    without its file (``import_matter`` then refuses the bundle, naming it)."""
    document = matter_document(matter, viewer=None if isinstance(actor, str) else actor)
    hashes = list(dict.fromkeys(item["sha256"] for item in document.get("documents", [])))
    files = 0
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr(BUNDLE_JSON, json.dumps(document, ensure_ascii=False, indent=2))
        for sha in hashes:
            stored = file_path(sha)
            if stored.exists():
                bundle.write(stored, f"documents/{sha}")
                files += 1
    record(actor=actor, event=AuditEvent.MATTER_EXPORTED, firm=matter.firm, object_type="matter",
           object_id=matter.pk, matter_id=matter.pk,
           after={"format": "bundle", "notes": len(document["notes"]), "documents": len(hashes)})
    return len(document.get("documents", [])), files


def is_bundle(path: Path) -> bool:
    return zipfile.is_zipfile(path)


class BundleFiles:
    """The files of a bundle by hash, read one at a time when asked (a matter's files may be
    many times the memory of the process), each checked against its name."""

    def __init__(self, path: Path, hashes: set[str]) -> None:
        self.path, self.hashes = path, hashes

    def __contains__(self, sha: str) -> bool:
        return sha in self.hashes

    def read(self, sha: str) -> bytes:
        with zipfile.ZipFile(self.path) as bundle:
            content = bundle.read(f"documents/{sha}")
        if hashlib.sha256(content).hexdigest() != sha:
            raise BundleError(gettext("member 'documents/%(sha)s' does not hash to its name (damaged or altered)") % {
                "sha": sha})
        return content


def read_bundle(path: Path) -> tuple[dict, BundleFiles]:
    """The export and its files; BundleError naming the first member that is wrong."""
    limit = settings.DOCUMENT_MAX_UPLOAD_BYTES
    try:
        with zipfile.ZipFile(path) as bundle:
            members = bundle.infolist()
            for member in members:
                if member.filename != BUNDLE_JSON and not _MEMBER_FILE.fullmatch(member.filename):
                    raise BundleError(gettext(
                        "unexpected member %(member)r (a bundle holds %(json)s and documents/<sha256>)"
                    ) % {"member": member.filename, "json": BUNDLE_JSON})
                if member.file_size > (BUNDLE_MAX_JSON_BYTES if member.filename == BUNDLE_JSON else limit):
                    raise BundleError(gettext("member %(member)r would unpack to %(size)s bytes, over the limit") % {
                        "member": member.filename, "size": member.file_size})
            if BUNDLE_JSON not in {member.filename for member in members}:
                raise BundleError(gettext("no %(json)s in the bundle") % {"json": BUNDLE_JSON})
            document = json.loads(bundle.read(BUNDLE_JSON).decode("utf-8"))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as error:
        raise BundleError(gettext("not a readable zip (%(error)s)") % {"error": error}) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BundleError(gettext("%(json)s is not JSON (%(error)s)") % {"json": BUNDLE_JSON, "error": error}) from None
    hashes = {found.group(1) for member in members if (found := _MEMBER_FILE.fullmatch(member.filename))}
    return document, BundleFiles(path, hashes)
