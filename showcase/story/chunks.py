"""The story in chunks that fit the LLM's context: the plan, the prompt and the check of one chunk.

The shipped script (``month_story.json``) is the outline: its events (key, name, matter,
summary) and the times of their turns. The LLM writes the turns of one event at a time —
an event with more turns than fit in one reply is split into several chunks, in time order —
so no request asks for more than ``LLM_CONTEXT_TOKENS`` can hold (prompt + reply). Each chunk
the LLM returns is checked here (turn shape, times in order inside the chunk's window, the
event it names); a chunk that fails is replaced by the shipped script's turns for the same
slots, so the story always has the outline's shape.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from infra.llm import schema_hint, validate_json

CHUNK_SCHEMA_NAME = "legal_story_chunk"
CHUNK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["event", "turns"],
    "properties": {
        "event": {"type": "string"},
        "turns": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["at", "user", "assistant"],
                "properties": {"at": {"type": "string"}, "user": {"type": "string"}, "assistant": {"type": "string"}},
            },
        },
    },
}

#: At most this many turns in one request (a reply of ≤ 1408 tokens): a slow local server still
#: finishes a chunk often, so a story budget that runs out costs at most one chunk's work.
CHUNK_MAX_TURNS = 4
#: What one written turn costs in reply tokens (≤ 120 characters a side, mostly Chinese, + JSON).
TOKENS_PER_TURN = 320
#: Reply tokens kept free for the JSON frame and a model that runs a little long.
REPLY_MARGIN_TOKENS = 128
#: A turn longer than this (either side) is not a chat line; the chunk is refused.
MAX_TURN_CHARS = 600

STORY_SYSTEM_PROMPT = "你是一名法律咨询场景的编剧。You must respond with a JSON object."

CHUNK_PROMPT = """请为一个法律咨询剧本写其中一段：用户 {username} 就事件「{name}」向法律助手咨询。
事件概要：{summary}
{matter_line}
请恰好写 {count} 轮对话，时间依次为（照抄，按顺序）：
{times}
要求：
1. 每轮包含 at（上面的时间之一）、user（用户的话）和 assistant（法律助手的回答），各不超过 120 字。
2. 用户的话要有具体事实：日期、金额、证据（发票、聊天记录、录音、照片、检测报告等）和诉求；
   可以有一轮更正之前说错的金额或日期（完整地重说正确的句子）；用户会重复自己的偏好，
   例如“我习惯先看结论再看证据清单”或“我倾向于低成本维权”。
