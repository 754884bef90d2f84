#!/usr/bin/env python3
"""Build world.json, transcript-<firm>.json and questions.json from source.py (deterministic).

Run:  python3 build.py        (exits non-zero on any validation failure)
"""
import collections
import datetime as dt
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import source  # noqa: E402

CATEGORIES = ["advice", "single_hop", "multi_hop", "temporal", "preference", "quoted_english",
              "look_alike", "corrected", "history", "must_not_recall", "never_said"]
TZ = dt.timezone(dt.timedelta(hours=8))
REPLY_DELAY = dt.timedelta(seconds=40)     # user -> assistant
NEXT_TURN_DELAY = dt.timedelta(minutes=3)  # assistant -> next user

errors = []
warnings = []


def fail(msg):
    errors.append(msg)


def lcs_len(a, b):
    """Length of the longest common substring of a and b."""
    best = 0
    prev = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        cur = [0] * (len(b) + 1)
        ai = a[i - 1]
        for j in range(1, len(b) + 1):
            if ai == b[j - 1]:
                cur[j] = prev[j - 1] + 1
                if cur[j] > best:
                    best = cur[j]
        prev = cur
    return best


def main():
    P = source.PREFIX
    firms = source.FIRMS

    # ---------------- world ----------------
    user_firm = {}
    matter_info = {}  # ref -> (firm slug, assigned)
    for f in firms:
        for u in f["users"]:
            if u in user_firm:
                fail("user %s in two firms" % u)
            user_firm[u] = f["slug"]
        for m in f["matters"]:
            if m["reference"] in matter_info:
                fail("duplicate matter reference %s" % m["reference"])
            matter_info[m["reference"]] = (f["slug"], list(m["assigned"]))
            for a in m["assigned"]:
                if user_firm.get(a) != f["slug"]:
                    fail("matter %s assigns %s who is not in firm %s" % (m["reference"], a, f["slug"]))
    world = {"firms": [{"slug": f["slug"], "name": f["name"], "users": list(f["users"]),
                        "matters": [{"reference": m["reference"], "title": m["title"],
                                     "assigned": list(m["assigned"])} for m in f["matters"]]}
                       for f in firms]}

    # ---------------- transcripts ----------------
    messages = {}       # id -> dict(role, speaker, content, conv, user, matter, firm, date)
    all_contents = []
    convs_by_firm = collections.OrderedDict((f["slug"], []) for f in firms)
    sessions_by_user = collections.defaultdict(list)
    conv_ids = set()
    for s in source.SESSIONS:
        user = s["user"]
        firm = user_firm.get(user)
        if firm is None:
            fail("session %s-%s: unknown user %s" % (s["client"], s["n"], user))
            continue
        matter = s.get("matter")
        if matter is not None:
            if matter not in matter_info:
                fail("session %s-%s: unknown matter %s" % (s["client"], s["n"], matter))
            elif matter_info[matter][0] != firm or user not in matter_info[matter][1]:
                fail("session %s-%s: user %s not assigned to matter %s" % (s["client"], s["n"], user, matter))
        conv_id = "%s-%s-s%02d" % (P, s["client"], s["n"])
        if conv_id in conv_ids:
            fail("duplicate conversation id %s" % conv_id)
        conv_ids.add(conv_id)
        start = dt.datetime.strptime(s["start"], "%Y-%m-%d %H:%M").replace(tzinfo=TZ)
        sessions_by_user[user].append(start)
        t = start
        msgs = []
        for ti, (u_text, a_text) in enumerate(s["turns"], 1):
            for role, text, idx in (("user", u_text, 2 * ti - 1), ("assistant", a_text, 2 * ti)):
                mid = "%s-%s-s%02d-%02d" % (P, s["client"], s["n"], idx)
                if mid in messages:
                    fail("duplicate message id %s" % mid)
                if not text.strip():
                    fail("empty message %s" % mid)
                speaker = user if role == "user" else "assistant"
                msgs.append({"id": mid, "role": role, "speaker": speaker,
                             "timestamp": t.isoformat(), "content": text})
                messages[mid] = dict(role=role, speaker=speaker, content=text, conv=conv_id, user=user,
                                     matter=matter, firm=firm, session=(s["client"], s["n"]))
                all_contents.append(text)
                t = t + (REPLY_DELAY if role == "user" else NEXT_TURN_DELAY)
        for i in range(1, len(msgs)):
            if msgs[i]["role"] == msgs[i - 1]["role"]:
                fail("conversation %s does not alternate at %s" % (conv_id, msgs[i]["id"]))
        conv = {"id": conv_id, "user": user}
        if matter is not None:
            conv["matter"] = matter
        conv["title"] = s["title"]
        conv["messages"] = msgs
        convs_by_firm[firm].append(conv)

    # session spacing / counts
    for user, starts in sessions_by_user.items():
        starts.sort()
        for a, b in zip(starts, starts[1:]):
            if (b.date() - a.date()).days < 5:
                fail("user %s: sessions %s and %s are < 5 days apart" % (user, a.date(), b.date()))
        for st in starts:
            if not (dt.date(2026, 1, 1) <= st.date() <= dt.date(2026, 9, 30)):
                fail("user %s: session date %s outside 2026-01..2026-09" % (user, st.date()))
    client_users = ["c_donovan", "c_xu"]
    for u in client_users:
        if len(sessions_by_user[u]) < 10:
            fail("client %s has only %d sessions (< 10)" % (u, len(sessions_by_user[u])))

    # ---------------- questions ----------------
    out_q = []
    user_text_set = set(all_contents)
    for qi, q in enumerate(source.QUESTIONS, 1):
        qid = "%s-q%03d" % (P, qi)
        cat, lang, asker, text = q["category"], q["language"], q["user"], q["question"]
        gold = list(q["gold"])
        ctx = q.get("context")
        if cat not in CATEGORIES:
            fail("%s: bad category %s" % (qid, cat))
        if lang not in ("zh", "en"):
            fail("%s: bad language %s" % (qid, lang))
        if asker not in user_firm:
            fail("%s: unknown user %s" % (qid, asker))
            continue
        if len(set(gold)) != len(gold):
            fail("%s: duplicate gold ids" % qid)
        for g in gold:
            if g not in messages:
                fail("%s: gold id %s does not exist" % (qid, g))
        gold_ok = [g for g in gold if g in messages]
        # substring / near-copy checks
        for c in all_contents:
            if text in c:
                fail("%s: question is a substring of a transcript message" % qid)
                break
        for g in gold_ok:
            n = lcs_len(text, messages[g]["content"])
            if n >= 14 or (len(text) > 0 and n >= 0.6 * len(text)):
                fail("%s: question near-copies gold %s (common run of %d chars)" % (qid, g, n))
            elif n >= 10:
                warnings.append("%s: common run of %d chars with gold %s" % (qid, n, g))
        if ctx is not None:
            if not (2 <= len(ctx) <= 4):
                fail("%s: context must have 2-4 lines" % qid)
            for line in ctx:
                if line in user_text_set or any(line in c for c in all_contents):
                    fail("%s: context line copied from transcript: %s" % (qid, line))
        # gold speaker
        roles = sorted({messages[g]["role"] for g in gold_ok})
        if not gold:
            gs = "none"
        elif roles == ["assistant"]:
            gs = "assistant"
        elif roles == ["user"]:
            gs = "user"
        else:
            gs = "both"
        # category-specific checks
        if cat == "never_said":
            if gold:
                fail("%s: never_said must have empty gold" % qid)
        elif not gold:
            fail("%s: %s needs gold" % (qid, cat))
        if cat == "advice" and gs != "assistant":
            fail("%s: advice gold must be assistant messages" % qid)
        if cat in ("corrected", "history", "preference", "single_hop") and gs != "user":
            fail("%s: %s gold should be the client's own message" % (qid, cat))
        if cat == "multi_hop":
            if not (2 <= len(gold) <= 3):
                fail("%s: multi_hop needs 2-3 gold ids" % qid)
            if len({messages[g]["session"] for g in gold_ok}) < 2:
                fail("%s: multi_hop gold must come from different sessions" % qid)
        elif cat != "never_said" and len(gold) != 1:
            fail("%s: %s should have exactly one gold id" % (qid, cat))
        if cat == "quoted_english":
            if not any(sum(ch.isascii() and ch.isalpha() for ch in messages[g]["content"]) >= 60 for g in gold_ok):
                fail("%s: quoted_english gold contains no quoted English text" % qid)
        if cat == "must_not_recall":
            for g in gold_ok:
                m = messages[g]
                if m["firm"] == user_firm[asker]:
                    if m["matter"] is None or asker in matter_info[m["matter"]][1] or m["user"] == asker:
                        fail("%s: must_not_recall asker %s can see gold %s" % (qid, asker, g))
        else:
            for g in gold_ok:
                m = messages[g]
                if m["firm"] != user_firm[asker]:
                    fail("%s: asker %s not in firm of gold %s" % (qid, asker, g))
                visible = m["user"] == asker or (m["matter"] is not None and asker in matter_info[m["matter"]][1])
                if not visible:
                    fail("%s: asker %s is not on the conversation/matter of gold %s" % (qid, asker, g))
        rec = {"id": qid, "category": cat, "language": lang, "user": asker, "question": text}
        if ctx is not None:
            rec["context"] = list(ctx)
        rec["gold"] = gold
        rec["gold_speaker"] = gs
        if q.get("matter") is not None:
            mref = q["matter"]
            if cat in ("must_not_recall", "never_said"):
                fail("%s: matter hint not allowed for %s" % (qid, cat))
            if mref not in matter_info or asker not in matter_info[mref][1]:
                fail("%s: asker %s not assigned to matter hint %s" % (qid, asker, mref))
            for g in gold_ok:
                if messages[g]["matter"] not in (mref, None):
                    fail("%s: matter hint %s but gold %s is in %s" % (qid, mref, g, messages[g]["matter"]))
            rec["matter"] = mref
        out_q.append(rec)

    # ---------------- totals / quotas ----------------
    by_cat = collections.Counter(q["category"] for q in out_q)
    by_lang = collections.Counter(q["language"] for q in out_q)
    by_user = collections.Counter(q["user"] for q in out_q)
    by_user_cat = collections.Counter((q["user"], q["category"]) for q in out_q)
    total = len(out_q)
    if total < 130:
        fail("only %d questions (< 130)" % total)
    if by_cat["advice"] < 0.36 * total:
        fail("advice share %.1f%% < 36%%" % (100.0 * by_cat["advice"] / total))
    aims = {"advice": 24, "single_hop": 8, "multi_hop": 5, "temporal": 5, "preference": 3, "quoted_english": 4,
            "look_alike": 4, "corrected": 3, "history": 3, "must_not_recall": 3, "never_said": 3}
    for u in client_users:
        for c, n in aims.items():
            if by_user_cat[(u, c)] < n:
                fail("client %s: %s has %d questions (< %d)" % (u, c, by_user_cat[(u, c)], n))
    for u in ("c_tang", "c_luo"):
        for (uu, c), n in by_user_cat.items():
            if uu == u and c != "must_not_recall":
                fail("%s asks a %s question" % (u, c))
    with_ctx = sum(1 for q in out_q if "context" in q)
    matter_qs = [q for q in out_q if q["category"] not in ("must_not_recall", "never_said")
                 and all(messages[g]["matter"] for g in q["gold"])]
    with_matter = sum(1 for q in matter_qs if "matter" in q)

    for w in warnings:
        print("warning:", w)
    if errors:
        for e in errors:
            print("ERROR:", e, file=sys.stderr)
        print("validation FAILED with %d error(s); nothing written" % len(errors), file=sys.stderr)
        sys.exit(1)

    # ---------------- write ----------------
    def dump(name, obj):
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as fh:
            json.dump(obj, fh, ensure_ascii=False, indent=1)
            fh.write("\n")

    dump("world.json", world)
    for slug, convs in convs_by_firm.items():
        dump("transcript-%s.json" % slug, {"firm": slug, "conversations": convs})
    dump("questions.json", {
        "description": "Part C of an independent evaluation set for a legal-assistant memory product: "
                       "consultations at 京华律师事务所 with an English-speaking Canadian client in Shenzhen (unlawful "
                       "termination, N+1 / 2N, year-end bonus, work and residence permits, residential lease deposit "
                       "and small claims) and a Chinese online-shop owner (platform trademark and copyright complaints, "
                       "squatted Chinese brand name, distribution agreement in English, freight-forwarder lien and cargo "
                       "damage) with quoted English e-mails and clauses; a walled look-alike labour matter (c_tang) and "
                       "a look-alike freight case at another firm (c_luo) as must_not_recall targets. Written without "
                       "seeing the product's code.",
        "questions": out_q})

    print("messages: %d in %d conversations" % (len(messages), sum(len(c) for c in convs_by_firm.values())))
    print("sessions per user:", {u: len(v) for u, v in sorted(sessions_by_user.items())})
    print("questions: %d  (with context: %d, matter-hinted: %d of %d matter questions)"
          % (total, with_ctx, with_matter, len(matter_qs)))
    print("per category:")
    for c in CATEGORIES:
        print("  %-16s %3d  (%.1f%%)" % (c, by_cat[c], 100.0 * by_cat[c] / total))
    print("per language:", dict(sorted(by_lang.items())),
          "(en %.1f%%)" % (100.0 * by_lang["en"] / total))
    print("per user:", dict(sorted(by_user.items())))
    print("validation OK")


if __name__ == "__main__":
    main()
