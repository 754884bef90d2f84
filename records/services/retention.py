"""Retention and legal hold (docs/records.md): closing a matter starts its firm's retention
clock; a purge job erases closed matters past it, unless a firm admin put them on legal hold.
Every change is audited; the purge itself is an erasure with a ``retention`` tombstone."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from memory.labels import format_counts
from memory.models import AuditEvent, Firm, Matter
from memory.services.audit import record
from records.erasure import ErasureError, erase, matter_unit
from records.services.compaction import compact_after_erasure

logger = logging.getLogger("legalmem.records")

RETENTION_ACTOR = "system:retention"


class RecordsError(ValueError):
    """A retention or hold change that cannot be made (wrong state, missing reason); the message
    is in the active language (the admin shows it to the firm admin as it is)."""


def _locked(matter: Matter) -> Matter:
    matter = Matter.objects.select_for_update().get(pk=matter.pk)
    if matter.erased_at is not None:
        raise RecordsError(gettext("matter %(matter)s was erased") % {"matter": matter.reference or matter.pk})
    return matter


def _matter_event(matter: Matter, event: AuditEvent, *, actor, before: dict, after: dict, **extra) -> None:
    record(actor=actor, event=event, firm=matter.firm, object_type="matter", object_id=matter.pk,
           before=before, after=after, matter_id=matter.pk, **extra)


def close_matter(matter: Matter, *, actor, when: datetime | None = None) -> Matter:
    """Close the matter: its retention period starts now (or ``when``)."""
    with transaction.atomic():
        matter = _locked(matter)
        if matter.closed_at is not None:
            return matter
        matter.status, matter.closed_at = Matter.Status.CLOSED, when or timezone.now()
        matter.save(update_fields=["status", "closed_at"])
        _matter_event(matter, AuditEvent.MATTER_CLOSED, actor=actor, before={"status": "open"},
                      after={"status": "closed", "closed_at": matter.closed_at.isoformat()})
    return matter


def reopen_matter(matter: Matter, *, actor) -> Matter:
    with transaction.atomic():
        matter = _locked(matter)
        if matter.closed_at is None and matter.status == Matter.Status.OPEN:
            return matter
        before = {"status": matter.status, "closed_at": matter.closed_at.isoformat() if matter.closed_at else None}
        matter.status, matter.closed_at = Matter.Status.OPEN, None
        matter.save(update_fields=["status", "closed_at"])
        _matter_event(matter, AuditEvent.MATTER_REOPENED, actor=actor, before=before, after={"status": "open"})
    return matter


def set_legal_hold(matter: Matter, *, actor, reason: str) -> Matter:
    """Nothing of a matter on hold is purged or erased until the hold is lifted."""
    reason = (reason or "").strip()
    if not reason:
        raise RecordsError(gettext("a legal hold needs a reason (the litigation or request it preserves for)"))
    with transaction.atomic():
        matter = _locked(matter)
        before = {"legal_hold": matter.legal_hold, "reason": matter.legal_hold_reason}
        matter.legal_hold, matter.legal_hold_reason = True, reason[:500]
        matter.save(update_fields=["legal_hold", "legal_hold_reason"])
        _matter_event(matter, AuditEvent.LEGAL_HOLD_SET, actor=actor, before=before,
                      after={"legal_hold": True, "reason": matter.legal_hold_reason})
    return matter


def lift_legal_hold(matter: Matter, *, actor, reason: str = "") -> Matter:
    with transaction.atomic():
        matter = _locked(matter)
        if not matter.legal_hold:
            return matter
        before = {"legal_hold": True, "reason": matter.legal_hold_reason}
        matter.legal_hold, matter.legal_hold_reason = False, ""
        matter.save(update_fields=["legal_hold", "legal_hold_reason"])
        _matter_event(matter, AuditEvent.LEGAL_HOLD_LIFTED, actor=actor, before=before,
                      after={"legal_hold": False}, reason=(reason or "").strip()[:500])
    return matter


def set_retention(firm: Firm, days: int | None, *, actor) -> Firm:
    """The firm's retention period in days after closing (None: kept until erased by hand)."""
    if days is not None and (isinstance(days, bool) or not isinstance(days, int) or days < 0):
        raise RecordsError(gettext("the retention period is a whole number of days (0 or more), or empty"))
    with transaction.atomic():
        firm = Firm.objects.select_for_update().get(pk=firm.pk)
        before = {"retention_days": firm.retention_days}
        firm.retention_days = days
        firm.save(update_fields=["retention_days"])
        record(actor=actor, event=AuditEvent.FIRM_UPDATED, firm=firm, object_type="firm", object_id=firm.pk,
               before=before, after={"retention_days": days})
    return firm


