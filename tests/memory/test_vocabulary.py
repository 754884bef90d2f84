"""One vocabulary (docs/my-memory-and-admin.md): an audit entry's before / after is a field-by-field
difference in words and local time, its extra data labelled lines, actors and object types by
their names; one name per layer everywhere; recall reasons in words; API errors in the reader's
language; the compiled catalogs match the translation table. alice (firm admin), bob (lawyer)
and charlie (another firm) as in every access test."""
from __future__ import annotations

import gettext as gnu_gettext
import re
from pathlib import Path

from django.test import Client
from django.utils import timezone, translation

from chat.templatetags.memory_labels import labels
from memory.audit_display import changes, extra_lines
from memory.labels import actor_display, link_reason, object_type_label, speaker_label
from memory.models import AuditEvent, AuditLog, MemoryScope
from recall import search_memory
from records.erasure import erase, matter_unit
from memory.services.notes import correct_note, forget_note
from tests.clients import client_for

LOCALE = Path(__file__).resolve().parents[2] / "locale"


def admin_client(user, language: str) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(user)
    return client


def test_a_correction_reads_as_a_field_by_field_difference_in_words(world, memory_notes):
    note = memory_notes["laptop"]
    correct_note(note, {"content": "笔记本电脑在购买后第十天出现花屏。", "category": "evidence"}, actor=world.alice,
                 reason="日期有误")
    entry = AuditLog.objects.filter(object_id=str(note.pk), event_type=AuditEvent.NOTE_UPDATED).latest("id")
    with translation.override("zh-hans"):
        rows = {row.label: (row.before, row.after) for row in changes(entry)}
        assert rows["内容"] == ("笔记本电脑在购买后约两周出现大面积花屏。", "笔记本电脑在购买后第十天出现花屏。")
        assert rows["类别"] == ("事实", "证据")
        assert all(not re.search(r"[a-z]_[a-z]", label) for label in rows)  # no snake_case field names
        assert ("原因", "日期有误") in extra_lines(entry)
    with translation.override("en"):
        assert {row.label for row in changes(entry)} >= {"content", "category"}


def test_audit_page_shows_changes_in_words_and_local_time_never_raw_json(world, memory_notes):
    forget_note(memory_notes["deposit"], user=world.alice, reason="客户撤回")
    entry = AuditLog.objects.get(event_type=AuditEvent.NOTE_FORGOTTEN)
    page = admin_client(world.alice, "zh-hans").get(f"/admin/memory/auditlog/{entry.pk}/change/").content.decode()
    assert "audit-changes" in page
    assert "已遗忘" in page
    assert '"status"' not in page
    assert "memory_scope" not in page
    valid_to = timezone.localtime(memory_notes["deposit"].__class__.objects.get(pk=entry.object_id).valid_to)
    assert f"{valid_to:%Y-%m-%d %H:%M}" in page  # the closed validity window, in the firm's time zone
    assert "“我的记忆”页面" in page  # via: my_memory, in words
    listing = admin_client(world.alice, "zh-hans").get("/admin/memory/auditlog/").content.decode()
    assert "system:test" not in listing
    assert "系统 · 自动化测试" in listing  # the actor by its name
    assert ">笔记<" in listing  # the object type by its name, not "note"


def test_an_erasure_names_its_unit_and_counts_in_words(world, memory_notes):
    result = erase(matter_unit(world.matter_secret), actor=world.alice, reason="委托人要求删除")
    with translation.override("zh-hans"):
        assert result.message.startswith(f"案件 {world.matter_secret.reference} 已删除")
        lines = dict(extra_lines(result.tombstone))
        assert lines["删除对象"] == f"案件 {world.matter_secret.reference}"
        assert lines["删除类型"] == "一个案件"
        assert "{" not in lines["删除内容"]
        assert "笔记" in lines["删除内容"]
        assert lines["被删除内容的指纹"].endswith("个带密钥的哈希值")  # a count, not the hashes


