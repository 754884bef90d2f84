"""One chat turn, the database side: validate and save the question, recall memory, build the
prompt, save the reply and enqueue extraction. Synchronous functions — the consumer calls them
through ``database_sync_to_async``; each write is one transaction.

Order matters (docs/architecture.md): the user message is saved before anything can fail, so a
failing LLM, a cancel or a dropped connection never loses what the user said.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from infra import metrics
from infra.logs import content_lengths, log_event
from infra.locks import lock_for_transaction
from memory.disclosure import Viewer, redact_note_payload, viewer_of
from infra.embeddings import EmbeddingUnavailable
from legaltext.as_of import as_of_in, past_event_in, without_moment
from memory.as_of import BadDate, end_of_day, parse_as_of
from memory.models import Conversation, Matter, Message
from remember.turns import enqueue_turn_extraction
from remember.working_memory import working_memory
from documents.search import DocumentHit
from recall import (
    MAX_QUERY_CHARS, SearchError, SearchResult, contradictions_payload, message_hit_payload, message_of_event,
    moment_first, note_page_url, search_memory,
)
from memory.services.conversations import finish_reply, save_message, start_conversation

from chat.answering import ENGINE_OFFLINE, LLM_ENGINE_PREFIX
from chat.citations import check_answer, count_marks, number_sources, say_when_nothing_supports
from chat.budget import PromptTooLong, fit_prompt

# Limits of a chat turn (docs/chat-page.md; the rate limit is settings.CHAT_RATE_LIMIT_PER_MINUTE).
CHAT_MAX_QUESTION_CHARS = 4000  # longest question
CHAT_RECALL_K = 8  # notes recalled for an answer
CHAT_DOCUMENT_K = 3  # document passages recalled beside them (docs/documents.md)
CHAT_DOCUMENT_CHARS = 500  # of each passage, in the prompt

logger = logging.getLogger("legalmem.chat")
# How many earlier lines of the conversation a search reads as the question's context (the
# evaluation's dialogue questions come with two to four; search keeps their most recent tokens).
CONTEXT_LINES = 3

ANSWER_PROMPT = (
    "你是 LegalMem 法律助手，服务于律师事务所的律师。请用中文回答，先给结论，再列依据和证据清单，"
    "最后给出可行的下一步（协商、投诉、仲裁或诉讼）。只依据用户提供的事实与召回的记忆，"
    "不确定时明确说明，不要编造法条或事实。"
)
#: How an answer cites its numbered sources (docs/citations.md): asked of the model beside the
#: numbered memory; the product checks every marker it writes (chat/citations.py).
CITATION_PROMPT = (
    "记忆和文件的每一条前面都有编号，如 [2]。凡依据某条记忆的句子，请在句末标注所依据条目的编号，如 [2][5]；"
    "只使用列出的编号，不要给没有依据的句子加编号。记忆中没有依据的事实、金额、日期、人名不要写成事实。"
    "如果记忆中没有与问题相关的内容，先明确说“记忆中没有这方面的记录”，再写“以下为一般性建议，并非来自记忆：”。"
    "只引用记忆中出现过的法条；其他法条请注明需要核实。"
)
SYSTEM_PROMPT = ANSWER_PROMPT + CITATION_PROMPT
#: Said again right before the question when items are listed: a small model follows the last
#: instruction it read (docs/citations.md, "With a small local model").
CITATION_REMINDER = "回答时，凡依据上面编号条目的句子，请在句末写上该条编号，例如“……[1]。”；记忆中没有的事实不要写成事实。"


class TurnRejected(Exception):
    """The question cannot be taken; ``code`` and ``message`` go to the client as an error frame."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class TurnStart:
    conversation: Conversation
    user_message: Message
    conversation_created: bool
    #: The day the question asks about ("截至2026年3月1日…", or the date the lawyer chose): memory
    #: is searched for what held then (world time, ``recall.as_of``); None for now.
    held_at: datetime | None = None
    held_at_words: str = ""  # the question's words that named it ("" when chosen)
    held_at_message: Message | None = None  # the advice a moment was named by ("我们第一次建议…的时候")


@dataclass(frozen=True)
class HeldAt:
    """The moment a question is read at (None: now), the words that named it ("" when chosen),
    and the message it was read from when named by an act of the firm's."""

    at: datetime | None = None
    words: str = ""
    message: Message | None = None


@dataclass
class Recall:
    result: SearchResult | None
    llm_messages: list[dict[str, str]]
    recalled: list[dict[str, Any]] = field(default_factory=list)
    plan: dict[str, Any] | None = None
    warning: str = ""
    answer_max_tokens: int | None = None
    held_at: dict[str, Any] | None = None  # the "as of" chip: {"on", "words", "chosen"}
    nothing_on: list[str] = field(default_factory=list)  # names memory holds nothing on (recall/anchors.py)


