# -*- coding: utf-8 -*-
"""Build world.json, transcript-<firm>.json and questions.json from source.py (part B).

Deterministic; fails loudly (SystemExit with a message) on any validation error.
Run:  python3 build.py
"""
import collections
import datetime as dt
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import source as S  # noqa: E402

TZ = dt.timezone(dt.timedelta(hours=8))
CATEGORIES = ["advice", "single_hop", "multi_hop", "temporal", "preference", "quoted_english",
              "look_alike", "corrected", "history", "must_not_recall", "never_said"]
PER_CLIENT_MIN = {"advice": 24, "single_hop": 8, "multi_hop": 5, "temporal": 5, "preference": 3,
                  "quoted_english": 4, "look_alike": 4, "corrected": 3, "history": 3,
                  "must_not_recall": 3, "never_said": 3}
ASKING_CLIENTS = ["b_sun", "b_zhou"]
NEAR_COPY_FAIL = 16   # longest common substring (chars) between question and a gold message
NEAR_COPY_WARN = 11

errors = []


def err(msg):
    errors.append(msg)


def conv_id(c, n):
    return "%s-%s-s%02d" % (S.PREFIX, c, n)


def msg_id(c, n, idx):
    return "%s-%s-s%02d-%02d" % (S.PREFIX, c, n, idx)


def ref_to_id(ref):
    # "c1.s03.t2a" -> b-c1-s03-04
    try:
        c, s, t = ref.split(".")
        n = int(s[1:])
        turn = int(t[1:-1])
        role = t[-1]
        assert s[0] == "s" and t[0] == "t" and role in "ua"
    except Exception:
        raise SystemExit("bad gold reference %r" % ref)
    return msg_id(c, n, 2 * turn - (1 if role == "u" else 0))


def lcs_len(a, b):
    # longest common substring length
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


