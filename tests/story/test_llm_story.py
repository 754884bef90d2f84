"""The LLM path against the fake OpenAI-compatible server: request and response recorded,
the json_schema → json_object fallback, re-runs, --fresh, and bad stories refused clearly."""
from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from memory.models import AuditLog, Conversation, Message, Note, SourceType, TurnExtraction
from memory.story.generation import STORY_SYSTEM_PROMPT
from tests.fake_llm.server import json_reply
from tests.story.helpers import load, run_folder

SMALL = ("--min-turns", "2", "--min-events", "2", "--no-progress")
PREFERENCE = "用户习惯先看结论再看证据清单。"


def story(*turns: tuple[str, str, str, str], matter: str | None = "M-001") -> dict:
    return {
        "title": "alice 的三月",
        "description": "测试用的小剧本",
        "events": [
            {"key": "laptop", "name": "电脑花屏", "matter": matter, "summary": "笔记本花屏"},
            {"key": "general", "name": "日常法律问题", "matter": None, "summary": "零散问题"},
        ],
        "turns": [{"event": e, "at": at, "user": u, "assistant": a} for e, at, u, a in turns],
    }


STORY = story(
    ("laptop", "2026-03-01T09:00:00+08:00", "我在2026年2月20日花6999元买了笔记本电脑，我习惯先看结论再看证据清单。",
     "结论：可以要求退货。根据《消费者权益保护法》第二十四条处理。"),
    ("laptop", "2026-03-05T09:00:00+08:00", "更正一下，我在2026年2月20日花6499元买了笔记本电脑。我习惯先看结论再看证据清单。",
     "好的，已按6499元更正。"),
    ("general", "2026-03-10T09:00:00+08:00", "微信聊天记录能当证据吗？我习惯先看结论再看证据清单。",
     "结论：可以，电子数据是法定证据。"),
    ("laptop", "2026-03-20T09:00:00+08:00", "京东在2026年3月20日同意全额退款6499元。",
     "结论：主张已经实现，请保存退款记录。"),
)


def knowledge(*items: tuple[str, str]) -> dict:
    return {"knowledge": [{"content": c, "category": k, "confidence": 0.85} for c, k in items]}


EXTRACTIONS = (
    knowledge(("用户在2026年2月20日花6999元购买了一台笔记本电脑。", "事实"), (PREFERENCE, "偏好")),
    knowledge(("用户在2026年2月20日花6499元购买了一台笔记本电脑。", "事实"), (PREFERENCE, "偏好")),
    knowledge(("微信聊天记录属于电子数据，可以作为证据。", "法条"), (PREFERENCE, "偏好")),
    knowledge(("京东在2026年3月20日同意全额退款6499元。", "事实")),
)


def test_llm_writes_the_story_with_json_mode_fallback(demo_firm, fake_llm, story_llm, tmp_path, capsys):
    fake_llm.reject_json_schema = True  # like DeepSeek: json_object only
    fake_llm.script(json_reply(STORY), *(json_reply(k) for k in EXTRACTIONS))
    call_command("generate_story", "--out", str(tmp_path), *SMALL)
    folder = run_folder(capsys.readouterr().out)
    files = load(folder)

    requests = fake_llm.chat_requests()
    assert [r.response_format_type for r in requests[:2]] == ["json_schema", "json_object"]
    assert requests[1].system_content == STORY_SYSTEM_PROMPT and "M-001：电脑花屏退货纠纷" in requests[1].user_content
    sent = files["01_story_generation_request.json"]
    assert sent["engine"] == f"llm:{fake_llm.model}" and sent["base_url"] == fake_llm.base_url
    assert sent["json_modes_tried"] == ["json_schema", "json_object"] and sent["json_mode_used"] == "json_object"
    assert sent["requests_by_mode"]["json_object"]["messages"] == requests[1].messages
    assert sent["requests_by_mode"]["json_object"]["response_format"] == requests[1].response_format
    received = files["02_story_generation_response.json"]
    assert received["json_mode"] == "json_object" and received["content"] == STORY
    assert "json_schema → json_object" in files["research"] and "rejected response_format=json_schema" in files["research"]

    # extraction ran through the LLM too, and routing / persona did their work
    assert set(TurnExtraction.objects.values_list("engine", flat=True)) == {f"llm:{fake_llm.model}"}
    assert len(requests) == 2 + len(EXTRACTIONS)  # the refused json_schema is remembered (database): one request per extraction
    old = Note.objects.get(content__contains="6999元")
    assert old.status == Note.Status.SUPERSEDED and "6499元" in old.superseded_by.content
    assert old.source_id == "story-turn-001" and old.superseded_by.source_id == "story-turn-002"
    profile = Note.objects.get(memory_scope="user_profile")
    assert profile.source_id == "story-turn-003" and "event:日常法律问题" in profile.tags
    law = Note.objects.get(category="law")
    assert law.matter is None and law.tags.count("event:日常法律问题") == 1
    notes = Note.objects.filter(firm=demo_firm)
    assert all(n.source_type == SourceType.CHAT_STORY for n in notes)
    summary = files["91_graph_summary.json"]
    assert summary["notes"]["total"] == notes.count() == files["90_stored_notes.json"]["count"]
    assert summary["persona_promotions"]["count"] == 1 and summary["updates"]["update_decisions"] == 1
    assert [t["turn"] for t in files["03_story_exchanges.json"]["turns"]] == sorted(files["turns"])


