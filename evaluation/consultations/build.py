"""Build a part of the consultation set: ``part_*/source.json`` (the hand-written data) becomes
``world.json``, ``transcript-<firm>.json`` and ``questions.json`` beside it — ids, timestamps and
each question's gold speaker derived, every rule of the set checked first (nothing is written
when one fails). One builder for every part: what differs between parts (id prefix, the clients
who ask, the description) is data in the part's ``source.json``.

    python -m evaluation.consultations.build                # every part, in place
    python -m evaluation.consultations.build part_c         # one part
    python -m evaluation.consultations.build --check        # compare, write nothing
    python -m evaluation.consultations.build --out /tmp/x   # write /tmp/x/<part>/

``source.json``: ``prefix``, ``description``, ``asking_clients`` (the clients questions are
about: at least ten sessions and the per-category minimum each; any other user asks only
must-not-recall questions), ``firms`` (as world.json), ``sessions`` (``client``, ``n``,
``user``, ``matter`` or null, ``start`` "YYYY-MM-DD HH:MM" Beijing time, ``title``, ``turns``:
[user message, assistant reply] pairs) and ``questions`` (``category``, ``language``, ``user``,
``matter``?, ``context``?, ``question``, ``gold``: message ids, in the order ids are given).
Message ids: ``<prefix>-<client>-s<NN>-<MM>``, turn t holding messages 2t-1 (user) and 2t.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
CATEGORIES = ("advice", "single_hop", "multi_hop", "temporal", "preference", "quoted_english",
              "look_alike", "corrected", "history", "must_not_recall", "never_said")
# Each asking client has at least this many questions of each category.
PER_CLIENT_MIN = {"advice": 24, "single_hop": 8, "multi_hop": 5, "temporal": 5, "preference": 3,
                  "quoted_english": 4, "look_alike": 4, "corrected": 3, "history": 3,
                  "must_not_recall": 3, "never_said": 3}
MIN_QUESTIONS, MIN_ADVICE_SHARE, MIN_SESSIONS, MIN_DAYS_APART = 130, 0.36, 10, 5
FIRST_DAY, LAST_DAY = dt.date(2026, 1, 1), dt.date(2026, 9, 30)
OWN_WORDS = ("corrected", "history", "preference", "single_hop")  # gold: the client's own message
# A question shares no run this long with its gold (nor 60% of its own length); warn from NEAR_COPY_WARN.
NEAR_COPY_FAIL, NEAR_COPY_SHARE, NEAR_COPY_WARN = 14, 0.6, 10
TZ = dt.timezone(dt.timedelta(hours=8))
REPLY_DELAY = dt.timedelta(seconds=40)     # user -> assistant
NEXT_TURN_DELAY = dt.timedelta(minutes=3)  # assistant -> next user


class BuildError(Exception):
    """The part breaks a rule of the set; ``problems`` lists every one found."""

    def __init__(self, part: str, problems: list[str]) -> None:
        super().__init__(f"{part}: {len(problems)} problem(s): " + "; ".join(problems[:5]))
        self.problems = problems


@dataclass
class Message:
    """What the checks need to know of one transcript message."""
    role: str
    content: str
    user: str
    firm: str
    matter: str | None
    conversation: str


@dataclass
class Part:
    """One part while it is built: its source, what is derived from it, what is wrong with it."""
    source: dict[str, Any]
    firm_of: dict[str, str] = field(default_factory=dict)            # user -> firm slug
    matters: dict[str, tuple[str, set[str]]] = field(default_factory=dict)  # reference -> (firm, assigned)
    messages: dict[str, Message] = field(default_factory=dict)
    starts: dict[str, list[dt.datetime]] = field(default_factory=dict)  # user -> session starts
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def fail(self, problem: str) -> None:
        self.problems.append(problem)

    def can_see(self, user: str, message: Message) -> bool:
        """A user sees their own conversations and those of the matters they are assigned to."""
        assigned = self.matters.get(message.matter, ("", set()))[1] if message.matter is not None else set()
        return message.firm == self.firm_of.get(user) and (message.user == user or user in assigned)


def longest_common_run(a: str, b: str) -> int:
    """Length of the longest common substring of a and b (the near-copy check)."""
    best, previous = 0, [0] * (len(b) + 1)
    for char in a:
        current = [0] * (len(b) + 1)
        for j, other in enumerate(b, 1):
            if char == other:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def build_world(part: Part) -> dict[str, Any]:
    """world.json: the firms, their users and matters (each assigned user in the matter's firm)."""
    for firm in part.source["firms"]:
        for user in firm["users"]:
            if user in part.firm_of:
                part.fail(f"user {user} in two firms")
            part.firm_of[user] = firm["slug"]
        for matter in firm["matters"]:
            if matter["reference"] in part.matters:
                part.fail(f"duplicate matter reference {matter['reference']}")
            part.matters[matter["reference"]] = (firm["slug"], set(matter["assigned"]))
            for user in matter["assigned"]:
                if user not in firm["users"]:
                    part.fail(f"matter {matter['reference']} assigns {user} who is not in firm {firm['slug']}")
    return {"firms": [{"slug": f["slug"], "name": f["name"], "users": list(f["users"]),
                       "matters": [{"reference": m["reference"], "title": m["title"], "assigned": list(m["assigned"])}
                                   for m in f["matters"]]} for f in part.source["firms"]]}


def build_conversation(part: Part, session: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """One session as an import_conversation conversation (and its firm), its messages recorded."""
    prefix, client, number, user = part.source["prefix"], session["client"], session["n"], session["user"]
    name = f"session {client}-{number}"
    firm, matter = part.firm_of.get(user), session["matter"]
    if firm is None:
        part.fail(f"{name}: unknown user {user}")
        return None
    if matter is not None:
        if matter not in part.matters:
            part.fail(f"{name}: unknown matter {matter}")
        elif part.matters[matter][0] != firm or user not in part.matters[matter][1]:
            part.fail(f"{name}: user {user} not assigned to matter {matter}")
    conversation_id = "%s-%s-s%02d" % (prefix, client, number)
    start = dt.datetime.strptime(session["start"], "%Y-%m-%d %H:%M").replace(tzinfo=TZ)
    part.starts.setdefault(user, []).append(start)
    moment, messages = start, []
    for turn, (user_text, reply) in enumerate(session["turns"], 1):
        for role, text, index in (("user", user_text, 2 * turn - 1), ("assistant", reply, 2 * turn)):
            message_id = "%s-%s-s%02d-%02d" % (prefix, client, number, index)
            if message_id in part.messages:
                part.fail(f"duplicate message id {message_id}")
            if not text.strip():
                part.fail(f"empty message {message_id}")
            messages.append({"id": message_id, "role": role, "speaker": user if role == "user" else "assistant",
                             "timestamp": moment.isoformat(), "content": text})
            part.messages[message_id] = Message(role, text, user, firm, matter, conversation_id)
            moment += REPLY_DELAY if role == "user" else NEXT_TURN_DELAY
    conversation: dict[str, Any] = {"id": conversation_id, "user": user}
    if matter is not None:
        conversation["matter"] = matter
    conversation["title"] = session["title"]
    conversation["messages"] = messages
    return firm, conversation


def build_transcripts(part: Part) -> dict[str, dict[str, Any]]:
    """transcript-<firm>.json for every firm (in world order); the sessions' dates checked."""
    by_firm: dict[str, list[dict[str, Any]]] = {firm["slug"]: [] for firm in part.source["firms"]}
    seen: set[str] = set()
    for session in part.source["sessions"]:
        built = build_conversation(part, session)
        if built is not None:
            firm, conversation = built
            if conversation["id"] in seen:
                part.fail(f"duplicate conversation id {conversation['id']}")
            seen.add(conversation["id"])
            by_firm[firm].append(conversation)
    for user, starts in part.starts.items():
        starts.sort()
        for earlier, later in zip(starts, starts[1:]):
            if later - earlier < dt.timedelta(days=MIN_DAYS_APART):
                part.fail(f"user {user}: sessions {earlier} and {later} are < {MIN_DAYS_APART} days apart")
        for start in starts:
            if not FIRST_DAY <= start.date() <= LAST_DAY:
                part.fail(f"user {user}: session date {start.date()} outside {FIRST_DAY}..{LAST_DAY}")
    for user in part.source["asking_clients"]:
        if len(part.starts.get(user, [])) < MIN_SESSIONS:
            part.fail(f"client {user} has only {len(part.starts.get(user, []))} sessions (< {MIN_SESSIONS})")
    return {f"transcript-{slug}.json": {"firm": slug, "conversations": conversations}
            for slug, conversations in by_firm.items()}


def gold_speaker(part: Part, gold: list[str]) -> str:
    """Who said the gold: none, user, assistant or both."""
    roles = {part.messages[g].role for g in gold if g in part.messages}
    if not gold:
        return "none"
    return "both" if len(roles) > 1 else ("user" if roles == {"user"} else "assistant")


def check_gold(part: Part, qid: str, question: dict[str, Any], gold: list[str]) -> None:
    """The gold fits the category, and the asker may (or, for must-not-recall, may not) see it."""
    category, asker = question["category"], question["user"]
    found = [part.messages[g] for g in gold if g in part.messages]
    if category == "never_said":
        if gold:
            part.fail(f"{qid}: never_said must have empty gold")
    elif not gold:
        part.fail(f"{qid}: {category} needs gold")
    if category == "multi_hop":
        if not 2 <= len(gold) <= 3:
            part.fail(f"{qid}: multi_hop needs 2-3 gold ids")
        if len({m.conversation for m in found}) < 2:
            part.fail(f"{qid}: multi_hop gold must come from different sessions")
    elif category != "never_said" and len(gold) != 1:
        part.fail(f"{qid}: {category} should have exactly one gold id")
    if category == "advice" and any(m.role != "assistant" for m in found):
        part.fail(f"{qid}: advice gold must be assistant messages")
    if category in OWN_WORDS and any(m.role != "user" for m in found):
        part.fail(f"{qid}: {category} gold should be the client's own message")
    if category == "quoted_english" and not any(
            sum(ch.isascii() and ch.isalpha() for ch in m.content) >= 60 for m in found):
        part.fail(f"{qid}: quoted_english gold contains no quoted English text")
    for g, message in zip([g for g in gold if g in part.messages], found):
        if category == "must_not_recall":
            if part.can_see(asker, message):
                part.fail(f"{qid}: must_not_recall asker {asker} can see gold {g}")
        elif message.user != asker or not part.can_see(asker, message):
            part.fail(f"{qid}: gold {g} is not a conversation of asker {asker}")


def check_wording(part: Part, qid: str, question: dict[str, Any], gold: list[str]) -> None:
    """The question and its context are written anew, not copied from the transcripts."""
    text, contents = question["question"], [m.content for m in part.messages.values()]
    if any(text in content for content in contents):
        part.fail(f"{qid}: question is a substring of a transcript message")
    for g in gold:
        if g in part.messages:
            run = longest_common_run(text, part.messages[g].content)
            if run >= NEAR_COPY_FAIL or (text and run >= NEAR_COPY_SHARE * len(text)):
                part.fail(f"{qid}: question near-copies gold {g} (common run of {run} chars)")
            elif run >= NEAR_COPY_WARN:
                part.warnings.append(f"{qid}: common run of {run} chars with gold {g}")
    context = question.get("context")
    if context is not None:
        if len(context) not in (2, 4):  # user, assistant…: the question follows an assistant line
            part.fail(f"{qid}: context must have 2 or 4 lines")
        for line in context:
            if not line.strip() or any(line in content for content in contents):
                part.fail(f"{qid}: context line empty or copied from a transcript: {line}")


def build_questions(part: Part) -> list[dict[str, Any]]:
    """questions.json's questions: ids in list order, gold speaker derived, every rule checked."""
    built, asking = [], set(part.source["asking_clients"])
    for number, question in enumerate(part.source["questions"], 1):
        qid = "%s-q%03d" % (part.source["prefix"], number)
        category, asker, gold = question["category"], question["user"], list(question["gold"])
        if category not in CATEGORIES:
            part.fail(f"{qid}: bad category {category}")
        if question["language"] not in ("zh", "en"):
            part.fail(f"{qid}: bad language {question['language']}")
        if asker not in part.firm_of:
            part.fail(f"{qid}: unknown user {asker}")
            continue
        if asker not in asking and category != "must_not_recall":
            part.fail(f"{qid}: {asker} is no asking client and asks a {category} question")
        if len(set(gold)) != len(gold):
            part.fail(f"{qid}: duplicate gold ids")
        part.problems.extend(f"{qid}: gold id {g} does not exist" for g in gold if g not in part.messages)
        check_gold(part, qid, question, gold)
        check_wording(part, qid, question, gold)
        record = {"id": qid, "category": category, "language": question["language"], "user": asker,
                  "question": question["question"]}
        if question.get("context") is not None:
            record["context"] = list(question["context"])
        record["gold"] = gold
        record["gold_speaker"] = gold_speaker(part, gold)
        matter = question.get("matter")
        if matter is not None:
            if category in ("must_not_recall", "never_said"):
                part.fail(f"{qid}: matter hint not allowed for {category}")
            if matter not in part.matters or asker not in part.matters[matter][1]:
                part.fail(f"{qid}: asker {asker} not assigned to matter hint {matter}")
            if any(part.messages[g].matter not in (matter, None) for g in gold if g in part.messages):
                part.fail(f"{qid}: matter hint {matter} but a gold message is in another matter")
            record["matter"] = matter
        built.append(record)
    twice = [key for key, count in Counter((q["user"], q["question"]) for q in built).items() if count > 1]
    part.problems.extend(f"duplicate question {key!r}" for key in twice)
    return built


def check_totals(part: Part, questions: list[dict[str, Any]]) -> None:
    """The part's size, its share of advice questions and each asking client's quota."""
    total, by_category = len(questions), Counter(q["category"] for q in questions)
    by_client = Counter((q["user"], q["category"]) for q in questions)
    if total < MIN_QUESTIONS:
        part.fail(f"only {total} questions (< {MIN_QUESTIONS})")
    if total and by_category["advice"] < MIN_ADVICE_SHARE * total:
        part.fail("advice share %.1f%% < %d%%" % (100.0 * by_category["advice"] / total, 100 * MIN_ADVICE_SHARE))
    for client in part.source["asking_clients"]:
        for category, least in PER_CLIENT_MIN.items():
            if by_client[(client, category)] < least:
                part.fail(f"client {client}: {category} has {by_client[(client, category)]} questions (< {least})")


def report(part: Part, questions: list[dict[str, Any]]) -> list[str]:
    """What the part holds, to read after a build."""
    total, by_category = len(questions), Counter(q["category"] for q in questions)
    by_language = Counter(q["language"] for q in questions)
    lines = [f"messages: {len(part.messages)} in {sum(len(s) for s in part.starts.values())} conversations",
             f"sessions per user: {dict(sorted((u, len(s)) for u, s in part.starts.items()))}",
             f"questions: {total}  (with context: {sum('context' in q for q in questions)}, "
             f"matter-hinted: {sum('matter' in q for q in questions)})", "per category:"]
    lines += ["  %-16s %3d  (%.1f%%)" % (c, by_category[c], 100.0 * by_category[c] / total) for c in CATEGORIES]
    lines.append("per language: %s (en %.1f%%)" % (dict(sorted(by_language.items())),
                                                  100.0 * by_language["en"] / total))
    lines.append(f"gold speaker: {dict(sorted(Counter(q['gold_speaker'] for q in questions).items()))}")
    return lines + [f"warning: {w}" for w in part.warnings]


def build_part(folder: Path) -> tuple[dict[str, str], list[str]]:
    """The files a part's ``source.json`` makes (name -> text) and the report; BuildError on a broken rule."""
    source_path = folder / "source.json"
    if not source_path.is_file():
        raise FileNotFoundError(f"{source_path}: the part's data is missing")
    part = Part(json.loads(source_path.read_text(encoding="utf-8")))
    files: dict[str, Any] = {"world.json": build_world(part)}
    files.update(build_transcripts(part))
    questions = build_questions(part)
    check_totals(part, questions)
    if part.problems:
        raise BuildError(folder.name, part.problems)
    files["questions.json"] = {"description": part.source["description"], "questions": questions}
    texts = {name: json.dumps(payload, ensure_ascii=False, indent=1) + "\n" for name, payload in files.items()}
    return texts, report(part, questions)


def parts() -> list[str]:
    """Every part of the set: the folders holding a ``source.json``."""
    return sorted(path.parent.name for path in HERE.glob("part_*/source.json"))


def main(argv: list[str] | None = None) -> int:
    """Build the named parts (default: all): write them, or with --check compare them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"a part ({', '.join(parts())}); default: all")
    parser.add_argument("--out", type=Path, help="write into OUT/<part>/ instead of the part's folder")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 unless the committed files match")
    options = parser.parse_args(argv)
    unknown = sorted(set(options.parts) - set(parts()))
    if unknown:
        parser.error(f"no part {', '.join(unknown)} (parts: {', '.join(parts())})")
    differ = False
    for name in options.parts or parts():
        try:
            texts, lines = build_part(HERE / name)
        except BuildError as error:
            print(f"{name}: validation FAILED; nothing written", *error.problems, sep="\n  ", file=sys.stderr)
            return 1
        target = (options.out / name) if options.out else HERE / name
        print(f"== {name}", *lines, sep="\n")
        for file_name, text in texts.items():
            path = target / file_name
            if options.check:
                same = path.is_file() and path.read_text(encoding="utf-8") == text
                differ |= not same
                print(f"{'same' if same else 'DIFFERS'}: {path}")
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                print(f"wrote {path}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
