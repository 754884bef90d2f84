"""Step 2 of the write path: one turn → at most five validated knowledge items.

With an LLM configured (``LLM_BASE_URL``, or ``LLM_EXTRACTION_BASE_URL`` for a separate
extraction server) the extraction prompt goes through ``LLMClient.complete_json``
(json_schema → json_object → plain fallback, retries) as background work — it waits while
a chat answer is being generated; otherwise the rule-based offline engine runs. LLM errors
are not caught here: the turn job records them and retries or fails (docs/write-path.md: never
silently dropped).

Only what was really said is read: a reply that did not complete (cancelled, failed,
empty) contributes nothing — a model asked about an empty reply invents advice.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date

from django.conf import settings

from remember.extraction import (
    KNOWLEDGE_ENVELOPE,
    KNOWLEDGE_EXAMPLE,
    KNOWLEDGE_SCHEMA,
    KNOWLEDGE_SCHEMA_NAME,
    ExtractedItem,
    TurnText,
    build_extraction_prompt,
    extract_offline,
    is_trivial_turn,
    validate_items,
)
from remember.extraction.act_model import read_acts
from remember.extraction.items import true_to_turn
from remember.extraction.subjects import with_named_subject
from remember.extraction.prompt import EXTRACTION_SYSTEM_PROMPT
from remember.client_facts import with_client_facts
from legaltext.markers import strip_markers
from remember.extraction.quotes import new_in_reply
from infra.llm import LLMClient, Role
from memory.models import Message
from infra.tokens import estimate_tokens

logger = logging.getLogger("legalmem.pipeline")

ENGINE_OFFLINE = "offline"
ENGINE_SKIPPED = "skipped"


@dataclass
class ExtractionOutcome:
    """What one turn yielded: the items kept, why others were refused, what was added from the
    client's own words the model left out, and which engine ran."""

    items: list[ExtractedItem]
    rejected_reasons: list[str] = field(default_factory=list)
    added_reasons: list[str] = field(default_factory=list)
    engine: str = ENGINE_OFFLINE

    @property
    def skipped(self) -> bool:
        return self.engine == ENGINE_SKIPPED


#: ``Message.engine`` of an answer the chat's offline engine composed from recalled memory.
OFFLINE_ANSWER_ENGINE = Message.OFFLINE_ENGINE


def extractable_reply(reply: Message) -> str:
    """The part of an assistant message extraction may read: what a completed reply says that
    was not recalled for it (``new_in_reply``); nothing of a cancelled, failed or empty one
    (the user's message still counts), nor of an answer the offline engine composed — it only
    lists recalled memories under stock headings, so it holds nothing new (docs/write-path.md)."""
    if reply.status != Message.Status.COMPLETE or reply.engine == OFFLINE_ANSWER_ENGINE:
        return ""
    if not reply.content.strip():
        return ""
    return new_in_reply(checked_words(reply), recalled_texts(reply.recalled))


def checked_words(reply: Message) -> str:
    """What a checked reply says as a fact (docs/citations.md): its source markers and the
    check's labels taken out, and every sentence citing a statute no recalled item held left
    out — an unverified citation never becomes a note."""
    checked = reply.citations if isinstance(reply.citations, dict) else {}
    content = reply.content
    for label in checked.get("labels") or ():
        content = content.replace(str(label), "")
    for marked in checked.get("marked") or ():
        if isinstance(marked, dict) and marked.get("statutes") and marked.get("sentence"):
            content = content.replace(str(marked["sentence"]), "")
    return strip_markers(content) if checked else content


def only_repeats_memory(reply: Message | None) -> bool:
    """A complete reply with words, none of them new: every sentence quotes what was recalled
    for it (an offline-composed answer is marked when it is saved)."""
    if reply is None or reply.status != Message.Status.COMPLETE or not reply.content.strip():
        return False
    return not extractable_reply(reply).strip()


def recalled_texts(recalled: list) -> list[str]:
    """Every text a reply was given from memory (``Message.recalled``): note contents, recalled
    messages, their turn partners and the turns a note's place held."""
    texts: list[str] = []
    for entry in recalled or ():
        if not isinstance(entry, dict):
            continue
        texts.append(str(entry.get("content") or ""))
        partner = entry.get("partner")
        if isinstance(partner, dict):
            texts.append(str(partner.get("content") or ""))
        for said in entry.get("said") or ():
            if isinstance(said, dict):
                texts.append(str(said.get("content") or ""))
    return [text for text in texts if text]