def test_actors_object_types_speakers_and_link_reasons_in_words():
    with translation.override("zh-hans"):
        assert actor_display("system:pipeline") == "系统 · 记忆抽取"
        assert actor_display("system:unknown-thing") == "系统"
        assert actor_display("alice") == "alice"
        assert object_type_label("note") == "笔记"
        assert object_type_label("link") == "笔记关联"
        assert speaker_label("assistant") == "助手"
        assert speaker_label("offline") == "离线引擎"
        assert speaker_label("bob") == "bob"
        assert link_reason("nearest neighbour, cosine 0.913") == "语义相近（相似度 0.913）"
    with translation.override("en"):
        assert actor_display("system:pipeline") == "system · memory extraction"
        assert speaker_label("offline") == "Offline engine"


def test_each_layer_has_one_name_and_the_pages_use_it():
    """The product's table (MemoryScope) is what chat, navigation, my memory and admin show."""
    for language, expected in (("zh-hans", {"case": "案件事实", "global": "本所流程"}),
                               ("en", {"case": "Case facts", "global": "Firm procedures"})):
        with translation.override(language):
            shown = labels()["layer"]
            for value, label in MemoryScope.choices:
                assert shown[value] == str(label)
            assert {key: shown[key] for key in expected} == expected


def test_recall_reasons_are_words_a_lawyer_reads(world, memory_notes):
    with translation.override("zh-hans"):
        result = search_memory(world.bob, "电脑花屏", k=5, matter_id=world.matter_laptop.pk)
    reasons = [reason for hit in result.hits for reason in hit.reasons]
    assert reasons
    assert any("当前案件的事实" in reason for reason in reasons)
    for reason in reasons:
        assert not re.search(r"RRF|\bcos\b|layer (case|global)|层级 layer|semantic|via message|#\d", reason), reason


