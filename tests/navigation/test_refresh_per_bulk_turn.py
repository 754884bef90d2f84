"""A bulk import's turn transaction changes many notes of a firm and asks for the firm's graph
refresh once, not once per note (navigation/signals.py); elsewhere every change asks."""
from __future__ import annotations

from functools import partial

import pytest
from django.db import connection, transaction

from memory.models import Category, MemoryScope, SourceType
from memory.services.notes import NoteDraft, create_note
from memory.transaction_memo import memo_scope
from navigation.tasks import schedule_refresh
from tests.factories import FirmFactory

pytestmark = pytest.mark.django_db


def _refreshes(firm_id: int) -> int:
    """Refreshes of this firm waiting for the commit (the test's own transaction never commits)."""
    return sum(isinstance(func, partial) and func.func is schedule_refresh and func.args == (firm_id,)
               for _, func, _ in connection.run_on_commit)


def _laws(firm, *texts: str) -> None:
    for text in texts:  # as routing writes them: inside the caller's transaction, no savepoint
        create_note(NoteDraft(firm=firm, content=text, memory_scope=MemoryScope.GENERAL_LAW, category=Category.LAW,
                              source_type=SourceType.MANUAL),
                    actor="system:test", savepoint=False)


TEXTS = ("押金返还纠纷可以申请小额诉讼。", "诉讼时效为三年。", "定金不得超过主合同标的额的百分之二十。")


def test_a_turn_transaction_asks_for_one_refresh_per_firm(world):
    first, second = FirmFactory(slug="first"), FirmFactory(slug="second")
    with transaction.atomic(), memo_scope():
        _laws(first, *TEXTS)
        _laws(second, TEXTS[0])
    assert _refreshes(first.pk) == 1
    assert _refreshes(second.pk) == 1


def test_outside_a_turn_transaction_every_change_asks(world):
    firm = FirmFactory(slug="plain")
    with transaction.atomic():
        _laws(firm, *TEXTS)
    assert _refreshes(firm.pk) == len(TEXTS)
