"""Steps 2–4 of a story run: every turn through the real write path, then the run folder.

Each event is one conversation of the story's user (in the event's matter, or none), keyed
``story:<story_id>:e<edition>:<event>``; messages are keyed ``turn-017:user`` /
``turn-017:assistant``, so running the same story again stores nothing twice and finished
turn jobs are not run again. Turns run in story time order: save both messages, enqueue the
turn job (``source_type=chat_story``) and run it synchronously with ``process_turn`` —
extraction, ADD/UPDATE/IGNORE routing, linking, evolution, persona and working-memory
consolidation all happen exactly as after a live chat answer, with the story's provenance
(``source_id`` ``story-turn-017``, tag ``event:<事件>``) given to the job, so each note is
created with it.
"""
from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from infra.embeddings import get_embedder
from memory.models import (
    Conversation,
    Firm,
    Message,
    Note,
    NoteLink,
    PersonaTrait,
    RoutingDecision,
    SourceType,
    TurnExtraction,
)
from remember.turns import enqueue_turn_extraction, process_turn
from remember import persona
from remember.drafts import Provenance
from remember.routing import thresholds
from infra.llm import config as llm_tuning
from memory.services.conversations import ConversationConflict, keyed_conversation, save_message
from showcase.story.generation import Generation, write_json
from remember.drafts import event_tag
from memory.labels import EVENT_TAG_PREFIX
from showcase.story.script import Story, StoryError, StoryTurn

STORY_ACTOR = "system:story"
REPLY_DELAY = timedelta(seconds=30)
FINISHED = (TurnExtraction.Status.DONE, TurnExtraction.Status.SKIPPED, TurnExtraction.Status.FAILED)
_EXTERNAL_RE = re.compile(r"^story:(?P<story>[A-Za-z0-9_-]+):e(?P<edition>\d+):(?P<event>[A-Za-z0-9_-]+)$")
_TURN_RE = re.compile(r"^turn-(?P<number>\d+):(?P<role>user|assistant)$")


@dataclass
class StoryRun:
    """What one run did, and where its files are."""

    run_dir: Path
    story: Story
    edition: int
    turns_processed: int = 0
    turns_left_to_worker: int = 0  # enqueued after the time budget was spent
    messages_created: int = 0
    notes_made: int = 0  # notes created with the story's provenance in this run
    seconds: float = 0.0
    summary: dict[str, Any] = field(default_factory=dict)


# --- the story already in a firm ------------------------------------------------------------


def conversation_key(story_id: str, edition: int, event_key: str) -> str:
    return f"story:{story_id}:e{edition}:{event_key}"


def story_conversations(firm: Firm, user) -> list[Conversation]:
    """Every story conversation of ``user`` in ``firm`` (all stories, all editions)."""
    return [
        c for c in Conversation.objects.filter(firm=firm, user=user, external_id__startswith="story:")
        if _EXTERNAL_RE.match(c.external_id)
    ]


def existing_story(firm: Firm, user) -> tuple[str, int] | None:
    """(story_id, edition) of the user's latest story edition in the firm, or None."""
    keys = [_EXTERNAL_RE.match(c.external_id) for c in story_conversations(firm, user)]
    if not keys:
        return None
    latest = max(keys, key=lambda m: int(m["edition"]))
    return latest["story"], int(latest["edition"])


def next_edition(firm: Firm, user) -> int:
    keys = [_EXTERNAL_RE.match(c.external_id) for c in story_conversations(firm, user)]
    return max((int(m["edition"]) for m in keys), default=0) + 1


def story_from_conversations(firm: Firm, user, story_id: str, edition: int) -> dict[str, Any]:
    """Rebuild a stored story (an LLM story run before) from its conversations and messages,
    so running it again is idempotent without asking the LLM for a new one."""
    events, turns = [], []
    for conversation in story_conversations(firm, user):
        match = _EXTERNAL_RE.match(conversation.external_id)
        if match["story"] != story_id or int(match["edition"]) != edition:
            continue
        events.append({"key": match["event"], "name": conversation.title,
                       "matter": conversation.matter.reference if conversation.matter else None})
        by_turn: dict[int, dict[str, Any]] = {}
        for message in Message.objects.filter(conversation=conversation):
            parsed = _TURN_RE.match(message.external_id)
            if parsed:
                entry = by_turn.setdefault(int(parsed["number"]), {"event": match["event"]})
                entry[parsed["role"]] = message.content
                if parsed["role"] == "user":
                    entry["at"] = message.said_at.isoformat()
        turns.extend(t for _, t in sorted(by_turn.items()) if {"user", "assistant", "at"} <= set(t))
    return {"story_id": story_id, "title": f"stored story {story_id} (edition {edition})",
            "description": "rebuilt from the stored conversations", "events": events, "turns": turns}


