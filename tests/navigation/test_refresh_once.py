"""A transaction that changes many notes of a firm (a bulk import's turn) asks for the firm's
graph refresh once, not once per note (navigation/signals.py)."""
from __future__ import annotations

from functools import partial

import pytest
from django.db import transaction

from navigation.tasks import schedule_refresh

pytestmark = pytest.mark.django_db


def _refreshes(callbacks, firm_id: int) -> int:
    return sum(isinstance(c, partial) and c.func is schedule_refresh and c.args == (firm_id,) for c in callbacks)


def test_many_notes_in_one_transaction_ask_for_one_refresh_per_firm(world, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        with transaction.atomic():
            for text in ("押金是三千元。", "租期到六月底。", "房东拒绝退还押金。"):
                world.note(text)
            world.note("Beta 的案件事实。", firm=world.firm_b)  # charlie's firm: its own refresh
    assert _refreshes(callbacks, world.firm_a.pk) == 1
    assert _refreshes(callbacks, world.firm_b.pk) == 1


def test_a_refresh_asked_for_in_a_rolled_back_savepoint_is_asked_for_again(world, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        with transaction.atomic():
            try:
                with transaction.atomic():
                    world.note("押金是三千元。")
                    raise RuntimeError("rolled back")
            except RuntimeError:
                pass
            world.note("租期到六月底。")
    assert _refreshes(callbacks, world.firm_a.pk) == 1
