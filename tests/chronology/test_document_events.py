"""Documents on the chronology's axis (issue 54): each document of the matter the reader may see
is a row "uploaded 《title》" at its upload, leading to the viewer; a note made from a document
says "from 《title》 p. N" and leads to the viewer at that page; the exports carry both (CSV
``kind``: fact / document). Walls are the documents' own (``documents.selectors``): bob and
charlie see nothing of the deposit matter, and an erased document is on no date."""
from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest

from chronology.selectors import matter_chronology
from memory.models import Note, SourceType


def _documents(chronology):
    return [entry for entry in chronology.entries if entry.kind == "document"]


def test_an_upload_is_an_event_leading_to_the_viewer_and_its_notes_name_it_and_their_page(world, lease_document,
                                                                                          client):
    chronology = matter_chronology(world.alice, world.matter_deposit.pk)
    [event] = _documents(chronology)
    assert event.content == "上传《房屋租赁合同》" and event.document_id == lease_document.pk
    assert event.source_url == f"/documents/{lease_document.pk}/" and event.speaker == "alice"
    assert event.said_at == lease_document.uploaded_at and event.dated_by == "uploaded"
    made = [entry for entry in chronology.entries if entry.kind == "fact"]
    assert made, "the lease's terms should be notes on the axis"
    for entry in made:
        assert entry.source == "出自《房屋租赁合同》第 1 页" and entry.document_id == lease_document.pk
        assert entry.source_url.startswith(f"/documents/{lease_document.pk}/?page=1&start=")

    client.force_login(world.alice)
    html = client.get(f"/matters/{world.matter_deposit.pk}/chronology/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert f'<a href="/documents/{lease_document.pk}/">上传《房屋租赁合同》</a>' in html
    assert "出自《房屋租赁合同》第 1 页" in html and f'data-document="{lease_document.pk}"' in html
    assert client.get(event.source_url).status_code == 200  # one click to the viewer
    english = client.get(f"/matters/{world.matter_deposit.pk}/chronology/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "uploaded “房屋租赁合同”" in english and "from “房屋租赁合同”, p. 1" in english

    api = client.get(f"/api/matters/{world.matter_deposit.pk}/chronology/").json()
    [document] = [e for e in api["entries"] if e["kind"] == "document"]
    assert (document["document_id"], document["source_url"], document["note_id"]) == (
        lease_document.pk, f"/documents/{lease_document.pk}/", None)
    rows = list(csv.reader(io.StringIO(client.get(f"/matters/{world.matter_deposit.pk}/chronology.csv")
                                       .content.decode("utf-8-sig"))))
    assert {row[-1] for row in rows[1:]} == {"fact", "document"}
    [uploaded] = [row for row in rows if row[-1] == "document"]
    assert uploaded[4] == "上传《房屋租赁合同》" and uploaded[13].endswith(f"/documents/{lease_document.pk}/")
    markdown = client.get(f"/matters/{world.matter_deposit.pk}/chronology.md").content.decode()
    assert f"上传《房屋租赁合同》 (文书; 房屋租赁合同.docx) <http://testserver/documents/{lease_document.pk}/>" in markdown


def test_an_upload_is_not_on_the_axis_before_it_happened(world, lease_document):
    before = lease_document.uploaded_at - timedelta(seconds=1)
    for moments in ({"as_of": before}, {"valid_at": before}, {"as_of": before, "valid_at": lease_document.uploaded_at}):
        assert _documents(matter_chronology(world.alice, world.matter_deposit.pk, **moments)) == [], moments
    after = lease_document.uploaded_at + timedelta(seconds=1)
    assert len(_documents(matter_chronology(world.alice, world.matter_deposit.pk, valid_at=after))) == 1


def test_walls_are_the_documents_own(world, lease_document, client):
    from django.http import Http404

    for user in (world.bob, world.charlie):
        with pytest.raises(Http404):
            matter_chronology(user, world.matter_deposit.pk)
        client.force_login(user)
        assert client.get(f"/matters/{world.matter_deposit.pk}/chronology/").status_code == 404
    # bob's own matter shows none of the deposit matter's documents
    laptop = matter_chronology(world.bob, world.matter_laptop.pk)
    assert _documents(laptop) == [] and "房屋租赁合同" not in str([e.content for e in laptop.entries])


def test_an_erased_document_and_the_notes_made_from_it_are_on_no_date(world, lease_document, client):
    from records.erasure_plan import subject_unit
    from records.services.erasure import erase

    uploaded = lease_document.uploaded_at
    assert Note.objects.filter(source_type=SourceType.DOCUMENT, matter=world.matter_deposit).exists()
    erase(subject_unit(world.firm_a, "张三"), actor=world.alice, reason="data subject request")
    for moments in ({}, {"as_of": uploaded + timedelta(seconds=1)}, {"valid_at": uploaded + timedelta(days=1)}):
        chronology = matter_chronology(world.alice, world.matter_deposit.pk, **moments)
        assert chronology.entries == [], moments
    client.force_login(world.alice)
    html = client.get(f"/matters/{world.matter_deposit.pk}/chronology/").content.decode()
    assert "房屋租赁合同" not in html and "张三" not in html