def test_rerun_replays_the_stored_story_and_fresh_asks_for_a_new_one(demo_firm, fake_llm, story_llm, tmp_path, capsys):
    fake_llm.script(json_reply(STORY), *(json_reply(k) for k in EXTRACTIONS))
    call_command("generate_story", "--out", str(tmp_path), *SMALL)
    capsys.readouterr()
    first = {n.pk: (n.mention_count, n.status) for n in Note.objects.all()}
    requests, messages = len(fake_llm.chat_requests()), Message.objects.count()

    call_command("generate_story", "--out", str(tmp_path), "--min-turns", "2", "--min-events", "2")
    out, err = capsys.readouterr()
    assert "0 processed now, 0 message(s) new" in out and "stored story" in out
    assert "story: 100%" in err and "4/4" in err  # the tqdm bar
    assert len(fake_llm.chat_requests()) == requests  # no new story, no new extraction
    assert {n.pk: (n.mention_count, n.status) for n in Note.objects.all()} == first
    assert Message.objects.count() == messages
    assert load(run_folder(out))["01_story_generation_request.json"]["engine"] == "stored story"

    second = story(
        ("laptop", "2026-03-02T10:00:00+08:00", "我在2026年2月21日签收了笔记本电脑，发票金额6499元。", "请保存签收记录和发票。"),
        ("general", "2026-03-03T10:00:00+08:00", "诉讼时效一般是多久？我想了解一下规定。", "一般为三年。"),
    )
    fake_llm.script(json_reply(second),
                    json_reply(knowledge(("用户在2026年2月21日签收了笔记本电脑，发票金额6499元。", "证据"))),
                    json_reply(knowledge(("民事诉讼时效期间一般为三年。", "法条"))))
    call_command("generate_story", "--fresh", "--out", str(tmp_path), *SMALL)
    out = capsys.readouterr().out
    assert f"deleted {len(first)} note(s)" in out and "edition 2" in out
    deleted = AuditLog.objects.filter(event_type="note_deleted", object_type="note")
    assert set(deleted.values_list("object_id", flat=True)) == {str(pk) for pk in first}
    assert not Note.objects.filter(pk__in=first).exists()
    fresh = list(Note.objects.all())
    assert {n.source_id for n in fresh} == {"story-turn-001", "story-turn-002"}
    assert all(":e2:" in n.conversation.external_id for n in fresh)
    assert Message.objects.count() == messages + 4  # the first edition's messages are kept (never deleted)


def test_a_reply_that_is_not_a_story_is_a_clear_error(demo_firm, fake_llm, story_llm, tmp_path):
    fake_llm.set_default("这不是 JSON")
    with pytest.raises(CommandError, match="the LLM did not deliver a story: .*did not return a valid JSON object"):
        call_command("generate_story", "--out", str(tmp_path), *SMALL)
    assert not Conversation.objects.exists() and not Note.objects.exists()


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (story(*[(t["event"], t["at"], t["user"], t["assistant"]) for t in STORY["turns"]], matter="M-999"),
         "firm 'demo-firm' has no matter 'M-999'"),
        ({**STORY, "turns": [{**STORY["turns"][0], "event": "mystery"}]}, "unknown event 'mystery'"),
        ({**STORY, "turns": [{**STORY["turns"][0], "at": "三月一日"}, *STORY["turns"][1:]]}, "not an ISO 8601"),
    ],
)
def test_a_story_that_does_not_fit_the_firm_is_refused_before_anything_is_written(
    demo_firm, fake_llm, story_llm, tmp_path, bad, message
):
    fake_llm.script(json_reply(bad))
    with pytest.raises(CommandError, match="the story is not valid") as error:
        call_command("generate_story", "--out", str(tmp_path), *SMALL)
    assert message in str(error.value)
    assert not Conversation.objects.exists() and not Note.objects.exists()
    (folder,) = list(tmp_path.iterdir())
    saved = json.loads((folder / "02_story_generation_response.json").read_text(encoding="utf-8"))
    assert saved["content"] == bad  # what the LLM sent is kept for inspection


def test_fresh_keeps_the_old_story_when_the_new_one_cannot_be_had(demo_firm, fake_llm, story_llm, tmp_path, capsys):
    fake_llm.script(json_reply(STORY), *(json_reply(k) for k in EXTRACTIONS))
    call_command("generate_story", "--out", str(tmp_path), *SMALL)
    before = set(Note.objects.values_list("pk", flat=True))
    fake_llm.set_default("这不是 JSON")
    with pytest.raises(CommandError, match="the LLM did not deliver a story"):
        call_command("generate_story", "--fresh", "--out", str(tmp_path), *SMALL)
    assert set(Note.objects.values_list("pk", flat=True)) == before
