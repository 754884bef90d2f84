"""Retention and legal hold cover a matter's documents: the purge of a closed matter past its
firm's period removes its documents, pages, chunks and stored files; a matter on legal hold
keeps all of them (docs/documents.md, "Erasure")."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from documents.models import Document, DocumentChunk, DocumentPage
from documents.services import file_path
from records.services.retention import close_matter, purge_expired, set_legal_hold, set_retention
from tests.documents.conftest import add_document
from tests.documents.files import docx_bytes

pytestmark = pytest.mark.django_db


def test_the_purge_takes_an_expired_matters_documents_and_a_hold_keeps_them(world, django_capture_on_commit_callbacks):
    expired = add_document(world.matter_deposit, "押金条.docx", docx_bytes("押金条", ["房东收到押金16000元。"]),
                           actor=world.alice)
    held = add_document(world.matter_laptop, "发票.docx", docx_bytes("发票", ["笔记本电脑价款5999元。"]),
                        actor=world.alice)
    set_retention(world.firm_a, 30, actor=world.alice)
    for matter in (world.matter_deposit, world.matter_laptop):
        close_matter(matter, actor=world.alice, when=timezone.now() - timedelta(days=40))
    set_legal_hold(world.matter_laptop, actor=world.alice, reason="appeal pending")

    with django_capture_on_commit_callbacks(execute=True):  # the files go once the erasure commits
        purge_expired()

    assert not Document.objects.filter(pk=expired.pk).exists()
    assert not DocumentPage.objects.filter(document_id=expired.pk).exists()
    assert not DocumentChunk.objects.filter(document_id=expired.pk).exists()
    assert not file_path(expired.sha256).exists()
    held.refresh_from_db()
    assert held.status == "indexed" and file_path(held.sha256).exists()
    assert DocumentChunk.objects.filter(document=held).exists()
