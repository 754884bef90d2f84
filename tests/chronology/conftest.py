"""The chronology tests' matters: the deposit said as 2000 and corrected to 3000, a lease with
its dates, and a lease document uploaded to the deposit matter (files kept in a store of the
test's own)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.services.notes import supersede_note
from tests.documents.conftest import add_document
from tests.documents.files import docx_bytes

LEASE_TERMS = ["租客张三于2026年3月1日签订租赁合同，月租金为8000元，押金为16000元。",
               "租赁期限为一年，自2026年3月1日起至2027年2月28日止。"]


@pytest.fixture
def deposit(world):
    """The deposit said as 2000 ten days ago, corrected to 3000 by alice two days ago; the lease
    signed "去年3月15日" (said on 2026-03-01) and ending 2027-03-14."""
    now = timezone.now()
    lease = world.note("林晓雯的租赁合同是去年3月15日签的，2027年3月14日到期。", matter=world.matter_deposit,
                       speaker="林晓雯", said_at=timezone.make_aware(timezone.datetime(2026, 3, 1, 10, 0)))
    old = world.note("林晓雯交的押金是2000元。", matter=world.matter_deposit, speaker="林晓雯",
                     said_at=now - timedelta(days=10))
    new = world.note("林晓雯交的押金是3000元。", matter=world.matter_deposit, speaker="林晓雯",
                     said_at=now - timedelta(days=2))
    supersede_note(old, new, actor=world.alice, reason="刚才说错了，押金是3000不是2000")
    old.refresh_from_db()
    return lease, old, new


@pytest.fixture
def lease_document(world, settings, tmp_path):
    """《房屋租赁合同》 uploaded by alice to the deposit matter and read by the worker's job: its
    terms become case notes citing page 1."""
    settings.DOCUMENT_STORE_DIR = tmp_path / "documents"
    return add_document(world.matter_deposit, "房屋租赁合同.docx", docx_bytes("房屋租赁合同", LEASE_TERMS),
                        actor=world.alice)