# --- running ----------------------------------------------------------------------------------


def _conversations(story: Story, firm: Firm, user, edition: int) -> dict[str, Conversation]:
    """One conversation per event, all created or none (checked before anything is written)."""
    for event in story.events:
        if event.matter is not None and not event.matter.is_assigned(user):
            raise StoryError(f"{user.get_username()} is not assigned to matter {event.matter.reference}")
    found: dict[str, Conversation] = {}
    with transaction.atomic():
        for event in story.events:
            key = conversation_key(story.story_id, edition, event.key)
            try:
                conversation, _ = keyed_conversation(
                    firm=firm, external_id=key, user=user, matter=event.matter, title=event.name,
                )
            except ConversationConflict as conflict:
                raise StoryError(str(conflict)) from conflict
            found[event.key] = conversation
    return found


def _run_turn(turn: StoryTurn, conversation: Conversation, user, run: StoryRun, *, extract: bool = True) -> None:
    """One turn through the write path, in one transaction (so the background task that
    ``enqueue_turn_extraction`` schedules on commit finds the job already done). Without
    ``extract`` the job is only enqueued: the worker extracts it later."""
    with transaction.atomic():
        ids = {f"{turn.label}:user", f"{turn.label}:assistant"}
        run.messages_created += 2 - Message.objects.filter(conversation=conversation, external_id__in=ids).count()
        question = save_message(conversation, Message.Role.USER, turn.user, speaker=user.get_username(),
                                said_at=turn.at, external_id=f"{turn.label}:user")
        reply = save_message(conversation, Message.Role.ASSISTANT, turn.assistant, speaker="assistant",
                             said_at=turn.at + REPLY_DELAY, external_id=f"{turn.label}:assistant")
        job = enqueue_turn_extraction(question, reply, source_type=SourceType.CHAT_STORY)
        if job.status not in FINISHED and extract:
            # The turn's notes — its items, and a persona promotion or a consolidation it
            # triggers — are created with the story's provenance; nothing re-stamps them.
            provenance = Provenance(source_id=turn.source_id, tags=(event_tag(turn.event.name),))
            before = Note.objects.filter(firm=conversation.firm, source_id=turn.source_id).count()
            process_turn(job.pk, provenance=provenance)
            run.turns_processed += 1
            run.notes_made += Note.objects.filter(firm=conversation.firm, source_id=turn.source_id).count() - before
        elif job.status not in FINISHED:
            run.turns_left_to_worker += 1


def run_story(
    story: Story,
    *,
    firm: Firm,
    user,
    edition: int,
    run_dir: Path,
    generation: Generation,
    progress: Callable[[int, int], None] | None = None,
    deadline: float | None = None,
) -> StoryRun:
    """Run every turn of ``story`` for ``user`` in ``firm`` and write the run folder.
    After ``deadline`` (a ``time.monotonic()`` value) turns are still saved and their jobs
    enqueued, but their extraction is left to the background worker."""
    started = time.perf_counter()
    run = StoryRun(run_dir=run_dir, story=story, edition=edition)
    (run_dir / "turns").mkdir(parents=True, exist_ok=True)
    save_generation(generation, run_dir)
    conversations = _conversations(story, firm, user, edition)
    all_conversations = list(conversations.values())
    if progress:
        progress(0, len(story.turns))
    for done, turn in enumerate(story.turns, start=1):
        _run_turn(turn, conversations[turn.event.key], user, run,
                  extract=deadline is None or time.monotonic() < deadline)
        if progress:
            progress(done, len(story.turns))
    run.seconds = time.perf_counter() - started
    exchanges = _exchanges(story, firm, user, edition, conversations)
    turn_records = [_turn_record(turn, conversations[turn.event.key]) for turn in story.turns]
    notes = _stored_notes(all_conversations)
    run.summary = _graph_summary(story, all_conversations, notes, turn_records, run)
    write_json(run_dir / "03_story_exchanges.json", exchanges)
    for record in turn_records:
        write_json(run_dir / "turns" / f"{record['turn']}.json", record)
    write_json(run_dir / "90_stored_notes.json", {"count": len(notes), "notes": notes})
    write_json(run_dir / "91_graph_summary.json", run.summary)
    (run_dir / "00_api_research.md").write_text(_research(generation, run, turn_records), encoding="utf-8")
    return run


