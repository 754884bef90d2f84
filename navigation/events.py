"""The "event" a note belongs to, for the page's event filter.

The month-story issue will record an event per note; until it does, the key is derived:
a tag ``event:<name>`` wins, then the prefix of a chat-story ``source_id`` (up to the
first ``:``, ``/`` or ``#``), then the note's matter. Notes with none of these have no event.
"""
from __future__ import annotations

import re

from django.utils.translation import gettext

_SOURCE_PREFIX = re.compile(r"[:/#]")


def event_key(*, tags: list[str], source_type: str, source_id: str, matter_id: int | None) -> str:
    """A stable key such as ``tag:电脑花屏``, ``story:month-1`` or ``matter:12``; "" for none."""
    for tag in tags or ():
        if tag.startswith("event:") and tag[6:].strip():
            return f"tag:{tag[6:].strip()}"
    if source_type == "chat_story" and source_id:
        return f"story:{_SOURCE_PREFIX.split(source_id, 1)[0]}"
    if matter_id is not None:
        return f"matter:{matter_id}"
    return ""


def event_label(key: str, matter_titles: dict[int, str]) -> str:
    """The event in words: a tagged event by its name, a matter by its title, the demo story's
    turns as one "demo story" (never the internal key such as ``story-turn-004``)."""
    kind, _sep, value = key.partition(":")
    if kind == "matter" and value.isdigit():
        return matter_titles.get(int(value), gettext("a matter"))
    if kind == "story":
        return gettext("demo story")
    return value