def test_api_errors_speak_the_readers_language(world):
    bob = client_for(world.bob)
    response = bob.get(f"/api/memory/matters/{world.matter_deposit.pk}/export", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert response.status_code == 404
    assert response.json() == {"detail": "未找到。"}  # walled: as if absent
    response = bob.get("/api/memory/matters/999999/export", HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}
    alice = client_for(world.alice)
    response = alice.get(f"/api/memory/matters/{world.matter_deposit.pk}/export", {"format": "pdf"},
                         HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert response.status_code == 400
    assert "格式必须是" in response.json()["detail"]


def test_404_page_is_translated(world):
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    client.force_login(world.charlie)
    page = client.get("/memory/00000000-0000-0000-0000-000000000000/")
    assert page.status_code == 404
    assert "页面不存在" in page.content.decode()
    page = client.get("/no-such-page/").content.decode()
    assert "页面不存在" in page
    assert "Not Found" not in page


def _po_entries(path: Path) -> dict[tuple[str | None, str], str]:
    """(context, msgid) → msgstr of the translated, non-fuzzy singular entries of a .po file."""
    entries: dict[tuple[str | None, str], str] = {}
    block: dict[str, str] = {}
    current = ""
    fuzzy = False

    def flush() -> None:
        if "msgid" in block and block.get("msgstr") and block["msgid"] and not fuzzy and "msgid_plural" not in block:
            entries[(block.get("msgctxt"), block["msgid"])] = block["msgstr"]

    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        if not line.strip():
            flush()
            block, current, fuzzy = {}, "", False
        elif line.startswith("#,") and "fuzzy" in line:
            fuzzy = True
        elif line.startswith("#"):
            continue
        elif line.startswith('"'):
            block[current] += eval(line)  # a quoted continuation line
        else:
            key, _, value = line.partition(" ")
            current = key
            block[key] = eval(value)
    return entries


def test_the_compiled_catalogs_match_the_translation_table():
    """locale/*/django.mo is committed: `make run` and `make test` use it as it is. Recompile with
    `msgfmt -o django.mo django.po` (or `manage.py compilemessages`) after editing a .po file."""
    for language in ("zh_Hans", "en"):
        folder = LOCALE / language / "LC_MESSAGES"
        with (folder / "django.mo").open("rb") as compiled:
            catalog = gnu_gettext.GNUTranslations(compiled)
        stale = [msgid for (context, msgid), msgstr in _po_entries(folder / "django.po").items()
                 if (catalog.pgettext(context, msgid) if context else catalog.gettext(msgid)) != msgstr]
        assert stale == [], f"{language}: django.mo is older than django.po for {stale[:5]}"


def test_a_document_passage_is_explained_in_words(world, settings, tmp_path):
    """A recalled passage says what it was ranked by in words ("文件关键词第 1 名", never
    "keyword #1") and keeps its ranks for the score line; its layer is 文书, not "Documents"."""
    import io

    from documents.ingest import process_document, upload_document
    from documents.search import search_documents

    settings.DOCUMENT_STORE_DIR = tmp_path / "documents"
    lease = upload_document(actor=world.alice, matter=world.matter_deposit, filename="房屋租赁合同.txt",
                            stream=io.BytesIO("房屋租赁合同\n\n第三条 押金三千元，租期届满后七日内退还。\n".encode()))
    process_document(lease.pk)
    with translation.override("zh-hans"):
        hits = search_documents(world.alice, "押金什么时候退还", matter_id=world.matter_deposit.pk)
        assert labels()["layer"]["document"] == "文书"
        assert labels()["score"]["keyword_rank"] == "关键词排名"
    assert hits and hits[0].ranks and set(hits[0].ranks) <= {"keyword", "dense"}
    for reason in hits[0].reasons:
        assert re.fullmatch(r"文件(关键词|语义)第 \d+ 名", reason), reason
    with translation.override("en"):
        english = search_documents(world.alice, "押金什么时候退还", matter_id=world.matter_deposit.pk)
    assert all(re.fullmatch(r"(keywords|meaning) of the document: no\. \d+", r) for r in english[0].reasons)


def test_the_offline_answer_quotes_the_question_whole_or_at_a_boundary():
    """Never "关于“…押”": a long question is cut after a clause or a whole word, then "…"."""
    from chat.answering import QUOTED_QUESTION_CHARS, compose_offline_answer

    question = ("房东以我养猫弄坏了地板为由扣了我三千元押金但其实地板在我入住前就已经有划痕了"
                "我手里有入住时拍的照片请问我现在该怎么要回押金呢")
    with translation.override("zh-hans"):
        answer = compose_offline_answer(question, [{"layer": "case", "content": "押金三千元。", "matter_id": None}])
    quoted = re.search(r"关于“(.+?)”", answer).group(1)
    assert quoted.endswith("…") and len(quoted) <= QUOTED_QUESTION_CHARS + 1
    assert question.startswith(quoted[:-1])
    import jieba

    ends, at = set(), 0
    for word in jieba.cut(question):
        at += len(word)
        ends.add(at)
    assert len(quoted) - 1 in ends, quoted  # cut after a whole word: never "…押" of 押金
    assert question[:QUOTED_QUESTION_CHARS].endswith("押")  # the old blind cut split 押金 ("…押")
    assert "押”" not in answer
    with translation.override("zh-hans"):
        short = compose_offline_answer("押金什么时候退？", [{"layer": "case", "content": "押金三千元。", "matter_id": None}])
    assert "关于“押金什么时候退？”" in short


def test_the_audit_list_names_its_objects_and_a_note_links_its_page(world, memory_notes):
    """The audit list's object column reads a note's words or a matter's reference, never a UUID;
    the admin's note page keeps its ids one click away; a reason is in words."""
    forget_note(memory_notes["deposit"], user=world.alice, reason="客户撤回")
    erase(matter_unit(world.matter_secret), actor=world.alice, reason="委托人要求删除")
    listing = admin_client(world.alice, "zh-hans").get("/admin/memory/auditlog/").content.decode()
    shown = re.findall(r'<td class="field-object_shown"><span title="[^"]*">([^<]*)</span>', listing)
    assert "租客已支付押金五千元，房东拒绝退还。" in shown
    assert not any(re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", name) for name in shown), shown
    note = admin_client(world.alice, "zh-hans").get(
        f"/admin/memory/note/{memory_notes['laptop'].pk}/change/").content.decode()
    technical = note[note.index("<details"):]
    assert str(memory_notes["laptop"].pk) in technical  # the note id: inside the closed "technical details"
    with translation.override("zh-hans"):
        assert link_reason("next note of the same conversation") == "同一对话中接着说的"
