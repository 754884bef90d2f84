"""The building blocks of the hand-written multi-session set: sessions of turns, and questions.

A session is one dated conversation of one user (optionally about one matter); a turn is a
user message and the assistant's reply, with an optional ``key`` that questions cite as
evidence. ``build.py`` turns these into import_conversation transcripts and a question file.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Turn:
    key: str  # "" for a turn no question cites
    user: str
    reply: str


@dataclass
class Session:
    id: str
    user: str
    firm: str
    started: str  # "YYYY-MM-DD HH:MM", local time (+08:00)
    language: str  # "en" | "zh" | "mixed"
    title: str
    turns: list[Turn]
    matter: str | None = None


@dataclass
class Question:
    category: str
    language: str
    user: str
    text: str
    gold: list[str]  # turn keys ("emma.deposit"); their user messages are the evidence
    matter: str | None = None  # asked inside this matter (its reference), else with no context
    note: str = ""  # what the gold says, for people reading the file
    extra: dict = field(default_factory=dict)


def turns(*rows: tuple[str, str, str]) -> list[Turn]:
    """``(key, user text, reply)`` rows as turns."""
    return [Turn(key, user, reply) for key, user, reply in rows]
