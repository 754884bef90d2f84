"""The LLM writes the story in chunks that fit its context (fake OpenAI-compatible server): one
request per chunk, each checked; a bad chunk is asked for once more, then replaced by the
shipped turns (recorded); a server that cannot deliver at all → the shipped script, offline,
with one clear line; ``--offline`` sends nothing to the LLM."""
from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from memory.models import AuditLog, Conversation, Message, Note, SourceType, TurnExtraction
from showcase.story import load_offline_script, plan_chunks
from showcase.story.chunks import STORY_SYSTEM_PROMPT, StoryChunk, estimate_tokens
from tests.fake_llm.replies import error_reply, json_reply
from tests.story.helpers import load, run_folder

pytestmark = pytest.mark.end_to_end  # the whole demo story, chunk by chunk

CONTEXT = 1536  # small enough that two turns fill a chunk: an event of five turns needs three
SHORT = ("--events", "2", "--turns-per-event", "5", "--no-progress")
FALLBACK = "[legalmem] the LLM could not write the demo story"


def plan() -> list[StoryChunk]:
    return plan_chunks(load_offline_script(), username="alice", context_tokens=CONTEXT, events=2, turns_per_event=5)


def written(chunk: StoryChunk, *, tweak: str = "") -> dict:
    """What a good LLM answers for ``chunk``: one turn per slot, in order, with facts."""
    return {"event": chunk.key, "turns": [
        {"at": at, "user": f"LLM写的第{chunk.index}段第{n}轮{tweak}：我在2026年2月{10 + n}日付了{1000 + n}元，有发票为证。",
         "assistant": f"根据《消费者权益保护法》第二十四条，请保存第{n}份证据。"}
        for n, at in enumerate(chunk.slots, start=1)
    ]}


def knowledge(content: str) -> dict:
    return {"knowledge": [{"content": content, "category": "事实", "confidence": 0.85}]}


@pytest.fixture
def small_context(settings) -> None:
    settings.LLM_CONTEXT_TOKENS = CONTEXT


