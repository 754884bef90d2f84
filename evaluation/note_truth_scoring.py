"""Whether the notes say what was said (issue 50), on ``note_truth/`` (written from a brief by
someone who did not write the rules): the conversations are imported through the real write
path into throw-away firms and every note is read against the set's expectations.

Measured per split: fact recall (a stated fact has a note citing its message that holds the
fact's literal tokens), correction success (the old value is in no active note of the
conversation's client and the new value is in one), superseded facts still current, notes with
"用户" or a login + "说" in their text, and notes made of what ``never_notes`` says is no fact.
Documents (titles, contract terms filed as law, negating tails) are scored by
``note_truth_documents``.

``engine`` chooses who extracts: ``offline`` (the default; inside ``offline_only()``, so not one
request leaves the process) or ``llm`` (the server of ``LLM_BASE_URL``, probed first; every
turn's engine and status is counted, so a turn the LLM did not extract is visible).
``conversations`` keeps a subset (a 1.5B model on two cores takes about a minute a turn): facts,
corrections and never-notes whose messages are in it, documents uploaded in it.
"""
from __future__ import annotations

import json
import re
import time
import urllib.request
import uuid
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from .note_judgements import PrecisionReport, judge_notes
from .note_truth_documents import DocumentReport, import_documents, score_documents
from .runner import create_world, import_renamed

FOLDER = Path(__file__).resolve().parent / "note_truth"
_LOGIN_SAID_RE = re.compile(r"(?:^|[，。；：\s])[A-Za-z][A-Za-z0-9_.-]{1,30}说[：:，]"
                            r"|\b[a-z]+_[a-z0-9_]+\b(?: said\b|['’]s\b)")  # "client_b said", "client_b's"
#: The day a note resolved a relative day to: "下周四（2026年2月26日）".
_RESOLVED_DAY_RE = re.compile(r"（\d{4}年[^（）]{1,16}）")
ENGINES = ("offline", "llm")
PROBE_TIMEOUT_SECONDS = 10


class EngineUnavailable(Exception):
    """``engine="llm"`` without a server, or with one that does not answer."""