def _conversation_for(user, conversation_id: int | None, matter_id: int | None, question: str) -> tuple[Conversation, bool]:
    if conversation_id is not None:
        conversation = Conversation.objects.visible_to(user).filter(pk=conversation_id).first()
        if conversation is None:
            raise TurnRejected("not_found", _("没有找到这个对话（或您无权访问）。"))
        return conversation, False
    matter = None
    if matter_id is not None:
        matter = Matter.objects.assigned_to(user).filter(pk=matter_id).first()
        if matter is None:
            raise TurnRejected("not_found", _("没有找到这个案件（或您未被分配到该案件）。"))
        firm = matter.firm
    else:
        firm = user.memberships.select_related("firm").order_by("firm__name").first()
        if firm is None:
            raise TurnRejected("no_firm", _("您还不属于任何律所，无法开始对话。"))
        firm = firm.firm
    conversation = start_conversation(
        firm=firm, user=user, matter=matter, title=question.strip().splitlines()[0][:60]
    )
    return conversation, True


def check_rate_limit(user) -> None:
    """At most ``settings.CHAT_RATE_LIMIT_PER_MINUTE`` questions a minute per user, counted in the database
    (so it holds across server processes). Only live chat counts: imported and story
    conversations (they carry an external id) are not questions the user just asked. Called in
    the transaction that saves the question: the user's lock makes questions arriving at once
    on several servers count one after the other."""
    lock_for_transaction("chat.rate_limit", user.pk)
    since = timezone.now() - timedelta(minutes=1)
    recent = Message.objects.filter(
        conversation__user=user,
        conversation__external_id="",
        role=Message.Role.USER,
        created_at__gte=since,
    ).count()
    if recent >= settings.CHAT_RATE_LIMIT_PER_MINUTE:
        raise TurnRejected("rate_limited", _("提问过于频繁，请稍后再试。"))


def validate_question(question: Any) -> str:
    if not isinstance(question, str) or not question.strip():
        raise TurnRejected("empty_question", _("问题不能为空。"))
    if len(question) > CHAT_MAX_QUESTION_CHARS:
        raise TurnRejected(
            "question_too_long", _("问题过长：最多 %(limit)d 个字符。") % {"limit": CHAT_MAX_QUESTION_CHARS}
        )
    return question.strip()


def begin_turn(user, *, question: Any, conversation_id: int | None, matter_id: int | None,
               as_of: Any = None) -> TurnStart:
    """Validate, rate-limit, find or create the conversation and save the question. ``as_of``:
    the day the lawyer chose to read memory at (the chat's date field); else the question's own
    words may name one (``legaltext.as_of``)."""
    question = validate_question(question)
    held = held_at_of(question, as_of)
    with transaction.atomic():
        check_rate_limit(user)
        conversation, created = _conversation_for(user, conversation_id, matter_id, question)
        message = save_message(
            conversation, Message.Role.USER, question, speaker=user.get_username()
        )
    if held.at is None:  # "我们第一次建议…的时候": the moment of that advice, found among the messages
        held = held_at_by_act(user, question, matter_id=conversation.matter_id, exclude_message_ids=(message.pk,))
    return TurnStart(conversation=conversation, user_message=message, conversation_created=created,
                     held_at=held.at, held_at_words=held.words, held_at_message=held.message)


def held_at_of(question: str, chosen: Any = None, said_on: date | None = None, *,
               user=None, matter_id: int | None = None) -> HeldAt:
    """The moment memory is read at for this question — the day chosen, else a day the question
    names (``legaltext.as_of``, relative days against ``said_on``, today by default), else — given
    the ``user`` who asks — the moment of an act of the firm's it names (``held_at_by_act``) — and
    the question's words that named it ("" when chosen). Raises TurnRejected for a bad chosen day."""
    if chosen not in (None, ""):
        if not isinstance(chosen, str):
            raise TurnRejected("bad_as_of", _("“%(value)s” is not a date: write it as 2026-03-01.")
                               % {"value": str(chosen)[:40]})
        try:
            return HeldAt(parse_as_of(chosen, began=None, world=True))
        except BadDate as error:
            raise TurnRejected("bad_as_of", str(error)) from None
    found = as_of_in(question, said_on or timezone.localdate())
    if found is not None:
        return HeldAt(end_of_day(found.day), found.words)
    return held_at_by_act(user, question, matter_id=matter_id) if user is not None else HeldAt()


