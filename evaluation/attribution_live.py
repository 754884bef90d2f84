"""The attribution set's questions asked of the configured LLM (issue 52, live): each question
goes through the chat's own turn — save, recall, numbered prompt (``chat.turns.recall``) — the
model's streamed answer is checked as the chat checks it (``chat.citations.check_answer`` and
``say_when_nothing_supports``), and the turn is rolled back.

What is counted per split (docs/evaluation.md, "The answer check, live"):

- the model's markers: written, kept by the check, and — of those kept — the share whose item
  holds a message the set says supports the answer (``supported_by`` of the answer's annotated
  sentences; a note counts through its source messages). The set annotates its own written
  answers, not the model's sentences, so this is the share of kept markers that lead to the
  right messages, not a sentence-by-sentence precision;
- the model's sentences the check marked: not found in memory, a marker removed, an unverified
  statute;
- "memory holds nothing" said at the answer (by the model in its first words, or by the product
  when nothing is cited and nothing recalled bears on the question) for the never-said
  questions, for answerable ones (wrongly), and for bob, who is not assigned to the matter;
- the seconds per answer.

The conversations are imported with the offline engine (as ``score_nothing`` does), so the
notes recalled are the offline write path's; only the answers are the model's.
"""
from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from .attribution_scoring import Share, import_split, load, throwaway_turn


@dataclass
class LiveReport:
    split: str
    model: str = ""
    answers: int = 0
    seconds: list[float] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # the LLM failed (the answer is not counted)
    markers_written: int = 0
    markers_kept: int = 0
    kept_to_support: Share = field(default_factory=Share)
    sentences: int = 0
    not_found: int = 0
    marker_removed: int = 0
    unverified: int = 0
    never_said: Share = field(default_factory=Share)
    answerable: Share = field(default_factory=Share)
    walled: Share = field(default_factory=Share)

    def lines(self) -> list[str]:
        mean = sum(self.seconds) / len(self.seconds) if self.seconds else 0.0
        worst = max(self.seconds, default=0.0)
        return [
            f"answer check, live on {self.model} split={self.split}: {self.answers} answers, "
            f"{mean:.1f} s per answer (slowest {worst:.1f} s), {len(self.failed)} failed",
            f"  markers written {self.markers_written}, kept {self.markers_kept}",
            f"  kept markers to an item holding a supporting message: {self.kept_to_support}",
            f"  sentences {self.sentences}: marked not found in memory {self.not_found}, "
            f"marker removed {self.marker_removed}, unverified statute {self.unverified}",
            f"  never-said questions answered 'memory holds nothing': {self.never_said}",
            f"  answerable questions answered from memory (1 - wrongly 'nothing'): {self.answerable}",
            f"  walled questions (bob, not assigned) answered 'memory holds nothing': {self.walled}",
        ]

    def misses(self) -> list[str]:
        return ([f"{name}: {case}" for name in ("kept_to_support", "never_said", "answerable", "walled")
                 for case in getattr(self, name).missed] + [f"failed: {case}" for case in self.failed])


def _stream(client, messages: list[dict[str, str]], max_tokens: int | None) -> str:
    async def collect() -> str:
        return "".join([token async for token in client.astream_chat(messages, max_tokens=max_tokens)])

    return asyncio.run(collect())


@dataclass
class LiveAnswer:
    checked: Any  # chat.citations.CheckedAnswer
    sources: dict[int, set[str]]  # number → the external ids of the messages behind the item
    written: int  # markers the model wrote
    seconds: float


def ask(client, user, question: str, matter_id: int | None, external_of: dict[int, str]) -> LiveAnswer:
    """One question through the chat's turn and the model, checked; rolled back."""
    from chat.citations import check_answer, say_when_nothing_supports
    from legaltext.markers import Marker, split_markers

    started = time.perf_counter()
    with throwaway_turn(user, question, matter_id) as (_start, memory):
        reply = _stream(client, memory.llm_messages, memory.answer_max_tokens)
        checked = check_answer(reply, memory.recalled, question=question)
        if reply.strip():
            checked = say_when_nothing_supports(checked, memory.recalled, question)
        hits = memory.result.hits if memory.result is not None else []
        sources = {n: {external_of.get(pk, "") for pk in hit.source_message_ids}
                   for n, hit in enumerate(hits, start=1)}
    written = sum(len(p.numbers) for p in split_markers(reply) if isinstance(p, Marker))
    return LiveAnswer(checked, sources, written, time.perf_counter() - started)


