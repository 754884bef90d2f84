"""Writes of what the product learnt about an LLM server (its working JSON mode, its speed)."""
from __future__ import annotations

import logging
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from memory.models import LLMServerMode, LLMServerSpeed

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


def remember_speed(*, base_url: str, model: str, tokens_per_second: float) -> LLMServerSpeed:
    """Fold one measured generation speed into the server's row (upserted): the stored speed
    is the mean of the previous one and the new measurement, so one slow or fast reply moves
    the next budget half-way and a lasting change is followed within a few replies (the same
    rule as ``infra.llm.speeds.blend``, which the in-process store uses)."""
    with transaction.atomic():
        row, created = LLMServerSpeed.objects.select_for_update().get_or_create(
            base_url=base_url[:500], model=model[:200],
            defaults={"tokens_per_second": tokens_per_second, "samples": 1, "measured_at": timezone.now()},
        )
        if created:
            logger.info("LLM server %s (%s): measured %.1f tokens/s", base_url, model, tokens_per_second)
            return row
        row.tokens_per_second = (row.tokens_per_second + tokens_per_second) / 2
        row.samples += 1
        row.measured_at = timezone.now()
        row.save(update_fields=["tokens_per_second", "samples", "measured_at"])
        return row