3. 助手的回答简洁专业，可以引用具体法条（例如《消费者权益保护法》第二十四条）并给出行动建议。
4. 只返回一个 JSON 对象：{{"event": "{key}", "turns": [{{"at": "...", "user": "...", "assistant": "..."}}]}}"""


class ChunkError(ValueError):
    """A chunk the LLM wrote does not fit its slot in the story."""


@dataclass(frozen=True)
class StoryChunk:
    """Turns ``slots`` of one outline event, to be written in one request."""

    index: int  # 1-based position in the plan
    event: dict[str, Any]  # the outline event: key, name, matter, summary
    shipped: tuple[dict[str, Any], ...]  # the shipped script's turns for these slots (the replacement)

    @property
    def key(self) -> str:
        return str(self.event["key"])

    @property
    def slots(self) -> list[str]:
        return [str(turn["at"]) for turn in self.shipped]

    def describe(self) -> dict[str, Any]:
        return {"chunk": self.index, "event": self.key, "name": self.event["name"], "turns": len(self.shipped),
                "from": self.slots[0], "to": self.slots[-1]}


def estimate_tokens(text: str) -> int:
    """Tokens of ``text``, estimated on the safe side: one per CJK character, one per three others."""
    wide = sum(1 for ch in text if ord(ch) >= 0x2E80)
    return wide + math.ceil((len(text) - wide) / 3)


def chunk_prompt(chunk: StoryChunk, *, username: str) -> str:
    """The user prompt of one chunk (the client appends the schema when the server cannot enforce it)."""
    matter = chunk.event.get("matter")
    return CHUNK_PROMPT.format(
        username=username, name=chunk.event["name"], key=chunk.key,
        summary=chunk.event.get("summary") or chunk.event["name"],
        matter_line=f"这件事对应律所案件 {matter}。" if matter else "这件事没有对应的律所案件。",
        count=len(chunk.shipped), times="\n".join(f"- {at}" for at in chunk.slots),
    )


def prompt_tokens(chunk: StoryChunk, *, username: str) -> int:
    """Worst case of what one request of ``chunk`` sends: system, prompt and the schema hint."""
    return estimate_tokens(STORY_SYSTEM_PROMPT + chunk_prompt(chunk, username=username) + schema_hint(CHUNK_SCHEMA))


def reply_tokens(turns: int) -> int:
    """The ``max_tokens`` of a chunk of ``turns`` turns."""
    return turns * TOKENS_PER_TURN + REPLY_MARGIN_TOKENS


def select_outline(script: dict[str, Any], *, events: int | None = None,
                   turns_per_event: int | None = None) -> dict[str, Any]:
    """The script cut to its first ``events`` events and the first ``turns_per_event`` turns of
    each (a short story for benchmarks and tests); the whole script when both are None."""
    outline = list(script["events"])[: events or None]
    turns = []
    for event in outline:
        own = sorted((t for t in script["turns"] if t["event"] == event["key"]), key=lambda t: str(t["at"]))
        turns.extend(own[: turns_per_event or None])
    turns.sort(key=lambda t: str(t["at"]))
    return {**script, "events": outline, "turns": turns}


def plan_chunks(
    script: dict[str, Any], *, username: str, context_tokens: int, events: int | None = None,
    turns_per_event: int | None = None, max_turns: int = CHUNK_MAX_TURNS,
) -> list[StoryChunk]:
    """Cut the outline into chunks whose prompt + reply fit ``context_tokens``.

    ``events`` keeps only the first N events, ``turns_per_event`` the first N turns of each
    (a short story for benchmarks). Raises ``ChunkError`` when not even one turn fits.
    """
    outline = select_outline(script, events=events, turns_per_event=turns_per_event)
    chunks: list[StoryChunk] = []
    for event in outline["events"]:
        turns = [t for t in outline["turns"] if t["event"] == event["key"]]
        while turns:
            size = min(max_turns, len(turns))
            while size > 0:
                candidate = StoryChunk(len(chunks) + 1, event, tuple(turns[:size]))
                if prompt_tokens(candidate, username=username) + reply_tokens(size) <= context_tokens:
                    break
                size -= 1
            if size == 0:
                raise ChunkError(
                    f"LLM_CONTEXT_TOKENS={context_tokens} cannot hold even one story turn "
                    f"(the prompt alone is about {prompt_tokens(candidate, username=username)} tokens)"
                )
            chunks.append(candidate)
            turns = turns[size:]
    return chunks


def _window(chunk: StoryChunk) -> tuple[datetime, datetime]:
    """The times a chunk's turns may have: its first slot's day to the day after its last."""
    first, last = (_aware(parse_datetime(chunk.slots[0])), _aware(parse_datetime(chunk.slots[-1])))
    start = first.replace(hour=0, minute=0, second=0, microsecond=0)
    return start, last.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=2)


def _aware(value: datetime | None) -> datetime | None:
    if value is not None and timezone.is_naive(value):
        return timezone.make_aware(value)
    return value


def check_chunk(data: Any, chunk: StoryChunk) -> list[dict[str, Any]]:
    """The chunk's turns in story format (``event`` added), or ``ChunkError`` naming the first problems:
    the shape, the event named, the number of turns, times that do not parse, leave the chunk's
    window or go backwards, and empty or overlong text."""
    problems = validate_json(data, CHUNK_SCHEMA) if isinstance(data, dict) else ["$: expected an object"]
    if problems:
        raise ChunkError("; ".join(problems[:5]))
    if str(data["event"]).strip() != chunk.key:
        raise ChunkError(f"event {data['event']!r} is not this chunk's event {chunk.key!r}")
    turns = data["turns"]
    if len(turns) != len(chunk.shipped):
        raise ChunkError(f"{len(turns)} turn(s) instead of {len(chunk.shipped)}")
    start, end = _window(chunk)
    previous: datetime | None = None
    written = []
    for index, turn in enumerate(turns):
        at = _aware(parse_datetime(str(turn["at"]).strip()))
        if at is None:
            raise ChunkError(f"turns[{index}].at: {turn['at']!r} is not an ISO 8601 date-time")
        if not start <= at < end:
            raise ChunkError(f"turns[{index}].at: {turn['at']} is outside {chunk.slots[0]} … {chunk.slots[-1]}")
        if previous is not None and at < previous:
            raise ChunkError(f"turns[{index}].at: {turn['at']} is earlier than the turn before it")
        previous = at
        for side in ("user", "assistant"):
            text = str(turn[side]).strip()
            if not text or len(text) > MAX_TURN_CHARS:
                raise ChunkError(f"turns[{index}].{side}: must be 1–{MAX_TURN_CHARS} characters, got {len(text)}")
        written.append({"event": chunk.key, "at": at.isoformat(), "user": turn["user"].strip(),
                        "assistant": turn["assistant"].strip()})
    return written
