"""Memory benchmark: does a process that serves chat turns grow without bound?

Run (its own data folder; ``make bench`` runs it too)::

    LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage shell \
        -c "from bench.bench_memory import main; main()"

Knobs: BENCH_CHAT_TURNS (default 1000), BENCH_SAMPLE_EVERY (default 100), BENCH_TRACE_GROWTH=1
(trace Python allocations over the second half with ``tracemalloc`` and print the sites that grew
most: what the growth is made of; slower, so not in ``make bench``).

One process does what the server and the worker do for each chat turn, BENCH_CHAT_TURNS
times, in one conversation (so working memory overflows and consolidates all along): save
the question, recall (``search_memory``, the chat's path, with the previous question as
context), save the reply, run the turn job (``process_turn``: embed, extract with the
offline engine, route, link, consolidate). The resident set size (VmRSS) is sampled every
BENCH_SAMPLE_EVERY turns. "Unbounded growth" would show as RSS still rising over the second
half; the bench prints the growth over each half and per 100 turns.
"""
from __future__ import annotations

import gc
import linecache
import os
import random
import time
import tracemalloc
import uuid

from django.contrib.auth import get_user_model


def rss_mb(pid: int | str = "self") -> float:
    """Resident set size of a process in MB (Linux /proc)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def main() -> dict:
    from bench.bench_import import reply, user_turn
    from memory.models import Conversation, Membership, Role
    from remember.turns import enqueue_turn_extraction, process_turn
    from memory.services.conversations import save_message
    from recall import search_memory
    from memory.services.tenancy import assign_user, create_firm, create_matter

    turns = int(os.environ.get("BENCH_CHAT_TURNS", "1000"))
    every = int(os.environ.get("BENCH_SAMPLE_EVERY", "100"))
    rng = random.Random(11)
    suffix = uuid.uuid4().hex[:8]
    firm = create_firm(name=f"Mem {suffix}", slug=f"mem-{suffix}", actor="system:bench")
    user = get_user_model().objects.create(username=f"mem-{suffix}")
    Membership.objects.create(firm=firm, user=user, role=Role.LAWYER)
    matter = create_matter(firm=firm, title="内存基准", reference="MEM-1", actor="system:bench")
    assign_user(matter=matter, user=user, actor="system:bench")
    conversation = Conversation.objects.create(firm=firm, user=user, matter=matter, title="bench")
    print(f"[memory] load average {os.getloadavg()}; {turns} chat turns, RSS sampled every {every}", flush=True)
    samples: list[tuple[int, float]] = [(0, rss_mb())]
    previous = ""
    trace = os.environ.get("BENCH_TRACE_GROWTH") == "1"
    halfway = None
    started = time.perf_counter()
    for i in range(1, turns + 1):
        question = user_turn(rng, i)
        asked = save_message(conversation, "user", question, speaker=user.username)
        search_memory(user, question, k=10, conversation=conversation, context=previous,
                      exclude_message_ids=[asked.pk])
        answer = save_message(conversation, "assistant", reply(rng), speaker="assistant")
        process_turn(enqueue_turn_extraction(asked, answer).pk)
        previous = question
        if i % every == 0:
            gc.collect()
            samples.append((i, rss_mb()))
            print(f"[memory] turn {i}: RSS {samples[-1][1]} MB ({time.perf_counter() - started:.0f} s)", flush=True)
            if trace and halfway is None and i >= turns // 2:
                tracemalloc.start(8)
                halfway = tracemalloc.take_snapshot()
    half = samples[len(samples) // 2][1]
    figures = {
        "turns": turns, "rss_start_mb": samples[0][1], "rss_after_first_sample_mb": samples[1][1] if len(samples) > 1 else None,
        "rss_half_mb": half, "rss_end_mb": samples[-1][1],
        "growth_second_half_mb": round(samples[-1][1] - half, 1),
        "growth_per_100_turns_second_half_mb": round((samples[-1][1] - half) / max(1, (turns - samples[len(samples) // 2][0]) / 100), 2),
        "seconds": round(time.perf_counter() - started, 1), "load": [round(x, 2) for x in os.getloadavg()],
    }
    print(f"[memory] {figures}", flush=True)
    if halfway is not None:
        figures["grew_most"] = _grew_most(halfway, tracemalloc.take_snapshot())
        tracemalloc.stop()
    return figures


def _grew_most(before: "tracemalloc.Snapshot", after: "tracemalloc.Snapshot", top: int = 12) -> list[str]:
    """The allocation sites whose live Python memory grew most between two snapshots, each site
    named by its innermost frame in the project's own code (else its innermost frame), printed
    and returned."""
    by_site: dict[tuple[str, int], list[int]] = {}
    for stat in after.compare_to(before, "traceback"):
        frames = [f for f in stat.traceback if "/site-packages/" not in f.filename and "/lib/python3" not in f.filename]
        frame = (frames or list(stat.traceback))[-1]  # a Traceback runs from the oldest frame to the newest
        site = by_site.setdefault((frame.filename, frame.lineno), [0, 0])
        site[0] += stat.size_diff
        site[1] += stat.count_diff
    lines = []
    for (filename, lineno), (size, count) in sorted(by_site.items(), key=lambda item: -item[1][0])[:top]:
        code = linecache.getline(filename, lineno).strip()[:70]
        lines.append(f"{size / 1e6:+.2f} MB ({count:+d} blocks) {os.path.relpath(filename)}:{lineno} {code}")
        print(f"[memory] grew {lines[-1]}", flush=True)
    return lines


if __name__ == "__main__":
    main()
