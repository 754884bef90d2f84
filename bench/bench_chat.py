"""Chat benchmark: what the server adds before the LLM is called, and 50 concurrent streams.

Run (a throw-away database ``legalmem_chatbench`` on the data folder's server, dropped at the end):

    .venv/bin/python -m legalmem_site.launcher manage shell -c "from bench.bench_chat import main; main()"

1. Time to first token at 10k notes: one user asks BENCH_ASKS (default 100) questions, one after
   another, over a real websocket to Daphne (subprocess) with the fake OpenAI-compatible LLM
   answering at once. Reported: the server's own ``recall_ms`` (save the question + layered
   retrieval incl. query embedding + prompt building — everything before the LLM is called) and
   the client-observed ask → first token.
2. BENCH_CONCURRENT (default 50) conversations at once, each streaming BENCH_TOKENS (default 100)
   tokens from the fake LLM at 10 ms a token: errors, lost or duplicated tokens (the joined tokens
   must equal the saved reply in the database), and the p95 gap between tokens seen by clients.
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time

import numpy as np
from django.conf import settings
from django.db import connection

from bench.daphne import free_port, session_cookie, start_daphne
from bench.bench_search import (
    _build_vector_indexes, _centres, _drop_vector_indexes, _insert, _make_world,
)
from bench.bench_search import _percentile as search_percentile
from tests.fake_llm.replies import text_reply
from tests.fake_llm.server import FakeLLMServer
from tests.overrides import overrides_env

DB_NAME = "legalmem_chatbench"


def _percentile(values: list[float], q: float) -> float:
    return round(search_percentile(values, q), 1)


def _start_daphne(port: int, fake: FakeLLMServer) -> subprocess.Popen:
    url = os.environ["DATABASE_URL"]
    base, _, query = url.partition("?")
    env = {
        **os.environ,
        "DATABASE_URL": base.rsplit("/", 1)[0] + "/" + DB_NAME + ("?" + query if query else ""),
        "LLM_BASE_URL": fake.base_url, "LLM_MODEL": fake.model, "LLM_API_KEY": "bench",
        **overrides_env(settings={"CHAT_RATE_LIMIT_PER_MINUTE": 100000}),
        "LLM_MAX_CONCURRENT_REQUESTS": "0",  # the fake serves any number at once; measure the app, not a queue
    }
    return start_daphne(port, env, timeout=60)


async def _ask(port: int, cookie: str, question: str, matter_id: int | None) -> dict:
    import websockets

    frames: list[dict] = []
    gaps: list[float] = []
    async with websockets.connect(
        f"ws://127.0.0.1:{port}/ws/chat/",
        additional_headers={"Cookie": cookie, "Origin": f"http://127.0.0.1:{port}"},
        max_size=2**22,
    ) as ws:
        assert json.loads(await ws.recv())["type"] == "ready"
        asked = time.perf_counter()
        await ws.send(json.dumps({"type": "ask", "question": question, "matter_id": matter_id}))
        first = last = None
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=120))
            frames.append(frame)
            if frame["type"] == "token":
                now = time.perf_counter()
                if first is None:
                    first = now - asked
                elif last is not None:
                    gaps.append((now - last) * 1000)
                last = now
            if frame["type"] == "done":
                break
    tokens = "".join(f["text"] for f in frames if f["type"] == "token")
    done = frames[-1]
    return {
        "first_token_ms": (first or 0) * 1000,
        "recall_ms": done["timings"].get("recall_ms", 0.0),
        "gaps": gaps,
        "errors": [f for f in frames if f["type"] == "error"],
        "status": done["status"],
        "tokens": tokens,
        "message_id": done["message_id"],
    }


def main() -> None:
    asks = int(os.environ.get("BENCH_ASKS", "100"))
    concurrent = int(os.environ.get("BENCH_CONCURRENT", "50"))
    token_count = int(os.environ.get("BENCH_TOKENS", "100"))
    notes = int(os.environ.get("BENCH_NOTES", "10000"))
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = DB_NAME
    old_name = connection.settings_dict["NAME"]
    print(f"[bench] creating throw-away database {DB_NAME}", flush=True)
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    fake = FakeLLMServer(token_delay=0.0).start()
    daphne = None
    try:
        rng = np.random.default_rng(5)
        world = _make_world("chat-bench", matters=20, assigned=10, users=max(concurrent, 2))
        definitions = _drop_vector_indexes()
        seconds = _insert(world, notes, rng, _centres(rng))
        build = _build_vector_indexes(definitions)
        print(f"[bench] {notes} notes inserted in {seconds:.1f}s, HNSW built in {build:.1f}s", flush=True)
        from django.contrib.auth import get_user_model
        from memory.models import MatterAssignment

        users = list(get_user_model().objects.filter(memberships__firm=world.firm).order_by("id"))
        for user in users:  # every benchmark user may open the first matter
            MatterAssignment.objects.get_or_create(matter=world.assigned[0], user=user)
        cookies = [session_cookie(user) for user in users]
        port = free_port()
        daphne = _start_daphne(port, fake)

        fake.set_default(text_reply("好的。"))
        questions = ["这个电脑花屏纠纷下一步怎么走？", "押金被房东扣了怎么办", "加班费的证据需要哪些", "维修费太贵可以投诉吗"]
        asyncio.run(_ask(port, cookies[0], "预热", world.assigned[0].pk))
        sequential = [
            asyncio.run(_ask(port, cookies[0], questions[i % len(questions)], world.assigned[0].pk))
            for i in range(asks)
        ]
        recall = [r["recall_ms"] for r in sequential]
        first = [r["first_token_ms"] for r in sequential]
        print(f"[bench] before-LLM server time at {notes} notes over {asks} asks: "
              f"p50 {_percentile(recall, .5)} ms, p95 {_percentile(recall, .95)} ms; "
              f"ask→first token p50 {_percentile(first, .5)} ms, p95 {_percentile(first, .95)} ms", flush=True)

        answer = "".join(f"词{i}" for i in range(token_count))
        fake.set_default(text_reply(answer, tokens=[f"词{i}" for i in range(token_count)], token_delay=0.01))

        async def crowd() -> list:
            return await asyncio.gather(*[
                _ask(port, cookies[i % len(cookies)], questions[i % len(questions)], world.assigned[0].pk)
                for i in range(concurrent)
            ], return_exceptions=True)

        started = time.perf_counter()
        results = asyncio.run(crowd())
        wall = time.perf_counter() - started
        failures = [r for r in results if isinstance(r, Exception)]
        good = [r for r in results if not isinstance(r, Exception)]
        from memory.models import Message

        saved = dict(Message.objects.filter(pk__in=[r["message_id"] for r in good]).values_list("pk", "content"))
        lost = sum(1 for r in good if r["tokens"] != answer or saved.get(r["message_id"]) != answer)
        errors = sum(len(r["errors"]) for r in good) + len(failures)
        gaps = [gap for r in good for gap in r["gaps"]]
        print(f"[bench] {concurrent} concurrent streams of {token_count} tokens: {wall:.1f}s wall, "
              f"errors {errors}, lost/duplicated {lost}, complete {sum(r['status'] == 'complete' for r in good)}; "
              f"token gap p50 {_percentile(gaps, .5)} ms, p95 {_percentile(gaps, .95)} ms, "
              f"max {round(max(gaps), 1) if gaps else 0} ms (the fake LLM sends one every 10 ms)", flush=True)
        if failures:
            print(f"[bench] first failure: {failures[0]!r}")
    finally:
        if daphne is not None:
            os.killpg(daphne.pid, signal.SIGTERM)
            daphne.wait(timeout=30)
        fake.stop()
        connection.creation.destroy_test_db(old_name, verbosity=0)
        print(f"[bench] dropped {DB_NAME}", flush=True)