# --- the run folder -------------------------------------------------------------------------


def save_generation(generation: Generation, run_dir: Path) -> None:
    """01 and 02: the story request and response, exactly as recorded."""
    write_json(run_dir / "01_story_generation_request.json", generation.request)
    write_json(run_dir / "02_story_generation_response.json", generation.response)


def _message(message: Message) -> dict[str, Any]:
    return {"id": message.pk, "external_id": message.external_id, "said_at": message.said_at.isoformat(),
            "speaker": message.speaker, "content": message.content}


def _exchanges(story: Story, firm: Firm, user, edition: int, conversations: dict[str, Conversation]) -> dict[str, Any]:
    counts = Counter(t.event.key for t in story.turns)
    events = [
        {"key": e.key, "name": e.name, "tag": event_tag(e.name), "matter": e.matter_reference,
         "summary": e.summary, "conversation": conversations[e.key].external_id,
         "conversation_id": conversations[e.key].pk, "turns": counts[e.key]}
        for e in story.events
    ]
    turns = []
    for turn in story.turns:
        conversation = conversations[turn.event.key]
        messages = {m.external_id: m for m in Message.objects.filter(
            conversation=conversation, external_id__in=[f"{turn.label}:user", f"{turn.label}:assistant"])}
        turns.append({
            "turn": turn.label, "event": turn.event.name, "at": turn.at.isoformat(),
            "user": turn.user, "assistant": turn.assistant,
            "user_message_id": messages[f"{turn.label}:user"].pk,
            "assistant_message_id": messages[f"{turn.label}:assistant"].pk,
        })
    return {
        "story_id": story.story_id, "edition": edition, "title": story.title, "description": story.description,
        "firm": firm.slug, "user": user.get_username(),
        "counts": {"events": len(events), "turns": len(turns), "messages": 2 * len(turns)},
        "events": events, "turns": turns,
    }


def _turn_record(turn: StoryTurn, conversation: Conversation) -> dict[str, Any]:
    job = TurnExtraction.objects.select_related("user_message", "assistant_message").get(
        assistant_message__conversation=conversation, assistant_message__external_id=f"{turn.label}:assistant")
    decisions = list(RoutingDecision.objects.filter(source_key=job.source_key).order_by("item_index"))
    created = list(Note.objects.filter(conversation__firm=conversation.firm, source_type=SourceType.CHAT_STORY,
                                       source_id=turn.source_id, conversation__external_id__startswith=_prefix(conversation))
                   .order_by("stored_at"))
    created_ids = {str(n.pk) for n in created}
    return {
        "turn": turn.label,
        "event": turn.event.name,
        "event_tag": event_tag(turn.event.name),
        "matter": turn.event.matter_reference,
        "at": turn.at.isoformat(),
        "conversation": conversation.external_id,
        "input": {"user": _message(job.user_message), "assistant": _message(job.assistant_message)},
        "extraction": {"job": job.pk, "status": job.status, "engine": job.engine, "attempts": job.attempts,
                       "last_error": job.last_error, "items": job.items or [], "rejected": job.rejected, "added": job.added},
        "routing": [
            {"item": d.item_index, "action": d.action, "reason": d.reason, "category": d.category,
             "content": d.content, "note": str(d.note_id) if d.note_id else None,
             "note_created_here": bool(d.note_id) and str(d.note_id) in created_ids,
             "previous": str(d.previous_id) if d.previous_id else None,
             "similarity": None if d.similarity is None else round(d.similarity, 4)}
            for d in decisions
        ],
        "notes_created": [
            {"id": str(n.pk), "memory_scope": n.memory_scope, "category": n.category, "content": n.content}
            for n in created
        ],
    }


def _prefix(conversation: Conversation) -> str:
    """``story:<id>:e<edition>:`` — the conversations of one story edition."""
    match = _EXTERNAL_RE.match(conversation.external_id)
    return f"story:{match['story']}:e{match['edition']}:"


def _event_of(note: Note) -> str | None:
    return next((t[len(EVENT_TAG_PREFIX):] for t in note.tags if t.startswith(EVENT_TAG_PREFIX)), None)


