"""Does the memory stay true with the model? Issue 56's scripted deposit consultation (not in CI).

alice, in a new matter, over the real chat websocket (Daphne, subprocess), six turns: the facts,
a question whose answer computes a sum, the landlord's repair debt, a correction ("刚才说错了，
押金是3000不是2000"), a question she stops with the Stop button, and a question whose socket she
closes. After each answer this process plays the worker: it extracts the turn's pending jobs
through the LLM of ``LLM_BASE_URL`` (behind ``bench_real_llm.CountingProxy``) and waits for them.

Reported per run (targets in brackets):
- corrections superseded: the 2000 deposit note superseded, a current note of alice's says 3000 [1/1];
- notes from turns that stated nothing (turns 5 and 6) [0];
- notes in alice's name worded as the answer (``grounding.whose_words(...).worded_as_answer``) [0];
- notes in alice's name stating what nobody in the turn said (``said_by_nobody``) [0];
- notes in alice's name that are half a clause of her sentence, naming nothing (``cut_clause``) [0];
- wrong dates: a note's date not in its turn, a year shifted beside a stated one, "今天（…）" [0];
- requests per turn, seconds per turn (answer, extraction);
- the recall question "林晓雯的押金是多少？": the first hit naming the deposit says 3000 [yes].

Two modes. ``BENCH_LLM=fake`` (default) starts the fake OpenAI-compatible server scripted to do
exactly what the live Qwen2.5 1.5B did in the issue; ``BENCH_LLM=live`` uses ``LLM_BASE_URL``
(the llama.cpp server of docs/story-and-real-llm.md):

    BENCH_LLM=live LLM_BASE_URL=http://127.0.0.1:8088/v1 LLM_MODEL=qwen-local LLM_CONTEXT_TOKENS=4096 \\
    LLM_ANSWER_MAX_TOKENS=384 LLM_MAX_CONCURRENT_REQUESTS=1 LLM_TIMEOUT_SECONDS=300 \\
    .venv/bin/python -m legalmem_site.launcher manage shell -c "from bench.bench_model_truth import main; main()"

A throw-away database ``legalmem_modeltruth`` on the data folder's server, dropped at the end.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection

from bench.bench_real_llm import CountingProxy
from bench.bench_search import _make_world
from bench.daphne import free_port, session_cookie, start_daphne
from tests.overrides import overrides_env

DB_NAME = "legalmem_modeltruth"


@dataclass(frozen=True)
class Turn:
    question: str
    end: str = "done"  # "done", "stop" (the Stop button after the first tokens), "close" (socket closed)
    states_nothing: bool = False


TURNS = (
    Turn("我叫林晓雯，2025年3月1日租了一套房子，租期到2026年2月28日，月租金1500元，押金2000元。现在退租了，房东不退押金。"),
    Turn("房东说退租要扣清洁费300元和维修费500元，那他还应该退我多少？"),
    Turn("热水器坏了是房东让我自己找人修的，我花了800元，他答应这钱他出，到现在还欠着我。"),
    Turn("刚才说错了，押金是3000不是2000。"),
    Turn("房东有哪些权利？我作为租客能要求他做什么？", end="stop", states_nothing=True),
    Turn("那我应该去哪个法院起诉？", end="close", states_nothing=True),
)

#: What the live model did (issue 56), for ``BENCH_LLM=fake``: per turn, the answer and the items.
FAKE_SCRIPT: tuple[tuple[str, list[dict[str, str]]], ...] = (
    ("您的押金是2000元。房东无正当理由不退押金属于违约，建议您先书面催告房东退还。",
     [{"content": "租客于2025年3月1日租了房子，月租金1500元，押金2000元", "category": "事实", "speaker": "user"}]),
    ("扣除清洁费300元和维修费500元后，房东应退还您1200元。",
     [{"content": "房东应退还押金1200元", "category": "事实", "speaker": "user"}]),
    ("建议：1. 与房东协商，要求其承担维修费800元；2. 保留维修发票和聊天记录。",
     [{"content": "现在还欠着我", "category": "事实", "speaker": "user"},  # this and the next: the live run of 6 Dec
      {"content": "林晓雯花了800元", "category": "事实", "speaker": "user"},
      {"content": "热水器维修费800元由房东负责，房东还欠租客维修费", "category": "事实", "speaker": "user"},
      {"content": "1. 与房东协商，要求其承担维修费800元", "category": "诉求", "speaker": "user"},
      {"content": "可以向被告所在地的法院提起诉讼", "category": "诉求", "speaker": "user"}]),
    ("好的，押金是3000元。根据《租赁合同示范文本》，房东应在租期结束后退还押金。",
     [{"content": "押金是3000元，但根据《租赁合同示范文本》，房东应在租期结束后退还押金", "category": "行动建议",
       "speaker": "assistant"}]),
    ("房东的权利主要包括收取租金、在租期结束后收回房屋、要求租客爱护房屋设施，以及在租客违约时依约扣除押金。" * 3,
     [{"content": "房东的全部权利包括但不限于：提供合适的住宿环境、及时清理卫生、收取租金和押金", "category": "事实", "speaker": "user"},
      {"content": "租客可以采取的全部维权途径包括但不限于：协商、投诉、起诉", "category": "诉求", "speaker": "user"},
      {"content": "房东应当保障房屋及其附属设施处于安全可用的状态", "category": "证据", "speaker": "user"},
      {"content": "租客应当按时缴纳房租并爱护房屋设施", "category": "行动建议", "speaker": "user"}]),
    ("租赁合同纠纷一般由被告住所地或者合同履行地人民法院管辖，房屋租赁合同纠纷由不动产所在地人民法院专属管辖。" * 3,
     [{"content": "租客可以采取的全部维权途径包括但不限于：向被告所在地的法院起诉", "category": "诉求", "speaker": "user"}]),
)


async def _ask(port: int, cookie: str, turn: Turn, conversation_id: int | None, matter_id: int) -> dict[str, Any]:
    """One question over the chat websocket, ended as ``turn.end`` says."""
    import websockets

    started = time.perf_counter()
    frames: list[dict[str, Any]] = []
    async with websockets.connect(f"ws://127.0.0.1:{port}/ws/chat/",
                                  additional_headers={"Cookie": cookie, "Origin": f"http://127.0.0.1:{port}"},
                                  max_size=2**22) as ws:
        assert json.loads(await ws.recv())["type"] == "ready"
        await ws.send(json.dumps({"type": "ask", "question": turn.question, "conversation_id": conversation_id,
                                  "matter_id": matter_id}))
        tokens = 0
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=900))
            frames.append(frame)
            if frame["type"] == "token":
                tokens += 1
                if turn.end == "stop" and tokens == 3:
                    await ws.send(json.dumps({"type": "cancel"}))
                if turn.end == "close" and tokens == 3:
                    break  # leaving the block closes the socket mid-answer
            if frame["type"] == "done":
                break
    conversation = next((f["conversation_id"] for f in frames if f.get("conversation_id")), conversation_id)
    done = next((f for f in frames if f["type"] == "done"), {})
    return {"conversation_id": conversation, "status": done.get("status", "closed"),
            "answer": "".join(f["text"] for f in frames if f["type"] == "token"),
            "seconds": round(time.perf_counter() - started, 1)}


def _extract_pending(deadline_seconds: float = 1800) -> float:
    """Play the worker: run every pending turn job until none is left; the seconds it took."""
    from memory.models import TurnExtraction
    from remember.turns import process_turn

    started = time.perf_counter()
    while time.perf_counter() - started < deadline_seconds:
        pending = list(TurnExtraction.objects.filter(status__in=("pending", "running")).values_list("pk", flat=True))
        if not pending:
            break
        TurnExtraction.objects.filter(pk__in=pending).update(next_attempt_at=None)
        for pk in pending:
            process_turn(pk)
        time.sleep(0.5)
    return round(time.perf_counter() - started, 1)


_TODAY_PASTED_RE = re.compile(r"今天（\d{4}年")
_SHIFTED_RE = re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})日（(\d{4})年\2月\3日）")


def _wrong_date(content: str, said: str) -> str | None:
    from remember.extraction.grounding import unsaid_number
    from remember.extraction import lexicon

    if _TODAY_PASTED_RE.search(content):
        return "today pasted"
    shifted = _SHIFTED_RE.search(content)
    if shifted and shifted.group(1) != shifted.group(4):
        return f"year shifted: {shifted.group(0)}"
    for phrase in lexicon.extract_dates(re.sub(r"（[^）]*）", "", content)):
        if unsaid_number(phrase, said):
            return f"date not said: {phrase}"
    return None


def figures(matter_id: int, username: str, turn_messages: list[tuple[int, int]]) -> dict[str, Any]:
    """The issue's figures over the matter's notes."""
    from memory.models import Message, Note
    from remember.extraction.grounding import TurnText, cut_clause, whose_words

    notes = list(Note.objects.filter(matter_id=matter_id))
    by_message = {pk: index for index, (user_pk, reply_pk) in enumerate(turn_messages) for pk in (user_pk, reply_pk)}
    found: dict[str, list[str]] = {"from_turns_that_stated_nothing": [], "answer_worded_as_the_clients": [],
                                   "said_by_nobody": [], "half_clauses": [], "wrong_dates": []}
    for note in notes:
        index = next((by_message[pk] for pk in note.source_message_ids or () if pk in by_message), None)
        if index is None:
            continue
        user_pk, reply_pk = turn_messages[index]
        said, reply = (Message.objects.get(pk=pk) for pk in (user_pk, reply_pk))
        if TURNS[index].states_nothing and note.speaker == username:
            found["from_turns_that_stated_nothing"].append(note.content)
        if note.speaker == username:
            whose = whose_words(note.content, TurnText(said.content, reply.content, user_name=username))
            if whose.worded_as_answer:
                found["answer_worded_as_the_clients"].append(f"{note.content} [{_made_by(note)}]")
            if whose.said_by_nobody:
                found["said_by_nobody"].append(note.content)
            if cut_clause(note.content, TurnText(said.content, reply.content, user_name=username)):
                found["half_clauses"].append(note.content)
        wrong = _wrong_date(note.content, f"{said.content}\n{reply.content}")
        if wrong:
            found["wrong_dates"].append(f"{wrong}: {note.content}")
    old = [n for n in notes if n.speaker == username and "2000" in n.content and "押金" in n.content]
    current_3000 = [n for n in notes if n.status == "active" and n.speaker == username and "3000" in n.content]
    superseded = bool(old) and all(n.status == "superseded" for n in old) and bool(current_3000)
    return {"correction_superseded": superseded, "notes": len(notes),
            "active_notes": sum(n.status == "active" for n in notes),
            **{key: len(value) for key, value in found.items()}, "examples": found,
            "client_notes": [f"[{n.status}] {n.content}" for n in notes if n.speaker == username]}


def _made_by(note) -> str:
    """How a note came to be, for a reader of the bench's examples: its status, category and
    the routing decision that wrote it (the database is dropped at the end)."""
    from memory.models import RoutingDecision

    decision = RoutingDecision.objects.filter(note=note).order_by("-pk").values_list("action", "reason").first()
    made = f"{decision[0]}: {decision[1][:240]}" if decision else "no routing decision"
    return f"{note.status}, {note.category}, {made}"


def _recall_question(user) -> dict[str, Any]:
    """The product's search for "林晓雯的押金是多少？": the first hit (note or message) naming the
    deposit, which must say 3000 — not the message the correction replaced."""
    from recall.search import search_memory

    hits = search_memory(user, "林晓雯的押金是多少？", k=10).hits
    texts = [(hit.note or hit.message).content for hit in hits]
    deposit = next((text for text in texts if "押金" in text and re.search(r"[23]000", text)), "")
    return {"first_deposit_hit": deposit, "shows_3000_first": "3000" in deposit and "押金2000" not in deposit,
            "first_hits": texts[:5]}


def _script_fake(fake) -> None:
    from tests.fake_llm.replies import json_reply, text_reply

    for answer, items in FAKE_SCRIPT:
        fake.script(text_reply(answer), json_reply({"knowledge": items}))


def main() -> None:
    mode = os.environ.get("BENCH_LLM", "fake")
    fake = None
    if mode == "fake":
        from tests.fake_llm.server import FakeLLMServer

        fake = FakeLLMServer(token_delay=0.05).start()
        _script_fake(fake)
        upstream, model = fake.base_url, fake.model
    else:
        upstream, model = os.environ.get("LLM_BASE_URL", "").strip(), settings.LLM_MODEL
        if not upstream:
            raise SystemExit("BENCH_LLM=live needs LLM_BASE_URL (and LLM_MODEL) of the real server")
    proxy = CountingProxy(upstream)
    base_url = proxy.start()
    settings.LLM_BASE_URL, settings.LLM_MODEL = base_url, model
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = DB_NAME
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    daphne = None
    try:
        world = _make_world("truth", matters=1, assigned=1, users=1)
        user, matter = world.user, world.assigned[0]
        url = os.environ["DATABASE_URL"]
        base, _, query = url.partition("?")
        env = {**os.environ, "DATABASE_URL": base.rsplit("/", 1)[0] + "/" + DB_NAME + ("?" + query if query else ""),
               "LLM_BASE_URL": base_url, "LLM_MODEL": model, "LLM_API_KEY": os.environ.get("LLM_API_KEY", "bench"),
               **overrides_env(settings={"CHAT_RATE_LIMIT_PER_MINUTE": 100000})}
        port = free_port()
        daphne = start_daphne(port, env, timeout=120)
        cookie = session_cookie(user)
        conversation_id = None
        per_turn: list[dict[str, Any]] = []
        turn_messages: list[tuple[int, int]] = []
        from memory.models import Message

        for number, turn in enumerate(TURNS, start=1):
            proxy.phase = f"turn {number}"
            asked = asyncio.run(_ask(port, cookie, turn, conversation_id, matter.pk))
            conversation_id = asked["conversation_id"]
            time.sleep(1.0)  # the consumer saves a stopped or closed reply as it ends
            extraction = _extract_pending()
            last = list(Message.objects.filter(conversation_id=conversation_id).order_by("-id")[:2])
            turn_messages.append((last[1].pk, last[0].pk))
            requests = sum(1 for r in proxy.records if r.phase == proxy.phase)
            per_turn.append({"turn": number, "end": turn.end, "status": asked["status"],
                             "answer_seconds": asked["seconds"], "extraction_seconds": extraction,
                             "requests": requests, "answer": asked["answer"][:120]})
            print(f"[bench] turn {number} ({turn.end}): {asked['status']}, answer {asked['seconds']} s, "
                  f"extraction {extraction} s, {requests} requests", flush=True)
        recall = _recall_question(user)
        print(f"[bench] recall question: first deposit hit {recall['first_deposit_hit']!r}", flush=True)
        result = {"mode": mode, "model": model, "turns": per_turn, "recall": recall,
                  "requests_per_turn": round(sum(t["requests"] for t in per_turn) / len(per_turn), 2),
                  **figures(matter.pk, user.get_username(), turn_messages)}
        print(json.dumps(result, ensure_ascii=False, indent=1), flush=True)
        out = os.path.join(settings.DATA_DIR, f"bench_model_truth_{mode}.json")
        with open(out, "w", encoding="utf-8") as handle:
            json.dump(result, handle, ensure_ascii=False, indent=1)
        print(f"[bench] details: {out}", flush=True)
    finally:
        if daphne is not None:
            daphne.terminate()
            daphne.wait(timeout=30)
        proxy.stop()
        if fake is not None:
            fake.stop()
        from django.db import connections

        connections.close_all()
        with connection._nodb_cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                           "AND pid <> pg_backend_pid()", [DB_NAME])
        connection.creation.destroy_test_db(old_name, verbosity=0)