def test_the_story_is_written_one_chunk_per_request_each_fitting_the_context(
    demo_firm, fake_llm, llm_profile, story_llm, small_context, tmp_path, capsys
):
    """Under every server profile (llm_profile): a server that refuses json_schema costs one
    refused request, once; the mode it accepts is used from then on."""
    chunks = plan()
    assert [c.key for c in chunks] == ["laptop"] * 3 + ["deposit"] * 3
    assert [len(c.shipped) for c in chunks] == [2, 2, 1] * 2
    turns = sum(len(c.shipped) for c in chunks)
    fake_llm.script(*(json_reply(written(c)) for c in chunks),
                    *(json_reply(knowledge(f"用户在第{n}轮提供了付款发票。")) for n in range(turns)))
    call_command("generate_story", "--out", str(tmp_path), *SHORT)
    out = capsys.readouterr().out
    files = load(run_folder(out))

    answered = [r for r in fake_llm.chat_requests() if r.status == 200]
    refused = [r for r in fake_llm.chat_requests() if r.status != 200]
    assert [r.response_format_type for r in refused] == (
        ["json_schema"] if llm_profile in ("deepseek", "llamacpp") else [])
    story_requests = answered[: len(chunks)]
    for chunk, request in zip(chunks, story_requests):
        assert request.system_content == STORY_SYSTEM_PROMPT
        assert f"「{chunk.event['name']}」" in request.user_content
        assert all(at in request.user_content for at in chunk.slots)
        sent = sum(estimate_tokens(m["content"]) for m in request.messages)
        assert request.body["max_tokens"] + sent <= CONTEXT, (request.body["max_tokens"], sent)
    for chunk in chunks:
        assert (f"[story] chunk {chunk.index}/{len(chunks)} ({chunk.key}, {len(chunk.shipped)} turn(s)): "
                "written by the LLM") in out
    # the rest went to extraction: one request per turn, nothing retried
    assert len(answered) == len(chunks) + turns
    assert set(TurnExtraction.objects.values_list("engine", "status")) == {(f"llm:{fake_llm.model}", "done")}

    sent = files["01_story_generation_request.json"]
    assert sent["context_tokens"] == CONTEXT
    assert [c["event"] for c in sent["chunks"]] == [c.key for c in chunks]
    received = files["02_story_generation_response.json"]["chunks"]
    assert [r["source"] for r in received] == ["llm"] * len(chunks)
    assert all(len(r["attempts"]) == 1 for r in received)
    users = set(Message.objects.filter(firm=demo_firm, role="user").values_list("content", flat=True))
    assert users == {t["user"] for c in chunks for t in written(c)["turns"]}
    assert files["03_story_exchanges.json"]["counts"] == {"events": 2, "turns": turns, "messages": 2 * turns}
    assert f"{len(chunks)} chunk(s): {len(chunks)} written by the LLM, 0 replaced" in files["research"]
    assert all(n.source_type == SourceType.CHAT_STORY for n in Note.objects.filter(firm=demo_firm))
    assert not Note.objects.filter(firm__slug="other-firm").exists()


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (lambda c: {**written(c), "event": "mystery"}, "is not this chunk's event"),
        (lambda c: {**written(c), "turns": written(c)["turns"][:-1]}, "turn(s) instead of"),
        (lambda c: {**written(c), "turns": written(c)["turns"][::-1]}, "earlier than the turn before it"),
        (lambda c: {"event": c.key, "turns": [{**t, "at": "2026-04-20T10:00:00+08:00"} for t in written(c)["turns"]]},
         "is outside"),
        (lambda c: {"event": c.key, "turns": [{**t, "at": "三月一日"} for t in written(c)["turns"]]}, "not an ISO 8601"),
        (lambda c: {"event": c.key, "turns": [{**t, "user": " "} for t in written(c)["turns"]]}, "must be 1–600"),
        (lambda c: {"event": c.key}, "'turns' is a required property"),
    ],
)
def test_a_bad_chunk_is_asked_for_once_more_then_replaced_by_the_shipped_turns(
    demo_firm, fake_llm, story_llm, small_context, tmp_path, capsys, settings, bad, problem,
):
    settings.LLM_MAX_RETRIES = 0  # the client's own invalid-JSON retries off: each bad reply is seen once
    first, *rest = plan()
    fake_llm.script(json_reply(bad(first)), json_reply(bad(first)), *(json_reply(written(c)) for c in rest))
    fake_llm.set_default(json_reply(knowledge("用户提供了付款发票。")))
    call_command("generate_story", "--out", str(tmp_path), *SHORT)
    out = capsys.readouterr().out
    files = load(run_folder(out))

    assert len([r for r in fake_llm.chat_requests() if "「" in r.user_content]) == 2 + len(rest)
    assert f"[story] chunk 1/{1 + len(rest)} (laptop, {len(first.shipped)} turn(s)): replaced by the shipped script" in out
    record = files["02_story_generation_response.json"]["chunks"][0]
    assert record["source"] == "shipped script"
    assert [a["status"] for a in record["attempts"]] == ["bad chunk"] * 2
    assert problem in record["attempts"][0]["error"]
    assert record["turns"] == [dict(t) for t in first.shipped]
    stored = set(Message.objects.filter(firm=demo_firm, role="user").values_list("content", flat=True))
    assert {t["user"] for t in first.shipped} <= stored  # the shipped turns stand in for the bad chunk
    assert "1 replaced by the shipped script" in files["research"]


