"""Erasure of a matter, a conversation, a user's data or a subject (docs/records.md): the
public face. ``records.erasure_plan`` says what a unit holds (reads only);
``records.services.erasure`` erases it in one transaction with a tombstone.
"""
from records.erasure_plan import (
    ErasureError,
    Unit,
    conversation_unit,
    matter_unit,
    subject_unit,
    user_unit,
)
from pathlib import Path

from records.services.compaction import compact_after_erasure
from records.services.erasure import ErasureResult, erase, format_counts, preview
from records.verification import Verdict, verify


def compact_and_verify(result: ErasureResult, *, folders: list[Path]) -> Verdict | None:
    """After a committed erasure: rewrite the touched tables, clear the statistics of emptied
    ones and retire the WAL (the bytes go from the files), then look for the fingerprints in the
    database and ``folders``; what compaction could not do is in the verdict's ``remarks``."""
    if result.tombstone is None or result.already_erased or result.dry_run:
        return None
    compacted = compact_after_erasure()
    verdict = verify(result.tombstone, folders=folders)
    verdict.remarks = list(compacted.get("refused", []))  # statistics kept, WAL held back, tables skipped
    return verdict

__all__ = [
    "ErasureError",
    "ErasureResult",
    "Unit",
    "Verdict",
    "compact_and_verify",
    "conversation_unit",
    "erase",
    "format_counts",
    "matter_unit",
    "preview",
    "subject_unit",
    "user_unit",
]
