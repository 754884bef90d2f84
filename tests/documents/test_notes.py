"""Notes from documents: the write path makes case notes of the matter from the chunks, with
the document, page and offsets as provenance; a later document that says otherwise updates the
same slot and keeps the history."""
from __future__ import annotations

from memory.models import Note, SourceType
from documents.models import DocumentPage
from tests.documents.conftest import add_document
from tests.documents.files import chinese_text_pdf, docx_bytes

LEASE_TERMS = ["租客张三的月租金为8000元。","租客张三于2026年3月1日签订租赁合同，月租金为8000元，押金为16000元。",
               "租赁期限为一年，自2026年3月1日起至2027年2月28日止。"]


def test_a_document_becomes_case_notes_with_page_and_offsets(world):
    document = add_document(world.matter_deposit, "房屋租赁合同.docx", docx_bytes("房屋租赁合同", LEASE_TERMS),
                            actor=world.alice)

    notes = list(Note.objects.filter(source_type=SourceType.DOCUMENT, status=Note.Status.ACTIVE))
    assert notes, "the lease's terms should become notes"
    for note in notes:
        assert (note.matter_id, note.memory_scope, note.owner_id) == (world.matter_deposit.pk, "case", world.alice.pk)
        kind, document_id, page, offsets = note.source_id.split(":")
        start, end = map(int, offsets.split("-"))
        assert (kind, int(document_id), page) == ("document", document.pk, "p1")
        assert DocumentPage.objects.get(document=document, number=1).text[start:end]
        assert note.speaker == "《房屋租赁合同》第 1 页"
    assert any("8000" in note.content for note in notes)


def test_a_later_document_that_says_otherwise_updates_the_slot_and_keeps_history(world):
    add_document(world.matter_deposit, "房屋租赁合同.docx", docx_bytes("房屋租赁合同", LEASE_TERMS), actor=world.alice)
    add_document(world.matter_deposit, "补充协议.docx", docx_bytes("补充协议", [
        "租客张三的月租金为9000元。"]), actor=world.alice)

    old = Note.objects.get(source_type=SourceType.DOCUMENT, content="租客张三的月租金为8000元。")
    new = Note.objects.get(source_type=SourceType.DOCUMENT, content="租客张三的月租金为9000元。")
    assert (old.status, new.status) == (Note.Status.SUPERSEDED, Note.Status.ACTIVE)
    assert old.source_id.startswith("document:") and new.source_id.startswith("document:")
    assert new.source_id.split(":")[1] != old.source_id.split(":")[1]  # another document
    assert not Note.objects.filter(content__contains="说：房屋租赁合同").exists()  # a heading is not a fact


LEASE_TXT = ("房屋租赁合同\n\n出租方（甲方）：周海峰\n承租方（乙方）：林晓雯\n\n"
             "根据《中华人民共和国民法典》及有关规定，甲乙双方经协商一致，订立本合同。\n\n"
             "第五条 乙方应于签订本合同时向甲方支付押金人民币3000元。\n"
             "第八条 房屋的自然损耗及正常使用产生的墙面污渍，\n不属于乙方应当赔偿的损失范围。\n")


def test_a_contracts_terms_are_terms_whole_and_cited_by_its_title(world):
    """Issue 50's lease: articles were filed as 法条, 第八条 lost its negating tail, and citations
    named the file ("lease_scan") instead of the contract."""
    document = add_document(world.matter_deposit, "lease_scan.txt", LEASE_TXT.encode(), actor=world.alice)
    document.refresh_from_db()
    assert document.title == "房屋租赁合同"
    notes = list(Note.objects.filter(source_type=SourceType.DOCUMENT, status=Note.Status.ACTIVE))
    assert notes and all(note.category != "law" for note in notes)
    eighth = [note for note in notes if "墙面污渍" in note.content]
    assert [note.content for note in eighth] == ["《房屋租赁合同》第八条：房屋的自然损耗及正常使用产生的墙面污渍，不属于乙方应当赔偿的损失范围。"]
    assert "合同条款" in eighth[0].tags
    assert eighth[0].speaker == "《房屋租赁合同》第 1 页"