def _stored_notes(conversations: list[Conversation]) -> list[dict[str, Any]]:
    notes = Note.objects.filter(conversation__in=conversations).select_related(
        "firm", "matter", "owner", "conversation")
    return [
        {
            "id": str(n.pk), "content": n.content, "memory_scope": n.memory_scope, "category": n.category,
            "memory_type": n.memory_type, "event": _event_of(n), "tags": list(n.tags), "keywords": list(n.keywords),
            "context": n.context, "importance": n.importance, "confidence": n.confidence,
            "mention_count": n.mention_count, "status": n.status,
            "provenance": {
                "firm": n.firm.slug, "matter": n.matter.reference if n.matter else None,
                "owner": n.owner.get_username() if n.owner else None,
                "conversation": n.conversation.external_id if n.conversation else None,
                "source_type": n.source_type, "source_id": n.source_id,
                "source_message_ids": list(n.source_message_ids), "speaker": n.speaker,
                "said_at": n.said_at.isoformat() if n.said_at else None, "stored_at": n.stored_at.isoformat(),
            },
            "valid_from": n.valid_from.isoformat(), "valid_to": n.valid_to.isoformat() if n.valid_to else None,
            "superseded_by": str(n.superseded_by_id) if n.superseded_by_id else None,
            "history": [h.get("event") for h in n.evolution_history],
        }
        for n in notes.order_by("stored_at", "id")
    ]


def _graph_summary(story: Story, conversations: list[Conversation], notes: list[dict[str, Any]],
                   turn_records: list[dict[str, Any]], run: StoryRun) -> dict[str, Any]:
    ids = [n["id"] for n in notes]
    links = NoteLink.objects.filter(Q(source_id__in=ids) | Q(target_id__in=ids))
    decisions = Counter(d["action"] for r in turn_records for d in r["routing"])
    profile = [n for n in notes if n["memory_scope"] == "user_profile"]
    traits = PersonaTrait.objects.filter(note_id__in=[n["id"] for n in profile])
    created_in_turns = sum(len(r["notes_created"]) for r in turn_records)
    return {
        "story_id": story.story_id,
        "edition": run.edition,
        "turns": {"total": len(turn_records),
                  "by_status": dict(Counter(r["extraction"]["status"] for r in turn_records)),
                  "by_engine": dict(Counter(r["extraction"]["engine"] for r in turn_records)),
                  "processed_in_this_run": run.turns_processed,
                  "left_to_the_worker": run.turns_left_to_worker},
        "messages": {"total": Message.objects.filter(conversation__in=conversations).count(),
                     "created_in_this_run": run.messages_created},
        "notes": {
            "total": len(notes),
            "active": sum(n["status"] == Note.Status.ACTIVE for n in notes),
            "superseded": sum(n["status"] == Note.Status.SUPERSEDED for n in notes),
            "by_scope": dict(Counter(n["memory_scope"] for n in notes)),
            "by_category": dict(Counter(n["category"] for n in notes)),
            "by_event": dict(Counter(n["event"] for n in notes)),
            "made_in_this_run": run.notes_made,
        },
        "routing_decisions": {"total": sum(decisions.values()), "by_action": dict(decisions)},
        "links": {"total": links.count(),
                  "by_type": dict(Counter(links.values_list("link_type", flat=True)))},
        "persona_promotions": {
            "count": len(profile),
            "notes": [{"id": n["id"], "content": n["content"], "source_id": n["provenance"]["source_id"],
                       "mentions": n["mention_count"]} for n in profile],
            "traits": [{"id": t.pk, "status": t.status, "evidence": t.evidence_count,
                        "strength": round(t.strength, 4), "decision": t.decision} for t in traits],
        },
        "updates": {
            "update_decisions": decisions.get(RoutingDecision.Action.UPDATE, 0),
            "supersessions": [{"old": n["id"], "new": n["superseded_by"], "content": n["content"],
                               "valid_to": n["valid_to"]} for n in notes if n["superseded_by"]],
        },
        "consistency": {
            "turns_in_exchanges_equal_turn_files": len(turn_records) == len(story.turns),
            "notes_created_in_turns": created_in_turns,
            "notes_stored": len(notes),
            "notes_created_in_turns_equal_stored": created_in_turns == len(notes),
        },
    }


