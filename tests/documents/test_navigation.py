"""A document-made note on the navigation page names the page it was read from and opens the
viewer at the passage; those outside the matter get the same 404 as for any walled note."""
from __future__ import annotations

from memory.models import Note, SourceType
from tests.clients import client_for
from tests.documents.conftest import add_document
from tests.documents.files import docx_bytes


def test_the_trace_of_a_document_made_note_cites_its_page_and_links_the_viewer(world):
    document = add_document(world.matter_deposit, "房屋租赁合同.docx",
                            docx_bytes("房屋租赁合同", ["租客张三的月租金为8000元，押金为16000元。"]), actor=world.alice)
    note = Note.objects.filter(source_type=SourceType.DOCUMENT, matter=world.matter_deposit).first()
    assert note is not None, "the lease should become a note"

    response = client_for(world.alice).get(f"/api/navigation/trace/{note.pk}", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert response.status_code == 200, response.content
    source = response.json()["note"]["document"]
    assert source["id"] == document.pk and source["citation"] == "《房屋租赁合同》第 1 页"
    _id, page, start, end = note.document_source()
    assert source["url"] == f"/documents/{document.pk}/?page={page}&start={start}&end={end}"
    assert client_for(world.alice).get(source["url"]).status_code == 200  # the viewer opens there

    chat_note = world.note("租客张三说房东不退押金。", matter=world.matter_deposit)
    assert client_for(world.alice).get(f"/api/navigation/trace/{chat_note.pk}").json()["note"]["document"] is None
    for outsider in (world.bob, world.charlie):  # bob is walled off from the matter, charlie is another firm
        assert client_for(outsider).get(f"/api/navigation/trace/{note.pk}").status_code == 404
        assert client_for(outsider).get(source["url"]).status_code == 404
