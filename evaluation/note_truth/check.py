#!/usr/bin/env python3
"""Validate the note_truth evaluation set. Standard library only.

Usage: python evaluation/note_truth/check.py [SPLIT ...]
Without arguments every sub-folder holding an expected.json is a split (dev, test,
outside_dev, dev2, ...). Prints counts per split; exits 1 with a list of violations if any
check fails. Size requirements are per split (PROFILES); a folder without a profile gets
only the integrity checks.
"""
import json
import os
import re
import sys
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
SPLITS = tuple(sorted(d for d in os.listdir(HERE)
                     if os.path.isfile(os.path.join(HERE, d, "expected.json"))))
KINDS = {"fact", "advice", "wish", "plan", "preference", "contract_term", "event"}
STATES = {"current", "superseded"}
FORMS = {"刚才说错了", "更正", "不是X是Y", "english actually", "document", "later session"}
# same-conversation phrasings added with dev2 (the structural forms 'document' and
# 'later session' stay as above; a correction's literal cue words go in its optional 'cue')
EXTRA_FORMS = {"哦不对", "看了合同", "家人提醒", "准确地说", "前面的数有误", "我记错了", "其实是",
               "律师转述更正", "english sorry I meant", "english correction:"}
ALL_FORMS = FORMS | EXTRA_FORMS


def _sized(lo, hi=None):
    return lambda n: n >= lo and (hi is None or n <= hi)


# per-split size requirements: key -> (test on the count, description)
PROFILES = {
    "dev": "inhouse", "test": "inhouse",
    "outside_dev": {
        "conversations": (_sized(20, 20), "20 conversations"),
        "messages": (_sized(100, 130), "100-130 messages"),
        "documents": (_sized(0, 0), "no documents"),
        "facts": (_sized(60), ">= 60 facts"),
        "advice": (_sized(20), ">= 20 advice facts"),
        "corrections": (_sized(9), ">= 9 corrections"),
        "wish+plan+preference": (_sized(8), ">= 8 wishes/plans/preferences"),
        "never_notes": (_sized(6), ">= 6 never_notes"),
    },
    "dev2": {
        "conversations": (_sized(10, 10), "10 conversations"),
        "messages": (_sized(40, 80), "40-80 messages"),
        "relayed_share": (lambda x: 0.5 <= x <= 0.7, "about 60% lawyer-relayed conversations"),
        "documents": (_sized(0, 0), "no documents"),
        "facts": (_sized(60), ">= 60 facts"),
        "advice": (_sized(10), ">= 10 advice facts"),
        "superseded_advice": (_sized(2), ">= 2 superseded advice facts"),
        "corrections": (_sized(20), ">= 20 corrections"),
        "distinct_cues": (_sized(12), ">= 12 distinct correction cues"),
        "wish+plan+preference": (_sized(8), ">= 8 wishes/plans/preferences"),
        "never_notes": (_sized(6), ">= 6 never_notes"),
    },
}
ART = re.compile(r"^(第[一二三四五六七八九十百]+条|Clause \d+\.)")


def squash(s):
    return re.sub(r"\s+", "", s)


def load(split, name):
    with open(os.path.join(HERE, split, name), encoding="utf-8") as fh:
        return json.load(fh)