def test_a_server_that_cannot_deliver_seeds_the_shipped_script_with_no_llm_at_all(
    demo_firm, fake_llm, story_llm, small_context, tmp_path, capsys
):
    fake_llm.set_default(error_reply(500))
    call_command("generate_story", "--out", str(tmp_path), *SHORT)  # auto: the default source
    out = capsys.readouterr().out
    folder = run_folder(out)
    files = load(folder)

    line = next(line for line in out.splitlines() if line.startswith(FALLBACK))
    assert f"chunk 1/{len(plan())} (laptop)" in line
    assert "HTTP 500" in line
    assert line.endswith("seeding the shipped script instead")
    # chunk 1 once (the first try and the client's one retry): an unavailable server is not asked again
    assert len(fake_llm.chat_requests()) == 2
    failure = json.loads((folder / "99_failure.json").read_text(encoding="utf-8"))
    assert failure["stage"] == "story generation"
    assert "HTTP 500" in failure["error"]
    assert files["01_story_generation_request.json"]["engine"] == "offline script"
    assert "the LLM could not write the story" in files["01_story_generation_request.json"]["why"]
    expected = sum(len(c.shipped) for c in plan())
    assert set(TurnExtraction.objects.values_list("engine", flat=True)) <= {"offline", "skipped"}
    assert TurnExtraction.objects.count() == expected
    assert Note.objects.filter(firm=demo_firm).exists()
    assert not Note.objects.filter(firm__slug="other-firm").exists()


def test_source_llm_fails_clearly_writes_nothing_and_records_why(demo_firm, fake_llm, story_llm, tmp_path):
    fake_llm.set_default(error_reply(503))
    with pytest.raises(CommandError, match="the LLM did not deliver a story: chunk 1/"):
        call_command("generate_story", "--source", "llm", "--out", str(tmp_path), *SHORT)
    assert not Conversation.objects.exists()
    assert not Note.objects.exists()
    (folder,) = list(tmp_path.iterdir())
    assert json.loads((folder / "99_failure.json").read_text(encoding="utf-8"))["what_next"].startswith("none")
    assert json.loads((folder / "01_story_generation_request.json").read_text(encoding="utf-8"))["chunks"]


def test_offline_sends_not_one_request_to_a_configured_llm(demo_firm, fake_llm, story_llm, tmp_path, capsys):
    call_command("generate_story", "--offline", "--out", str(tmp_path), "--events", "1", "--turns-per-event", "12",
                 "--no-progress")
    files = load(run_folder(capsys.readouterr().out))
    assert fake_llm.requests == []
    assert set(TurnExtraction.objects.values_list("engine", flat=True)) <= {"offline", "skipped"}
    assert TurnExtraction.objects.count() == 12
    assert Note.objects.filter(firm=demo_firm).exists()
    assert "--offline" in files["01_story_generation_request.json"]["why"]


def test_rerun_replays_the_stored_story_and_fresh_asks_for_a_new_one(
    demo_firm, fake_llm, story_llm, small_context, tmp_path, capsys
):
    chunks = plan()
    fake_llm.script(*(json_reply(written(c)) for c in chunks))
    fake_llm.set_default(json_reply(knowledge("用户提供了付款发票。")))
    call_command("generate_story", "--out", str(tmp_path), *SHORT)
    capsys.readouterr()
    first = {n.pk: (n.mention_count, n.status) for n in Note.objects.all()}
    requests, messages = len(fake_llm.chat_requests()), Message.objects.count()

    call_command("generate_story", "--out", str(tmp_path), "--events", "2", "--turns-per-event", "5")
    out, err = capsys.readouterr()
    assert "0 processed now, 0 message(s) new" in out
    assert "stored story" in out
    assert "story: 100%" in err  # the tqdm bar
    assert len(fake_llm.chat_requests()) == requests  # no new story, no new extraction
    assert {n.pk: (n.mention_count, n.status) for n in Note.objects.all()} == first
    assert Message.objects.count() == messages

    fake_llm.script(*(json_reply(written(c, tweak="第二版")) for c in chunks))
    call_command("generate_story", "--fresh", "--out", str(tmp_path), *SHORT)
    out = capsys.readouterr().out
    assert f"deleted {len(first)} note(s)" in out
    assert "edition 2" in out
    deleted = AuditLog.objects.filter(event_type="note_deleted", object_type="note")
    assert set(deleted.values_list("object_id", flat=True)) == {str(pk) for pk in first}
    assert all(":e2:" in n.conversation.external_id for n in Note.objects.all())
    assert Message.objects.count() == 2 * messages  # the first edition's messages are kept (never deleted)