def _research(generation: Generation, run: StoryRun, turn_records: list[dict[str, Any]]) -> str:
    engines = Counter(r["extraction"]["engine"] for r in turn_records)
    embedder = get_embedder()
    lines = [
        "# Story run: what was called",
        "",
        f"- story: `{run.story.story_id}` edition {run.edition} — {run.story.title}",
        f"- run folder: `{run.run_dir}`",
        f"- turns: {len(turn_records)} over {len(run.story.events)} events; processed in this run: "
        f"{run.turns_processed}; took {run.seconds:.1f} s",
        "",
        "## 1. Story generation",
        "",
        f"- engine: **{generation.engine}**",
    ]
    if generation.engine.startswith("llm:"):
        request = generation.request
        chunks = generation.response.get("chunks", [])
        replaced = [c for c in chunks if c["source"] != "llm"]
        lines += [
            f"- server: `{request['base_url']}`, model `{request['model']}`, `{request['endpoint']}`",
            f"- in chunks that fit LLM_CONTEXT_TOKENS={request['context_tokens']}: {len(chunks)} chunk(s), one "
            "event (or part of one) each, on the outline of the shipped script (its events and turn times); "
            "`LLMClient.complete_json(prompt, schema=CHUNK_SCHEMA, schema_name=\"legal_story_chunk\", max_tokens=…)` "
            "(infra/llm/json_requests.py) with its json_schema → json_object → plain fallback.",
            f"- each chunk checked (turn shape, event, times in order inside its window); a bad chunk is asked "
            f"for once more, then replaced by the shipped script's turns: {len(replaced)} replaced "
            f"({', '.join(str(c['chunk']) for c in replaced) or 'none'}).",
            f"- JSON mode at the end: **{generation.json_mode}**",
            "- `01_story_generation_request.json` holds every chunk's prompt and max_tokens (written before the "
            "first request); `02_story_generation_response.json` every attempt's reply, status and error.",
        ]
    else:
        lines += [f"- {generation.request.get('why', 'no LLM call')}: the script `showcase/story/month_story.json` "
                  "(written by the project, in Chinese) is the story; `02_…response.json` is the script itself."]
    lines += ["- what happened:"] + [f"  - {note}" for note in generation.notes]
    lines += [
        "",
        "## 2. Every turn through the write path",
        "",
        "- per turn: `remember.save_message` (user + assistant, external ids `turn-NNN:user|assistant`) → "
        "`enqueue_turn_extraction(..., source_type=chat_story)` → `process_turn` (synchronously): "
        "extraction, ADD/UPDATE/IGNORE routing, A-Mem linking and evolution, persona evidence and promotion, "
        "working-memory consolidation; the turn's job is given the story's provenance, so every note it makes "
        "is created with source_type `chat_story`, source_id `story-turn-NNN` and the tag `event:<事件名>`.",
        f"- extraction engine(s): {', '.join(f'{k} × {v}' for k, v in engines.items())}",
        f"- embeddings: `{embedder.name}` (EMBEDDING_BACKEND={settings.EMBEDDING_BACKEND})",
        "",
        "## 3. Settings used",
        "",
    ]
    for name in ("LLM_BASE_URL", "LLM_MODEL", "LLM_TIMEOUT_SECONDS", "LLM_STALL_SECONDS"):
        lines.append(f"- `{name}` = `{getattr(settings, name, '') or '(empty)'}`")
    lines += ["", "Tuning settings (legalmem_site/settings.py, \"Tuning\"; not environment variables):", ""]
    lines += [f"- `{name}` = `{getattr(settings, name)}`"
              for name in ("LLM_MAX_RETRIES", "WORKING_MEMORY_SIZE", "CONSOLIDATION_BATCH")]
    lines += ["", "Tuning constants (code, not settings):", ""]
    for module, names in ((thresholds, ("ROUTING_ADD_MIN_CONFIDENCE", "ROUTING_SAME_SLOT_SIMILARITY",
                                        "ROUTING_CONFLICT_SIMILARITY", "ROUTING_NEIGHBOURS", "LINK_MIN_SIMILARITY",
                                        "LINK_MAX_SEMANTIC", "EVOLVE_MIN_SIMILARITY")),
                          (persona, ("PERSONA_PROMOTION_STRENGTH", "PERSONA_MIN_EVIDENCE", "PERSONA_HALF_LIFE_DAYS",
                                     "PERSONA_TIE_MARGIN")),
                          (llm_tuning, ("LLM_MAX_REQUEST_SECONDS",))):
        lines += [f"- `{module.__name__}.{name}` = `{getattr(module, name)}`" for name in names]
    summary = run.summary
    lines += [
        "",
        "## 4. Result",
        "",
        f"- notes: {summary['notes']['total']} ({summary['notes']['active']} active, "
        f"{summary['notes']['superseded']} superseded); by scope {summary['notes']['by_scope']}",
        f"- routing: {summary['routing_decisions']['by_action']}",
        f"- links: {summary['links']['by_type']}",
        f"- persona promotions: {summary['persona_promotions']['count']}",
        "",
    ]
    return "\n".join(lines)
