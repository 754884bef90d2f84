"""How long a matter's chronology takes at FACTS notes (issue 54: "large matters stay fast"):
the page's read (``matter_chronology``), "as of" a date halfway, and the Markdown and CSV exports,
each the median and p95 of RUNS runs. A tenth of the notes are superseded (struck through with
their replacement) and every note states a date in its words, as the reader places it.

    LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage migrate -v 0
    BENCH_FACTS=5000 LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage shell -c "from bench.bench_chronology import main; main()"

The notes are written with ``bulk_create`` (no embeddings: the chronology reads none) in a firm
of their own, removed at the end.
"""
from __future__ import annotations

import os
import statistics
import time
import uuid
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from chronology.exports import to_csv, to_markdown
from chronology.selectors import matter_chronology
from memory.models import Firm, Matter, MatterAssignment, Membership, MemoryScope, Note, Role, SourceType

FACTS = int(os.environ.get("BENCH_FACTS", "5000"))
RUNS = int(os.environ.get("BENCH_RUNS", "7"))


def _timed(fn) -> tuple[float, float]:
    seconds = []
    for _ in range(RUNS):
        started = time.perf_counter()
        fn()
        seconds.append((time.perf_counter() - started) * 1000)
    seconds.sort()
    return statistics.median(seconds), seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))]


def main() -> None:
    tag = uuid.uuid4().hex[:8]
    user = get_user_model().objects.create_user(f"bench-chrono-{tag}", password=uuid.uuid4().hex)
    firm = Firm.objects.create(name=f"bench chronology {tag}", slug=f"bench-chrono-{tag}")
    Membership.objects.create(user=user, firm=firm, role=Role.LAWYER)
    matter = Matter.objects.create(firm=firm, title="bench", reference=f"B-{tag}")
    MatterAssignment.objects.create(matter=matter, user=user)
    start = timezone.now() - timedelta(days=FACTS // 10 + 30)
    try:
        with transaction.atomic():
            notes = []
            for i in range(FACTS):
                said = start + timedelta(hours=2 * i)
                day = said - timedelta(days=i % 90)
                notes.append(Note(
                    firm=firm, matter=matter, owner=user, memory_scope=MemoryScope.CASE, category="fact",
                    content=f"第{i}项：{day.year}年{day.month}月{day.day}日当事人转账{1000 + i}元给房东。",
                    source_type=SourceType.MANUAL, speaker="当事人", said_at=said, valid_from=said,
                    content_hash=uuid.uuid4().hex))
            Note.objects.bulk_create(notes, batch_size=1000)
            for old, new in zip(notes[0:FACTS // 5:2], notes[1:FACTS // 5:2]):
                old.status, old.superseded_by, old.valid_to = Note.Status.SUPERSEDED, new, new.said_at
                old.evolution_history = [{"at": new.said_at.isoformat(), "event": "superseded", "by": "bench",
                                          "changes": {}}]
            for old in notes[0:FACTS // 5:2]:
                old.retired_at = old.valid_to
            Note.objects.bulk_update(notes[0:FACTS // 5:2], ["status", "superseded_by", "valid_to", "retired_at",
                                                               "evolution_history"], batch_size=1000)
            # stored when said, so "as of halfway" reads half of them (auto_now_add set them to now)
            Note.objects.filter(firm=firm).update(stored_at=F("said_at"))
        halfway = start + timedelta(hours=FACTS)
        page_ms = _timed(lambda: matter_chronology(user, matter.pk))
        as_of_ms = _timed(lambda: matter_chronology(user, matter.pk, as_of=halfway))
        chronology = matter_chronology(user, matter.pk)
        md_ms = _timed(lambda: to_markdown(chronology))
        csv_ms = _timed(lambda: to_csv(chronology))
        print(f"chronology of {FACTS} notes ({len(chronology.entries)} entries, "
              f"{chronology.dated_by_words} dated by their words), {RUNS} runs, median / p95 ms:")
        print(f"  page read        {page_ms[0]:8.1f} / {page_ms[1]:8.1f}")
        print(f"  as of halfway    {as_of_ms[0]:8.1f} / {as_of_ms[1]:8.1f}")
        print(f"  Markdown export  {md_ms[0]:8.1f} / {md_ms[1]:8.1f}")
        print(f"  CSV export       {csv_ms[0]:8.1f} / {csv_ms[1]:8.1f}")
    finally:
        Note.objects.filter(firm=firm).update(superseded_by=None)
        Note.objects.filter(firm=firm).delete()
        MatterAssignment.objects.filter(matter=matter).delete()
        matter.delete()
        Membership.objects.filter(firm=firm).delete()
        firm.delete()
        user.delete()
