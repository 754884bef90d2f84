"""Writing persona traits and their evidence (the write path's persona step, remember.persona).

Bookkeeping of the write path, not audited itself: what a trait decided is recorded as a PERSONA
routing decision, and the profile notes it writes go through ``memory.services.notes`` (audited).
Each write joins the caller's transaction (the persona step runs one per statement).
"""
from __future__ import annotations

from datetime import datetime

import numpy as np
from django.db import transaction

from memory.models import Note, PersonaEvidence, PersonaTrait


def persona_trait_create(*, firm, user, content: str, category: str, embedding: np.ndarray,
                         conflicts_with: PersonaTrait | None = None) -> PersonaTrait:
    """A new trait (``conflicts_with``: the trait it contradicts)."""
    with transaction.atomic(savepoint=False):
        fields = {"conflicts_with": conflicts_with} if conflicts_with is not None else {}
        return PersonaTrait.objects.create(
            firm=firm, user=user, content=content, category=category, embedding=embedding, **fields
        )


def persona_evidence_create(*, trait: PersonaTrait, firm, user, source_key: str, content: str, content_hash: str,
                            confidence: float, said_at: datetime, source_message_ids: list[int],
                            conversation) -> PersonaEvidence:
    """One statement supporting ``trait``."""
    with transaction.atomic(savepoint=False):
        return PersonaEvidence.objects.create(
            trait=trait, firm=firm, user=user, source_key=source_key, content=content, content_hash=content_hash,
            confidence=confidence, said_at=said_at, source_message_ids=source_message_ids,
            conversation=conversation,
        )


def persona_trait_refresh(trait: PersonaTrait, *, evidence_count: int, base_confidence: float,
                          last_evidence_at: datetime, content: str, strength: float) -> PersonaTrait:
    """Store the trait's figures as its evidence gives them now."""
    with transaction.atomic(savepoint=False):
        trait.evidence_count = evidence_count
        trait.base_confidence = base_confidence
        trait.last_evidence_at = last_evidence_at
        trait.content = content
        trait.strength = strength
        trait.save()
    return trait


def persona_trait_decide(trait: PersonaTrait, decision: str, *, status: str | None = None,
                         note: Note | None = None) -> PersonaTrait:
    """Record what the promotion rule decided for the trait, with its new status and profile note."""
    fields = ["decision", "updated_at"]
    with transaction.atomic(savepoint=False):
        if status is not None:
            trait.status = status
            fields.insert(0, "status")
        if note is not None:
            trait.note = note
            fields.insert(1 if status is not None else 0, "note")
        trait.decision = decision
        trait.save(update_fields=fields)
    return trait
