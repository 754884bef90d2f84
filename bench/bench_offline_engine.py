"""Offline extraction engine speed, English and Chinese: turns per second of ``extract_offline``
alone (no database, no embeddings), and how many items a turn yields.

Run (no Django needed)::

    .venv/bin/python bench/bench_offline_engine.py

Environment knob: BENCH_TURNS (default 2000 per language). Not a test: it prints figures.
The English turns are written in the style of public long-conversation benchmarks (two
people catching up across sessions); the Chinese ones are bench_ingest.py's legal turns.
"""
from __future__ import annotations

import os
import random
import sys
import time
from collections import Counter
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from remember.extraction import extract_offline  # noqa: E402

RNG = random.Random(20260301)
PLACES = ["the lake", "a pottery workshop", "the LGBTQ support group", "the museum", "the beach", "a charity race"]
WHEN = ["yesterday", "last weekend", "last Tuesday", "two weeks ago", "on 7 May 2023", "the week before"]
HOBBIES = ["painting sunsets", "hiking", "reading fantasy novels", "playing the violin", "camping"]
SMALL_TALK = ["Hey! Good to see you!", "That's so cool!", "Thanks so much!", "Wow, sounds amazing!"]


def english_turn(i: int) -> tuple[str, str]:
    kind = i % 4
    if kind == 0:
        user = f"I went to {RNG.choice(PLACES)} {RNG.choice(WHEN)} and it was so powerful."
    elif kind == 1:
        user = f"I love {RNG.choice(HOBBIES)}. My kids joined me {RNG.choice(WHEN)} and we paid ${RNG.randint(20, 900)}."
    elif kind == 2:
        user = "It made me think about counseling as a career, since my own journey was hard."
    else:
        user = RNG.choice(SMALL_TALK)
    reply = f"{RNG.choice(SMALL_TALK)} We took the kids to {RNG.choice(PLACES)} {RNG.choice(WHEN)}."
    return user, reply


def chinese_turn(i: int) -> tuple[str, str]:
    items = ["笔记本电脑", "手机", "冰箱"]
    kind = i % 3
    if kind == 0:
        user = f"我在2025年{RNG.randint(1, 12)}月{RNG.randint(1, 28)}日花{RNG.randint(500, 20000)}元买了一台{RNG.choice(items)}，购买后约两周出现花屏。"
    elif kind == 1:
        user = "我已经保存了电子发票、付款截图和客服录音。"
    else:
        user = "那家动物园的企鹅馆特别热闹，她看到了自己最喜欢的企鹅。"
    return user, "根据《消费者权益保护法》第二十四条，您可以要求商家退货。建议先与商家协商。"


def run(name: str, make, turns: int, **speakers) -> None:
    pairs = [make(i) for i in range(turns)]
    extract_offline(*pairs[0], **speakers)  # load jieba outside the timing
    started = time.perf_counter()
    counts: Counter = Counter()
    for user, reply in pairs:
        items = extract_offline(user, reply, said_on=date(2023, 5, 8), **speakers)
        counts["items"] += len(items)
        counts["empty turns"] += not items
        counts["reported speech"] += sum("said" in i.tags or "原话" in i.tags for i in items)
    seconds = time.perf_counter() - started
    print(f"[{name}] {turns} turns in {seconds:.2f} s = {turns / seconds:.0f} turns/s; "
          f"{counts['items']} items ({counts['items'] / turns:.2f}/turn), {counts['reported speech']} as reported "
          f"speech, {counts['empty turns']} turns gave nothing")


def main() -> None:
    turns = int(os.environ.get("BENCH_TURNS", "2000"))
    print(f"[env] load average {os.getloadavg()}, {os.cpu_count()} CPUs")
    run("english", english_turn, turns, user_name="Caroline", reply_name="Melanie")
    run("chinese", chinese_turn, turns, user_name="alice", reply_name="assistant")


if __name__ == "__main__":
    main()
