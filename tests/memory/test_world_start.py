"""World time from a note's own words (issue 54): "自2026年4月1日起月租金4800元", said on 25 March,
began to hold on 1 April — so the 4500 it replaces held until then, and "valid at" 28 March reads
4500; a note whose words give no start held from when it was said."""
from __future__ import annotations

from datetime import datetime

import pytest
from django.utils import timezone

from memory.models import Note
from memory.services.notes import supersede_note

pytestmark = pytest.mark.django_db


def _at(month: int, day: int) -> datetime:
    return timezone.make_aware(datetime(2026, month, day, 10, 0))


def test_a_raise_from_a_later_day_closes_the_old_value_on_that_day(world):
    old = world.note("孙雅琴的月租金是4500元。", matter=world.matter_deposit, said_at=_at(1, 12))
    new = world.note("补充协议约定自2026年4月1日起月租金调整为4800元。", matter=world.matter_deposit, said_at=_at(3, 25))
    assert old.valid_from == _at(1, 12)
    assert timezone.localtime(new.valid_from).date().isoformat() == "2026-04-01"
    supersede_note(old, new, actor=world.alice, reason="涨租")
    old = Note.objects.get(pk=old.pk)
    assert old.valid_to == new.valid_from
    notes = Note.objects.filter(matter=world.matter_deposit)
    assert list(notes.valid_at(_at(3, 28)).values_list("pk", flat=True)) == [old.pk]
    assert list(notes.valid_at(_at(4, 2)).values_list("pk", flat=True)) == [new.pk]


def test_a_correction_with_no_day_in_its_words_closes_the_old_value_when_said(world):
    old = world.note("押金是2000元。", matter=world.matter_deposit, said_at=_at(1, 12))
    new = world.note("更正一下，押金是3000元。", matter=world.matter_deposit, said_at=_at(1, 20))
    supersede_note(old, new, actor=world.alice, reason="更正")
    assert new.valid_from == _at(1, 20) and Note.objects.get(pk=old.pk).valid_to == _at(1, 20)
