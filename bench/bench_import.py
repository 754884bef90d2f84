"""Import benchmark: ``import_transcript`` (the bulk path) against its encoding floor, in one run.

Run (its own data folder; ``make bench`` runs it too)::

    LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage shell \
        -c "from bench.bench_import import main; main()"

Knobs: BENCH_TURNS (default 300 turns, 10 per conversation, one matter per conversation),
BENCH_PER_TURN=1 to import the same transcript a second time, into another firm, through the
per-turn path (``bulk=False``) for comparison.

Printed: turns/s; the **floor** = the time to batch-encode the same texts alone (every
imported message as the search index embeds it, plus every extracted item and episodic twin
the router embeds — each distinct text once, as the import does), in the same process right
before and right after the import, averaged (the load of a shared machine drifts during a run;
the texts are worked out before the import with the same extraction and checked against what
it wrote); the **ratio** import wall time / floor (target ≤ 1.5); and CPU seconds — the
import's (all its threads) plus its database backend's, beside the floor's — which say how
much of the machine the import needs whatever the load.
Absolute times drift with the machine's load; the ratio is what counts (docs/performance.md).
"""
from __future__ import annotations

import dataclasses
import os
import random
import time
import uuid
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from bench.synthetic import conversations_for, reply, user_turn
from infra.embeddings import get_embedder
from memory.models import Conversation, Firm, Membership, Message, Role, SourceType, TurnExtraction
from remember.ingest import import_transcript
from memory.embedding_text import embedding_text
from remember.apply import reply_speaker
from remember.extract import extract_turn, extractable_reply
from remember.turns import items_to_write
from memory.services.tenancy import create_firm

RNG = random.Random(20260301)
def transcript(turns: int, seed: int = 20260301) -> tuple[str, dict]:
    """A fresh firm, user and matters, and a transcript of ``turns`` turns for them."""
    rng = random.Random(seed)
    suffix = uuid.uuid4().hex[:8]
    firm = create_firm(name=f"Bench {suffix}", slug=f"bench-{suffix}", actor="system:bench")
    user = get_user_model().objects.create(username=f"bench-{suffix}")
    Membership.objects.create(firm=firm, user=user, role=Role.LAWYER)
    conversations = conversations_for(firm, user, turns, rng)
    return firm.slug, {"firm": firm.slug, "conversations": conversations}


def texts_encoded(firm_slug: str) -> list[str]:
    """Every text the import embeds: messages (as indexed) and items with their twins."""
    messages = Message.objects.filter(conversation__firm__slug=firm_slug).order_by("pk")
    texts = [embedding_text(m) for m in messages]
    turns = TurnExtraction.objects.filter(firm__slug=firm_slug).select_related(
        "conversation__user", "user_message", "assistant_message").order_by("pk")
    for turn in turns:
        texts.extend(item.content for item in items_to_write(turn))
    return texts


def texts_to_encode(data: dict) -> list[str]:
    """The same texts, worked out before the import runs (unsaved rows through the same
    extraction), so the floor can be measured before the import as well as after it."""
    firm = Firm.objects.get(slug=data["firm"])
    messages_texts: list[str] = []
    item_texts: list[str] = []
    for spec in data["conversations"]:
        user = get_user_model().objects.get(username=spec["user"])
        conversation = Conversation(firm=firm, user=user, external_id=spec["id"])
        messages = [Message(conversation=conversation, role=m["role"], speaker=m["speaker"], content=m["content"],
                            external_id=m["id"], said_at=parse_datetime(m["timestamp"])) for m in spec["messages"]]
        messages_texts += [embedding_text(m) for m in messages]
        for question, answer in zip(messages, messages[1:]):
            if question.role != Message.Role.USER or answer.role != Message.Role.ASSISTANT:
                continue
            turn = TurnExtraction(conversation=conversation, user_message=question, assistant_message=answer,
                                  source_type=SourceType.IMPORT)
            outcome = extract_turn(question.content, extractable_reply(answer), user_name=question.speaker,
                                   reply_name=reply_speaker(turn.source_type, answer),
                                   said_on=timezone.localtime(question.said_at).date())
            turn.items = [dataclasses.asdict(item) for item in outcome.items]
            item_texts += [item.content for item in items_to_write(turn)]
    return messages_texts + item_texts


