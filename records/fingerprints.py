"""Fingerprints of erased content: keyed hashes an auditor's scan can match, never the content.

An erasure keeps in its tombstone the fingerprints of what it removed (docs/records.md,
"Verifying an erasure"):

- **tokens** — every identifier (a run of six or more letters, digits and ``-_./@`` holding a
  digit, not a date or a time: an ID number, a case number, a marker) and every clause (text between punctuation,
  eight characters or more) of the erased rows;
- **names** — the subject's name, the matter's title, the notes' subjects and the people's names
  in the erased texts (``proper_names``), matched anywhere inside a text (a name sits inside a
  clause without punctuation around it).

Each is ``blake2b(key=SECRET_KEY)`` of the NFKC-casefolded text, 16 hex digits (a keyed MAC):
without the key nobody can test a guess against a tombstone, and a restored backup keeps the key.

**Shared** fingerprints are those that rows the erasure keeps still held when it ran (another
matter's note with the same sentence, a common word taken for a name): ``verify_erasure``
reports them apart from the residue, and they never make its verdict fail.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings

from memory.segmentation import is_common_word
from remember.extraction.lexicon import person_names

IDENTIFIER = re.compile(r"[0-9a-z][0-9a-z\-_./@]{5,}")
# A date or a time names no one (and the retention purge's reason carries the closing date).
DATE = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[:.]\d{2}([:.]\d{2})?")
CLAUSE_BREAK = re.compile(r"\s*[\n\r\t,.;:!?，。；：！？、\"“”'‘’()（）《》【】\[\]{}<>=&|]+\s*")
CLAUSE_MIN = 8
NAME_MIN = 2


LATIN_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")


def proper_names(text: str) -> list[str]:
    """The people's names in ``text``: Chinese names jieba tags as a person (remember's lexicon)
    that are not common words (it tags "明白" too, which any later reply may say), and
    capitalised Latin words that do not open a sentence ("Whitfield", "Hangzhou")."""
    found = [name for name in person_names(text) if not is_common_word(name)]
    for match in LATIN_NAME.finditer(text or ""):
        before = text[:match.start()].rstrip()
        if before and before[-1] not in ".!?:;\"“。！？：；":
            found.append(match.group())
    return found


def normalized(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def digest(text: str) -> str:
    key = settings.SECRET_KEY.encode()[:64]
    return hashlib.blake2b(text.encode(), key=key, digest_size=8).hexdigest()


def tokens_of(text: str) -> set[str]:
    """The identifiers and clauses of ``text`` (normalized), the units a fingerprint names."""
    text = normalized(text)
    found = {match.strip("-_./@") for match in IDENTIFIER.findall(text)
             if any(c.isdigit() for c in match) and not DATE.fullmatch(match.strip("-_./@"))}
    found |= {" ".join(clause.split()) for clause in CLAUSE_BREAK.split(text) if len(clause) >= CLAUSE_MIN}
    return {token for token in found if len(token) >= 6}


@dataclass
class Fingerprints:
    """The hashes of one erasure, as stored in its tombstone (``extra["fingerprints"]``)."""

    tokens: set[str] = field(default_factory=set)
    names: dict[int, set[str]] = field(default_factory=dict)  # name length → hashes
    shared: set[str] = field(default_factory=set)  # hashes that rows kept by the erasure also held

    @classmethod
    def of(cls, texts: Iterable[str], names: Iterable[str]) -> Fingerprints:
        made = cls()
        for text in texts:
            made.tokens |= {digest(token) for token in tokens_of(text or "")}
        for name in names:
            name = normalized((name or "").strip())
            if len(name) >= NAME_MIN:
                made.names.setdefault(len(name), set()).add(digest(name))
        return made

    @classmethod
    def from_json(cls, data: dict | None) -> Fingerprints:
        data = data or {}
        return cls(tokens=set(data.get("tokens", [])),
                   names={int(length): set(hashes) for length, hashes in data.get("names", {}).items()},
                   shared=set(data.get("shared", [])))

    def to_json(self) -> dict:
        return {"tokens": sorted(self.tokens),
                "names": {str(length): sorted(hashes) for length, hashes in sorted(self.names.items())},
                "shared": sorted(self.shared)}

    def unshared(self) -> Fingerprints:
        """Only what no kept row held: what may not remain anywhere."""
        names = {length: hashes - self.shared for length, hashes in self.names.items()}
        return Fingerprints(tokens=self.tokens - self.shared, names={k: v for k, v in names.items() if v})

    def __bool__(self) -> bool:
        return bool(self.tokens or self.names)

    def found_in(self, text: str) -> set[str]:
        """The fingerprints ``text`` holds (empty: nothing of the erased content is in it)."""
        if not text:
            return set()
        found = {digest(token) for token in tokens_of(text)} & self.tokens
        if self.names:
            plain = normalized(text)
            for length, hashes in self.names.items():
                seen = {plain[i:i + length] for i in range(len(plain) - length + 1)}
                found |= {digest(window) for window in seen} & hashes
        return found

    def matches(self, text: str) -> int:
        """How many fingerprints ``text`` holds (0: nothing of the erased content is in it)."""
        return len(self.found_in(text))