def describe(live: LiveAnswer) -> str:
    """One answer's line while the run goes on (a long run stopped early still says what it saw)."""
    from chat.citations import MARKER_REMOVED, NOT_FOUND, UNVERIFIED_CITATION

    sentences = live.checked.sentences
    marked = {mark: sum(mark in s.marks for s in sentences) for mark in (NOT_FOUND, MARKER_REMOVED, UNVERIFIED_CITATION)}
    return (f"{live.seconds:.1f} s, markers {live.written} written {sum(len(s.cited) for s in sentences)} kept, "
            f"{len(sentences)} sentences, marked {marked}, nothing {said_nothing(live.checked)}")


def said_nothing(checked) -> bool:
    from chat.citations import SAID_NOTHING

    return checked.nothing_in_memory or any(words in checked.text[:80].lower() for words in SAID_NOTHING)


def score_live(split: str, *, limit: int | None = None, stride: int = 1, walled: int = 8,
               progress=None) -> LiveReport:
    """Ask the split's questions (every ``stride``-th, the first ``limit`` of those, and bob
    ``walled`` of the answerable ones) of the configured LLM; everything is rolled back."""
    from django.db import transaction

    from infra.llm import LLMClient, LLMError, offline_only
    from memory.models import Message

    client = LLMClient.from_settings()
    if client is None:
        raise RuntimeError("no LLM is configured: set LLM_BASE_URL and LLM_MODEL (docs/llm-servers.md)")
    data = load(split)
    report = LiveReport(split, model=client.config.model)
    answers = data["answers"][::max(stride, 1)]
    answers = answers[:limit] if limit else answers
    asked = {answer["conversation"] for answer in answers}  # only what the questions asked need
    data = {**data, "conversations": [c for c in data["conversations"] if c["id"] in asked]}
    with transaction.atomic():
        with offline_only():
            firm, alice, bob, matters = import_split(split, data, uuid.uuid4().hex[:8])
        external_of = dict(Message.objects.filter(firm=firm).values_list("pk", "external_id"))
        asked_bob = 0
        for index, answer in enumerate(answers, start=1):
            case = f"{answer['id']} {answer['question'][:50]}"
            answerable = answer.get("answerable", True)
            bob_said = ""
            try:
                live = ask(client, alice, answer["question"], matters[answer["conversation"]], external_of)
                if answerable and asked_bob < walled:
                    asked_bob += 1
                    walled_answer = ask(client, bob, answer["question"], None, external_of)
                    report.walled.add(said_nothing(walled_answer.checked), f"{case} bob was answered")
                    bob_said = f", bob told nothing {said_nothing(walled_answer.checked)}"
            except LLMError as failure:
                report.failed.append(f"{case}: {failure}")
                continue
            kept_before = report.kept_to_support.hit
            _count(report, live, answer, answerable, case)
            if progress:
                progress(index, len(answers), f"{answer['id']} answerable {answerable}: {describe(live)}, kept to "
                         f"a supporting message {report.kept_to_support.hit - kept_before}{bob_said}")
        transaction.set_rollback(True)
    return report


def _count(report: LiveReport, live: LiveAnswer, answer: dict[str, Any], answerable: bool, case: str) -> None:
    from chat.citations import MARKER_REMOVED, NOT_FOUND, UNVERIFIED_CITATION

    report.answers += 1
    report.seconds.append(live.seconds)
    report.markers_written += live.written
    supporting = {m for sentence in answer.get("sentences", []) for m in sentence.get("supported_by", [])}
    for sentence in live.checked.sentences:
        report.sentences += 1
        report.not_found += NOT_FOUND in sentence.marks
        report.marker_removed += MARKER_REMOVED in sentence.marks
        report.unverified += UNVERIFIED_CITATION in sentence.marks
        for n in sentence.cited:
            report.markers_kept += 1
            if answerable:
                report.kept_to_support.add(bool(live.sources.get(n, set()) & supporting),
                                           f"{case} [{n}] {sentence.text[:40]}")
    nothing = said_nothing(live.checked)
    if answerable:
        report.answerable.add(not nothing, f"{case} answered 'nothing'")
    else:
        report.never_said.add(nothing, f"{case} answered from memory")