def held_at_by_act(user, question: str, *, matter_id: int | None = None,
                   exclude_message_ids: tuple[int, ...] = ()) -> HeldAt:
    """The moment ``question`` names by what the firm did then ("我们第一次建议…的时候": the
    words, ``legaltext.as_of.past_event_in``; the message, ``recall.message_of_event``), the
    words that named it and that message; none when it names none or no message ``user`` may see
    tells of it."""
    event = past_event_in(question)
    if event is None:
        return HeldAt()
    try:
        message = message_of_event(user, event.event, first=event.first, by_firm=event.by_firm,
                                   matter_id=matter_id, exclude_message_ids=exclude_message_ids)
    except (SearchError, EmbeddingUnavailable) as error:
        logger.warning("the moment of %r was not found: %s", event.rule, error)
        return HeldAt()
    return HeldAt() if message is None else HeldAt(message.said_at, event.words, message)


def hit_payload(hit, viewer: Viewer) -> dict[str, Any]:
    if hit.message is not None:  # what was said (TURNS: raw messages are recalled too)
        return message_hit_payload(hit)
    note = hit.note
    return redact_note_payload({
        "kind": hit.kind,
        "id": str(note.pk),
        "content": note.content,
        "layer": hit.layer,
        "layer_label": note.get_memory_scope_display(),
        "category": note.category,
        "category_label": note.get_category_display(),
        "rank": hit.rank,
        "score": hit.breakdown.as_dict(),
        "reasons": list(hit.reasons),
        "source_type": note.source_type,
        "source_id": note.source_id,
        "matter_id": note.matter_id,
        "matter": note.matter.title if note.matter_id else None,
        "matter_reference": note.matter.reference if note.matter_id else None,
        "provenance_url": note_page_url(note.pk),  # the note's page for people: where it came from
        "document_url": note.document_url(),  # a note made from a document: its page, highlighted
        "document_citation": note.speaker if note.document_url() else "",
        # current notes of the same slot with another value: flagged until one is corrected
        "contradictions": contradictions_payload(hit),
    }, note, viewer)


def recall(user, start: TurnStart) -> Recall:
    """Search memory for the question and build the LLM messages; memory trouble never blocks the answer."""
    conversation, question = start.conversation, start.user_message.content
    result: SearchResult | None = None
    warning = ""
    try:
        # The query: the question plus the dialogue it leans on — the last lines before it
        # (search bounds both; an answer the offline engine composed only repeats memory and is
        # left out); the question itself, saved just before, is not recalled.
        previous = [m.content for m in working_memory(conversation)
                    if m.pk != start.user_message.pk and m.engine != ENGINE_OFFLINE][-CONTEXT_LINES:]
        asked = without_moment(question, start.held_at_words)  # at a moment: what is asked of it
        result = search_memory(
            user,
            asked[:MAX_QUERY_CHARS],
            k=CHAT_RECALL_K,
            strategy="layered",
            matter_id=conversation.matter_id,
            conversation=conversation,
            context="\n".join(previous),
            exclude_message_ids=[start.user_message.pk],
            valid_at=start.held_at,
        )
        if start.held_at_message is not None:  # the advice itself states what it rested on
            result = moment_first(result, start.held_at_message, CHAT_RECALL_K)
    except (SearchError, EmbeddingUnavailable) as error:
        logger.error("recall failed for conversation %s: %s", conversation.pk, error)
        warning = _("记忆检索暂不可用，本次回答未使用长期记忆。")
    history = [
        {"role": m.role, "content": m.content}
        for m in working_memory(conversation)
        if m.pk != start.user_message.pk and m.role in (Message.Role.USER, Message.Role.ASSISTANT) and m.content
    ]
    try:
        fitted = fit_prompt(
            system=SYSTEM_PROMPT + "\n" + CITATION_REMINDER, question=question, history=history, result=result,
            context_tokens=settings.LLM_CONTEXT_TOKENS, answer_tokens=settings.LLM_ANSWER_MAX_TOKENS,
        )
    except PromptTooLong as too_long:
        logger.warning("question of conversation %s does not fit the model: %s", conversation.pk, too_long)
        raise TurnRejected(
            "question_too_long", _("The question is too long for the language model's context window; please shorten it.")
        ) from too_long
    viewer = viewer_of(user)
    hits = [hit_payload(hit, viewer) for hit in fitted.result.hits] if fitted.result else []
    # numbered in the order the model reads them: the memory's hits by rank, then the passages
    recalled = number_sources(hits + (_document_passages(result.passages) if result is not None else []),
                              question=question)
    passages = recalled[len(hits):]
    llm_messages = [{"role": "system", "content": SYSTEM_PROMPT}]
    if fitted.memory_message:
        llm_messages.append(fitted.memory_message)
    if passages:
        llm_messages.append(_documents_message(passages))
    llm_messages.extend(fitted.history)
    if recalled:
        llm_messages.append({"role": "system", "content": CITATION_REMINDER})
    llm_messages.append({"role": "user", "content": question})
    if len(fitted.history) < len(history):
        logger.info(
            "conversation %s: %d of %d history messages fit the context window",
            conversation.pk, len(fitted.history), len(history),
        )
    return Recall(
        result=fitted.result,
        llm_messages=llm_messages,
        recalled=recalled,
        plan=result.plan.as_dict() if result is not None else None,
        warning=warning,
        answer_max_tokens=fitted.answer_tokens,
        nothing_on=list(result.nothing_on) if result is not None else [],
        held_at=None if start.held_at is None else {
            "on": f"{timezone.localtime(start.held_at):%Y-%m-%d}", "words": start.held_at_words,
            "chosen": not start.held_at_words},
    )