def test_fresh_keeps_the_old_story_when_the_new_one_cannot_be_had(demo_firm, fake_llm, story_llm, tmp_path, capsys):
    fake_llm.script(*(json_reply(written(c)) for c in plan_chunks(
        load_offline_script(), username="alice", context_tokens=8192, events=1, turns_per_event=2)))
    fake_llm.set_default(json_reply(knowledge("用户提供了付款发票。")))
    call_command("generate_story", "--out", str(tmp_path), "--events", "1", "--turns-per-event", "2", "--no-progress")
    before = set(Note.objects.values_list("pk", flat=True))
    assert before
    fake_llm.set_default(error_reply(500))
    with pytest.raises(CommandError, match="the LLM did not deliver a story"):
        call_command("generate_story", "--fresh", "--source", "llm", "--out", str(tmp_path), "--events", "1",
                     "--no-progress")
    assert set(Note.objects.values_list("pk", flat=True)) == before


def test_after_the_time_budget_the_shipped_turns_stand_in_and_extraction_is_left_to_the_worker(
    demo_firm, fake_llm, story_llm, small_context, tmp_path, capsys
):
    call_command("generate_story", "--out", str(tmp_path), "--budget", "0.001", *SHORT)
    out = capsys.readouterr().out
    files = load(run_folder(out))
    chunks = plan()
    assert fake_llm.requests == []  # the budget was spent before the first chunk
    assert "replaced by the shipped script (the time budget was spent before this chunk)" in out
    records = files["02_story_generation_response.json"]["chunks"]
    assert [r["source"] for r in records] == ["shipped script"] * len(chunks)
    turns = sum(len(c.shipped) for c in chunks)
    assert f"{turns} turn(s) are left to the background worker" in out
    jobs = TurnExtraction.objects.filter(firm=demo_firm)
    assert jobs.count() == turns
    assert set(jobs.values_list("status", flat=True)) == {"pending"}
    assert files["91_graph_summary.json"]["turns"]["left_to_the_worker"] == turns
    assert Message.objects.filter(firm=demo_firm).count() == 2 * turns  # every turn is saved all the same


def test_the_story_budget_stops_a_running_chunk_and_keeps_what_the_llm_wrote(fake_llm, llm_config):
    """The story's deadline closes the chunk request still running (the server stops
    generating), that chunk and the rest come from the shipped script, and the chunk the LLM
    wrote before is kept — the story is not thrown away because the budget ran out."""
    import time

    from infra.llm import LLMClient
    from showcase.story.generation import generate_story_in_chunks

    chunks = plan()[:3]
    fake_llm.script(json_reply(written(chunks[0])), json_reply(written(chunks[1]), token_delay=0.2))
    client = LLMClient(llm_config)
    started = time.monotonic()
    generation = generate_story_in_chunks(client, chunks, username="alice", context_tokens=CONTEXT,
                                          deadline=started + 1.5)

    assert time.monotonic() - started < 4
    records = generation.response["chunks"]
    assert [r["source"] for r in records] == ["llm", "shipped script", "shipped script"]
    assert records[1]["reason"] == "the time budget was spent during this chunk (its request was stopped)"
    assert records[1]["attempts"][0]["status"] == "out of time"
    assert records[2]["reason"] == "the time budget was spent before this chunk"
    assert records[2]["attempts"] == []
    assert generation.data["turns"][0]["user"].startswith("LLM写的第1段")
    cut = fake_llm.chat_requests()[1]
    assert cut.done.wait(2)
    assert cut.disconnected
    assert fake_llm.generating() == []  # it saw the client go
