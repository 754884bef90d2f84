"""Importing transcripts through the same write path as live chat.

The JSON format (one file, UTF-8)::

    {"firm": "alpha",                       # the firm's slug (or given with --firm)
     "conversations": [
       {"id": "conv-1",                      # required, unique within the firm: re-import key
        "user": "alice",                     # required: username, a member of the firm
        "matter": "M-001",                   # optional: the matter's reference in the firm;
                                             #   the user must be assigned to it
        "title": "电脑花屏",                  # optional
        "messages": [                        # required, in conversation order
          {"id": "m1",                       # required, unique within the conversation
           "role": "user",                   # user | assistant | system
           "speaker": "alice",               # optional (defaults to the user / "assistant")
           "timestamp": "2026-03-01T10:00:00+08:00",   # required, ISO 8601 (naive = TIME_ZONE)
           "content": "..."},                # required text
          {"id": "m2", "role": "assistant", "speaker": "assistant", "timestamp": "...", "content": "..."}]}]}

A user message followed by an assistant message forms a turn; each turn is extracted,
routed and linked exactly as a chat turn (synchronously, offline engine or LLM).
The whole file is validated before anything is written; each conversation's messages are
stored in one transaction. Re-importing the same file changes nothing (conversation and
message ids are the keys; finished turns are not run again).
"""
from __future__ import annotations

import time
from contextlib import nullcontext
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext

from memory.models import Conversation, Firm, Matter, Membership, Message, RoutingDecision, SourceType, TurnExtraction
from infra.embeddings import EmbeddingUnavailable
from remember.bulk import BulkRun
from remember.message_index import index_messages
from remember.services.turn_jobs import do_create_turns
from remember.turns import process_turn
from memory.services.conversations import NewMessage, keyed_conversation, save_messages
from infra.text_hygiene import UnsafeInput, check_tree


class TranscriptError(ValueError):
    """The transcript is not in the documented format or names unknown firms/users/matters; the
    message is in the active language (``import_conversation`` prints it as it is)."""


@dataclass
class _MessageSpec:
    external_id: str
    role: str
    speaker: str
    said_at: datetime
    content: str


@dataclass
class _ConversationSpec:
    external_id: str
    user: Any
    matter: Matter | None
    title: str
    messages: list[_MessageSpec]


@dataclass(frozen=True)
class TurnFailure:
    """One turn whose extraction failed in this import: which turn, the error, and whether the
    worker retries it (``pending``) or it has failed for good (``failed``)."""

    turn: str  # "<conversation id>:<user message id>-<reply id>"
    status: str
    error: str


@dataclass
class ImportResult:
    """What an import did (counts are for this run; a re-import shows zeros where nothing changed)."""

    firm: str = ""
    conversations: int = 0
    conversations_created: int = 0
    messages_created: int = 0
    messages_existing: int = 0
    messages_indexed: int = 0
    turns: int = 0
    turns_processed: int = 0
    turn_status: Counter = field(default_factory=Counter)
    decisions: Counter = field(default_factory=Counter)
    failures: list[TurnFailure] = field(default_factory=list)
    seconds: float = 0.0
    waited_for_encoder: float = 0.0  # bulk path: seconds spent waiting for embeddings (bench/bench_import.py)

    @property
    def notes_written(self) -> int:
        return self.decisions.get(RoutingDecision.Action.ADD, 0) + self.decisions.get(RoutingDecision.Action.UPDATE, 0)

    @property
    def succeeded(self) -> int:
        """Turns whose extraction finished: notes written (done) or nothing worth keeping (skipped)."""
        return self.turn_status.get(TurnExtraction.Status.DONE, 0) + self.turn_status.get(TurnExtraction.Status.SKIPPED, 0)

    @property
    def pending(self) -> int:
        """Turns not finished and without an error of this import (another process holds them)."""
        unfinished = self.turn_status.get(TurnExtraction.Status.PENDING, 0) + self.turn_status.get(
            TurnExtraction.Status.RUNNING, 0)
        return unfinished - sum(f.status == TurnExtraction.Status.PENDING for f in self.failures)

    def summary(self) -> str:
        decided = ", ".join(f"{k} {v}" for k, v in sorted(self.decisions.items())) or "none"
        retried = sum(f.status == TurnExtraction.Status.PENDING for f in self.failures)
        return (
            f"firm {self.firm}: {self.conversations} conversation(s) ({self.conversations_created} new), "
            f"{self.messages_created} message(s) new, {self.messages_existing} already there, "
            f"{self.messages_indexed} embedded for search; "
            f"{self.turns} turn(s), {self.turns_processed} processed now; extraction: {self.succeeded} succeeded "
            f"(done {self.turn_status.get(TurnExtraction.Status.DONE, 0)}, "
            f"skipped {self.turn_status.get(TurnExtraction.Status.SKIPPED, 0)}), {len(self.failures)} failed "
            f"({len(self.failures) - retried} for good, {retried} to be retried by the worker), "
            f"{self.pending} still pending; notes written {self.notes_written}; decisions: {decided}"
        )


