"""Whether the answer check keeps the right markers and marks the right sentences (issue 52), on
``attribution/`` (written from a brief by someone who did not read the check): each answer is a
question, and sentences an assistant might write with the markers it put on them (``cites``),
annotated with the messages that truly support each sentence (``supported_by``) and whether it
states something that needs a source (``needs_source``).

Each sentence goes through the product's own check (``chat.citations.check_answer``) with the
conversation's messages numbered as the recalled items, in order — so what is measured is the
check alone, not recall. Measured per split:

- marker precision: of the markers the check keeps, the share that point to a supporting message;
- marker recall: of the markers that point to a supporting message, the share kept;
- wrong markers removed: of the markers to a message that does not support the sentence, the
  share removed;
- unsupported sentences marked: of the sentences that need a source and carry no supporting
  marker, the share the check marks (not found in memory, or a marker removed);
- sentences left alone: of the sentences that need no source or are rightly cited, the share
  the check does not mark (1 minus the false alarms; a statute no message holds is marked as an
  unverified citation by design, counted below, not as a false alarm);
- invented statutes marked: of the sentences citing a statute no message holds, the share
  marked as an unverified citation.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent / "attribution"
SPLITS = ("dev", "dev2", "dev3", "test")


def load(split: str) -> dict[str, Any]:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}")
    return json.loads((FOLDER / split / "cases.json").read_text(encoding="utf-8"))


@dataclass
class Share:
    """A count out of a whole, with the cases that missed (for ``--misses``)."""

    hit: int = 0
    whole: int = 0
    missed: list[str] = field(default_factory=list)

    def add(self, ok: bool, case: str) -> None:
        self.whole += 1
        self.hit += ok
        if not ok:
            self.missed.append(case)

    @property
    def value(self) -> float | None:
        return round(self.hit / self.whole, 3) if self.whole else None

    def __str__(self) -> str:
        return f"{self.value:.3f} ({self.hit}/{self.whole})" if self.whole else "- (0/0)"


@dataclass
class AttributionReport:
    split: str
    answers: int = 0
    sentences: int = 0
    marker_precision: Share = field(default_factory=Share)
    marker_recall: Share = field(default_factory=Share)
    wrong_markers_removed: Share = field(default_factory=Share)
    unsupported_marked: Share = field(default_factory=Share)
    left_alone: Share = field(default_factory=Share)
    invented_statutes_marked: Share = field(default_factory=Share)
    rules: dict[str, int] = field(default_factory=dict)  # the support rule that decided each marker

    FIGURES = (("marker precision (a kept marker points to a supporting message)", "marker_precision"),
               ("marker recall (a marker to a supporting message is kept)", "marker_recall"),
               ("wrong markers removed", "wrong_markers_removed"),
               ("unsupported sentences marked (need a source, no supporting marker)", "unsupported_marked"),
               ("sentences left alone (need no source, or rightly cited)", "left_alone"),
               ("invented statutes marked", "invented_statutes_marked"))

    def lines(self) -> list[str]:
        out = [f"attribution split={self.split}: {self.answers} answers, {self.sentences} sentences"]
        out += [f"  {label}: {getattr(self, name)}" for label, name in self.FIGURES]
        out.append("  deciding rules: " + ", ".join(f"{rule} {n}" for rule, n in sorted(self.rules.items())))
        return out

    def misses(self) -> list[str]:
        return [f"{name}: {case}" for _label, name in self.FIGURES for case in getattr(self, name).missed]


def numbered_messages(conversation: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The conversation's messages as numbered recalled items (1…n in order), and each id's number."""
    sources = [{"number": n, "kind": "message", "id": m["id"], "content": m["content"]}
               for n, m in enumerate(conversation["messages"], start=1)]
    return sources, {item["id"]: item["number"] for item in sources}


def _statute_invented(text: str, conversation: dict[str, Any], question: str) -> bool:
    """Whether ``text`` cites a statute that no message of the conversation (nor the question) holds."""
    from chat.support import statute_found
    from legaltext import read

    held = [m["content"] for m in conversation["messages"]] + [question]
    return any(not statute_found(s.law, s.article, held) for s in read(text).statutes)


