"""The fake server's request log: every request as it arrived and what happened to it
(status, chunks and when, disconnects, interrupts), for tests to assert on."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from .replies import Reply


@dataclass
class RecordedRequest:
    """One request as the fake server received it, and what it did with it."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any
    status: int | None = None
    chunks_sent: int = 0
    disconnected: bool = False
    interrupted: bool = False  # a llamacpp-profile stream cut short by a later request
    reply: Reply | None = None
    done: threading.Event = field(default_factory=threading.Event, repr=False)
    #: ``time.monotonic()`` when the request arrived, when its handler ended (the server
    #: stopped "generating"), and when the client was seen to have gone.
    received_at: float = field(default_factory=time.monotonic)
    ended_at: float | None = None
    disconnected_at: float | None = None
    #: ``time.monotonic()`` of every streamed token sent.
    token_times: list[float] = field(default_factory=list, repr=False)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or []) if isinstance(self.body, dict) else []

    @property
    def stream(self) -> bool:
        return bool(isinstance(self.body, dict) and self.body.get("stream"))

    @property
    def response_format(self) -> dict[str, Any] | None:
        fmt = self.body.get("response_format") if isinstance(self.body, dict) else None
        return fmt if isinstance(fmt, dict) else None

    @property
    def response_format_type(self) -> str | None:
        """"json_schema", "json_object", "text" or None (no response_format)."""
        fmt = self.response_format
        return fmt.get("type") if fmt else None

    @property
    def user_content(self) -> str:
        """Content of the last user message ('' if none)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                content = message.get("content")
                return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        return ""

    @property
    def system_content(self) -> str:
        for message in self.messages:
            if message.get("role") == "system":
                content = message.get("content")
                return content if isinstance(content, str) else ""
        return ""