def _text(obj: dict, key: str, where: str, *, required: bool = True, default: str = "") -> str:
    value = obj.get(key, None)
    if value is None or (isinstance(value, str) and not value.strip() and required):
        if required:
            raise TranscriptError(gettext("%(where)s: missing %(key)r") % {"where": where, "key": key})
        return default
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise TranscriptError(gettext("%(where)s: %(key)r must be text") % {"where": where, "key": key})
    return str(value)


def parse_transcript(data: Any, *, firm_slug: str | None = None) -> tuple[Firm, list[_ConversationSpec]]:
    """Validate the whole transcript against the database; raise TranscriptError naming the place."""
    if not isinstance(data, dict):
        raise TranscriptError(gettext("the transcript must be a JSON object with 'firm' and 'conversations'"))
    try:
        check_tree(data)  # no NUL or lone surrogate anywhere, bounded nesting (infra/text_hygiene.py)
    except UnsafeInput as unsafe:
        raise TranscriptError(str(unsafe)) from None
    slug = data.get("firm") or firm_slug
    if firm_slug and data.get("firm") and data["firm"] != firm_slug:
        raise TranscriptError(gettext("the file is for firm %(firm)r, not %(given)r") % {
            "firm": data["firm"], "given": firm_slug})
    if not slug or not isinstance(slug, str):
        raise TranscriptError(gettext("missing 'firm' (give it in the file or with --firm)"))
    firm = Firm.objects.filter(slug=slug).first()
    if firm is None:
        raise TranscriptError(gettext("unknown firm %(slug)r") % {"slug": slug})
    conversations = data.get("conversations")
    if not isinstance(conversations, list) or not conversations:
        raise TranscriptError(gettext("'conversations' must be a non-empty list"))
    users = get_user_model().objects
    specs: list[_ConversationSpec] = []
    seen_conversations: set[str] = set()
    for ci, conv in enumerate(conversations):
        where = f"conversations[{ci}]"
        if not isinstance(conv, dict):
            raise TranscriptError(gettext("%(where)s: must be an object") % {"where": where})
        external_id = _text(conv, "id", where)
        where = gettext("conversation %(id)r") % {"id": external_id}
        if external_id in seen_conversations:
            raise TranscriptError(gettext("%(where)s: the id appears twice in the file") % {"where": where})
        seen_conversations.add(external_id)
        username = _text(conv, "user", where)
        user = users.filter(username=username).first()
        if user is None:
            raise TranscriptError(gettext("%(where)s: unknown user %(user)r") % {"where": where, "user": username})
        if not Membership.objects.filter(firm=firm, user=user).exists():
            raise TranscriptError(gettext("%(where)s: user %(user)r is not a member of firm %(firm)r") % {
                "where": where, "user": username, "firm": slug})
        matter = None
        reference = _text(conv, "matter", where, required=False)
        if reference:
            matches = list(Matter.objects.filter(firm=firm, reference=reference)[:2])
            if not matches:
                raise TranscriptError(gettext("%(where)s: unknown matter %(reference)r in firm %(firm)r") % {
                    "where": where, "reference": reference, "firm": slug})
            if len(matches) > 1:
                raise TranscriptError(gettext("%(where)s: matter reference %(reference)r is ambiguous in firm %(firm)r")
                                      % {"where": where, "reference": reference, "firm": slug})
            matter = matches[0]
            if not matter.is_assigned(user):
                raise TranscriptError(gettext("%(where)s: user %(user)r is not assigned to matter %(reference)r") % {
                    "where": where, "user": username, "reference": reference})
        existing = Conversation.objects.filter(firm=firm, external_id=external_id).first()
        if existing is not None and (existing.user_id != user.pk or existing.matter_id != (matter.pk if matter else None)):
            raise TranscriptError(gettext("%(where)s: already imported with another user or matter") % {"where": where})
        messages = conv.get("messages")
        if not isinstance(messages, list) or not messages:
            raise TranscriptError(gettext("%(where)s: 'messages' must be a non-empty list") % {"where": where})
        parsed: list[_MessageSpec] = []
        ids: set[str] = set()
        for mi, msg in enumerate(messages):
            mwhere = f"{where} messages[{mi}]"
            if not isinstance(msg, dict):
                raise TranscriptError(gettext("%(where)s: must be an object") % {"where": mwhere})
            mid = _text(msg, "id", mwhere)
            if mid in ids:
                raise TranscriptError(gettext("%(where)s: message id %(id)r appears twice") % {"where": mwhere, "id": mid})
            ids.add(mid)
            role = _text(msg, "role", mwhere)
            if role not in Message.Role.values:
                raise TranscriptError(gettext("%(where)s: role must be one of %(roles)s, got %(role)r") % {
                    "where": mwhere, "roles": ", ".join(Message.Role.values), "role": role})
            content = msg.get("content")
            if not isinstance(content, str) or not content.strip():
                raise TranscriptError(gettext("%(where)s: missing 'content' text") % {"where": mwhere})
            raw_time = _text(msg, "timestamp", mwhere)
            said_at = parse_datetime(raw_time)
            if said_at is None:
                raise TranscriptError(gettext("%(where)s: timestamp %(timestamp)r is not ISO 8601") % {
                    "where": mwhere, "timestamp": raw_time})
            if timezone.is_naive(said_at):
                said_at = timezone.make_aware(said_at)
            default_speaker = username if role == Message.Role.USER else role
            speaker = _text(msg, "speaker", mwhere, required=False, default=default_speaker) or default_speaker
            parsed.append(_MessageSpec(mid[:200], role, speaker[:200], said_at, content))
        title = _text(conv, "title", where, required=False)[:300]
        specs.append(_ConversationSpec(external_id[:200], user, matter, title, parsed))
    return firm, specs


