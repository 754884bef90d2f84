"""Copies of conversation text kept as files in the data folder, erased with their content.

``generate_story`` keeps its run records under ``<data folder>/story_runs/<run>/`` (the story's
request and response, each turn's extraction as JSON): the demo matters' conversations as text.
An erasure removes every such file that holds one of its fingerprints (docs/records.md,
"Erasure"): they are run records, not the memory, and nothing reads them back.
"""
from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings

from records.fingerprints import Fingerprints

logger = logging.getLogger("legalmem.records")

#: Folders of the data folder that hold copies of conversations as files.
COPY_FOLDERS = ("story_runs",)


def copies_holding(fingerprints: Fingerprints) -> list[Path]:
    """The files under the copy folders that hold one of ``fingerprints``."""
    found = []
    for name in COPY_FOLDERS:
        root = Path(settings.DATA_DIR) / name
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                try:
                    text = path.read_bytes().decode("utf-8", "ignore")
                except OSError:
                    continue
                if fingerprints.matches(text):
                    found.append(path)
    return found


def remove_copies(paths: list[Path]) -> int:
    """Delete the files (after the erasure committed); returns how many went."""
    removed = 0
    for path in paths:
        try:
            path.unlink()
            removed += 1
        except FileNotFoundError:
            continue
        except OSError as error:
            logger.warning("erasure: could not remove %s: %s", path, error)
    return removed
