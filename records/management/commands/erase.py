"""``manage.py erase (--matter REF | --conversation ID | --user NAME | --subject NAME) --reason TEXT``.

Erases one unit for good in one transaction and leaves a tombstone in the audit log
(docs/records.md), then rewrites the touched tables, retires the WAL and runs
``verify_erasure`` on the result. ``--dry-run`` prints the counts without changing anything.
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from memory.labels import unit_label
from memory.models import AuditEvent, AuditLog, Conversation
from records.lookup import RecordLookupError, firm_by_slug, matter_by_reference, only_firm_of, user_by_name
from records.erasure import (
    ErasureError,
    Unit,
    compact_and_verify,
    conversation_unit,
    erase,
    matter_unit,
    preview,
    subject_unit,
    user_unit,
)


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext(
            "Erase a matter, a conversation, a user's data or everything about a subject (GDPR/PIPL erasure)."
        )

    def add_arguments(self, parser) -> None:
        unit = parser.add_mutually_exclusive_group(required=True)
        unit.add_argument("--matter", help=gettext_lazy("the matter's reference (or id)"))
        unit.add_argument("--conversation", type=int, help=gettext_lazy("the conversation's id"))
        unit.add_argument("--user",
                          help=gettext_lazy("a username: their conversations, private notes and persona in the firm"))
        unit.add_argument("--subject",
                          help=gettext_lazy("a client's or party's name: every note and message naming them"))
        parser.add_argument("--firm", help=gettext_lazy("the firm's slug (needed for --subject, or when ambiguous)"))
        parser.add_argument("--reason", default="",
                            help=gettext_lazy("why (kept in the tombstone; required unless --dry-run)"))
        parser.add_argument("--actor", default="", help=gettext_lazy("who asked (username); default system:erase"))
        parser.add_argument("--dry-run", action="store_true",
                            help=gettext_lazy("print what would be erased; change nothing"))
        parser.add_argument("--folder", action="append", default=[],
                            help=gettext_lazy("a folder to verify besides the data folder (logs, backups); repeatable"))

    def handle(self, *args, **options) -> None:
        try:
            unit = self._unit(options)
            if options["dry_run"]:
                result = preview(unit)
            else:
                actor = user_by_name(options["actor"]) if options["actor"] else "system:erase"
                result = erase(unit, actor=actor, reason=options["reason"])
        except AlreadyErased as exc:
            self.stdout.write(self.style.WARNING(str(exc)))
            return
        except (ErasureError, RecordLookupError) as exc:
            raise CommandError(str(exc)) from None
        style = self.style.WARNING if result.already_erased else self.style.SUCCESS
        self.stdout.write(style(result.message))
        verdict = compact_and_verify(result, folders=[Path(settings.DATA_DIR), *map(Path, options["folder"])])
        if verdict is not None:
            self.stdout.write((self.style.SUCCESS if verdict.clean else self.style.ERROR)("\n".join(verdict.lines())))

    def _unit(self, options) -> Unit:
        firm = firm_by_slug(options["firm"])
        if options["matter"]:
            return matter_unit(matter_by_reference(options["matter"], firm))
        if options["conversation"] is not None:
            conversation = Conversation.objects.filter(pk=options["conversation"]).select_related("firm").first()
            if conversation is not None:
                return conversation_unit(conversation.firm, conversation.pk)
            raise _missing_conversation(options["conversation"])
        if options["user"]:
            user = user_by_name(options["user"])
            return user_unit(only_firm_of(user, firm), user)
        if firm is None:
            raise ErasureError(gettext("--subject needs --firm (a subject is named within one firm)"))
        return subject_unit(firm, options["subject"])


class AlreadyErased(Exception):
    """The unit is gone and a tombstone says so: a no-op, not an error."""


def _missing_conversation(conversation_id: int) -> Exception:
    tombstone = AuditLog.objects.filter(
        event_type=AuditEvent.ERASED, object_type="conversation", object_id=str(conversation_id)
    ).first()
    if tombstone is not None:
        return AlreadyErased(
            gettext("%(unit)s was already erased at %(when)s (audit entry %(entry)s); nothing left to erase") % {
                "unit": unit_label("conversation", str(conversation_id)),
                "when": f"{timezone.localtime(tombstone.created_at):%Y-%m-%d %H:%M:%S}", "entry": tombstone.pk}
        )
    return ErasureError(gettext("no conversation %(id)s") % {"id": conversation_id})