def _document_passages(hits: list[DocumentHit]) -> list[dict[str, Any]]:
    """The search's best document passages (its matter's, every visible matter's when the
    conversation has none), as the recalled panel shows them: citation first."""
    passages = []
    for rank, hit in enumerate(hits[:CHAT_DOCUMENT_K], start=1):
        payload = hit.payload()
        payload.update({"id": f"document-chunk:{hit.chunk_id}", "layer": "document", "rank": rank,
                        "content": f"{hit.citation}：{hit.text}",
                        # what it was ranked by: its keyword and meaning ranks, and the fused score
                        "score": {"total": payload["score"], **{f"{name}_rank": rank for name, rank in hit.ranks.items()}},
                        "provenance_url": payload["url"], "source_type": "document"})
        passages.append(payload)
    return passages


def _documents_message(passages: list[dict[str, Any]]) -> dict[str, str]:
    lines = [_("相关文件原文（回答时请注明出处，如《房屋租赁合同》第 3 页）：")]
    lines += [f"[{p['number']}] 【{p['citation']}】{p['text'][:CHAT_DOCUMENT_CHARS]}" for p in passages]
    return {"role": "system", "content": "\n".join(lines)}


def finish_turn(
    start: TurnStart,
    recall_: Recall,
    *,
    reply: str,
    status: str,
    engine: str,
    timings: dict[str, float],
    error: str = "",
) -> Message:
    """Save the reply (partial when cancelled or failed) and enqueue its extraction, once.

    The recalled memories are saved with the reply as shown (content, rank, scores, reasons)
    and the plan beside them, so the panel is rebuilt after a reload even if a note changes
    later (docs/chat-page.md "Recalled memories saved with each reply"). An answer this chat
    made (the LLM's or the offline engine's) is saved as checked (docs/citations.md); a reply
    another assistant gives through a connector is saved as given."""
    citations = None
    if engine == ENGINE_OFFLINE or engine.startswith(LLM_ENGINE_PREFIX):  # an answer this chat made
        checked = check_answer(reply, recall_.recalled, question=start.user_message.content,
                               by_construction=engine == ENGINE_OFFLINE)
        if engine != ENGINE_OFFLINE and status == Message.Status.COMPLETE and reply.strip():
            checked = say_when_nothing_supports(checked, recall_.recalled, start.user_message.content)
        reply, citations = checked.text, checked.as_dict(recall_.recalled)
        count_marks(checked)
    with transaction.atomic():
        message = save_message(
            start.conversation, Message.Role.ASSISTANT, reply, speaker=engine, status=status
        )
        message = finish_reply(
            message,
            recalled=recall_.recalled,
            recall_plan=recall_.plan or {},
            timings=timings,
            engine=engine,
            error=error[:500],
            citations=citations,
        )
        turn = enqueue_turn_extraction(start.user_message, message)
    metrics.CHAT_TURNS.labels(status).inc()
    _log_turn(start, recall_, message, turn_id=turn.pk, status=status, engine=engine, timings=timings)
    return message


def _log_turn(start: TurnStart, recall_: Recall, reply: Message, *, turn_id: int, status: str, engine: str,
              timings: dict[str, float]) -> None:
    """The turn's one log line and its times: ids, outcome, durations — never the question or
    the reply (their lengths only with ``settings.LOG_CONTENT_LENGTHS``). ``turn_id`` is the extraction
    job's id, so the job's own line can be found from here."""
    conversation = start.conversation
    if "total_ms" in timings:
        metrics.CHAT_TURN_SECONDS.labels(status).observe(timings["total_ms"] / 1000)
    if "first_token_ms" in timings:
        metrics.CHAT_FIRST_TOKEN_SECONDS.observe(timings["first_token_ms"] / 1000)
    log_event(
        logger, "chat_turn",
        outcome=status, engine=engine,
        firm_id=conversation.firm_id, user_id=conversation.user_id, matter_id=conversation.matter_id,
        conversation_id=conversation.pk, user_message_id=start.user_message.pk, message_id=reply.pk,
        turn_id=turn_id, recalled=len(recall_.recalled),
        duration_ms=timings.get("total_ms"), recall_ms=timings.get("recall_ms"),
        first_token_ms=timings.get("first_token_ms"),
        **content_lengths(question=start.user_message.content, reply=reply.content),
    )