def score(split: str) -> AttributionReport:
    """Check every annotated sentence with the product's check and count what it kept and marked."""
    from chat.citations import UNVERIFIED_CITATION, check_answer

    data = load(split)
    conversations = {c["id"]: c for c in data["conversations"]}
    report = AttributionReport(split)
    for answer in data["answers"]:
        if not answer.get("answerable", True):
            continue
        report.answers += 1
        conversation = conversations[answer["conversation"]]
        sources, number_of = numbered_messages(conversation)
        id_of = {n: message_id for message_id, n in number_of.items()}
        for index, sentence in enumerate(answer["sentences"]):
            report.sentences += 1
            case = f"{answer['id']}#{index + 1} {sentence['text'][:60]}"
            cited = [number_of[c] for c in sentence.get("cites", []) if c in number_of]
            checked = check_answer(sentence["text"] + "".join(f"[{n}]" for n in cited), sources,
                                   question=answer["question"])
            kept = {n for s in checked.sentences for n in s.cited}
            marks = {mark for s in checked.sentences for mark in s.marks}
            for s in checked.sentences:
                for rule in s.rules.values():
                    report.rules[rule] = report.rules.get(rule, 0) + 1
            supporting = set(sentence.get("supported_by", []))
            for n in kept:
                report.marker_precision.add(id_of[n] in supporting, f"{case} kept [{id_of[n]}]")
            for n in cited:
                if id_of[n] in supporting:
                    report.marker_recall.add(n in kept, f"{case} removed [{id_of[n]}]")
                else:
                    report.wrong_markers_removed.add(n not in kept, f"{case} kept [{id_of[n]}]")
            rightly_cited = bool(supporting & set(sentence.get("cites", [])))
            if sentence.get("needs_source") and not rightly_cited:
                report.unsupported_marked.add(bool(marks), f"{case} not marked")
            else:
                alarms = marks - {UNVERIFIED_CITATION}  # a statute no memory holds is marked by design
                report.left_alone.add(not alarms, f"{case} marked {sorted(alarms)}")
            if _statute_invented(sentence["text"], conversation, answer["question"]):
                report.invented_statutes_marked.add(UNVERIFIED_CITATION in marks, f"{case} statute not marked")
    return report


# --- saying "memory holds nothing" at the answer ------------------------------------------------

#: Words every offline answer that says memory holds nothing on the question contains
#: (``chat.answering.compose_offline_answer``: nothing recalled, weak matches only, or a name
#: nothing holds).
SAID_NOTHING = "记忆中没有"


@dataclass
class NothingReport:
    split: str
    seconds: float = 0.0
    never_said: Share = field(default_factory=Share)  # said "nothing" to a question never answered in memory
    walled: Share = field(default_factory=Share)  # said "nothing" to bob, who may not see the matter
    answerable: Share = field(default_factory=Share)  # answered from memory (not "nothing") for alice
    # every item recalled for alice: (its bearing on the question, whether it holds a message the
    # set says supports the answer — never, for a never-said question)
    items: list[tuple[float, bool]] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [
            f"nothing at the answer (offline engine) split={self.split}, {self.seconds:.0f} s",
            f"  never-said questions answered 'memory holds nothing': {self.never_said}",
            f"  walled questions (bob, not assigned) answered 'memory holds nothing': {self.walled}",
            f"  answerable questions answered from memory (1 - wrongly 'nothing'): {self.answerable}",
            *self.floor_lines(),
        ]

    def floor_lines(self) -> list[str]:
        """The weak-match floor (``chat.support.QUESTION_MIN_SHARED_WORDS``) at a few values: of
        the recalled items holding a supporting message, the share shown as not weak; of the items
        shown as not weak, the share holding one."""
        from chat.support import QUESTION_MIN_SHARED_WORDS

        relevant = sum(ok for _bearing, ok in self.items)
        out = [f"  weak-match floor, {len(self.items)} items recalled, {relevant} holding a supporting message:"]
        for floor in sorted({0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.40, QUESTION_MIN_SHARED_WORDS}):
            strong = [ok for bearing, ok in self.items if bearing >= floor]
            now = " (now)" if floor == QUESTION_MIN_SHARED_WORDS else ""
            out.append(f"    at {floor:.2f}{now}: supporting items not weak {Share(sum(strong), relevant)}, "
                       f"items not weak that support {Share(sum(strong), len(strong))}")
        return out

    def misses(self) -> list[str]:
        return [f"{name}: {case}" for name in ("never_said", "walled", "answerable")
                for case in getattr(self, name).missed]