def fit_reply_to_context(user_msg: str, ai_resp: str) -> str:
    """Shorten the reply so the extraction prompt and its answer fit ``LLM_CONTEXT_TOKENS``."""
    room = settings.LLM_CONTEXT_TOKENS - settings.LLM_EXTRACTION_MAX_TOKENS
    while ai_resp and estimate_tokens(build_extraction_prompt(user_msg, ai_resp)) + 200 > room:
        ai_resp = ai_resp[: len(ai_resp) * 3 // 4]
    return ai_resp


def extract_turn(
    user_msg: str,
    ai_resp: str,
    *,
    client: LLMClient | None = None,
    user_name: str = "",
    reply_name: str = "",
    client_name: str = "",
    relayed_client: str = "",
    said_on: date | None = None,
) -> ExtractionOutcome:
    """Extract the turn's knowledge; trivial turns (docs/write-path.md, Extraction) yield nothing.

    ``client`` defaults to ``LLMClient.from_settings("extraction")`` (None → offline engine).
    With an empty ``ai_resp`` only the user's words are read, and items are the user's. The
    speakers' names and the day said let the offline engine write "Caroline went …
    yesterday (7 May 2023)"; on the LLM path the names tell the speaker rules whose words the
    reply is (``TurnText``: items are checked against what their speaker said).
    ``client_name`` is the name the user message's speaker gave earlier in the matter
    (``remember.client_name``): notes call them by it rather than "用户"
    (``grounding.with_names``), on both engines; ``relayed_client`` the client a lawyer named
    earlier in the matter. Chinese notes then name their subject (``subjects.named_subjects``).
    Raises ``infra.llm.LLMError`` subclasses when the LLM fails after its retries.
    """
    if is_trivial_turn(user_msg, ai_resp):
        return ExtractionOutcome(items=[], engine=ENGINE_SKIPPED)
    client = client if client is not None else LLMClient.from_settings(Role.EXTRACTION)
    if client is None:
        turn = TurnText(user_msg, ai_resp, user_name=user_name, reply_name=reply_name,
                        client_name=client_name, relayed_client=relayed_client, said_on=said_on)
        items = extract_offline(user_msg, ai_resp, user_name=user_name, reply_name=reply_name, said_on=said_on,
                                read_acts=read_acts)
        kept = [true for true in (true_to_turn(item, turn) for item in items) if true is not None]
        return ExtractionOutcome(items=[with_named_subject(item, turn) for item in kept], engine=ENGINE_OFFLINE)
    ai_resp = fit_reply_to_context(user_msg, ai_resp)
    try:
        data = client.complete_json(
            build_extraction_prompt(user_msg, ai_resp),
            schema=KNOWLEDGE_SCHEMA,
            schema_name=KNOWLEDGE_SCHEMA_NAME,
            system=EXTRACTION_SYSTEM_PROMPT,
            envelope=KNOWLEDGE_ENVELOPE,
            example=KNOWLEDGE_EXAMPLE,
            max_tokens=settings.LLM_EXTRACTION_MAX_TOKENS,
        )
    finally:
        client.close()
    turn = TurnText(user_msg, ai_resp, user_name=user_name, reply_name=reply_name,
                    client_name=client_name, relayed_client=relayed_client, said_on=said_on)
    items, reasons = validate_items(data.get("knowledge", []), turn=turn)
    floor = with_client_facts(items, user_msg, turn=turn, user_name=user_name, said_on=said_on)
    for reason in [*reasons, *floor.dropped]:
        logger.warning("extraction item rejected: %s", reason)
    for reason in floor.added:  # what the client said and the model left out: added, not refused
        logger.info("extraction item %s", reason)
    return ExtractionOutcome(items=[with_named_subject(item, turn) for item in floor.items], rejected_reasons=[*reasons, *floor.dropped], added_reasons=floor.added,
                             engine=f"llm:{client.config.model}")
