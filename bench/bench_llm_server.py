"""LLM-server benchmark: requests per extracted turn, and chat sharing a one-request server.

Against a real OpenAI-compatible server (e.g. llama-cpp-python 0.3.x with a 1.5B GGUF)::

    LLM_BASE_URL=http://127.0.0.1:8088/v1 LLM_MODEL=qwen-local LLM_CONTEXT_TOKENS=4096 \
    LLM_MAX_CONCURRENT_REQUESTS=1 LLM_TIMEOUT_SECONDS=600 \
    LEGALMEM_DATA_DIR=$PWD/var/bench-llm .venv/bin/python -m legalmem_site.launcher manage migrate -v 0
    (same variables) .venv/bin/python -m legalmem_site.launcher manage shell -c \
        'import runpy; runpy.run_path("bench/bench_llm_server.py", run_name="__main__")'

Knobs: BENCH_TURNS (default 5; 0 skips part 1), BENCH_SHARING (0 skips part 2), BENCH_CHAT_TURNS. Not a test: it prints figures for docs/llm-servers.md.

1. ``extract_turn`` (the turn job's LLM step) on BENCH_TURNS Chinese legal turns: HTTP
   requests per turn (each call of the openai client counted), the JSON mode that
   ended up remembered for the server, items kept / dropped, seconds per turn.
2. One streamed chat answer while an extraction starts after its first token, with the
   configured request limit: whether the answer ended with a finish reason (not cut short),
   and when the extraction's request went out relative to the answer's end.
3. BENCH_CHAT_TURNS (default 1) whole chat turns as a user makes them: the websocket consumer
   (Channels communicator, alice of the demo firm — run ``seed_demo`` first) streams the
   answer, then the turn's extraction job runs; requests of the turn (answer + extraction)
   and the notes written.
"""
from __future__ import annotations

import asyncio
import os
import threading
import time

import openai

from infra.llm import LLMClient, LLMError, Role
from memory.models import LLMServerMode
from remember.extract import extract_turn

TURNS = [
    ("我在2024年3月5日花5999元在京东买了一台笔记本电脑，两周后屏幕大面积花屏。",
     "根据《消费者权益保护法》第二十四条，您可以要求退货或更换。建议保存发票和花屏照片。"),
    ("房东说我弄坏了墙面，不退3000元押金，可是入住时的照片显示墙面本来就有裂缝。",
     "入住照片是关键证据。建议先书面要求房东说明扣押金的依据，协商不成可以向法院起诉。"),
    ("公司连续三个月让我每周六加班，但是一直没有支付加班费，工资条上也没有记录。",
     "根据《劳动法》第四十四条，休息日加班应支付不低于工资百分之二百的报酬。请保留考勤记录。"),
    ("我喜欢你先给结论，再列证据清单，最后说下一步怎么做。",
     "好的，以后我会先给结论，再列出证据清单和下一步建议。"),
    ("培训机构承诺不满意全额退款，我上了两节课就要求退费，他们只肯退一半，合同写的是12800元。",
     "可以依据合同中的退款承诺主张全额退款，并保留宣传页面截图和聊天记录作为证据。"),
]


class RequestCounter:
    """Counts chat-completion requests sent by one LLMClient (wraps its openai client's call)."""

    def __init__(self) -> None:
        self.count = 0
        self.sent_at: list[float] = []
        self._lock = threading.Lock()

    def attach(self, client: LLMClient) -> None:
        """Every request of ``client`` goes through an HTTP client whose request hook counts it
        (each call's ``openai`` client is built from ``_client_kwargs``)."""
        build = client._client_kwargs

        async def counted(request) -> None:
            if request.url.path.endswith("/chat/completions"):
                with self._lock:
                    self.count += 1
                    self.sent_at.append(time.monotonic())

        def kwargs() -> dict:
            return {**build(), "http_client": openai.DefaultAsyncHttpxClient(event_hooks={"request": [counted]})}

        client._client_kwargs = kwargs  # type: ignore[method-assign]


