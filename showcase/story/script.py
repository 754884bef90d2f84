"""The story format, its JSON schema (sent to the LLM and checked on its answer) and the
validation that turns a JSON document into a ``Story`` bound to a firm's matters.

Format::

    {"story_id": "month-2026-03", "title": "...", "description": "...",
     "events": [{"key": "laptop", "name": "电脑花屏", "matter": "M-001" | null, "summary": "..."}],
     "turns":  [{"event": "laptop", "at": "2026-03-01T09:30:00+08:00",
                 "user": "用户的话", "assistant": "助手的回答"}]}

Turns are numbered ``turn-001``… in chronological order; each event becomes one
conversation of the story's user, in the event's matter (or without one).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from infra.llm import validate_json
from memory.models import Firm, Matter

OFFLINE_SCRIPT = Path(__file__).with_name("month_story.json")
STORY_SCHEMA_NAME = "legal_month_story"
MAX_TEXT_CHARS = 2000
_KEY_RE = re.compile(r"^[A-Za-z0-9_-]{1,40}$")

STORY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["title", "events", "turns"],
    "properties": {
        "title": {"type": "string"},
        "description": {"type": "string"},
        "events": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["key", "name", "matter"],
                "properties": {
                    "key": {"type": "string"},
                    "name": {"type": "string"},
                    "matter": {"type": ["string", "null"]},
                    "summary": {"type": "string"},
                },
            },
        },
        "turns": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["event", "at", "user", "assistant"],
                "properties": {
                    "event": {"type": "string"},
                    "at": {"type": "string"},
                    "user": {"type": "string"},
                    "assistant": {"type": "string"},
                },
            },
        },
    },
}


class StoryError(ValueError):
    """A story that does not follow the format or names matters the firm does not have."""


@dataclass(frozen=True)
class StoryEvent:
    key: str
    name: str
    matter: Matter | None
    summary: str = ""

    @property
    def matter_reference(self) -> str | None:
        return self.matter.reference if self.matter else None


@dataclass(frozen=True)
class StoryTurn:
    number: int
    event: StoryEvent
    at: datetime
    user: str
    assistant: str

    @property
    def label(self) -> str:
        """``turn-017``: the turn's id in the run folder and in message external ids."""
        return f"turn-{self.number:03d}"

    @property
    def source_id(self) -> str:
        """What every note born in this turn carries as ``source_id``."""
        return f"story-{self.label}"


@dataclass(frozen=True)
class Story:
    story_id: str
    title: str
    description: str
    events: tuple[StoryEvent, ...]
    turns: tuple[StoryTurn, ...]
    raw: dict[str, Any]

    def event(self, key: str) -> StoryEvent:
        return next(e for e in self.events if e.key == key)


def load_offline_script() -> dict[str, Any]:
    """The story script shipped in the repository (written by us, in Chinese)."""
    return json.loads(OFFLINE_SCRIPT.read_text(encoding="utf-8"))


def _text(value: Any, where: str, *, limit: int = MAX_TEXT_CHARS) -> str:
    if not isinstance(value, str) or not value.strip():
        raise StoryError(f"{where}: must be non-empty text")
    if len(value) > limit:
        raise StoryError(f"{where}: longer than {limit} characters")
    return value.strip()


def parse_story(
    data: Any, *, firm: Firm, story_id: str | None = None, min_turns: int = 1, min_events: int = 1
) -> Story:
    """Validate ``data`` against ``STORY_SCHEMA`` and the firm (matter references), sort the
    turns by time and number them. Raises ``StoryError`` naming the first problems."""
    problems = validate_json(data, STORY_SCHEMA) if isinstance(data, dict) else ["$: expected an object"]
    if problems:
        raise StoryError("the story does not match the schema: " + "; ".join(problems[:8]))
    events: dict[str, StoryEvent] = {}
    for index, raw in enumerate(data["events"]):
        where = f"events[{index}]"
        key = _text(raw["key"], f"{where}.key", limit=40)
        if not _KEY_RE.match(key):
            raise StoryError(f"{where}.key: {key!r} must be letters, digits, '-' or '_' (at most 40)")
        if key in events:
            raise StoryError(f"{where}.key: {key!r} appears twice")
        matter = None
        if raw["matter"]:
            matter = Matter.objects.filter(firm=firm, reference=str(raw["matter"])).first()
            if matter is None:
                raise StoryError(f"{where}.matter: firm {firm.slug!r} has no matter {raw['matter']!r}")
        name = _text(raw["name"], f"{where}.name", limit=60)
        events[key] = StoryEvent(key, name, matter, str(raw.get("summary") or "")[:500])
    if len({e.name for e in events.values()}) != len(events):
        raise StoryError("events: two events share a name (the name is the event tag)")
    parsed: list[tuple[datetime, int, dict[str, Any]]] = []
    for index, raw in enumerate(data["turns"]):
        where = f"turns[{index}]"
        if raw["event"] not in events:
            raise StoryError(f"{where}.event: unknown event {raw['event']!r}")
        at = parse_datetime(str(raw["at"]))
        if at is None:
            raise StoryError(f"{where}.at: {raw['at']!r} is not an ISO 8601 date-time")
        if timezone.is_naive(at):
            at = timezone.make_aware(at)
        parsed.append((at, index, raw))
    if len(events) < min_events or len(parsed) < min_turns:
        raise StoryError(
            f"the story has {len(parsed)} turn(s) over {len(events)} event(s); "
            f"at least {min_turns} turn(s) over {min_events} event(s) are needed"
        )
    unused = set(events) - {raw["event"] for _, _, raw in parsed}
    if unused:
        raise StoryError(f"events without any turn: {', '.join(sorted(unused))}")
    parsed.sort(key=lambda entry: (entry[0], entry[1]))
    turns = tuple(
        StoryTurn(
            number=number,
            event=events[raw["event"]],
            at=at,
            user=_text(raw["user"], f"turns[{index}].user"),
            assistant=_text(raw["assistant"], f"turns[{index}].assistant"),
        )
        for number, (at, index, raw) in enumerate(parsed, start=1)
    )
    sid = story_id or str(data.get("story_id") or "")
    if not sid or not _KEY_RE.match(sid):
        raise StoryError(f"story_id {sid!r} must be letters, digits, '-' or '_' (at most 40)")
    return Story(
        story_id=sid,
        title=_text(data["title"], "title", limit=200),
        description=str(data.get("description") or "")[:1000],
        events=tuple(events.values()),
        turns=turns,
        raw=data,
    )
