"""Every relative link of README.md and docs/*.md points to a file that exists."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parents[2]
DOCS = [BASE_DIR / "README.md", *sorted((BASE_DIR / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: str(path.relative_to(BASE_DIR)))
def test_relative_links_point_to_existing_files(doc):
    broken = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL, or an anchor in the same page
        path = target.split("#", 1)[0]
        if not (doc.parent / path).exists():
            broken.append(target)
    assert not broken, f"{doc.name}: {broken}"


def test_the_readme_is_a_front_door():
    lines = (BASE_DIR / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250
    text = "\n".join(lines)
    for must in ("make run", "make test", "make test-fast", "legalmem-demo", "docs/screenshots/", "docs/README.md"):
        assert must in text, must