def _encode_seconds(embedder, texts: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of batch-encoding ``texts`` in this process, nothing else running in it."""
    started, cpu = time.perf_counter(), time.process_time()
    embedder.embed_passages(texts)
    return time.perf_counter() - started, time.process_time() - cpu


def _database_cpu_seconds() -> float | None:
    """CPU seconds used so far by this connection's PostgreSQL backend (a local server only)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(turns: int, *, per_turn: bool = False) -> dict:
    embedder = get_embedder()
    embedder.embed_passages(["预热"])  # the model loads outside the timing
    from remember.extraction import extract_offline

    extract_offline(user_turn(RNG, 0), reply(RNG))  # jieba's dictionary too
    load_before = os.getloadavg()
    slug, data = transcript(turns)
    # The floor is measured right before and right after the import and averaged: the machine's
    # load drifts during a run, and the import sits between the two.
    distinct = list(dict.fromkeys(texts_to_encode(data)))
    floor_before, floor_cpu_before = _encode_seconds(embedder, distinct)
    cpu, database_cpu = time.process_time(), _database_cpu_seconds()
    result = import_transcript(data, actor="system:bench")
    import_cpu = time.process_time() - cpu
    database_cpu = None if database_cpu is None else _database_cpu_seconds() - database_cpu
    texts = texts_encoded(slug)
    if set(texts) != set(distinct):
        raise RuntimeError("the import embedded other texts than worked out before it: the floor would not be "
                           f"the same work ({len(set(texts) ^ set(distinct))} differ)")
    floor_after, floor_cpu_after = _encode_seconds(embedder, distinct)
    floor = (floor_before + floor_after) / 2
    floor_cpu = (floor_cpu_before + floor_cpu_after) / 2
    figures = {
        "turns": result.turns, "seconds": round(result.seconds, 2),
        "turns_per_s": round(result.turns / result.seconds, 2),
        "notes_written": result.notes_written, "texts": len(texts), "distinct_texts": len(distinct),
        "floor_seconds": round(floor, 2), "floor_before": round(floor_before, 2), "floor_after": round(floor_after, 2),
        "ratio": round(result.seconds / floor, 2),
        "without_encoder_seconds": round(result.seconds - result.waited_for_encoder, 2),
        "import_cpu_seconds": round(import_cpu, 2), "floor_cpu_seconds": round(floor_cpu, 2),
        "database_cpu_seconds": None if database_cpu is None else round(database_cpu, 2),
        "load": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()],
        "embedder": embedder.name,
    }
    database = "n/a" if database_cpu is None else f"{database_cpu:.1f} s"
    print(f"[import] {result.summary()}")
    print(f"[import] bulk: {result.turns} turns in {result.seconds:.1f} s = {figures['turns_per_s']} turns/s; "
          f"floor (batch-encoding the same {len(distinct)} distinct texts of {len(texts)}: messages + items) "
          f"{floor:.1f} s (before {floor_before:.1f}, after {floor_after:.1f}); ratio {figures['ratio']}x "
          f"(target <= 1.5); CPU: import {import_cpu:.1f} s in this process + {database} in its database "
          f"backend, floor {floor_cpu:.1f} s; not waiting for the encoder (storing, extracting, routing) "
          f"{figures['without_encoder_seconds']:.1f} s = {1000 * figures['without_encoder_seconds'] / result.turns:.0f} ms "
          f"a turn; embeddings {embedder.name}; "
          f"load {figures['load']} -> {figures['load_after']}")
    if per_turn:
        slug2, data2 = transcript(turns)
        one_by_one = import_transcript(data2, actor="system:bench", bulk=False)
        figures["per_turn_seconds"] = round(one_by_one.seconds, 2)
        figures["per_turn_ratio"] = round(one_by_one.seconds / floor, 2)
        print(f"[import] per-turn path, same transcript: {one_by_one.seconds:.1f} s = "
              f"{one_by_one.turns / one_by_one.seconds:.2f} turns/s; ratio {figures['per_turn_ratio']}x")
    return figures


def main() -> dict:
    turns = int(os.environ.get("BENCH_TURNS", "300"))
    print(f"[env] load average {os.getloadavg()}, {os.cpu_count()} CPUs, BENCH_TURNS={turns}")
    return run(turns, per_turn=os.environ.get("BENCH_PER_TURN") == "1")


if __name__ == "__main__":
    main()
