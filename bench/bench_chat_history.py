"""Chat history benchmark: reopening a long conversation (reload, Back/Forward) with the
memories saved with each reply, shown again through the visibility rule (docs/chat-page.md).

Run (a throw-away database ``legalmem_historybench`` on the data folder's server, dropped at the end):

    .venv/bin/python -m legalmem_site.launcher manage shell -c "from bench.bench_chat_history import main; main()"

One conversation of BENCH_TURNS (default 200) turns; each reply carries BENCH_RECALLED (default 8)
recalled notes saved as the chat saves them, out of BENCH_NOTES (default 5000) notes. Reported:
the messages API's server time (p50 / p95 over BENCH_READS requests, default 30), its number of
SQL queries (constant: it must not grow with the number of replies) and the response size.
"""
from __future__ import annotations

import os
import time

import numpy as np
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bench.bench_search import _centres, _insert, _make_world
from bench.bench_search import _percentile as search_percentile
from bench.databases import throwaway_database

DB_NAME = "legalmem_historybench"


def _saved_entry(note, rank: int) -> dict:
    """A recalled note as ``chat.turns.finish_turn`` saves it."""
    score = {"semantic": 0.8, "keyword": 0.3, "importance": 0.5, "confidence": 0.8, "graph": 0.0,
             "recency": 1.0, "layer_weight": 1.0, "total": 0.6}
    return {
        "kind": "note", "id": str(note.pk), "content": note.content, "layer": note.memory_scope,
        "layer_label": "", "category": note.category, "category_label": "", "rank": rank, "score": score,
        "reasons": ["语义相似度 semantic 0.800", "关键词 keywords: 押金 (1/2)"], "source_type": note.source_type,
        "source_id": note.source_id, "matter_id": note.matter_id, "matter": None, "matter_reference": None,
        "provenance_url": f"/memory/{note.pk}/#source-turn",
    }


def _conversation(world, turns: int, per_reply: int, rng: np.random.Generator) -> int:
    from memory.models import Conversation, Message, Note

    visible = list(Note.objects.visible_to(world.user).order_by("?")[: per_reply * 20])
    conversation = Conversation.objects.create(firm=world.firm, user=world.user, title="history bench")
    now = timezone.now()
    rows = []
    for turn in range(turns):
        picked = [visible[int(i)] for i in rng.choice(len(visible), per_reply, replace=False)]
        rows.append(Message(conversation=conversation, firm=world.firm, role="user", speaker="bench",
                            content=f"第{turn}个问题：押金怎么要回？", said_at=now))
        rows.append(Message(conversation=conversation, firm=world.firm, role="assistant", speaker="llm:bench",
                            content="结论：可以要求返还。" * 20, said_at=now,
                            recalled=[_saved_entry(note, rank + 1) for rank, note in enumerate(picked)],
                            recall_plan={"layers": ["case", "user_profile", "cross_case", "general_law", "global"]}))
    Message.objects.bulk_create(rows, batch_size=1000)
    return conversation.pk


def main() -> None:
    turns = int(os.environ.get("BENCH_TURNS", "200"))
    per_reply = int(os.environ.get("BENCH_RECALLED", "8"))
    notes = int(os.environ.get("BENCH_NOTES", "5000"))
    reads = int(os.environ.get("BENCH_READS", "30"))
    with throwaway_database(DB_NAME):
        rng = np.random.default_rng(7)
        world = _make_world("history-bench", matters=20, assigned=10, users=2)
        _insert(world, notes, rng, _centres(rng))
        conversation_id = _conversation(world, turns, per_reply, rng)
        client = Client(HTTP_HOST=settings.ALLOWED_HOSTS[0])
        client.force_login(world.user)
        url = f"/api/chat/conversations/{conversation_id}/messages/"
        client.get(url)  # warm-up
        timings = []
        for _ in range(reads):
            started = time.perf_counter()
            response = client.get(url)
            timings.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        shown = sum(len(m["recalled"]) for m in response.json()["results"])
        print(f"[bench] messages API, {turns} turns × {per_reply} recalled notes at {notes} notes: "
              f"p50 {search_percentile(timings, .5):.1f} ms, p95 {search_percentile(timings, .95):.1f} ms, "
              f"{len(queries)} SQL queries, {len(response.content) // 1024} KiB, {shown} memories shown", flush=True)
