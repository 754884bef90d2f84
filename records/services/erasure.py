"""Carrying out an erasure: one transaction per unit, a tombstone, the audit log redacted.

Order inside the transaction (docs/records.md, "Erasure"): lock the unit's turn jobs (a running
extraction job waits, then finds its turn gone and writes nothing), collect the rows again,
refuse on legal hold, write the tombstone, redact the audit entries that quote the content,
scrub the rows that stay, then delete child rows before their parents. Any error rolls the
whole unit back; running the same erasure again completes it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy as _

from memory.models import (
    AuditEvent,
    AuditLog,
    Consolidation,
    Conversation,
    Matter,
    MatterAssignment,
    Message,
    Note,
    NoteLink,
    PersonaEvidence,
    PersonaTrait,
    RoutingDecision,
    TurnExtraction,
)
from documents.models import Document
from remember.turns import extract_turn_task
from memory.erasure_hooks import erasure_hooks, forget_cached_content
from memory.labels import format_counts
from memory.services.audit import actor_label
from documents.services import documents_erase, forget_unreferenced_files, scrub_recalled_passages
from records import journal
from records.fingerprints import Fingerprints
from records.services.file_copies import copies_holding, remove_copies
from records.services.reply_scrub import (
    quoted_clauses,
    redact_quoting_messages,
    without_cited,
    without_contradictions,
)
from records.erasure_plan import (
    ErasureError,
    Plan,
    Unit,
    admin_history,
    as_text,
    collect,
    consolidated_marks,
    erased_texts,
    journal_rows,
    held_matters,
    messages_recalling,
    quoting_subject,
    shared_fingerprints,
    surviving_notes_quoting,
)

logger = logging.getLogger("legalmem.records")

REDACTION_SETTING = "legalmem.audit_redaction"


@dataclass
class ErasureResult:
    """What happened: the counts, and the tombstone (new, or the earlier one for a no-op)."""

    unit: Unit
    counts: dict[str, int] = field(default_factory=dict)
    tombstone: AuditLog | None = None
    already_erased: bool = False
    dry_run: bool = False

    @property
    def message(self) -> str:
        if self.already_erased and self.tombstone is not None:
            return gettext("%(unit)s was already erased at %(when)s (audit entry %(entry)s); nothing left to erase") % {
                "unit": self.unit.shown, "when": f"{timezone.localtime(self.tombstone.created_at):%Y-%m-%d %H:%M:%S}",
                "entry": self.tombstone.pk}
        if self.already_erased:
            return gettext("%(unit)s was already erased; nothing left to erase") % {"unit": self.unit.shown}
        if self.dry_run:
            return gettext("%(unit)s would be erased: %(counts)s") % {
                "unit": self.unit.shown, "counts": format_counts(self.counts)}
        return gettext("%(unit)s erased: %(counts)s (tombstone: audit entry %(entry)s)") % {
            "unit": self.unit.shown, "counts": format_counts(self.counts), "entry": self.tombstone.pk}


def _refuse_on_hold(plan: Plan) -> None:
    held = held_matters(plan)
    if held:
        names = ", ".join(f"{m.reference or m.pk} ({m.legal_hold_reason or 'no reason given'})" for m in held)
        raise ErasureError(gettext("refused: matter %(matters)s is on legal hold; a firm admin must lift the hold first")
                           % {"matters": names})


def preview(unit: Unit) -> ErasureResult:
    """The dry run: what would go (for the command's --dry-run and the admin confirmation page)."""
    if unit.matter is not None and unit.matter.erased_at is not None:
        return ErasureResult(unit=unit, tombstone=unit.previous_tombstone(), already_erased=True, dry_run=True)
    plan = collect(unit)
    _refuse_on_hold(plan)
    if plan.is_empty() and unit.matter is None:
        previous = unit.previous_tombstone()
        if previous is not None:
            return ErasureResult(unit=unit, tombstone=previous, already_erased=True, dry_run=True)
        raise ErasureError(gettext("nothing to erase: %(unit)s holds no notes or messages") % {"unit": unit.shown})
    return ErasureResult(unit=unit, counts=plan.counts(), dry_run=True)


def erase(unit: Unit, *, actor, reason: str) -> ErasureResult:
    """Erase the unit for good in one transaction; see the module docstring."""
    reason = (reason or "").strip()
    if not reason:
        raise ErasureError(gettext("a reason is required (it is kept in the tombstone)"))
    with transaction.atomic():
        if unit.matter is not None:
            matter = Matter.objects.select_for_update().get(pk=unit.matter.pk)
            if matter.erased_at is not None:
                return ErasureResult(unit=unit, tombstone=unit.previous_tombstone(), already_erased=True)
        _lock_jobs(unit)
        plan = collect(unit)
        _refuse_on_hold(plan)
        if plan.is_empty() and unit.matter is None:
            previous = unit.previous_tombstone()
            if previous is not None:
                return ErasureResult(unit=unit, tombstone=previous, already_erased=True)
            raise ErasureError(gettext("nothing to erase: %(unit)s holds no notes or messages") % {"unit": unit.shown})
        texts, names = erased_texts(unit, plan)
        fingerprints = Fingerprints.of(texts, names)
        _refuse_naming_reason(reason, fingerprints)
        counts = plan.counts()
        counts["jobs_cancelled"] = _cancel_jobs(plan)
        counts["admin_history"] = admin_history(unit, plan).count()
        counts["replies_redacted"] = len(redact_quoting_messages(unit.firm, plan.messages, quoted_clauses(texts)))
        fingerprints.shared = shared_fingerprints(unit, plan, fingerprints)
        copies = copies_holding(fingerprints.unshared())
        counts["file_copies"] = len(copies)
        tombstone = _tombstone(unit, actor=actor, reason=reason, counts=counts, fingerprints=fingerprints)
        _redact_audit(plan, tombstone)
        _scrub_survivors(unit, plan, tombstone)
        _delete(unit, plan)
        transaction.on_commit(lambda: remove_copies(copies))
        hooks = erasure_hooks()  # other apps' copies (navigation's stored graphs)
        for hook in hooks:
            counts[hook.name] = hook.erase(unit)
        if unit.matter is not None:
            _retire_matter(unit.matter)
        transaction.on_commit(lambda: journal.append(_journal_entry(unit, plan, tombstone, fingerprints)))
        # this process forgets its cached content now; the others at their next search or job
        transaction.on_commit(forget_cached_content)
    logger.info("erasure %s: %s (tombstone %s)", unit.label, counts, tombstone.pk)
    return ErasureResult(unit=unit, counts=counts, tombstone=tombstone)


def _journal_entry(unit: Unit, plan: Plan, tombstone: AuditLog, fingerprints: Fingerprints) -> dict:
    """What ``replay_erasures`` needs to erase the same rows after a restore: ids and the keyed
    fingerprints of the erased strings (audit rows found by content), never content."""
    return {"tombstone": tombstone.pk, "at": tombstone.created_at.isoformat(), "firm": unit.firm.pk,
            "kind": unit.kind, "object_type": unit.object_type, "object_id": unit.object_id, "label": unit.label,
            "matter": unit.matter.pk if unit.matter is not None else None, "rows": journal_rows(plan),
            "fingerprints": fingerprints.to_json()}


def _lock_jobs(unit: Unit) -> None:
    """Take the row locks of the unit's turn jobs first: an extraction job holds its turn's row
    while it writes an item, so it either finishes that item before we collect, or waits and
    then finds its turn gone (remember.turns)."""
    if unit.rows is not None:
        jobs = TurnExtraction.objects.filter(
            Q(conversation_id__in=unit.rows["conversations"]) | Q(user_message_id__in=unit.rows["messages"]))
    elif unit.matter is not None:
        jobs = TurnExtraction.objects.filter(conversation__matter=unit.matter)
    elif unit.conversation_id is not None:
        jobs = TurnExtraction.objects.filter(conversation_id=unit.conversation_id)
    elif unit.user is not None:
        jobs = TurnExtraction.objects.filter(firm=unit.firm, conversation__user=unit.user)
    else:
        jobs = TurnExtraction.objects.filter(firm=unit.firm).filter(
            Q(items__icontains=unit.subject) | Q(user_message__content__icontains=unit.subject)
            | Q(assistant_message__content__icontains=unit.subject)
        )
    list(TurnExtraction.objects.select_for_update().filter(pk__in=jobs.values("pk")).values_list("pk", flat=True))


def _cancel_jobs(plan: Plan) -> int:
    """Queued extraction tasks of erased turns are dropped (their args are turn ids only)."""
    from django_tasks_db.models import DBTaskResult

    if not plan.turns:
        return 0
    deleted, _ = DBTaskResult.objects.filter(
        task_path=extract_turn_task.module_path, status="READY", args_kwargs__args__0__in=list(plan.turns)
    ).delete()
    return deleted


def _refuse_naming_reason(reason: str, fingerprints: Fingerprints) -> None:
    """The reason is kept for good (a tombstone is never redacted): it may not carry what is
    erased — the subject's or a note's name, the matter's title, an ID number or a sentence."""
    if fingerprints.matches(reason):
        raise ErasureError(gettext(
            "refused: the reason names what is being erased (a name, a title, an identifier or a sentence "
            "of it); the reason is kept for good, so describe the request without them"))


def _tombstone(unit: Unit, *, actor, reason: str, counts: dict[str, int], fingerprints: Fingerprints) -> AuditLog:
    """The tombstone: who, when, what kind and how many, and why — never the content. Stamped
    with the transaction's start (now()) so the audit trigger admits redactions only in this
    transaction (migration 0013)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        started = cursor.fetchone()[0]
    extra = {"kind": unit.kind, "unit": unit.label, "reason": reason[:1000], "counts": counts,
             "fingerprints": fingerprints.to_json()}
    if unit.matter is not None:
        extra["matter_reference"] = unit.matter.reference
    return AuditLog.objects.create(
        firm=unit.firm, matter=None, private_to=None,
        actor=None if isinstance(actor, str) or actor is None else actor, actor_label=actor_label(actor),
        event_type=AuditEvent.ERASED, object_type=unit.object_type, object_id=unit.object_id,
        before=None, after=None, extra=extra, created_at=started,
    )


def _redact_audit(plan: Plan, tombstone: AuditLog) -> None:
    """Replace before/after/extra of the entries that quote the content by the marker
    ``{"redacted_by": <tombstone id>}``: the one update the audit trigger allows (docs/records.md)."""
    if not plan.audit_entries:
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, %s, true)", [REDACTION_SETTING, str(tombstone.pk)])
        cursor.execute(
            "UPDATE memory_auditlog SET before = NULL, after = NULL, extra = jsonb_build_object('redacted_by', %s::bigint) "
            "WHERE id = ANY(%s)",
            [tombstone.pk, list(plan.audit_entries)],
        )
        cursor.execute("SELECT set_config(%s, '', true)", [REDACTION_SETTING])


def _scrub_survivors(unit: Unit, plan: Plan, tombstone: AuditLog) -> None:
    """Rows that stay lose what points at the erased content, and for a subject the copies of
    the past they keep that name them (a history step, a recalled note as it was then)."""
    erased_notes, erased_messages = plan.notes, plan.messages
    marker = {"redacted_by": tombstone.pk}
    quotes = quoting_subject(unit)

    def names_subject(value) -> bool:
        return quotes is not None and quotes(as_text(value))

    for note in surviving_notes_quoting(unit, plan).select_for_update():
        if note.superseded_by_id is not None and str(note.superseded_by_id) in erased_notes:
            note.superseded_by = None
        note.source_message_ids = [pk for pk in note.source_message_ids if pk not in erased_messages]
        note.evolution_history = [
            {"at": step.get("at"), "event": step.get("event"), **marker}
            if any(note_id in str(step) for note_id in erased_notes) or names_subject(step) else step
            for step in note.evolution_history
        ]
        # queryset.update: the note's own content and updated_at do not change.
        Note.objects.filter(pk=note.pk).update(
            superseded_by=note.superseded_by, source_message_ids=note.source_message_ids,
            evolution_history=note.evolution_history,
        )
    names = {*erased_notes, *(f"message:{pk}" for pk in erased_messages)}
    for message in messages_recalling(unit, plan).select_for_update():
        recalled, dropped = [], set()
        for item in message.recalled:
            if isinstance(item, dict) and item.get("id") in names:
                continue
            item = without_contradictions(item, names)  # the other side, erased
            if names_subject(item):  # a copy of a kept note as it was when it still named them
                dropped.add(str(item.get("id")) if isinstance(item, dict) else "")
                continue
            recalled.append(item)
        Message.objects.filter(pk=message.pk).update(recalled=recalled,
                                                     citations=without_cited(message.citations, names | dropped))
    Consolidation.objects.filter(pk__in=plan.scrubbed_consolidations).update(items=[], decisions=[])


def _delete(unit: Unit, plan: Plan) -> None:
    """Children before parents (every foreign key between these rows is PROTECT). Django's
    delete, not a plain statement: a model added later with a foreign key to a note or a
    message gets its on_delete honoured (and the erasure scan test covers its text)."""
    notes = list(plan.notes)
    _delete_documents(plan)
    RoutingDecision.objects.filter(pk__in=plan.decisions).delete()
    PersonaEvidence.objects.filter(pk__in=plan.evidence).delete()
    PersonaTrait.objects.filter(pk__in=plan.traits).delete()
    # What stays and points at an erased note loses the pointer, in one statement each.
    RoutingDecision.objects.filter(note_id__in=notes).update(note=None)
    RoutingDecision.objects.filter(previous_id__in=notes).update(previous=None)
    PersonaTrait.objects.filter(note_id__in=notes).update(note=None)
    Note.objects.filter(superseded_by_id__in=notes).update(superseded_by=None)
    NoteLink.objects.filter(Q(source_id__in=notes) | Q(target_id__in=notes)).delete()
    Note.objects.filter(pk__in=notes).delete()
    consolidated_marks(plan).delete()
    RoutingDecision.objects.filter(consolidation_id__in=plan.consolidations).delete()
    Consolidation.objects.filter(pk__in=plan.consolidations).delete()
    TurnExtraction.objects.filter(pk__in=plan.turns).delete()
    Message.objects.filter(pk__in=plan.messages).delete()
    Conversation.objects.filter(pk__in=plan.conversations).delete()
    Conversation.objects.filter(pk__in=plan.retitled_conversations).update(title="")
    _delete_admin_log(unit, plan)


def _delete_documents(plan: Plan) -> None:
    """The documents with their pages and chunks, the passages replies saved of them; their
    stored files once the erasure commits (a file another document still names stays)."""
    if not plan.documents:
        return
    documents = Document.objects.filter(pk__in=plan.documents)
    scrub_recalled_passages(list(plan.documents))
    _count, hashes = documents_erase(documents)
    transaction.on_commit(lambda: forget_unreferenced_files(hashes))


def _delete_admin_log(unit: Unit, plan: Plan) -> None:
    """Django's admin history names an edited object by its text (``object_repr``, and the
    matter's "M-… <title>"): every row about an erased object, the matter, a blanked title."""
    admin_history(unit, plan).delete()


def _retire_matter(matter: Matter) -> None:
    """The matter row stays as the reference the tombstone names; its text and wall go."""
    MatterAssignment.objects.filter(matter=matter).delete()
    Matter.objects.filter(pk=matter.pk).update(
        title="", description="", status=Matter.Status.CLOSED, erased_at=timezone.now(),
        closed_at=matter.closed_at or timezone.now(),
    )