@dataclass
class NoteTruthReport:
    split: str
    engine: str = "offline"
    conversations: list[str] = field(default_factory=list)
    turns: int = 0
    seconds: float = 0.0
    #: Each turn's extraction as "engine status" (e.g. "llm:qwen-local done") → count.
    turn_engines: Counter = field(default_factory=Counter)
    notes: int = 0
    facts: int = 0
    facts_noted: int = 0
    superseded_facts: int = 0
    superseded_still_current: int = 0
    corrections: int = 0
    corrections_done: int = 0
    #: Missed corrections by the form the set's writers gave them ("later session", "更正", …):
    #: counts only, so a held-out split says which way of correcting fails without its text.
    corrections_missed_by_form: Counter = field(default_factory=Counter)
    user_word_notes: int = 0
    login_said_notes: int = 0
    never_notes: int = 0
    never_noted: int = 0
    misses: list[str] = field(default_factory=list)
    documents: DocumentReport = field(default_factory=DocumentReport)
    precision: PrecisionReport = field(default_factory=PrecisionReport)
    #: Every note as (conversation, status, text), for ``--show``.
    listing: list[tuple[str, str, str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        def share(part: int, whole: int) -> str:
            return f"{part / whole:.3f} ({part}/{whole})" if whole else "-"
        per_turn = f"{self.seconds / self.turns:.1f} s a turn" if self.turns else "-"
        return [
            f"split={self.split}  engine={self.engine}  conversations={','.join(self.conversations)}  "
            f"turns={self.turns} in {self.seconds:.1f} s ({per_turn})  notes={self.notes}",
            f"  extraction by engine and status: {dict(sorted(self.turn_engines.items()))}",
            f"  fact recall (current facts with a note citing their message and holding their tokens): "
            f"{share(self.facts_noted, self.facts)}",
            f"  correction success (old value in no active note, new value in one): "
            f"{share(self.corrections_done, self.corrections)}"
            + (f"; missed by form: {dict(self.corrections_missed_by_form.most_common())}"
               if self.corrections_missed_by_form else ""),
            f"  superseded facts still in an active note: {share(self.superseded_still_current, self.superseded_facts)}",
            f"  notes saying 用户: {self.user_word_notes}   notes saying <login>说: {self.login_said_notes}",
            f"  messages that hold no fact but became a note: {share(self.never_noted, self.never_notes)}",
            *self.documents.lines(),
            *self.precision.lines(),
        ]


def load(split: str, conversations: list[str] | None = None) -> dict[str, Any]:
    """The split's files; with ``conversations``, only those conversations and the documents
    uploaded in them (an unknown id raises ValueError, naming the known ones)."""
    folder = FOLDER / split
    data = {name: json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
            for name in ("conversations", "expected", "documents")}
    if conversations:
        known = [c["id"] for c in data["conversations"]["conversations"]]
        unknown = [name for name in conversations if name not in known]
        if unknown:
            raise ValueError(f"unknown conversation(s) {', '.join(unknown)}; {split} has {', '.join(known)}")
        keep = set(conversations)
        data["conversations"]["conversations"] = [c for c in data["conversations"]["conversations"] if c["id"] in keep]
        data["documents"]["documents"] = [d for d in data["documents"]["documents"] if d["conversation"] in keep]
        kept = {d["id"] for d in data["documents"]["documents"]}
        data["expected"]["terms"] = [t for t in data["expected"].get("terms", []) if t["document"] in kept]
    return data


def check_llm() -> str:
    """The configured LLM server answers ``GET /models``, or EngineUnavailable saying why."""
    base = str(settings.LLM_BASE_URL or "").rstrip("/")
    if not base:
        raise EngineUnavailable("--engine llm needs LLM_BASE_URL (and LLM_MODEL): no LLM server is configured")
    request = urllib.request.Request(f"{base}/models", headers={"Authorization": f"Bearer {settings.LLM_API_KEY}"})
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_SECONDS) as response:  # noqa: S310 - configured URL
            return f"{base}: HTTP {response.status}"
    except OSError as exc:
        raise EngineUnavailable(f"the LLM server at {base} does not answer GET /models: {exc}") from exc


def score(split: str, *, engine: str = "offline", conversations: list[str] | None = None,
          progress=None) -> NoteTruthReport:
    """Import ``split`` (or its ``conversations``) with ``engine`` in a transaction that is
    rolled back, and score its notes."""
    from infra.llm import offline_only

    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}")
    data = load(split, conversations)
    if engine == "llm":
        check_llm()
    with offline_only() if engine == "offline" else nullcontext(), transaction.atomic():
        report = _score(split, data, progress)
        report.engine = engine
        transaction.set_rollback(True)
    return report


def _score(split: str, data: dict[str, Any], progress) -> NoteTruthReport:
    from memory.models import Message, Note, TurnExtraction

    payload = data["conversations"]
    users = sorted({conversation["user"] for conversation in payload["conversations"]}
                   | {document["user"] for document in data["documents"]["documents"]})
    world = {"firms": [{"slug": payload["firm"], "users": users, "matters": []}]}
    firms, accounts = create_world(world, uuid.uuid4().hex[:8])
    started = time.perf_counter()
    import_renamed({"transcripts": [payload]}, firms, accounts, progress)
    seconds = time.perf_counter() - started
    firm = firms[payload["firm"]]
    documents = data["documents"]["documents"]
    stored = import_documents(documents, firm, accounts)
    pk_of = dict(Message.objects.filter(firm=firm).values_list("external_id", "pk"))
    notes = list(Note.objects.filter(firm=firm).values("content", "status", "source_message_ids", "conversation__external_id",
                                                       "category", "speaker", "subject", "source_id"))
    active = [n for n in notes if n["status"] == Note.Status.ACTIVE]
    report = NoteTruthReport(split=split, notes=len(notes), seconds=round(seconds, 1),
                             conversations=[c["id"] for c in payload["conversations"]])
    turns = TurnExtraction.objects.filter(firm=firm).values_list("engine", "status")
    report.turns = len(turns)
    report.turn_engines = Counter(f"{engine or '-'} {status}" for engine, status in turns)
    score_documents(documents, data["expected"], stored, report.documents)
    report.misses += report.documents.misses
    report.precision = judge_notes(split, _as_judged(notes, firm, stored, data))
    report.misses += report.precision.false_notes
    report.listing = [(n["conversation__external_id"] or "", n["status"], n["content"]) for n in notes]
    report.user_word_notes = sum("用户" in n["content"] for n in notes)
    report.login_said_notes = sum(bool(_LOGIN_SAID_RE.search(n["content"])) for n in notes)
    expected = data["expected"]

    def holds(note: dict, tokens: list[str]) -> bool:
        # "下周四（2026年2月26日）下午" holds "下周四下午": the bracket is the day the note resolved
        plain = _RESOLVED_DAY_RE.sub("", note["content"])
        return all(says(note["content"], token) or says(plain, token) for token in tokens)

    for fact in expected["facts"]:
        if fact.get("message_id") not in pk_of:
            continue  # a document's fact, or a conversation left out of this run
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
                   and not any(says(n["content"], token) for token in _newer_tokens(fact, expected))):
                report.superseded_still_current += 1
    for correction in expected["corrections"]:
        if not correction.get("correction_message_id"):
            continue  # corrected by a document
        if correction["correction_message_id"] not in pk_of or correction["old_message_id"] not in pk_of:
            continue  # said in a conversation left out of this run
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
            report.corrections_missed_by_form[correction.get("form") or "-"] += 1
            report.misses.append(f"correction {correction['id']} {correction['slot']} "
                                 f"{correction['old_value']}→{correction['new_value']} "
                                 f"({'old value still active: ' + still[0][:80] if not old_gone else 'no note holds the new value'})")
    for never in expected["never_notes"]:
        if never["message_id"] not in pk_of:
            continue
        report.never_notes += 1
        if any(pk_of.get(never["message_id"]) in n["source_message_ids"] and n["source_message_ids"] ==
               [pk_of.get(never["message_id"])] for n in notes):
            report.never_noted += 1
    return report


