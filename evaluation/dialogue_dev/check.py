# -*- coding: utf-8 -*-
"""Quality checks for the dialogue memory-search dataset."""
import json
import os
import statistics
import sys
from collections import Counter, defaultdict
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
errors = []


def err(msg):
    errors.append(msg)


with open(os.path.join(HERE, "conversations.json"), encoding="utf-8") as f:
    conv = json.load(f)
with open(os.path.join(HERE, "questions.json"), encoding="utf-8") as f:
    questions = json.load(f)

if conv.get("firm") != "dialogue-dev":
    err("firm must be 'dialogue-dev'")
conversations = conv["conversations"]

# ---- ids unique (conversations, messages, questions share one namespace)
all_ids = []
msg_owner = {}       # message id -> user
msg_role = {}
conv_per_user = Counter()
last_ts = defaultdict(lambda: None)
for c in conversations:
    all_ids.append(c["id"])
    conv_per_user[c["user"]] += 1
    if set(c) != {"id", "user", "title", "messages"}:
        err(f"{c['id']}: unexpected keys {sorted(c)}")
    msgs = c["messages"]
    if [m["role"] for m in msgs] != ["user", "assistant"]:
        err(f"{c['id']}: must be exactly one user then one assistant message")
    for m, suffix in zip(msgs, ["-u1", "-r1"]):
        if m["id"] != c["id"] + suffix:
            err(f"{m['id']}: expected id {c['id'] + suffix}")
        all_ids.append(m["id"])
        msg_owner[m["id"]] = c["user"]
        msg_role[m["id"]] = m["role"]
        exp_speaker = c["user"] if m["role"] == "user" else "assistant"
        if m["speaker"] != exp_speaker:
            err(f"{m['id']}: speaker {m['speaker']} != {exp_speaker}")
        ts = datetime.fromisoformat(m["timestamp"])
        if not (datetime.fromisoformat("2026-01-01T00:00:00+08:00") <= ts
                <= datetime.fromisoformat("2026-06-30T23:59:59+08:00")):
            err(f"{m['id']}: timestamp {m['timestamp']} outside Jan-Jun 2026")
        prev = last_ts[c["user"]]
        if prev is not None and ts <= prev:
            err(f"{m['id']}: timestamp not increasing for {c['user']}")
        last_ts[c["user"]] = ts
        if not m["content"].strip():
            err(f"{m['id']}: empty content")

q_per_user = Counter()
totals = []
for q in questions:
    all_ids.append(q["id"])
    q_per_user[q["user"]] += 1
    if set(q) != {"id", "user", "context", "question", "category",
                  "gold_message_ids", "note"}:
        err(f"{q['id']}: unexpected keys {sorted(q)}")
    if q["category"] != "dialogue":
        err(f"{q['id']}: category must be 'dialogue'")
    if not (2 <= len(q["context"]) <= 5):
        err(f"{q['id']}: context has {len(q['context'])} lines (need 2-5)")
    if not all(isinstance(x, str) and x.strip() for x in q["context"]):
        err(f"{q['id']}: context lines must be non-empty strings")
    # context starts with the user and alternates, so the final (user) question
    # follows an assistant line only when the context length is even
    if len(q["context"]) % 2 != 0:
        err(f"{q['id']}: context should have an even number of lines "
            "(user/assistant pairs) so the final user line follows the assistant")
    golds = q["gold_message_ids"]
    if len(golds) != 1:
        err(f"{q['id']}: need exactly one gold id")
    for g in golds:
        if g not in msg_owner:
            err(f"{q['id']}: gold {g} does not exist")
        elif msg_owner[g] != q["user"]:
            err(f"{q['id']}: gold {g} belongs to {msg_owner[g]}, not {q['user']}")
        elif msg_role[g] != "user" or not g.endswith("-u1"):
            err(f"{q['id']}: gold {g} is not a user message")
    totals.append(sum(len(x) for x in q["context"]) + len(q["question"]))

dups = [k for k, v in Counter(all_ids).items() if v > 1]
if dups:
    err(f"duplicate ids: {dups}")

users = sorted(set(conv_per_user) | set(q_per_user))
for u in users:
    if conv_per_user[u] < 18:
        err(f"{u}: only {conv_per_user[u]} conversations")
    if q_per_user[u] < 8:
        err(f"{u}: only {q_per_user[u]} questions")

for u in users:
    print(f"{u}: {conv_per_user[u]} conversations, {q_per_user[u]} questions")
print("users:", len(users))
print("questions:", len(questions))
print("conversations:", len(conversations))
print("median total chars (context+question):", statistics.median(totals))
zh = [t for q, t in zip(questions, totals) if q["user"] != "user_6"]
en = [t for q, t in zip(questions, totals) if q["user"] == "user_6"]
print("  Chinese users median:", statistics.median(zh), "| English user median:", statistics.median(en))
print("  min/max:", min(totals), max(totals))

if errors:
    print("\nFAILED:")
    for e in errors:
        print(" -", e)
    sys.exit(1)
print("\nALL CHECKS PASSED")
