"""The erasure journal: one JSON line per committed erasure in the data folder
(``erasures.jsonl``), naming the rows it removed by id — never their content — so that a restore
of a backup made before the erasure can erase them again (``replay_erasures``, run by
``make restore``; docs/records.md, "Backups and the replay").

Ids, kinds and fingerprints only: the journal can be kept and copied like the tombstones.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from django.conf import settings

JOURNAL_NAME = "erasures.jsonl"


def journal_path() -> Path:
    return Path(settings.DATA_DIR) / JOURNAL_NAME


def append(entry: dict) -> None:
    """Add one erasure (after its commit); the line is flushed and synced before returning."""
    path = journal_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry, ensure_ascii=True, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    path.chmod(0o600)


def entries(path: Path | None = None) -> list[dict]:
    """The journal's erasures, oldest first (a torn last line is skipped)."""
    path = path or journal_path()
    if not path.exists():
        return []
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            found.append(json.loads(line))
        except ValueError:
            continue
    return found