def says(text: str, token: str) -> bool:
    """Whether ``text`` says ``token``, a number only as a whole number: "RMB 128,000" does not say
    "8,000", nor "6万4" (64,000) "6万"."""
    return re.search(_whole_number(token), text) is not None


def _whole_number(token: str) -> str:
    pattern = re.escape(token)
    if token[:1].isdigit():
        pattern = r"(?<![\d,.])" + pattern
    if token[-1:].isdigit() or token[-1:] in "万千":
        pattern += r"(?!\d|[,.]\d)"
    return pattern


def _newer_tokens(fact: dict, expected: dict) -> list[str]:
    """The values that replaced a superseded fact: a note holding both is the revised one."""
    return [token for c in expected["corrections"] if c["conversation"] == fact["conversation"]
            and set(c["old_tokens"]) & set(fact["must_contain"]) for token in c["new_tokens"]]


def _as_judged(notes: list[dict], firm, stored: dict, data: dict[str, Any]) -> list[dict[str, Any]]:
    """Each note with what a judge reads beside it: its origin (conversation or document id), its
    source messages (role, speaker, text) or document page, and the conversation's client."""
    from memory.models import Message

    messages = {pk: row for pk, *row in Message.objects.filter(firm=firm).values_list(
        "pk", "external_id", "role", "content")}
    speakers = {m["id"]: m.get("speaker", "") for c in data["conversations"]["conversations"] for m in c["messages"]}
    clients = {c["id"]: c.get("client") for c in data["conversations"]["conversations"]}
    spec_of = {str(document.pk): spec for spec in data["documents"]["documents"]
               for document in [stored.get(spec["id"])] if document is not None}
    judged = []
    for note in notes:
        origin, sources = note["conversation__external_id"] or "", []
        if note["source_id"].startswith("document:"):
            _, pk, page, *_ = note["source_id"].split(":")
            spec = spec_of.get(pk)
            if spec is not None:
                origin = spec["id"]
                sources = [{"document": spec["id"], "page": int(page[1:]), "text": spec["pages"][int(page[1:]) - 1]}]
        else:
            for pk in note["source_message_ids"]:
                if pk in messages:
                    external_id, role, content = messages[pk]
                    sources.append({"message": external_id, "role": role, "speaker": speakers.get(external_id, ""),
                                    "text": content})
        judged.append({"origin": origin, "client": clients.get(origin), "status": note["status"],
                       "category": note["category"], "speaker": note["speaker"], "subject": note["subject"],
                       "content": note["content"], "sources": sources})
    return judged
