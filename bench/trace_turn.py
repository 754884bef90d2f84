"""How far one offline turn travels through the code: modules entered and returns to a module
already left, counted with ``sys.setprofile`` over ``remember.turns.process_turn`` (issue 53).

Run (on a migrated database: it adds a firm of its own)::

    .venv/bin/python -m legalmem_site.launcher \
        manage shell -c 'import runpy; runpy.run_path("bench/trace_turn.py", run_name="__main__")'

A warm-up turn runs first (the embedding model, jieba, the act model load outside the count);
the traced turn is a Chinese relayed consultation with an amount, a date and a correction.
Counted per product file (``remember/turns.py``) and per app (``remember``): an *entry* is control
passing into a file (an app) from another one by a call; a *re-entry* is a call entering a file
(an app) that is still on the stack below the caller — control leaving a room and coming back
into it through another room (``a → b → a``), which a feature kept in one room never does.
Only the product's packages count (``tests/site/product_packages.py``); libraries are transparent.
"""
from __future__ import annotations

import sys
import uuid
from collections import Counter
from pathlib import Path

from django.contrib.auth import get_user_model

from memory.models import Membership, Message, Role
from memory.services.conversations import save_message, start_conversation
from memory.services.tenancy import assign_user, create_firm, create_matter
from remember.services.turn_jobs import do_create_turn
from remember.turns import process_turn
from tests.site.product_packages import ROOT, product_packages

PRODUCT = product_packages()
WARM_UP = ("当事人林晓雯说她2025年3月租了房，月租4500元。", "建议保留租赁合同和转账记录。")
TRACED = ("当事人王磊说2025年4月1日他把押金5000元转给了房东，刚才说错了，押金是6000不是5000。房东现在不肯退。",
          "根据《民法典》第七百二十二条，承租人应按约定支付租金；押金应在租期届满后返还。建议先发一份书面催告函。")


def product_file(filename: str) -> str | None:
    try:
        relative = Path(filename).resolve().relative_to(ROOT)
    except ValueError:
        return None
    return relative.as_posix() if relative.parts[0] in PRODUCT else None


def turn_of(firm, user, matter, texts: tuple[str, str]) -> int:
    conversation = start_conversation(firm=firm, user=user, matter=matter, title="trace")
    question = save_message(conversation, Message.Role.USER, texts[0], speaker=user.username)
    answer = save_message(conversation, Message.Role.ASSISTANT, texts[1], speaker="assistant")
    turn, _ = do_create_turn(question, answer, source_type="chat")
    return turn.pk


def app_of(file: str) -> str:
    return file.split("/", 1)[0]


class Trace:
    """Entries and re-entries per file and per app, from profile events."""

    def __init__(self) -> None:
        self.entries: Counter = Counter()
        self.reentries: Counter = Counter()
        self.app_entries: Counter = Counter()
        self.app_reentries: Counter = Counter()
        self.stack: list[str | None] = []

    def profile(self, frame, event, arg) -> None:
        if event == "call":
            here = product_file(frame.f_code.co_filename)
            below = [f for f in self.stack if f is not None]
            self.stack.append(here)
            if here is None or (below and below[-1] == here):
                return
            self.entries[here] += 1
            if here in below:
                self.reentries[here] += 1
            if below and app_of(below[-1]) == app_of(here):
                return
            self.app_entries[app_of(here)] += 1
            if app_of(here) in {app_of(f) for f in below}:
                self.app_reentries[app_of(here)] += 1
        elif event == "return" and self.stack:
            self.stack.pop()


def trace(turn_id: int) -> Trace:
    traced = Trace()
    sys.setprofile(traced.profile)
    try:
        process_turn(turn_id)
    finally:
        sys.setprofile(None)
    return traced


def main() -> None:
    suffix = uuid.uuid4().hex[:8]
    firm = create_firm(name=f"Trace {suffix}", slug=f"trace-{suffix}", actor="system:bench")
    user = get_user_model().objects.create(username=f"trace-{suffix}")
    Membership.objects.create(firm=firm, user=user, role=Role.LAWYER)
    matter = create_matter(firm=firm, title="押金纠纷", reference=f"T-{suffix}", actor="system:bench")
    assign_user(matter=matter, user=user, actor="system:bench")
    process_turn(turn_of(firm, user, matter, WARM_UP))
    traced = trace(turn_of(firm, user, matter, TRACED))
    print(f"one offline turn: {len(traced.entries)} product files entered {sum(traced.entries.values())} times, "
          f"re-entered {sum(traced.reentries.values())} times from below; {len(traced.app_entries)} apps entered "
          f"{sum(traced.app_entries.values())} times, re-entered {sum(traced.app_reentries.values())} times")
    print("  apps: " + ", ".join(f"{app} {count}/{traced.app_reentries[app]}"
                                 for app, count in traced.app_entries.most_common()))
    for name, count in traced.reentries.most_common(10):
        print(f"  {count:4d} re-entries  {name}")


if __name__ == "__main__":
    main()