def check_split(split, errors):
    def err(msg):
        errors.append(f"[{split}] {msg}")

    conv_doc = load(split, "conversations.json")
    docs = load(split, "documents.json")["documents"]
    exp = load(split, "expected.json")
    convs = conv_doc["conversations"]

    # ---------- conversations / messages ----------
    conv_by_id, msg_by_id, msg_conv = {}, {}, {}
    for c in convs:
        for key in ("id", "user", "title", "messages"):
            if key not in c:
                err(f"conversation {c.get('id')} lacks field {key}")
        # 'client' may be absent (the outside set's import payload has none): first person
        c.setdefault("client", None)
        if c["id"] in conv_by_id:
            err(f"duplicate conversation id {c['id']}")
        conv_by_id[c["id"]] = c
        last = None
        for m in c["messages"]:
            if m["id"] in msg_by_id:
                err(f"duplicate message id {m['id']}")
            msg_by_id[m["id"]] = m
            msg_conv[m["id"]] = c["id"]
            if not m["id"].startswith(c["id"] + "-"):
                err(f"message {m['id']} not prefixed by its conversation {c['id']}")
            if m["role"] not in ("user", "assistant"):
                err(f"message {m['id']} has role {m['role']}")
            want = c["user"] if m["role"] == "user" else "assistant"
            if m["speaker"] != want:
                err(f"message {m['id']} speaker {m['speaker']} should be {want}")
            ts = datetime.fromisoformat(m["timestamp"])
            if last and ts <= last:
                err(f"message {m['id']} timestamp does not increase")
            last = ts
            if not m["content"].strip():
                err(f"message {m['id']} is empty")
    # sessions of one user must not overlap in time
    by_user = {}
    for c in convs:
        ts = [datetime.fromisoformat(m["timestamp"]) for m in c["messages"]]
        by_user.setdefault(c["user"], []).append((ts[0], ts[-1], c["id"]))
    for user, spans in by_user.items():
        spans.sort()
        for a, b in zip(spans, spans[1:]):
            if b[0] <= a[1]:
                err(f"conversations {a[2]} and {b[2]} of {user} overlap in time")

    # ---------- documents ----------
    doc_by_id, doc_text = {}, {}
    for d in docs:
        if d["id"] in doc_by_id:
            err(f"duplicate document id {d['id']}")
        doc_by_id[d["id"]] = d
        doc_text[d["id"]] = "\n".join(d["pages"])
        if d["conversation"] not in conv_by_id:
            err(f"document {d['id']} names unknown conversation {d['conversation']}")
        elif conv_by_id[d["conversation"]]["user"] != d["user"]:
            err(f"document {d['id']} user differs from its conversation's user")
        if not 2 <= len(d["pages"]) <= 4:
            err(f"document {d['id']} has {len(d['pages'])} pages (want 2-4)")
        first = d["pages"][0].split("\n", 1)[0]
        if d["title"].lower() not in first.lower():
            err(f"document {d['id']} title not in its first line")
        if d["title"] == d["filename"]:
            err(f"document {d['id']} title equals filename")

    def source_text(mid, doc):
        if mid is not None:
            return msg_by_id[mid]["content"] if mid in msg_by_id else None
        return doc_text.get(doc)

    # ---------- facts ----------
    facts = exp["facts"]
    ids = set()
    for f in facts:
        fid = f["id"]
        if fid in ids:
            err(f"duplicate fact id {fid}")
        ids.add(fid)
        if f["kind"] not in KINDS:
            err(f"fact {fid} kind {f['kind']}")
        if f["state"] not in STATES:
            err(f"fact {fid} state {f['state']}")
        if f["conversation"] not in conv_by_id:
            err(f"fact {fid} unknown conversation {f['conversation']}")
            continue
        conv = conv_by_id[f["conversation"]]
        mid, doc = f.get("message_id"), f.get("document")
        if mid is None:
            if doc not in doc_by_id:
                err(f"fact {fid} has neither an existing message_id nor document")
                continue
            if f["speaker"] != doc or f["kind"] != "contract_term":
                err(f"fact {fid} from a document must be contract_term spoken by {doc}")
            if doc_by_id[doc]["conversation"] != f["conversation"]:
                err(f"fact {fid} conversation differs from its document's conversation")
        else:
            if mid not in msg_by_id:
                err(f"fact {fid} unknown message {mid}")
                continue
            if msg_conv[mid] != f["conversation"]:
                err(f"fact {fid} message {mid} is not in conversation {f['conversation']}")
            role = msg_by_id[mid]["role"]
            if role == "assistant":
                if f["speaker"] != "assistant":
                    err(f"fact {fid} from an assistant reply must have speaker assistant")
                if f["kind"] != "advice":
                    err(f"fact {fid} from an assistant reply should be advice")
            else:
                want = conv["client"] or conv["user"]
                if f["speaker"] != want:
                    err(f"fact {fid} speaker {f['speaker']} should be {want} (the client)")
                if f["kind"] == "advice":
                    err(f"fact {fid} advice must come from an assistant reply")
        src = source_text(mid, doc)
        if not f["must_contain"]:
            err(f"fact {fid} has empty must_contain")
        for t in f["must_contain"]:
            if t not in src:
                err(f"fact {fid} must_contain {t!r} not in its source")
            if t not in f["statement"]:
                err(f"fact {fid} must_contain {t!r} not in its own statement")
        for t in f["must_not_contain"]:
            if t in f["statement"]:
                err(f"fact {fid} statement contains its must_not_contain {t!r}")
            if any(t in m for m in f["must_contain"]):
                err(f"fact {fid} must_not_contain {t!r} overlaps must_contain")
        st = f["statement"]
        if "用户" in st or "我" in st or re.search(r"\b(alice|bob)\b", st):
            err(f"fact {fid} statement uses 用户/我/the lawyer's account: {st}")
        if re.search(r"\bI\b|\bI'm\b|\bmy\b", st):
            err(f"fact {fid} statement is in the first person: {st}")

    # ---------- corrections ----------
    corrs = exp["corrections"]
    ids = set()
    for c in corrs:
        cid = c["id"]
        if cid in ids:
            err(f"duplicate correction id {cid}")
        ids.add(cid)
        if c["form"] not in ALL_FORMS:
            err(f"correction {cid} unknown form {c['form']}")
        if c["conversation"] not in conv_by_id:
            err(f"correction {cid} unknown conversation")
            continue
        old = c["old_message_id"]
        if old not in msg_by_id:
            err(f"correction {cid} unknown old message {old}")
            continue
        for t in c["old_tokens"]:
            if t not in msg_by_id[old]["content"]:
                err(f"correction {cid} old token {t!r} not in {old}")
        if c["form"] == "document":
            d = c.get("correction_document")
            if d not in doc_by_id:
                err(f"correction {cid} (document) lacks an existing correction_document")
                continue
            new_src = doc_text[d]
            if doc_by_id[d]["conversation"] != c["conversation"]:
                err(f"correction {cid} conversation differs from its document's")
        else:
            new = c["correction_message_id"]
            if new not in msg_by_id:
                err(f"correction {cid} unknown correction message {new}")
                continue
            if msg_conv[new] != c["conversation"]:
                err(f"correction {cid} correction message not in its conversation")
            new_src = msg_by_id[new]["content"]
            if msg_by_id[new]["timestamp"] <= msg_by_id[old]["timestamp"]:
                err(f"correction {cid} correction is not later than the old message")
            later = msg_conv[old] != msg_conv[new]
            if later != (c["form"] == "later session"):
                err(f"correction {cid}: form 'later session' iff old and new are in different conversations")
        for t in c["new_tokens"]:
            if t not in new_src:
                err(f"correction {cid} new token {t!r} not in the correcting source")
        if c.get("cue") and c["cue"] not in new_src:
            err(f"correction {cid} cue {c['cue']!r} not in the correcting source")
        if msg_conv[old] != c["conversation"] and conv_by_id[msg_conv[old]]["user"] != conv_by_id[c["conversation"]]["user"]:
            err(f"correction {cid} old message belongs to another user")
        # the expected facts must mark the old value superseded and hold the new one as current
        if not any(f.get("message_id") == old and f["state"] == "superseded"
                   and any(t in m for t in c["old_tokens"] for m in f["must_contain"]) for f in facts):
            err(f"correction {cid}: no superseded fact at {old} carrying the old value")
        if c["form"] == "document":
            ok = any(f.get("document") == c["correction_document"] and f["state"] == "current"
                     and any(t in m for t in c["new_tokens"] for m in f["must_contain"]) for f in facts)
        else:
            ok = any(f.get("message_id") == c["correction_message_id"] and f["state"] == "current"
                     and any(t in m for t in c["new_tokens"] for m in f["must_contain"]) for f in facts)
        if not ok:
            err(f"correction {cid}: no current fact carrying the new value")

    # ---------- terms ----------
    terms = exp["terms"]
    ids = set()
    crossing = 0
    for t in terms:
        tid = t["id"]
        if tid in ids:
            err(f"duplicate term id {tid}")
        ids.add(tid)
        d = doc_by_id.get(t["document"])
        if d is None:
            err(f"term {tid} unknown document {t['document']}")
            continue
        full = doc_text[t["document"]]
        if squash(t["text"]) not in squash(full):
            err(f"term {tid} text is not a span of {t['document']}")
        if not squash(t["text"]).startswith(squash(t["article"])):
            err(f"term {tid} text does not start with its article label")
        # the page where the article starts, and whether it runs onto the next page
        lines = [(i + 1, l) for i, p in enumerate(d["pages"]) for l in p.split("\n")]
        starts = [k for k, (_, l) in enumerate(lines) if squash(l).startswith(squash(t["article"]))
                  and ART.match(l) and ART.match(l).group(1).rstrip(".") == t["article"].rstrip(".")]
        if len(starts) != 1:
            err(f"term {tid} article {t['article']} found {len(starts)} times")
            continue
        k = starts[0]
        if lines[k][0] != t["page"]:
            err(f"term {tid} page {t['page']} but article starts on page {lines[k][0]}")
        end = k + 1
        while end < len(lines) and lines[end][1].strip() and not ART.match(lines[end][1]):
            end += 1
        span = lines[k:end]
        if span[-1][0] != span[0][0]:
            crossing += 1
        span_text = "\n".join(l for _, l in span)
        if squash(span_text) != squash(t["text"]):
            err(f"term {tid} text is not the whole article")
        for tok in t["head_tokens"] + t["tail_tokens"]:
            if tok not in span_text and squash(tok) not in squash(span_text):
                err(f"term {tid} token {tok!r} not in the article")
        if t["negating_tail"]:
            if not t["tail_tokens"]:
                err(f"term {tid} negating tail without tail_tokens")
                continue
            def line_of(tok):
                for j, (_, l) in enumerate(span):
                    if tok in l:
                        return j
                return -1
            h = min(line_of(x) for x in t["head_tokens"])
            tl = line_of(t["tail_tokens"][0])
            if not (0 <= h < tl):
                err(f"term {tid} negating tail is not on a later line than the head")

    # ---------- never_notes ----------
    nevers = exp["never_notes"]
    ids = set()
    for n in nevers:
        if n["id"] in ids:
            err(f"duplicate never_note id {n['id']}")
        ids.add(n["id"])
        m = msg_by_id.get(n["message_id"])
        if m is None:
            err(f"never_note {n['id']} unknown message")
            continue
        if msg_conv[n["message_id"]] != n["conversation"]:
            err(f"never_note {n['id']} message not in its conversation")
        for tok in n["tokens"]:
            if tok not in m["content"]:
                err(f"never_note {n['id']} token {tok!r} not in message")
        if any(f.get("message_id") == n["message_id"] for f in facts):
            err(f"never_note {n['id']} message also has expected facts")

    # ---------- counts ----------
    n_msgs = len(msg_by_id)
    kinds = {}
    for f in facts:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    wpp = kinds.get("wish", 0) + kinds.get("plan", 0) + kinds.get("preference", 0)
    forms = {c["form"] for c in corrs}
    neg = sum(1 for t in terms if t["negating_tail"])
    relayed = sum(1 for c in convs if c["client"])
    counts = {
        "conversations": len(convs), "relayed_by_lawyer": relayed, "messages": n_msgs,
        "documents": len(docs), "facts": len(facts),
        "superseded_facts": sum(1 for f in facts if f["state"] == "superseded"),
        "kinds": dict(sorted(kinds.items())), "wish+plan+preference": wpp,
        "corrections": len(corrs), "correction_forms": sorted(forms),
        "terms": len(terms), "negating_tails": neg, "terms_across_pages": crossing,
        "never_notes": len(nevers),
    }
    counts["distinct_cues"] = len({c.get("cue", "") for c in corrs if c.get("cue")})
    profile = PROFILES.get(split)
    if profile == "inhouse":
        need = [
            (10 <= len(convs) <= 12, "10-12 conversations"),
            (50 <= n_msgs <= 70, "50-70 messages"),
            (0.5 <= relayed / len(convs) <= 0.7, "about 60% lawyer-relayed conversations"),
            (len(facts) >= 60, ">= 60 facts"),
            (len(corrs) >= 10, ">= 10 corrections"),
            (forms >= FORMS, f"every correction form (missing {sorted(FORMS - forms)})"),
            (wpp >= 8, ">= 8 wishes/plans/preferences"),
            (kinds.get("advice", 0) >= 10, ">= 10 advice facts"),
            (len(docs) == 3, "3 documents"),
            (len(terms) >= 15, ">= 15 terms"),
            (neg >= 5, ">= 5 negating tails"),
            (crossing >= 2, ">= 2 articles across a page break"),
            (len(nevers) >= 6, ">= 6 never_notes"),
        ]
    elif profile:
        measured = {
            "conversations": len(convs), "messages": n_msgs, "documents": len(docs),
            "relayed_share": relayed / len(convs), "facts": len(facts),
            "advice": kinds.get("advice", 0),
            "superseded_advice": sum(1 for f in facts if f["kind"] == "advice" and f["state"] == "superseded"),
            "corrections": len(corrs), "distinct_cues": counts["distinct_cues"],
            "wish+plan+preference": wpp, "never_notes": len(nevers),
        }
        need = [(test(measured[key]), what) for key, (test, what) in profile.items()]
    else:
        need = [(len(facts) >= 1, ">= 1 fact")]
    return counts, {m["content"] for m in msg_by_id.values()}, set(conv_by_id), set(doc_by_id)


def main():
    errors = []
    seen = {}
    splits = tuple(sys.argv[1:]) or SPLITS
    for split in splits:
        counts, contents, cids, dids = check_split(split, errors)
        seen[split] = (contents, cids, dids)
        print(f"== {split} ==")
        for k, v in counts.items():
            print(f"  {k}: {v}")
    names = sorted(seen)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            (c1, i1, d1), (c2, i2, d2) = seen[a], seen[b]
            shared = {c for c in c1 & c2 if len(c) > 12}
            if shared:
                errors.append(f"{a} and {b} share messages: {sorted(shared)[:3]}")
            if i1 & i2 or d1 & d2:
                errors.append(f"{a} and {b} share conversation or document ids")
    if errors:
        print(f"\n{len(errors)} violation(s):", file=sys.stderr)
        for e in errors:
            print("  - " + e, file=sys.stderr)
        sys.exit(1)
    print(f"\nOK: {len(names)} split(s) valid ({', '.join(names)})")


if __name__ == "__main__":
    main()