# --- the purge ---------------------------------------------------------------------------------


@dataclass
class PurgeReport:
    """What the purge erased (or would), what a hold kept, and what failed."""

    purged: list[tuple[Matter, dict]] = field(default_factory=list)
    held: list[Matter] = field(default_factory=list)
    failed: list[tuple[Matter, str]] = field(default_factory=list)
    dry_run: bool = False

    def lines(self) -> list[str]:
        """The report in the reader's language (zh-Hans by default, or English)."""
        would = gettext("would purge matter %(matter)s (closed %(closed)s): %(counts)s")
        done = gettext("purged matter %(matter)s (closed %(closed)s): %(counts)s")
        out = [(would if self.dry_run else done) % {
            "matter": m.reference or m.pk, "closed": f"{m.closed_at:%Y-%m-%d}",
            "counts": format_counts({name: value for name, value in counts.items() if value})}
            for m, counts in self.purged]
        out += [gettext("kept matter %(matter)s (closed %(closed)s): legal hold — %(reason)s") % {
            "matter": m.reference or m.pk, "closed": f"{m.closed_at:%Y-%m-%d}", "reason": m.legal_hold_reason}
            for m in self.held]
        out += [gettext("failed matter %(matter)s: %(error)s") % {"matter": m.reference or m.pk, "error": error}
                for m, error in self.failed]
        return out or [gettext("nothing is past its retention period")]


def expired_matters(now: datetime | None = None) -> list[Matter]:
    """Closed, not yet erased matters whose firm's retention period has run out (held ones included)."""
    now = now or timezone.now()
    expired: list[Matter] = []
    for firm in Firm.objects.filter(retention_days__isnull=False):
        cutoff = now - timedelta(days=firm.retention_days)
        expired += Matter.objects.filter(firm=firm, closed_at__isnull=False, closed_at__lte=cutoff,
                                         erased_at__isnull=True).select_related("firm").order_by("closed_at", "pk")
    return expired


def purge_expired(*, now: datetime | None = None, dry_run: bool = False) -> PurgeReport:
    """Erase every expired matter not on legal hold, each in its own transaction, then rewrite
    the touched tables once (records.services.compaction)."""
    from records.erasure import preview

    report = PurgeReport(dry_run=dry_run)
    for matter in expired_matters(now):
        if matter.legal_hold:
            report.held.append(matter)
            continue
        unit = matter_unit(matter, kind="retention")
        try:
            if dry_run:
                report.purged.append((matter, preview(unit).counts))
            else:
                days = matter.firm.retention_days
                result = erase(unit, actor=RETENTION_ACTOR,
                               reason=f"retention period of {days} days after closing on {matter.closed_at:%Y-%m-%d}")
                report.purged.append((matter, result.counts))
        except ErasureError as exc:  # a hold set in the meantime, or a hold on a touched matter
            report.failed.append((matter, str(exc)))
        except Exception as exc:  # noqa: BLE001 - one matter's failure does not stop the others
            logger.exception("retention purge of matter %s failed", matter.pk)
            report.failed.append((matter, f"{type(exc).__name__}: {exc}"))
    if report.purged and not dry_run:
        compact_after_erasure()  # the purged rows' bytes out of the table and WAL files, once
    return report
