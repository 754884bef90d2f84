"""Whether the notes say what was said (issue 50), on ``note_truth/`` (written from a brief by
someone who did not write the rules): the conversations are imported through the real write
path into throw-away firms and every note is read against the set's expectations.

Measured per split: fact recall (a stated fact has a note citing its message that holds the
fact's literal tokens), correction success (the old value is in no active note of the
conversation's client and the new value is in one), superseded facts still current, notes with
"用户" or a login + "说" in their text, and notes made of what ``never_notes`` says is no fact.
Documents (titles, contract terms filed as law, negating tails) are scored by
``note_truth_documents``.
"""
from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from .note_truth_documents import DocumentReport, import_documents, score_documents
from .runner import create_world, import_renamed

FOLDER = Path(__file__).resolve().parent / "note_truth"
_LOGIN_SAID_RE = re.compile(r"(?:^|[，。；：\s])[A-Za-z][A-Za-z0-9_.-]{1,30}说[：:，]"
                            r"|\b[a-z]+_[a-z0-9_]+\b(?: said\b|['’]s\b)")  # "client_b said", "client_b's"


@dataclass
class NoteTruthReport:
    split: str
    notes: int = 0
    facts: int = 0
    facts_noted: int = 0
    superseded_facts: int = 0
    superseded_still_current: int = 0
    corrections: int = 0
    corrections_done: int = 0
    user_word_notes: int = 0
    login_said_notes: int = 0
    never_notes: int = 0
    never_noted: int = 0
    misses: list[str] = field(default_factory=list)
    documents: DocumentReport = field(default_factory=DocumentReport)
    #: Every note as (conversation, status, text), for ``--show``.
    listing: list[tuple[str, str, str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        def share(part: int, whole: int) -> str:
            return f"{part / whole:.3f} ({part}/{whole})" if whole else "-"
        return [
            f"split={self.split}  notes={self.notes}",
            f"  fact recall (current facts with a note citing their message and holding their tokens): "
            f"{share(self.facts_noted, self.facts)}",
            f"  correction success (old value in no active note, new value in one): "
            f"{share(self.corrections_done, self.corrections)}",
            f"  superseded facts still in an active note: {share(self.superseded_still_current, self.superseded_facts)}",
            f"  notes saying 用户: {self.user_word_notes}   notes saying <login>说: {self.login_said_notes}",
            f"  messages that hold no fact but became a note: {share(self.never_noted, self.never_notes)}",
            *self.documents.lines(),
        ]


def load(split: str) -> dict[str, Any]:
    folder = FOLDER / split
    return {name: json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
            for name in ("conversations", "expected", "documents")}


def score(split: str, *, progress=None) -> NoteTruthReport:
    """Import ``split`` in a transaction that is rolled back, and score its notes."""
    with transaction.atomic():
        report = _score(split, load(split), progress)
        transaction.set_rollback(True)
    return report


def _score(split: str, data: dict[str, Any], progress) -> NoteTruthReport:
    from memory.models import Message, Note

    payload = data["conversations"]
    users = sorted({conversation["user"] for conversation in payload["conversations"]})
    world = {"firms": [{"slug": payload["firm"], "users": users, "matters": []}]}
    firms, accounts = create_world(world, uuid.uuid4().hex[:8])
    import_renamed({"transcripts": [payload]}, firms, accounts, progress)
    firm = firms[payload["firm"]]
    documents = data["documents"]["documents"]
    stored = import_documents(documents, firm, accounts)
    pk_of = dict(Message.objects.filter(firm=firm).values_list("external_id", "pk"))
    notes = list(Note.objects.filter(firm=firm).values("content", "status", "source_message_ids", "conversation__external_id"))
    active = [n for n in notes if n["status"] == Note.Status.ACTIVE]
    report = NoteTruthReport(split=split, notes=len(notes))
    score_documents(documents, data["expected"], stored, report.documents)
    report.misses += report.documents.misses
    report.listing = [(n["conversation__external_id"] or "", n["status"], n["content"]) for n in notes]
    report.user_word_notes = sum("用户" in n["content"] for n in notes)
    report.login_said_notes = sum(bool(_LOGIN_SAID_RE.search(n["content"])) for n in notes)
    expected = data["expected"]

    def holds(note: dict, tokens: list[str]) -> bool:
        return all(token in note["content"] for token in tokens)

    for fact in expected["facts"]:
        if not fact.get("message_id"):
            continue  # a document's fact: documents are not imported here
        cites = [n for n in notes if pk_of.get(fact["message_id"]) in n["source_message_ids"]]
        if fact["state"] == "current":
            report.facts += 1
            if any(holds(n, fact["must_contain"]) and n["status"] == Note.Status.ACTIVE for n in cites):
                report.facts_noted += 1
            else:
                report.misses.append(f"fact {fact['id']} {fact['statement']}")
        elif fact.get("must_contain"):
            report.superseded_facts += 1
            if any(holds(n, fact["must_contain"]) for n in cites if n["status"] == Note.Status.ACTIVE
                   and not any(token in n["content"] for token in _newer_tokens(fact, expected))):
                report.superseded_still_current += 1
    for correction in expected["corrections"]:
        if not correction.get("correction_message_id"):
            continue  # corrected by a document
        report.corrections += 1
        said_in = {correction["conversation"]}
        mine = [n for n in active if n["conversation__external_id"] in said_in
                or pk_of.get(correction["old_message_id"]) in n["source_message_ids"]]
        still = [n["content"] for n in mine if pk_of.get(correction["old_message_id"]) in n["source_message_ids"]
                 and holds(n, correction["old_tokens"]) and not holds(n, correction["new_tokens"])]
        old_gone = not still
        new_there = any(holds(n, correction["new_tokens"]) for n in mine)
        if old_gone and new_there:
            report.corrections_done += 1
        else:
            report.misses.append(f"correction {correction['id']} {correction['slot']} "
                                 f"{correction['old_value']}→{correction['new_value']} "
                                 f"({'old value still active: ' + still[0][:80] if not old_gone else 'no note holds the new value'})")
    for never in expected["never_notes"]:
        report.never_notes += 1
        if any(pk_of.get(never["message_id"]) in n["source_message_ids"] and n["source_message_ids"] ==
               [pk_of.get(never["message_id"])] for n in notes):
            report.never_noted += 1
    return report


def _newer_tokens(fact: dict, expected: dict) -> list[str]:
    """The values that replaced a superseded fact: a note holding both is the revised one."""
    return [token for c in expected["corrections"] if c["conversation"] == fact["conversation"]
            and set(c["old_tokens"]) & set(fact["must_contain"]) for token in c["new_tokens"]]
