"""Import benchmark: ``import_transcript`` (the bulk path) against its encoding floor, in one run.

Run (its own data folder; ``make bench`` runs it too)::

    LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage shell \
        -c "from bench.bench_import import main; main()"

Knobs: BENCH_TURNS (default 300 turns, 10 per conversation, one matter per conversation),
BENCH_PER_TURN=1 to import the same transcript a second time, into another firm, through the
per-turn path (``bulk=False``) for comparison.

Printed: turns/s; the **floor** = the time to batch-encode the same texts alone (every
imported message as the search index embeds it, plus every extracted item and episodic twin
the router embeds — each distinct text once, as the import does), measured right after the
import in the same process; and the **ratio** import wall time / floor (target ≤ 1.5).
Absolute times drift with the machine's load; the ratio is what counts (docs/performance.md).
"""
from __future__ import annotations

import os
import random
import time
import uuid

from django.contrib.auth import get_user_model

from bench.synthetic import conversations_for, reply, user_turn
from memory.embeddings import get_embedder
from memory.models import Membership, Message, Role, TurnExtraction
from memory.pipeline import import_transcript
from memory.pipeline.message_index import embedding_text
from memory.pipeline.turns import items_to_write
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


def run(turns: int, *, per_turn: bool = False) -> dict:
    embedder = get_embedder()
    embedder.embed_passages(["预热"])  # the model loads outside the timing
    from memory.extraction import extract_offline

    extract_offline(user_turn(RNG, 0), reply(RNG))  # jieba's dictionary too
    load_before = os.getloadavg()
    slug, data = transcript(turns)
    result = import_transcript(data, actor="system:bench")
    texts = texts_encoded(slug)
    distinct = list(dict.fromkeys(texts))
    started = time.perf_counter()
    embedder.embed_passages(distinct)
    floor = time.perf_counter() - started
    figures = {
        "turns": result.turns, "seconds": round(result.seconds, 2),
        "turns_per_s": round(result.turns / result.seconds, 2),
        "notes_written": result.notes_written, "texts": len(texts), "distinct_texts": len(distinct),
        "floor_seconds": round(floor, 2), "ratio": round(result.seconds / floor, 2),
        "load": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()],
        "embedder": embedder.name,
    }
    print(f"[import] {result.summary()}")
    print(f"[import] bulk: {result.turns} turns in {result.seconds:.1f} s = {figures['turns_per_s']} turns/s; "
          f"floor (batch-encoding the same {len(distinct)} distinct texts of {len(texts)}: messages + items) "
          f"{floor:.1f} s; ratio {figures['ratio']}x (target <= 1.5); embeddings {embedder.name}; "
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
