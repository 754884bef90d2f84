"""Validate the temporal evaluation set (standard library only).

    python3 evaluation/temporal/check.py          # checks dev/ and test/
    python3 evaluation/temporal/check.py dev      # one split

Prints counts per split and exits 1 on any violation.
"""
import collections
import datetime
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SPLITS = ["dev", "test"]
CATEGORIES = ["past_value", "as_of", "when_advised", "current_value", "never_changed"]
# allowed number of questions per category and split (brief: ~10/10/6/8/2 of ~36)
CATEGORY_RANGE = {"past_value": (9, 11), "as_of": (9, 11), "when_advised": (5, 7),
                  "current_value": (7, 9), "never_changed": (2, 3)}
N_CONVERSATIONS = 12
LAWYERS = {"alice", "bob"}
TS_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+08:00$")
DATE_RE = re.compile(r"^\d{4}-\d\d-\d\d$")
MID_RE = re.compile(r"^(?P<conv>.+)-(?P<kind>[ur])(?P<n>\d+)$")
TAG_RE = re.compile(r"\[(change|advice)=([^\]\s]+)\]")
CJK_RE = re.compile(r"[\u4e00-\u9fff]")
LATIN_WORD_RE = re.compile(r"[A-Za-z]{2,}")

errors = []


def err(split, msg):
    errors.append(f"[{split}] {msg}")


def parse_ts(s):
    return datetime.datetime.fromisoformat(s)


def conv_language(conv):
    text = " ".join(m["content"] for m in conv["messages"])
    user_text = " ".join(m["content"] for m in conv["messages"] if m["role"] == "user")
    if not CJK_RE.search(text):
        return "en"
    if len(LATIN_WORD_RE.findall(user_text)) >= 6:
        return "mixed"
    return "zh"