def test_an_article_ending_a_page_is_not_put_cut_above_the_next_page(world):
    """The first hour in the browser (6 Dec): 第八条's first line, the last heading of page 2, was
    carried over page 3 (which opens with 第九条) and noted there alone, cut from its negating tail."""
    pages = [["房屋租赁合同", "出租方（甲方）：周建国", "承租方（乙方）：林晓雯",
              "第四条 乙方应于签订本合同时向甲方支付押金人民币3000元。"],
             ["第七条 甲方应负责房屋主体结构及设施的正常维修。",
              "第八条 房屋的自然损耗及正常使用产生的墙面污渍，", "不属于乙方应当赔偿的损失范围。"],
             ["第九条 任何一方违反本合同约定的，应向对方支付违约金人民币2000元。",
              "第十条 本合同自双方签字之日起生效，一式两份，甲乙双方各执一份。"]]
    document = add_document(world.matter_deposit, "lease.pdf", chinese_text_pdf(pages), actor=world.alice)

    document.refresh_from_db()
    assert (document.title, document.page_count) == ("房屋租赁合同", 3)
    eighth = Note.objects.filter(source_type=SourceType.DOCUMENT, content__contains="墙面污渍")
    assert [(note.content, note.source_id.split(":")[2]) for note in eighth] == [
        ("《房屋租赁合同》第八条：房屋的自然损耗及正常使用产生的墙面污渍，不属于乙方应当赔偿的损失范围。", "p2")]


def test_an_article_is_one_note_whole_across_a_page_break_and_the_signatures_stay_apart(world):
    """The note-truth readers (judgements of dev): 第五条 broken over a page gave a dangling
    condition on page 1; 第六条's exception was a note of its own; the last article was read with
    the signature block glued to its first line; a contract's "上月" was resolved to the upload's
    month; the formula "经协商一致，订立本合同" and the forum clause were filed as notes or advice."""
    pages = [["房屋租赁合同", "出租方（甲方）：周海峰", "承租方（乙方）：林晓雯",
              "根据《中华人民共和国民法典》及有关规定，甲乙双方经协商一致，订立本合同。",
              "第四条 乙方应于每月10日前支付上月水电费。",
              "第五条 乙方应于签订本合同时向甲方支付押金人民币3000元。租赁期满或",
              "合同解除后，乙方结清租金并交还房屋的，"],
             ["甲方应当于乙方交还房屋之日起七日内无息退还全部押金。",
              "第六条 房屋主体结构的维修由甲方负责；因乙方使用不当", "造成损坏的，由乙方负责维修或者赔偿。",
              "第十一条 协商不成的，任何一方均可向房屋所在地", "人民法院起诉。"],
             ["甲方（签字）：周海峰　乙方（签字）：林晓雯", "签订日期：2025年3月14日"]]
    add_document(world.matter_deposit, "lease.pdf", chinese_text_pdf(pages), actor=world.alice)

    notes = list(Note.objects.filter(source_type=SourceType.DOCUMENT, status=Note.Status.ACTIVE))
    contents = [note.content for note in notes]
    fifth = [c for c in contents if "交还房屋" in c]
    assert fifth == ["《房屋租赁合同》第五条：乙方应于签订本合同时向甲方支付押金人民币3000元。租赁期满或合同解除后，"
                     "乙方结清租金并交还房屋的，甲方应当于乙方交还房屋之日起七日内无息退还全部押金。"]
    sixth = [c for c in contents if "使用不当" in c or "维修由甲方" in c]
    assert sixth == ["《房屋租赁合同》第六条：房屋主体结构的维修由甲方负责；因乙方使用不当造成损坏的，由乙方负责维修或者赔偿。"]
    assert not [c for c in contents if "签字" in c and "第十一条" in c]
    assert not [c for c in contents if "协商一致，订立本合同" in c]
    assert [c for c in contents if "水电费" in c] and not [c for c in contents if "上月（" in c]
    assert all(note.category == "fact" for note in notes if "第" in note.content and "条：" in note.content)