def score_nothing(split: str) -> NothingReport:
    """Import the split's conversations (alice's, one matter each; bob of the same firm is not
    assigned) with the offline engine in a transaction that is rolled back, ask every question
    through the chat's own turn (``chat.turns``: save, recall, number) and compose the offline
    answer; count where it says that memory holds nothing."""
    from django.db import transaction

    from infra.llm import offline_only

    with offline_only(), transaction.atomic():
        report = _score_nothing(split, load(split))
        transaction.set_rollback(True)
    return report


@contextmanager
def throwaway_turn(user, question: str, matter_id: int | None):
    """A chat turn as the chat makes it (``chat.turns``: the question saved, memory recalled and
    numbered), rolled back after the block: the next question must not recall this one."""
    from django.db import transaction

    from chat.turns import begin_turn, recall

    with transaction.atomic():
        start = begin_turn(user, question=question, conversation_id=None, matter_id=matter_id)
        yield start, recall(user, start)
        transaction.set_rollback(True)


def _answer(user, question: str, matter_id: int | None,
            external_of: dict[int, str] | None = None) -> tuple[str, list[tuple[float, set[str]]]]:
    """The offline answer, and each recalled hit's bearing on the question with the external ids
    of the messages behind it."""
    from chat.answering import compose_offline_answer
    from chat.citations import source_text
    from chat.support import bearing

    with throwaway_turn(user, question, matter_id) as (start, memory):
        answer = compose_offline_answer(question, memory.recalled, memory.warning,
                                        current_matter_id=start.conversation.matter_id,
                                        nothing_on=memory.nothing_on)
        hits = memory.result.hits if memory.result is not None else []
        items = [(bearing(question, source_text(item)),
                  {(external_of or {}).get(pk, "") for pk in hit.source_message_ids})
                 for item, hit in zip(memory.recalled, hits)]
    return answer, items


def import_split(split: str, data: dict[str, Any], suffix: str):
    """The split's conversations imported for alice (one matter each; bob of the same firm is not
    assigned): the firm, alice, bob and each conversation's matter id."""
    from memory.models import Matter

    from .runner import create_world, import_renamed

    firm_slug = f"attribution-{split}"
    world = {"firms": [{"slug": firm_slug, "users": ["alice", "bob"],
                        "matters": [{"title": c["title"], "reference": c["id"], "assigned": ["alice"]}
                                    for c in data["conversations"]]}]}
    firms, accounts = create_world(world, suffix)
    transcript = {"firm": firm_slug, "conversations": [
        {"id": c["id"], "user": "alice", "matter": c["id"], "title": c["title"],
         "messages": [{"id": m["id"], "role": m["role"], "speaker": "alice" if m["role"] == "user" else "assistant",
                       "timestamp": m["said_at"], "content": m["content"]} for m in c["messages"]]}
        for c in data["conversations"]]}
    import_renamed({"transcripts": [transcript]}, firms, accounts, None)
    matters = dict(Matter.objects.filter(firm=firms[firm_slug]).values_list("reference", "pk"))
    return firms[firm_slug], accounts["alice"], accounts["bob"], matters


def _score_nothing(split: str, data: dict[str, Any]) -> NothingReport:
    import time
    import uuid

    from memory.models import Message

    started = time.perf_counter()
    firm, alice, bob, matters = import_split(split, data, uuid.uuid4().hex[:8])
    external_of = dict(Message.objects.filter(firm=firm).values_list("pk", "external_id"))
    report = NothingReport(split)
    for answer in data["answers"]:
        question = answer["question"]
        case = f"{answer['id']} {question[:50]}"
        text, items = _answer(alice, question, matters[answer["conversation"]], external_of)
        said_nothing = SAID_NOTHING in text
        supporting = {m for sentence in answer.get("sentences", []) for m in sentence.get("supported_by", [])}
        report.items += [(bearing, bool(sources & supporting)) for bearing, sources in items]
        if answer.get("answerable", True):
            report.answerable.add(not said_nothing, f"{case} answered 'nothing'")
            report.walled.add(SAID_NOTHING in _answer(bob, question, None)[0], f"{case} bob was answered")
        else:
            report.never_said.add(said_nothing, f"{case} answered from memory")
    report.seconds = time.perf_counter() - started
    return report