def check_split(split):
    folder = os.path.join(HERE, split)
    with open(os.path.join(folder, "conversations.json"), encoding="utf-8") as f:
        cdata = json.load(f)
    with open(os.path.join(folder, "questions.json"), encoding="utf-8") as f:
        qdata = json.load(f)

    if not cdata.get("firm"):
        err(split, "missing firm")
    convs = cdata["conversations"]
    if len(convs) != N_CONVERSATIONS:
        err(split, f"{len(convs)} conversations, expected {N_CONVERSATIONS}")

    msgs = {}          # id -> (message, conversation)
    by_account = collections.defaultdict(list)
    conv_ids = set()
    langs = collections.Counter()
    last_ts = None
    for c in convs:
        for key in ("id", "user", "title", "client", "messages"):
            if key not in c:
                err(split, f"conversation {c.get('id')} lacks {key}")
        if c["id"] in conv_ids:
            err(split, f"duplicate conversation id {c['id']}")
        conv_ids.add(c["id"])
        if c["user"] in LAWYERS and not c["client"]:
            err(split, f"{c['id']}: relayed conversation without client name")
        if c["user"] not in LAWYERS and c["client"] is not None:
            err(split, f"{c['id']}: first-person client account must have client null")
        langs[conv_language(c)] += 1
        counters = {"u": 0, "r": 0}
        prev_role = None
        for m in c["messages"]:
            for key in ("id", "role", "speaker", "timestamp", "content"):
                if key not in m:
                    err(split, f"message {m.get('id')} lacks {key}")
            mm = MID_RE.match(m["id"])
            if not mm or mm.group("conv") != c["id"]:
                err(split, f"bad message id {m['id']} in {c['id']}")
            else:
                kind = mm.group("kind")
                counters[kind] += 1
                if int(mm.group("n")) != counters[kind]:
                    err(split, f"{m['id']}: numbering out of sequence")
                if (kind == "u") != (m["role"] == "user"):
                    err(split, f"{m['id']}: id kind does not match role {m['role']}")
            if m["role"] not in ("user", "assistant"):
                err(split, f"{m['id']}: bad role")
            if m["role"] == prev_role:
                err(split, f"{m['id']}: roles do not alternate")
            prev_role = m["role"]
            want_speaker = c["user"] if m["role"] == "user" else "assistant"
            if m["speaker"] != want_speaker:
                err(split, f"{m['id']}: speaker {m['speaker']} != {want_speaker}")
            if not TS_RE.match(m["timestamp"]):
                err(split, f"{m['id']}: timestamp not ISO with +08:00")
                continue
            ts = parse_ts(m["timestamp"])
            if not (datetime.datetime(2026, 1, 1, tzinfo=ts.tzinfo) <= ts
                    < datetime.datetime(2026, 6, 30, tzinfo=ts.tzinfo)):
                err(split, f"{m['id']}: timestamp outside 2026-01-01..2026-06-29")
            if m["id"] in msgs:
                err(split, f"duplicate message id {m['id']}")
            msgs[m["id"]] = (m, c)
            by_account[c["user"]].append((ts, m["id"]))
            last_ts = ts if last_ts is None or ts > last_ts else last_ts
        if c["messages"] and c["messages"][0]["role"] != "user":
            err(split, f"{c['id']}: first message is not the user's")

    # per account: conversations taken in order of their first message; every message must be
    # strictly later than the previous one (timestamps increase, sessions never overlap)
    for acct in list(by_account):
        seq = sorted(by_account[acct], key=lambda x: x[0])
        order = sorted((c for c in convs if c["user"] == acct),
                       key=lambda c: c["messages"][0]["timestamp"] if c["messages"] else "")
        flat = [(parse_ts(m["timestamp"]), m["id"]) for c in order for m in c["messages"]
                if TS_RE.match(m["timestamp"])]
        for (t1, id1), (t2, id2) in zip(flat, flat[1:]):
            if not t2 > t1:
                err(split, f"account {acct}: {id2} not after {id1} (overlap or disorder)")
        by_account[acct] = seq

    if langs["en"] != 2:
        err(split, f"{langs['en']} English conversations, expected 2")
    if langs["mixed"] != 1:
        err(split, f"{langs['mixed']} mixed conversations, expected 1")

    def ts_of(mid):
        return parse_ts(msgs[mid][0]["timestamp"])

    def account_of(mid):
        return msgs[mid][1]["user"]

    qs = qdata["questions"]
    qids = set()
    cats = collections.Counter()
    qlangs = collections.Counter()
    for q in qs:
        qid = q.get("id")
        for key in ("id", "user", "asked_at", "question", "language", "category", "as_of",
                    "slot", "expected_value", "answer_message_ids", "wrong_value", "note"):
            if key not in q:
                err(split, f"question {qid} lacks {key}")
        if qid in qids:
            err(split, f"duplicate question id {qid}")
        qids.add(qid)
        cat = q["category"]
        cats[cat] += 1
        qlangs[q["language"]] += 1
        if cat not in CATEGORIES:
            err(split, f"{qid}: unknown category {cat}")
        if q["language"] not in ("zh", "en"):
            err(split, f"{qid}: language must be zh or en")
        if q["user"] not in by_account:
            err(split, f"{qid}: user {q['user']} told nothing in this split")
            continue
        if not TS_RE.match(q["asked_at"]) or (last_ts and parse_ts(q["asked_at"]) <= last_ts):
            err(split, f"{qid}: asked_at must be ISO +08:00 and after all conversations")
        exp, wrong = q["expected_value"], q["wrong_value"]
        if not exp or not wrong or exp == wrong:
            err(split, f"{qid}: expected_value and wrong_value must be non-empty and differ")
        if exp and wrong and (exp in wrong or wrong in exp):
            err(split, f"{qid}: expected and wrong value contain one another")
        ids = q["answer_message_ids"]
        if not ids:
            err(split, f"{qid}: no answer_message_ids")
        ok = True
        for mid in ids:
            if mid not in msgs:
                err(split, f"{qid}: answer message {mid} does not exist"); ok = False; continue
            if account_of(mid) != q["user"]:
                err(split, f"{qid}: answer message {mid} belongs to another account")
            if exp not in msgs[mid][0]["content"]:
                err(split, f"{qid}: {mid} does not contain expected_value {exp!r}")
        if not any(msgs[mid][0]["role"] == "user" for mid in ids if mid in msgs):
            err(split, f"{qid}: no answer message is the user's statement")
        acct_msgs = [mid for _, mid in by_account[q["user"]]]
        if not any(wrong in msgs[mid][0]["content"] for mid in acct_msgs):
            err(split, f"{qid}: wrong_value {wrong!r} occurs in no message of {q['user']}")
        if not ok:
            continue

        tags = collections.defaultdict(list)
        for k, v in TAG_RE.findall(q["note"]):
            tags[k].append(v)
        for k, vals in tags.items():
            for v in vals:
                if v not in msgs:
                    err(split, f"{qid}: note tag {k}={v} names no message")
                elif account_of(v) != q["user"]:
                    err(split, f"{qid}: note tag {k}={v} belongs to another account")
        if any(v not in msgs for vals in tags.values() for v in vals):
            continue
        change = tags["change"][0] if tags["change"] else None
        advice = tags["advice"][0] if tags["advice"] else None
        ans_last = max(ts_of(mid) for mid in ids)
        user_ans = [mid for mid in ids if msgs[mid][0]["role"] == "user"]
        stmt_first = min(ts_of(mid) for mid in user_ans)

        if q["as_of"] is not None and cat != "as_of":
            err(split, f"{qid}: as_of must be null for {cat}")
        if cat != "never_changed" and not change:
            err(split, f"{qid}: note needs [change=<message id>]")
        if cat == "when_advised" and not advice:
            err(split, f"{qid}: note needs [advice=<message id>]")
        if cat == "never_changed":
            if change:
                err(split, f"{qid}: never_changed question must not name a change")
            continue
        chg_msg = msgs[change][0]
        if chg_msg["role"] != "user":
            err(split, f"{qid}: change message {change} is not the user's")

        if cat in ("past_value", "as_of", "when_advised"):
            if wrong not in chg_msg["content"]:
                err(split, f"{qid}: change message {change} does not contain wrong_value {wrong!r}")
            if not ts_of(change) > ans_last:
                err(split, f"{qid}: change {change} is not after the answer messages")
        if cat == "as_of":
            if not q["as_of"] or not DATE_RE.match(q["as_of"]):
                err(split, f"{qid}: as_of must be an ISO date")
            else:
                d = datetime.date.fromisoformat(q["as_of"])
                if not (ans_last.date() < d < ts_of(change).date()):
                    err(split, f"{qid}: as_of {d} not strictly between {ans_last.date()} "
                               f"and change {ts_of(change).date()}")
        if cat == "when_advised":
            if advice not in ids:
                err(split, f"{qid}: advice message {advice} should be among answer_message_ids")
            if msgs[advice][0]["role"] != "assistant":
                err(split, f"{qid}: advice {advice} is not an assistant message")
            elif not (stmt_first < ts_of(advice) < ts_of(change)):
                err(split, f"{qid}: advice {advice} not between statement and change")
        if cat == "current_value":
            if change not in ids:
                err(split, f"{qid}: current value should be answered by the change message {change}")
            earlier = [mid for mid in acct_msgs if ts_of(mid) < ts_of(change)]
            if not any(wrong in msgs[mid][0]["content"] for mid in earlier):
                err(split, f"{qid}: old value {wrong!r} was never stated before {change}")

    for cat in CATEGORIES:
        lo, hi = CATEGORY_RANGE[cat]
        if not lo <= cats[cat] <= hi:
            err(split, f"{cats[cat]} {cat} questions, expected {lo}-{hi}")
    if qlangs["en"] < 3:
        err(split, "fewer than 3 English questions")

    print(f"{split}: {len(convs)} conversations ({dict(langs)}), {len(msgs)} messages, "
          f"accounts {sorted(by_account)}")
    print(f"  {len(qs)} questions: " + ", ".join(f"{c}={cats[c]}" for c in CATEGORIES)
          + f"; languages {dict(qlangs)}")
    clients = {c["client"] for c in convs if c["client"]}
    accounts = {c["user"] for c in convs} - LAWYERS
    return set(conv_ids), set(msgs), qids, clients, accounts


def main(argv):
    splits = argv[1:] or SPLITS
    seen = {}
    for split in splits:
        if not os.path.isdir(os.path.join(HERE, split)):
            err(split, "folder missing"); continue
        seen[split] = check_split(split)
    names = ["conversation ids", "message ids", "question ids", "clients", "client accounts"]
    splits_seen = list(seen)
    for i, a in enumerate(splits_seen):
        for b in splits_seen[i + 1:]:
            for name, x, y in zip(names, seen[a], seen[b]):
                shared = x & y
                if shared:
                    errors.append(f"[{a}/{b}] shared {name}: {sorted(shared)[:5]}")
    if errors:
        print(f"\n{len(errors)} violation(s):")
        for e in errors:
            print("  " + e)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
