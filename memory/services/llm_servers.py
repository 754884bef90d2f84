"""Writes of what the product learnt about an LLM server (its working JSON mode)."""
from __future__ import annotations

import logging
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from memory.models import LLMServerMode

logger = logging.getLogger("legalmem.llm")


def remember_json_mode(*, base_url: str, model: str, mode: str, error: str = "", probed_at: datetime | None = None) -> LLMServerMode:
    """Record the mode that works on ``base_url`` / ``model`` (one row per pair, upserted),
    logging a change so an operator sees when a server stopped accepting a format."""
    with transaction.atomic():
        row, created = LLMServerMode.objects.select_for_update().get_or_create(
            base_url=base_url[:500], model=model[:200],
            defaults={"json_mode": mode, "probed_at": probed_at or timezone.now(), "last_error": error[:2000]},
        )
        if created:
            logger.info("LLM server %s (%s): structured output mode %s", base_url, model, mode)
            return row
        if row.json_mode != mode:
            logger.info("LLM server %s (%s): structured output mode %s -> %s", base_url, model, row.json_mode, mode)
        row.json_mode = mode
        row.probed_at = probed_at or timezone.now()
        if error or mode == LLMServerMode.JSONMode.JSON_SCHEMA:
            row.last_error = error[:2000]
        row.save(update_fields=["json_mode", "probed_at", "last_error", "updated_at"])
        return row
