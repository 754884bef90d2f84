"""Writing one event line: a name and its fields (ids, outcome, duration), never content."""
from __future__ import annotations

import logging
from typing import Any

from django.conf import settings


def log_event(logger: logging.Logger, event: str, *, level: int = logging.INFO, **fields: Any) -> None:
    """One line ``event`` with ``fields`` (None values left out); the formatter adds the bound ids."""
    if logger.isEnabledFor(level):
        kept = {name: value for name, value in fields.items() if value is not None}
        logger.log(level, event, extra={"fields": {"event": event, **kept}})


def content_lengths(**texts: str | None) -> dict[str, int]:
    """``{"<name>_chars": len(text)}`` when ``settings.LOG_CONTENT_LENGTHS`` is on, else nothing: the
    most a log line may say about what someone wrote is how long it was."""
    if not settings.LOG_CONTENT_LENGTHS:
        return {}
    return {f"{name}_chars": len(text or "") for name, text in texts.items()}
