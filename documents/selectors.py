"""Reads of a matter's documents, each from the one visibility rule (anything else is a 404)."""
from __future__ import annotations

from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404

from infra.http_input import MAX_DB_ID
from memory.models import Matter
from documents.models import Document, DocumentPage


def visible_matter(user, matter_id: int) -> Matter:
    if matter_id > MAX_DB_ID:
        raise Http404
    return get_object_or_404(Matter.objects.assigned_to(user), pk=matter_id)


def visible_document(user, document_id: int) -> Document:
    if document_id > MAX_DB_ID:
        raise Http404
    return get_object_or_404(Document.objects.visible_to(user).select_related("matter", "uploaded_by"), pk=document_id)


def matter_documents(user, matter: Matter):
    return Document.objects.visible_to(user).filter(matter=matter).select_related("uploaded_by")


def document_page(document: Document, number: int) -> DocumentPage:
    page = document.pages.filter(number=number).first()
    if page is None:
        raise Http404
    return page


def matters_with_documents(user):
    """The matters the user is assigned to, with how many documents each holds."""
    return Matter.objects.assigned_to(user).annotate(document_count=Count("documents")).order_by("reference", "title")