def bench_extraction(turns: int) -> None:
    print(f"== extraction: {turns} turns ==")
    per_turn, seconds = [], []
    for user_msg, reply in (TURNS * (turns // len(TURNS) + 1))[:turns]:
        client = LLMClient.from_settings(Role.EXTRACTION)
        counter = RequestCounter()
        counter.attach(client)
        started = time.perf_counter()
        try:
            outcome = extract_turn(user_msg, reply, client=client)
            result = f"{len(outcome.items)} items, {len(outcome.rejected_reasons)} dropped"
        except LLMError as error:
            result = f"FAILED: {type(error).__name__}: {error}"[:200]
        elapsed = time.perf_counter() - started
        per_turn.append(counter.count)
        seconds.append(elapsed)
        print(f"  {counter.count} request(s), {elapsed:6.1f} s, {result}")
    mode = LLMServerMode.objects.filter(base_url=client.config.base_url).values_list("json_mode", flat=True).first()
    print(f"requests per turn: {sum(per_turn) / len(per_turn):.2f} (first turn {per_turn[0]}); "
          f"mean {sum(seconds) / len(seconds):.1f} s per turn; remembered mode: {mode}")


async def bench_sharing() -> None:
    print("== chat answer while an extraction starts ==")
    chat = LLMClient.from_settings(Role.CHAT)
    extraction = LLMClient.from_settings(Role.EXTRACTION)
    counter = RequestCounter()
    counter.attach(extraction)
    tokens: list[str] = []
    started = time.monotonic()
    job = None
    status = "complete"
    try:
        async for token in chat.astream_chat(
            [{"role": "user", "content": "押金不退怎么办？请用三句话回答。"}], max_tokens=120
        ):
            tokens.append(token)
            if job is None:
                job = asyncio.ensure_future(asyncio.to_thread(extract_turn, *TURNS[1], client=extraction))
    except LLMError as error:
        status = f"failed: {type(error).__name__}"
    ended = time.monotonic()
    outcome = await job if job is not None else None
    sent = [round(t - ended, 1) for t in counter.sent_at]
    print(f"answer: {status}, {len(tokens)} chunks in {ended - started:.1f} s; "
          f"extraction request(s) sent {sent} s after the answer ended; "
          f"extraction items: {len(outcome.items) if outcome else '-'}")
    await chat.aclose()


def count_all_requests() -> RequestCounter:
    """Count every chat-completion request of this process (sync and async openai clients)."""
    from openai.resources.chat.completions import AsyncCompletions, Completions

    counter = RequestCounter()
    send, asend = Completions.create, AsyncCompletions.create

    def counted(self, *args, **kwargs):
        counter.count += 1
        return send(self, *args, **kwargs)

    async def acounted(self, *args, **kwargs):
        counter.count += 1
        return await asend(self, *args, **kwargs)

    Completions.create, AsyncCompletions.create = counted, acounted
    return counter


async def bench_chat_turns(turns: int) -> None:
    from asgiref.sync import sync_to_async
    from django.contrib.auth import get_user_model

    from chat.consumers import in_worker_thread
    from memory.models import Note, TurnExtraction
    from tests.chat.conftest import open_socket

    print(f"== {turns} whole chat turn(s) through the websocket consumer ==")
    alice = await sync_to_async(get_user_model().objects.get)(username="alice")
    counter = count_all_requests()
    for user_msg, _ in TURNS[:turns]:
        before = counter.count
        notes_before = await in_worker_thread(Note.objects.count)()
        communicator = await open_socket(alice)
        await communicator.connect()
        await communicator.receive_json_from(timeout=10)
        started = time.monotonic()
        await communicator.send_json_to({"type": "ask", "question": user_msg})
        chunks, frame = 0, {}
        while frame.get("type") != "done":
            frame = await communicator.receive_json_from(timeout=1200)
            chunks += frame.get("type") == "token"
        answered = time.monotonic() - started
        await communicator.disconnect()
        turn = await in_worker_thread(TurnExtraction.objects.get)(assistant_message_id=frame["message_id"])
        turn = await in_worker_thread(process_turn_now)(turn.pk)
        notes = await in_worker_thread(Note.objects.count)() - notes_before
        print(f"  answer {frame['status']} ({chunks} chunks, {answered:.0f} s); extraction {turn.status} "
              f"({len(turn.items or [])} items, {notes} new notes); requests this turn: {counter.count - before}")


def process_turn_now(turn_id: int):
    from remember.turns import process_turn

    return process_turn(turn_id)


if __name__ == "__main__":
    if int(os.environ.get("BENCH_TURNS", "5")):
        bench_extraction(int(os.environ.get("BENCH_TURNS", "5")))
    if os.environ.get("BENCH_SHARING", "1") != "0":
        asyncio.run(bench_sharing())
    if int(os.environ.get("BENCH_CHAT_TURNS", "1")):
        asyncio.run(bench_chat_turns(int(os.environ.get("BENCH_CHAT_TURNS", "1"))))