def _store_conversation(firm: Firm, spec: _ConversationSpec, result: ImportResult) -> tuple[list[TurnExtraction], int]:
    """Conversation, messages and turn jobs of one conversation, all or nothing; returns the
    turns and the conversation's id."""
    with transaction.atomic():
        conversation, created = keyed_conversation(
            firm=firm, external_id=spec.external_id, user=spec.user, matter=spec.matter, title=spec.title,
        )
        result.conversations_created += int(created)
        known = set(Message.objects.filter(conversation=conversation).values_list("external_id", flat=True))
        for m in spec.messages:
            if m.external_id in known:
                result.messages_existing += 1
            else:
                result.messages_created += 1
        stored = save_messages(conversation, [
            NewMessage(m.role, m.content, speaker=m.speaker, said_at=m.said_at, external_id=m.external_id)
            for m in spec.messages])
        pairs = [(previous, current) for previous, current in zip(stored, stored[1:])
                 if previous.role == Message.Role.USER and current.role == Message.Role.ASSISTANT]
        turns = do_create_turns(pairs, source_type=SourceType.IMPORT)
    return turns, conversation.pk


def _failure(turn: TurnExtraction) -> TurnFailure:
    user_message, reply = turn.user_message, turn.assistant_message
    label = f"{turn.conversation.external_id}:{user_message.external_id}-{reply.external_id}"
    return TurnFailure(turn=label, status=turn.status, error=turn.last_error)


