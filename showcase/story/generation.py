"""Step 1 of a story run: get the story — from the LLM, one chunk (event) at a time, each
request and response recorded in the run folder as it happens; or, without an LLM, from the
script shipped in the repository."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from django.utils import timezone

from infra.llm import JSONReply, LLMBadOutput, LLMClient, LLMError, LLMTooSlow
from showcase.story.chunks import (
    CHUNK_SCHEMA,
    CHUNK_SCHEMA_NAME,
    STORY_SYSTEM_PROMPT,
    ChunkError,
    StoryChunk,
    check_chunk,
    chunk_prompt,
    reply_tokens,
    select_outline,
)
from showcase.story.script import OFFLINE_SCRIPT, load_offline_script

ENGINE_OFFLINE = "offline script"
WHY_NO_LLM = "no LLM is configured (LLM_BASE_URL is empty)"
#: A chunk is asked for at most this often (the first try and one retry) before its replacement.
CHUNK_ATTEMPTS = 2


class StoryLLMFailed(Exception):
    """The LLM server cannot deliver the story (unavailable or refusing), so none of it is used."""


@dataclass
class Generation:
    """Where a story came from: the engine, the request as sent, the response as received."""

    engine: str
    story_id: str
    request: dict[str, Any]
    response: dict[str, Any]
    data: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # what happened (fallbacks, retries)
    json_mode: str | None = None


def offline_generation(why: str = WHY_NO_LLM, *, events: int | None = None,
                       turns_per_event: int | None = None) -> Generation:
    """The shipped script (cut by ``select_outline`` when limits are given): the 'request' says
    why and the 'response' is the script itself."""
    data = select_outline(load_offline_script(), events=events, turns_per_event=turns_per_event)
    return Generation(
        engine=ENGINE_OFFLINE,
        story_id=str(data.get("story_id") or "month-story"),
        request={
            "engine": ENGINE_OFFLINE,
            "why": f"{why}, so the story script shipped in the repository is used",
            "script": str(OFFLINE_SCRIPT.relative_to(OFFLINE_SCRIPT.parent.parent.parent)),
        },
        response=data,
        data=data,
        notes=["no LLM call was made, so no JSON-mode fallback applies; extraction uses the rule-based offline engine"],
    )




def _ask(client: LLMClient, prompt: str, max_tokens: int, deadline: float | None = None) -> JSONReply:
    """One structured request for a chunk: the reply, the JSON mode that produced it, the
    replies it took and the modes the server refused on the way. The request is stopped (its
    stream closed) when ``deadline`` passes."""
    return client.ask_json(prompt, schema=CHUNK_SCHEMA, schema_name=CHUNK_SCHEMA_NAME,
                           system=STORY_SYSTEM_PROMPT, max_tokens=max_tokens, deadline=deadline)


def _no_time_for(client: LLMClient, chunk: StoryChunk, deadline: float | None) -> str | None:
    """Why ``chunk`` is not asked for before ``deadline``: the budget is spent, or what is left
    is shorter than the chunk's reply takes at the server's measured speed. None: ask."""
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        return "the time budget was spent before this chunk"
    needed = client.expected_seconds(reply_tokens(len(chunk.shipped)))
    if needed is not None and needed > left:
        return (f"the time left ({left:.0f} s) is less than this chunk's reply takes at the server's "
                f"measured {client.tokens_per_second:.1f} tokens/s ({needed:.0f} s)")
    return None


ChunkProgress = Callable[[StoryChunk, int, dict[str, Any]], None]


def generate_story_in_chunks(
    client: LLMClient, chunks: list[StoryChunk], *, username: str, context_tokens: int,
    run_dir: Path | None = None, progress: ChunkProgress | None = None, deadline: float | None = None,
) -> Generation:
    """Ask the LLM for each chunk in turn. A chunk whose reply is not valid (bad JSON, wrong
    shape, times out of order) is asked for once more, then replaced by the shipped script's
    turns for it; each outcome is recorded. ``01_…request.json`` is written before the first
    request and ``02_…response.json`` after every chunk, so a run folder is never empty.

    ``deadline`` (a ``time.monotonic()`` value) bounds the LLM's time: a chunk is not asked for
    when the time left is shorter than its reply takes at the server's measured speed, and a
    request still running at the deadline is stopped (its stream closed, so the server stops
    generating). Those chunks and the rest are the shipped script's turns, recorded as such;
    the chunks the LLM wrote before are kept.

    Raises ``StoryLLMFailed`` when the server is unavailable, stalls or refuses the request: the LLM cannot deliver the story (the caller decides what to do
    instead; a second try would only delay it)."""
    started = timezone.now()
    script = load_offline_script()
    request = {
        "engine": f"llm:{client.config.model}", "base_url": client.config.base_url, "model": client.config.model,
        "endpoint": "POST /chat/completions", "schema_name": CHUNK_SCHEMA_NAME, "schema": CHUNK_SCHEMA,
        "system": STORY_SYSTEM_PROMPT, "context_tokens": context_tokens, "outline": str(OFFLINE_SCRIPT.name),
        "sent_at": started.isoformat(),
        "chunks": [{**c.describe(), "prompt": chunk_prompt(c, username=username),
                    "max_tokens": reply_tokens(len(c.shipped))} for c in chunks],
    }
    records: list[dict[str, Any]] = []
    response = {"chunks": records}
    if run_dir is not None:
        write_json(run_dir / "01_story_generation_request.json", request)
    turns: list[dict[str, Any]] = []
    for chunk in chunks:
        no_time = _no_time_for(client, chunk, deadline)
        if no_time is not None:
            record = {**chunk.describe(), "attempts": [], "source": "shipped script",
                      "reason": no_time, "turns": [dict(t) for t in chunk.shipped]}
        else:
            record = _generate_chunk(client, chunk, username=username, deadline=deadline)
        records.append(record)
        if run_dir is not None:
            write_json(run_dir / "02_story_generation_response.json", response)
        if record["source"] == "unavailable":
            raise StoryLLMFailed(f"chunk {chunk.index}/{len(chunks)} ({chunk.key}): {record['attempts'][-1]['error']}")
        turns.extend(record["turns"])
        if progress:
            progress(chunk, len(chunks), record)
    used_events = {c.key for c in chunks}
    replaced = [r for r in records if r["source"] != "llm"]
    notes = [f"{len(chunks)} chunk(s): {len(chunks) - len(replaced)} written by the LLM, "
             f"{len(replaced)} replaced by the shipped script"]
    notes += [f"chunk {r['chunk']} ({r['event']}) replaced: {r.get('reason') or r['attempts'][-1]['error']}"
              for r in replaced]
    notes += [f"chunk {r['chunk']}: the server refused response_format={mode}; fell back"
              for r in records for a in r["attempts"] for mode in a.get("refused_modes", ())]
    data = {
        "story_id": f"llm-{started:%Y%m%d%H%M%S}",
        "title": script.get("title", "") + "（LLM 改写）",
        "description": f"written by {client.config.model} one event at a time, on the outline of {OFFLINE_SCRIPT.name}",
        "events": [e for e in script["events"] if e["key"] in used_events],
        "turns": turns,
    }
    response["received_at"] = timezone.now().isoformat()
    return Generation(
        engine=f"llm:{client.config.model}", story_id=data["story_id"], request=request, response=response,
        data=data, notes=notes, json_mode=client.json_mode.value,
    )


def _generate_chunk(client: LLMClient, chunk: StoryChunk, *, username: str,
                    deadline: float | None = None) -> dict[str, Any]:
    """Up to ``CHUNK_ATTEMPTS`` requests for one chunk (a bad reply is asked for again; an
    unavailable server is not, nor a request stopped at ``deadline``); the record says what each
    did and where the chunk's turns finally came from: ``llm``, ``shipped script`` or
    ``unavailable``."""
    prompt = chunk_prompt(chunk, username=username)
    record: dict[str, Any] = {**chunk.describe(), "attempts": [], "source": "shipped script", "turns": []}
    for attempt in range(1, CHUNK_ATTEMPTS + 1):
        began = time.perf_counter()
        entry: dict[str, Any] = {"attempt": attempt, "json_mode_at_start": client.json_mode.value, "reply": None}
        try:
            reply = _ask(client, prompt, reply_tokens(len(chunk.shipped)), deadline)
            entry.update(reply=reply.data, json_mode=reply.mode.value, replies=reply.attempts,
                         refused_modes=list(reply.refused))
            record["turns"] = check_chunk(reply.data, chunk)
            entry["status"] = "ok"
        except (LLMBadOutput, ChunkError) as exc:
            entry.update(status="bad chunk", error=_short(exc))
        except LLMTooSlow as exc:
            # The story's time budget ran out mid-request: not the server failing. A stall or a
            # missed budget is (the client has retried already).
            entry.update(status="out of time" if exc.reason == "deadline" else "unavailable", error=_short(exc))
        except LLMError as exc:  # unavailable, too slow, or a request the server refuses outright
            entry.update(status="unavailable", error=_short(exc))
        entry.setdefault("json_mode", client.json_mode.value)
        entry["seconds"] = round(time.perf_counter() - began, 2)
        record["attempts"].append(entry)
        if entry["status"] == "ok":
            record["source"] = "llm"
            return record
        if entry["status"] == "unavailable":  # the client has retried already: the LLM cannot deliver
            record["source"] = "unavailable"
            return record
        if entry["status"] == "out of time":
            record["reason"] = "the time budget was spent during this chunk (its request was stopped)"
            break
    record["turns"] = [dict(turn) for turn in chunk.shipped]  # the replacement, recorded as such
    return record


def _short(exc: Exception, limit: int = 300) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else text[:limit] + "…"


def write_json(path: Path, obj: Any) -> None:
    """One file of the run folder."""
    path.write_text(dumps(obj) + "\n", encoding="utf-8")


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2, default=str)
