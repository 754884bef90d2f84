"""The documents pages: a matter's documents with upload, the viewer at a page with the cited
passage highlighted, the original file. Thin: access through ``visible_to``, writes through
services (every view and download audited)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from documents.selectors import (
    document_page,
    matter_documents,
    matters_with_documents,
    visible_document,
    visible_matter,
)
from documents.services import (
    EmptyUpload,
    UploadTooLarge,
    document_access_record,
    file_path,
)
from documents.ingest import retry_document, upload_document
from documents.reasons import reason_label


@login_required
def documents_home(request):
    """The user's matters, each with its number of documents: the way to a matter's documents."""
    return render(request, "documents/home.html", {"matters": matters_with_documents(request.user)})


@login_required
@require_http_methods(["GET", "POST"])
def matter_documents_page(request, matter_id: int):
    matter = visible_matter(request.user, matter_id)
    if request.method == "POST":
        files = request.FILES.getlist("file")
        if not files:
            messages.error(request, _("Choose a file to upload."))
        for upload in files:
            try:
                upload_document(actor=request.user, matter=matter, stream=upload, filename=upload.name)
            except UploadTooLarge as error:
                return HttpResponse(too_large_message(error), status=413, content_type="text/plain; charset=utf-8")
            except EmptyUpload:
                messages.error(request, empty_message(upload.name))
        return redirect("matter-documents", matter_id=matter.pk)
    documents = list(matter_documents(request.user, matter))
    for document in documents:
        document.reason = reason_label(document.error)
    return render(request, "documents/matter_documents.html", {"matter": matter, "documents": documents})


@login_required
def document_viewer(request, document_id: int):
    document = visible_document(request.user, document_id)
    number = _int(request.GET.get("page"), 1)
    pages = document.page_count
    page = document_page(document, number) if pages else None
    start, end = _int(request.GET.get("start"), 0), _int(request.GET.get("end"), 0)
    text = page.text if page else ""
    if not (0 <= start < end <= len(text)):
        start = end = 0
    document_access_record(document, actor=request.user, downloaded=False, page=number if page else None)
    return render(request, "documents/viewer.html", {
        "document": document, "reason": reason_label(document.error), "page": page, "number": number, "pages": range(1, pages + 1),
        "before": text[:start], "passage": text[start:end], "after": text[end:],
        "citation": document.citation(number),
    })


@login_required
def document_file(request, document_id: int):
    document = visible_document(request.user, document_id)
    document_access_record(document, actor=request.user, downloaded=True)
    return FileResponse(file_path(document.sha256).open("rb"), as_attachment=True, filename=document.filename)


@login_required
@require_POST
def document_retry(request, document_id: int):
    document = visible_document(request.user, document_id)
    if document.can_retry:
        retry_document(document, actor=request.user)
    return redirect("matter-documents", matter_id=document.matter_id)


def too_large_message(error: UploadTooLarge) -> str:
    """The 413 of an upload, in the reader's language."""
    return _("The file is larger than the limit of %(limit)s MB.") % {"limit": error.limit // (1024 * 1024)}


def empty_message(filename: str) -> str:
    return _("%(filename)s: the file is empty.") % {"filename": filename}


def _int(raw: str | None, default: int) -> int:
    if raw is None or not (raw.isascii() and raw.isdigit()) or len(raw) > 9:
        return default
    return int(raw)