def import_transcript(
    data: dict,
    *,
    actor,
    progress: Callable[[int, int], None] | None = None,
    firm: str | None = None,
    bulk: bool = True,
    window_turns: int | None = None,
) -> ImportResult:
    """Import a parsed transcript (format in the module docstring) and run every turn through
    the write path synchronously. ``progress(done, total)`` is called after each turn.
    Raises TranscriptError before writing anything if the transcript is invalid. ``actor`` is
    who imported it (a user or "system:<name>"); notes are written by the pipeline.

    ``bulk`` (the default) runs the turns through ``remember.bulk`` (batched encoding
    on a second thread, a transaction per turn); ``bulk=False`` runs ``process_turn`` on
    each turn in turn. Both write the same notes, decisions and links (docs/performance.md).
    ``window_turns``: turns per bulk window (default ``remember.bulk.WINDOW_TURNS``)."""
    started = time.perf_counter()
    firm_obj, specs = parse_transcript(data, firm_slug=firm)
    with BulkRun() if bulk else nullcontext() as run:
        return _import(firm_obj, specs, run, started=started, progress=progress, window_turns=window_turns)


def _import(firm_obj: Firm, specs: list[_ConversationSpec], run: BulkRun | None, *, started: float,
            progress: Callable[[int, int], None] | None, window_turns: int | None = None) -> ImportResult:
    result = ImportResult(firm=firm_obj.slug, conversations=len(specs))
    all_turns: list[TurnExtraction] = []
    conversation_ids: list[int] = []
    for spec in specs:
        turns, conversation_id = _store_conversation(firm_obj, spec, result)
        all_turns.extend(turns)
        conversation_ids.append(conversation_id)
        if run is not None:
            # The encoder starts on these messages while the rest is stored (remember/bulk.py).
            run.queue_messages(Message.objects.filter(conversation_id=conversation_id))
        else:
            # Every imported line is searchable before any extraction runs (batched embedding).
            result.messages_indexed += index_messages(Message.objects.filter(conversation_id=conversation_id))
    result.turns = len(all_turns)
    if progress:
        progress(0, len(all_turns))
    done = 0

    def count(turn: TurnExtraction, processed: bool) -> None:
        nonlocal done
        done += 1
        if processed:
            result.turns_processed += 1
            if turn.status in (TurnExtraction.Status.DONE, TurnExtraction.Status.SKIPPED):
                result.decisions.update(d["action"] for d in turn.decisions or [])
            else:
                result.decisions.update(
                    RoutingDecision.objects.filter(source_key=turn.source_key).values_list("action", flat=True))
        result.turn_status[turn.status] += 1
        if turn.status == TurnExtraction.Status.FAILED or (
            turn.status == TurnExtraction.Status.PENDING and turn.last_error
        ):
            result.failures.append(_failure(turn))
        if progress:
            progress(done, len(all_turns))

    finished = (TurnExtraction.Status.DONE, TurnExtraction.Status.SKIPPED, TurnExtraction.Status.FAILED)
    if run is not None:
        unfinished = {t.pk for t in all_turns if t.status not in finished}
        outcome = run.process(
            [t.pk for t in all_turns],
            on_turn=lambda turn: count(turn, turn.pk in unfinished),
            leftover_messages=Message.objects.filter(conversation_id__in=conversation_ids),
            window_turns=window_turns,
        )
        result.messages_indexed += outcome.messages_indexed
        result.waited_for_encoder = outcome.waited_for_encoder
        if outcome.message_errors:
            # As the per-turn path: an embedding outage is loud; the messages stay queued.
            raise EmbeddingUnavailable(outcome.message_errors[0])
    else:
        for turn in all_turns:
            if turn.status not in finished:
                processed = process_turn(turn.pk)
                if processed is not None:  # None: erased while the import ran (docs/records.md)
                    count(processed, True)
            else:
                count(turn, False)
    result.seconds = time.perf_counter() - started
    return result
