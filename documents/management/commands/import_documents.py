"""``manage.py import_documents PATH… --matter REF [--user NAME] [--queue]``: add files to a
matter's documents. Each file is stored and extracted here (``--queue``: left to the worker);
prints one line per document with its status."""
from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils.translation import gettext, gettext_lazy

from documents.reasons import reason_label
from memory.models import Matter
from documents.models import Document
from documents.services import EmptyUpload, UploadTooLarge
from documents.ingest import process_document, upload_document


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext("Upload files (PDF, scans and images, DOCX, .eml, TXT/Markdown) to a matter's documents.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("paths", nargs="+", type=Path, help=gettext_lazy("the files to upload"))
        parser.add_argument("--matter", required=True,
                            help=gettext_lazy("the matter's reference (e.g. M-001) or id"))
        parser.add_argument("--firm", help=gettext_lazy("the firm's slug, when two firms use the reference"))
        parser.add_argument("--user", help=gettext_lazy("the uploader's username (recorded and audited)"))
        parser.add_argument("--queue", action="store_true", help=gettext_lazy("leave extraction to the worker"))

    def handle(self, *args, paths: list[Path], matter: str, firm: str | None, user: str | None,
               queue: bool, **options) -> None:
        target = self._matter(matter, firm)
        actor = self._user(user) if user else "system:import_documents"
        files = [p for path in paths for p in (sorted(x for x in path.rglob("*") if x.is_file()) if path.is_dir() else [path])]
        failed = 0
        for path in files:
            if not path.is_file():
                raise CommandError(gettext("%(path)s: no such file") % {"path": path})
            try:
                with path.open("rb") as stream, transaction.atomic():
                    document = upload_document(actor=actor, matter=target, stream=stream, filename=path.name,
                                               enqueue=queue)
            except UploadTooLarge as error:
                failed += 1
                self.stderr.write(f"{path}: " + gettext("The file is larger than the limit of %(limit)s MB.") % {
                    "limit": error.limit // (1024 * 1024)})  # the words of the web's 413
                continue
            except EmptyUpload:
                failed += 1
                self.stderr.write(gettext("%(filename)s: the file is empty.") % {"filename": path})
                continue
            status = document.status if queue else process_document(document.pk)
            document.refresh_from_db()
            for attachment in document.attachments.all():
                if not queue:
                    process_document(attachment.pk)
            failed += status == "failed"
            self.stdout.write(_document_line(path, document, status))
        if failed:
            raise CommandError(gettext("%(failed)s of %(total)s files failed") % {"failed": failed, "total": len(files)})

    def _matter(self, reference: str, firm: str | None) -> Matter:
        matters = Matter.objects.filter(reference=reference)
        if reference.isdigit():
            matters = Matter.objects.filter(pk=int(reference)) | matters
        if firm:
            matters = matters.filter(firm__slug=firm)
        found = list(matters[:2])
        if not found:
            raise CommandError(gettext("no matter '%(reference)s'") % {"reference": reference})
        if len(found) > 1:
            raise CommandError(gettext("two matters are '%(reference)s': name the firm with --firm")
                               % {"reference": reference})
        return found[0]

    def _user(self, username: str):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(gettext("no user '%(username)s'") % {"username": username})
        return user


def _document_line(path: Path, document: Document, status: str) -> str:
    """One document's line: its status and, when it has them, its failure reason and page count."""
    fields = {"path": path, "id": document.pk, "status": Document.Status(status).label,
              "error": reason_label(document.error) if document.error else "", "pages": document.page_count}
    if document.error and document.page_count:
        return gettext("%(path)s: document %(id)s %(status)s: %(error)s (%(pages)s pages)") % fields
    if document.error:
        return gettext("%(path)s: document %(id)s %(status)s: %(error)s") % fields
    if document.page_count:
        return gettext("%(path)s: document %(id)s %(status)s (%(pages)s pages)") % fields
    return gettext("%(path)s: document %(id)s %(status)s") % fields