def build():
    # ------------------------------------------------------------------ world
    firm_of_user = {}
    assigned = {}          # matter -> set(users)
    matter_firm = {}
    for f in S.FIRMS:
        for u in f["users"]:
            if u in firm_of_user:
                err("user %s in two firms" % u)
            firm_of_user[u] = f["slug"]
        for m in f["matters"]:
            if m["reference"] in assigned:
                err("duplicate matter %s" % m["reference"])
            assigned[m["reference"]] = set(m["assigned"])
            matter_firm[m["reference"]] = f["slug"]
            for u in m["assigned"]:
                if u not in f["users"]:
                    err("matter %s assigns %s who is not in firm %s" % (m["reference"], u, f["slug"]))
    world = {"firms": [{"slug": f["slug"], "name": f["name"], "users": list(f["users"]),
                        "matters": [{"reference": m["reference"], "title": m["title"],
                                     "assigned": list(m["assigned"])} for m in f["matters"]]}
                       for f in S.FIRMS]}

    # ------------------------------------------------------------------ transcripts
    convs_by_firm = collections.OrderedDict((f["slug"], []) for f in S.FIRMS)
    messages = {}          # id -> dict(content, role, user, matter, firm, conv)
    conv_ids = set()
    sessions_by_user = collections.defaultdict(list)
    for sess in S.SESSIONS:
        c, n = sess["c"], sess["n"]
        user, firm = S.CLIENTS[c]
        if firm_of_user.get(user) != firm:
            err("client %s: user %s not in firm %s" % (c, user, firm))
        matter = sess.get("matter")
        if matter is not None:
            if matter not in assigned:
                err("session %s-%s: unknown matter %s" % (c, n, matter))
            elif user not in assigned[matter]:
                err("session %s-%s: user %s not assigned to %s" % (c, n, user, matter))
            elif matter_firm[matter] != firm:
                err("session %s-%s: matter %s in other firm" % (c, n, matter))
        cid = conv_id(c, n)
        if cid in conv_ids:
            err("duplicate conversation id %s" % cid)
        conv_ids.add(cid)
        start = dt.datetime.strptime(sess["start"], "%Y-%m-%d %H:%M").replace(tzinfo=TZ)
        sessions_by_user[user].append(start)
        t = start
        msgs = []
        idx = 0
        for (u_text, a_text) in sess["turns"]:
            for role, text in (("user", u_text), ("assistant", a_text)):
                idx += 1
                if idx > 1:
                    t = t + (dt.timedelta(seconds=40) if role == "assistant" else dt.timedelta(minutes=3))
                mid = msg_id(c, n, idx)
                if mid in messages:
                    err("duplicate message id %s" % mid)
                if not text or not text.strip():
                    err("empty message %s" % mid)
                messages[mid] = dict(content=text, role=role, user=user, matter=matter, firm=firm, conv=cid)
                msgs.append({"id": mid, "role": role, "speaker": user if role == "user" else "assistant",
                             "timestamp": t.isoformat(), "content": text})
        # alternation check
        for i, m in enumerate(msgs):
            if m["role"] != ("user" if i % 2 == 0 else "assistant"):
                err("conversation %s does not alternate at %s" % (cid, m["id"]))
        conv = {"id": cid, "user": user}
        if matter is not None:
            conv["matter"] = matter
        conv["title"] = sess["title"]
        conv["messages"] = msgs
        convs_by_firm[firm].append(conv)

    # sessions per client, spacing >= 5 days
    for user in ASKING_CLIENTS:
        starts = sorted(sessions_by_user[user])
        if len(starts) < 10:
            err("user %s has only %d sessions (< 10)" % (user, len(starts)))
        for a, b in zip(starts, starts[1:]):
            if (b - a) < dt.timedelta(days=5):
                err("user %s sessions %s and %s less than 5 days apart" % (user, a, b))
        if starts and (starts[0] < dt.datetime(2026, 1, 1, tzinfo=TZ) or starts[-1] >= dt.datetime(2026, 10, 1, tzinfo=TZ)):
            err("user %s sessions outside 2026-01..2026-09" % user)

    # ------------------------------------------------------------------ questions
    all_texts = [m["content"] for m in messages.values()]
    out_q = []
    warnings = []
    for i, q in enumerate(S.QUESTIONS, 1):
        qid = "%s-q%03d" % (S.PREFIX, i)
        cat, lang, user, text = q["cat"], q["lang"], q["user"], q["q"]
        if cat not in CATEGORIES:
            err("%s: bad category %s" % (qid, cat))
        if lang not in ("zh", "en"):
            err("%s: bad language %s" % (qid, lang))
        if user not in firm_of_user:
            err("%s: unknown user %s" % (qid, user))
        if user not in ASKING_CLIENTS and cat != "must_not_recall":
            err("%s: user %s should not ask" % (qid, user))
        refs = q.get("gold", [])
        gold = [ref_to_id(r) for r in refs]
        for g in gold:
            if g not in messages:
                err("%s: gold %s does not exist" % (qid, g))
        if len(set(gold)) != len(gold):
            err("%s: duplicate gold" % qid)
        gold_ok = all(g in messages for g in gold)
        # category-specific gold rules
        if cat == "never_said":
            if gold:
                err("%s: never_said must have empty gold" % qid)
        elif not gold:
            err("%s: empty gold for %s" % (qid, cat))
        if cat == "multi_hop":
            if not 2 <= len(gold) <= 3:
                err("%s: multi_hop needs 2-3 gold" % qid)
            elif gold_ok and len({messages[g]["conv"] for g in gold}) < 2:
                err("%s: multi_hop gold must come from different sessions" % qid)
        elif cat != "never_said" and len(gold) != 1:
            err("%s: %s should have exactly one gold" % (qid, cat))
        if cat == "advice" and gold_ok and any(messages[g]["role"] != "assistant" for g in gold):
            err("%s: advice gold must be assistant messages" % qid)
        if cat in ("preference", "corrected", "history", "single_hop") and gold_ok and \
                any(messages[g]["role"] != "user" for g in gold):
            err("%s: %s gold must be the client's message" % (qid, cat))
        # access rules
        if gold_ok and gold:
            for g in gold:
                m = messages[g]
                if cat == "must_not_recall":
                    same_firm = firm_of_user[user] == m["firm"]
                    if same_firm and (m["matter"] is None or user in assigned[m["matter"]] or m["user"] == user):
                        err("%s: must_not_recall asker %s can see %s" % (qid, user, g))
                else:
                    if firm_of_user[user] != m["firm"]:
                        err("%s: asker %s not in firm of gold %s" % (qid, user, g))
                    if m["user"] != user:
                        err("%s: gold %s belongs to %s, not asker %s" % (qid, g, m["user"], user))
                    if m["matter"] is not None and user not in assigned[m["matter"]]:
                        err("%s: asker not assigned to %s" % (qid, m["matter"]))
        # matter field
        qm = q.get("matter")
        if qm is not None:
            if qm not in assigned or user not in assigned[qm]:
                err("%s: question matter %s not assigned to %s" % (qid, qm, user))
            if gold_ok and any(messages[g]["matter"] != qm for g in gold):
                err("%s: gold not in question matter %s" % (qid, qm))
        # substring / near copy
        for t_ in all_texts:
            if text in t_:
                err("%s: question is a substring of a message" % qid)
                break
        for g in gold:
            if g in messages:
                L = lcs_len(text, messages[g]["content"])
                if L >= NEAR_COPY_FAIL:
                    err("%s: question near-copies gold %s (common run %d chars)" % (qid, g, L))
                elif L >= NEAR_COPY_WARN:
                    warnings.append("%s: common run of %d chars with %s" % (qid, L, g))
        # context
        ctx = q.get("ctx")
        if ctx is not None:
            if len(ctx) not in (2, 4):
                err("%s: context must have 2 or 4 lines" % qid)
            for line in ctx:
                if not line.strip() or line in all_texts:
                    err("%s: context line empty or copied from transcript" % qid)
        # gold speaker
        if not gold:
            gs = "none"
        else:
            roles = {messages[g]["role"] for g in gold if g in messages}
            gs = "both" if len(roles) > 1 else ("user" if roles == {"user"} else "assistant")
        item = {"id": qid, "category": cat, "language": lang, "user": user, "question": text}
        if ctx:
            item["context"] = list(ctx)
        item["gold"] = gold
        item["gold_speaker"] = gs
        if qm is not None:
            item["matter"] = qm
        out_q.append(item)

    # duplicate question texts
    seen = collections.Counter((q["user"], q["question"]) for q in out_q)
    for k, v in seen.items():
        if v > 1:
            err("duplicate question %r" % (k,))

    # ------------------------------------------------------------------ counts
    by_cat = collections.Counter(q["category"] for q in out_q)
    by_lang = collections.Counter(q["language"] for q in out_q)
    by_user_cat = collections.defaultdict(collections.Counter)
    for q in out_q:
        by_user_cat[q["user"]][q["category"]] += 1
    total = len(out_q)
    if total < 130:
        err("only %d questions (< 130)" % total)
    if by_cat["advice"] < 0.36 * total:
        err("advice %d < 36%% of %d" % (by_cat["advice"], total))
    for u in ASKING_CLIENTS:
        for cat, mn in PER_CLIENT_MIN.items():
            if by_user_cat[u][cat] < mn:
                err("user %s: %s has %d (< %d)" % (u, cat, by_user_cat[u][cat], mn))
    with_ctx = sum(1 for q in out_q if q.get("context"))

    if errors:
        print("VALIDATION FAILED:", file=sys.stderr)
        for e in errors:
            print("  - " + e, file=sys.stderr)
        raise SystemExit(1)

    # ------------------------------------------------------------------ write
    def dump(name, obj):
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as fh:
            json.dump(obj, fh, ensure_ascii=False, indent=1)
            fh.write("\n")

    dump("world.json", world)
    for slug, convs in convs_by_firm.items():
        dump("transcript-%s.json" % slug, {"firm": slug, "conversations": convs})
    dump("questions.json", {
        "description": "Part B of an independent evaluation set for a legal-assistant memory product: "
                       "Chinese legal consultations (debt recovery with guarantor, cross-border sales quality dispute "
                       "with quoted English e-mails and clauses, traffic-accident personal injury, divorce property "
                       "division incl. flat, LLC shares and RSUs) at firm hengan, a walled matter (b_ma) and a "
                       "look-alike case at a second firm (hengan_other). Written without reading the product's code.",
        "questions": out_q})

    # ------------------------------------------------------------------ report
    print("messages: %d in %d conversations" % (len(messages), len(conv_ids)))
    for u in sorted(sessions_by_user):
        print("  sessions %-7s %d" % (u, len(sessions_by_user[u])))
    print("questions: %d (with context: %d)" % (total, with_ctx))
    print("by category:")
    for cat in CATEGORIES:
        print("  %-16s %3d   (%s)" % (cat, by_cat[cat],
                                      ", ".join("%s %d" % (u, by_user_cat[u][cat]) for u in ASKING_CLIENTS)))
    print("advice share: %.1f%%" % (100.0 * by_cat["advice"] / total))
    print("by language:")
    for lang in ("zh", "en"):
        print("  %-3s %3d (%.1f%%)" % (lang, by_lang[lang], 100.0 * by_lang[lang] / total))
    gs = collections.Counter(q["gold_speaker"] for q in out_q)
    print("gold_speaker:", dict(sorted(gs.items())))
    if warnings:
        print("near-copy warnings (below fail threshold %d):" % NEAR_COPY_FAIL)
        for w in warnings:
            print("  " + w)
    print("OK")


if __name__ == "__main__":
    build()
