"""The write helpers of the bulk import (docs/performance.md): a note's links in one statement,
and locks and checks remembered for one turn transaction."""
from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from memory.models import AuditEvent, AuditLog, LinkType, NoteLink
from memory.services.notes import NoteValidationError, PlannedLink, link_notes, link_notes_in_bulk
from memory.transaction_memo import first_time, in_memo_scope, memo_scope, remembered

pytestmark = pytest.mark.django_db


def test_links_in_bulk_are_one_insert_existing_and_repeated_edges_unchanged_new_ones_audited(world):
    a, b, c, d = (world.note(text, matter=world.matter_laptop) for text in (
        "笔记本电脑购买后两周出现花屏。", "用户保存了付款截图。", "商家拒绝退换。", "客服承诺七天内检测。"))
    link_notes(a, b, link_type=LinkType.SEMANTIC, weight=0.9, actor="system:test")
    audited_before = AuditLog.objects.filter(event_type=AuditEvent.LINK_CREATED).count()
    planned = [
        PlannedLink(a, b, LinkType.SEMANTIC, 0.1, "exists already"),
        PlannedLink(a, c, LinkType.SEMANTIC, 0.8, "new"),
        PlannedLink(a, c, LinkType.SEMANTIC, 0.2, "the same edge again"),
        PlannedLink(d, a, LinkType.TEMPORAL_NEXT, 1.0, "new, another type"),
    ]
    with CaptureQueriesContext(connection) as queries:
        created = link_notes_in_bulk(planned, actor="system:test")
    assert created == 2
    assert sum("INSERT INTO memory_notelink" in q["sql"] for q in queries.captured_queries) == 1
    edges = {(link.source_id, link.target_id, link.link_type): (link.weight, link.reason) for link in NoteLink.objects.all()}
    assert edges[(a.pk, b.pk, LinkType.SEMANTIC)] == (0.9, "")  # unchanged
    assert edges[(a.pk, c.pk, LinkType.SEMANTIC)] == (0.8, "new")  # the first weight wins, as one call after another
    assert edges[(d.pk, a.pk, LinkType.TEMPORAL_NEXT)] == (1.0, "new, another type")
    new_entries = AuditLog.objects.filter(event_type=AuditEvent.LINK_CREATED).order_by("id")[audited_before:]
    assert [(e.after["source"], e.after["target"], e.firm_id, e.matter_id) for e in new_entries] == [
        (str(a.pk), str(c.pk), world.firm_a.pk, world.matter_laptop.pk),
        (str(d.pk), str(a.pk), world.firm_a.pk, world.matter_laptop.pk),
    ]


def test_links_in_bulk_refuse_another_firms_note_and_write_nothing(world):
    mine = world.note("房东拒绝退还押金。", matter=world.matter_deposit)
    theirs = world.note("Beta 的案件事实。", firm=world.firm_b, matter=world.matter_b)  # charlie's firm
    other = world.note("押金为三千元。", matter=world.matter_deposit)
    with pytest.raises(NoteValidationError):
        link_notes_in_bulk([PlannedLink(mine, other, LinkType.SEMANTIC, 0.9),
                            PlannedLink(mine, theirs, LinkType.SEMANTIC, 0.9)], actor="system:test")
    assert not NoteLink.objects.exists()


def test_a_memo_scope_remembers_until_it_ends_and_forgets_what_a_rolled_back_savepoint_took(world):
    calls = []

    def membership() -> bool:
        calls.append(1)
        return True

    assert first_time("lock")
    assert first_time("lock")  # outside a scope: every caller runs its statement
    with transaction.atomic(), memo_scope():
        assert in_memo_scope()
        assert first_time("lock")
        assert not first_time("lock")
        assert remembered("member", membership)
        assert remembered("member", membership)
        assert len(calls) == 1
        try:
            with transaction.atomic():  # a savepoint
                assert first_time("inner lock")
                raise RuntimeError("rolled back")
        except RuntimeError:
            pass
        assert first_time("inner lock")  # its lock went with the savepoint: taken again
        assert not first_time("lock")  # taken outside it: still held
    assert not in_memo_scope()
    with transaction.atomic(), memo_scope():
        assert first_time("lock")  # another transaction
