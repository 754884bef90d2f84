"""Query encoding benchmark: p50 / p95 of encoding a search query, bounded vs unbounded.

Run (no database writes):

    .venv/bin/python -m legalmem_site.launcher manage shell -c \
        "from bench.bench_query_encoding import main; main()"

Knobs: BENCH_REPEATS (default 30 encodings per kind of question).

Kinds of question: a short Chinese question, a short English one, and a long chat query
(a 157-character Chinese question with the previous question as context). "bounded" is what
``search_memory`` encodes (``recall.query_text.query_texts``: SEARCH_QUERY_MAX_TOKENS in
all — the question, head and tail, and apart from it the context's latest
SEARCH_CONTEXT_MAX_TOKENS, the two in one batch); "unbounded" encodes the question and the whole context as one text. Note the load average beside the
figures: the machine has two cores shared with other work.
"""
from __future__ import annotations

import os
import statistics
import time

from django.conf import settings

from infra.embeddings import get_embedder
from infra.tokens import estimate_tokens
from recall.query_text import query_texts

SHORT_ZH = ["房东不退押金可以起诉吗？", "电脑花屏检测报告去哪里做", "加班费的证据需要哪些", "之前的租金是多少"]
SHORT_EN = ["When did the client sign the lease?", "What did Caroline say about adoption?",
            "Which evidence do we still need?", "What was the rent previously?"]
LONG_QUESTION = (
    "原告与被告于2023年3月签订房屋租赁合同，约定月租金五千元，押金一万元，租期两年。被告在租期届满前擅自搬离"
    "并拒付最后三个月租金，原告多次催告未果，现诉请法院判令被告支付欠付租金及违约金，并承担本案诉讼费用。"
    "此外原告主张被告损坏了屋内家具与电器，要求赔偿维修费用共计八千元，请问我们应当如何准备证据？"
)
LONG_CONTEXT = "上一轮我们讨论了押金扣留的证据：交接照片、聊天记录和房东的书面承诺，以及中介的见证。"


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * (len(ordered) - 1)))))]


QUESTION_30 = "请问房东一直不退押金一万元，我现在可以直接去法院起诉他了吗？"  # 30 characters: the reference


def _interleaved(kinds: dict[str, list[tuple[str, ...]]], repeats: int) -> dict[str, list[float]]:
    """Encode one query of every kind per round, so each kind sees the same load; a query of two
    texts (question, context) is one batch, as ``search_memory`` encodes it."""
    embedder = get_embedder()
    timings: dict[str, list[float]] = {kind: [] for kind in kinds}
    for i in range(repeats):
        for kind, texts in kinds.items():
            query = [text for text in texts[i % len(texts)] if text]
            started = time.perf_counter()
            embedder.embed_queries(query)
            timings[kind].append((time.perf_counter() - started) * 1000)
    return timings


def main() -> list[dict]:
    from recall import MAX_QUERY_CHARS

    repeats = int(os.environ.get("BENCH_REPEATS", "30"))
    get_embedder().embed_query("预热")
    longest = (LONG_QUESTION * (MAX_QUERY_CHARS // len(LONG_QUESTION) + 1))[:MAX_QUERY_CHARS]
    kinds = {
        f"30-character question (reference, {len(QUESTION_30)} chars)": [(QUESTION_30, "")],
        "short Chinese": [(q, "") for q in SHORT_ZH],
        "short English": [(q, "") for q in SHORT_EN],
        f"long chat query ({len(LONG_QUESTION)} chars + {len(LONG_CONTEXT)} context)": [(LONG_QUESTION, LONG_CONTEXT)],
        f"longest allowed question ({MAX_QUERY_CHARS} chars) + long context": [(longest, LONG_CONTEXT * 20)],
    }
    print(f"[bench] backend {settings.EMBEDDING_BACKEND}, SEARCH_QUERY_MAX_TOKENS={settings.SEARCH_QUERY_MAX_TOKENS}, "
          f"SEARCH_CONTEXT_MAX_TOKENS={settings.SEARCH_CONTEXT_MAX_TOKENS}, {repeats} encodings each, "
          f"load average {os.getloadavg()[0]:.2f}")
    bounded = {kind: [(t.question, t.context) for t in (query_texts(q, c) for q, c in pairs)]
               for kind, pairs in kinds.items()}
    unbounded = {kind: [(f"{q}\n{c}" if c else q,) for q, c in pairs] for kind, pairs in kinds.items()}
    timed_b = _interleaved(bounded, repeats)
    timed_u = _interleaved(unbounded, repeats)
    reference = _percentile(next(iter(timed_b.values())), 0.95)
    rows = []
    print("\n| question | tokens encoded (bounded / unbounded) | bounded p50 / p95 ms | p95 / 30-char p95 "
          "| unbounded p50 / p95 ms |")
    print("|---|---|---|---|---|")
    for position, kind in enumerate(kinds):
        b, u = timed_b[kind], timed_u[kind]
        row = {
            "label": kind, "short30": position == 0,
            "chars": max(len(q) + len(c) for q, c in kinds[kind]),
            "tokens": max(sum(estimate_tokens(t) for t in texts) for texts in bounded[kind]),
            "tokens_unbounded": max(sum(estimate_tokens(t) for t in texts) for texts in unbounded[kind]),
            "p50_ms": round(statistics.median(b), 1), "p95_ms": round(_percentile(b, 0.95), 1),
            "unbounded_p50_ms": round(statistics.median(u), 1), "unbounded_p95_ms": round(_percentile(u, 0.95), 1),
        }
        row["ratio_p95"] = round(row["p95_ms"] / reference, 2)
        rows.append(row)
        print(f"| {kind} | {row['tokens']} / {row['tokens_unbounded']} | {row['p50_ms']} / {row['p95_ms']} | "
              f"{row['ratio_p95']}x | {row['unbounded_p50_ms']} / {row['unbounded_p95_ms']} |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    return rows


if __name__ == "__main__":
    main()
