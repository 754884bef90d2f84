"""The one write of the chronology: an export is recorded in the audit log (who took which
matter's chronology out, in which format, as of when and held at when) — a matter's facts leaving
the product."""
from __future__ import annotations

from django.db import transaction

from chronology.selectors import Chronology
from memory.models import AuditEvent
from memory.services import audit


def do_record_chronology_export(*, user, chronology: Chronology, export_format: str) -> None:
    """Record that ``user`` exported ``chronology`` as ``export_format`` ("markdown", "csv")."""
    with transaction.atomic():
        audit.record(
            actor=user, event=AuditEvent.CHRONOLOGY_EXPORTED, firm_id=chronology.matter.firm_id,
            object_type="matter", object_id=chronology.matter.pk, matter_id=chronology.matter.pk,
            after={"format": export_format, "entries": len(chronology.entries),
                   "as_of": chronology.as_of.isoformat() if chronology.as_of else None,
                   "valid_at": chronology.valid_at.isoformat() if chronology.valid_at else None},
        )
