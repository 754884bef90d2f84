"""``instance_from_row`` (recall/instances.py) gives the instance ``Model.from_db`` gives:
the same read fields, the same deferred ones (read from the database when touched), a loaded
state, and it saves like one."""
from __future__ import annotations

import pytest

from memory.models import Message, Note
from recall.candidate_sql import _light_columns
from django.db import connection

from recall.instances import fast_timestamps, instance_from_row
from recall.messages import MESSAGE_FIELDS

pytestmark = pytest.mark.django_db


def _row(model, names):
    return list(model.objects.order_by("pk").values_list(*names)[0])


@pytest.mark.parametrize("model", [Note, Message])
def test_the_instance_of_a_row_is_the_one_from_db_builds(world, memory, laptop_conversation, model):
    names = _light_columns()[0] if model is Note else list(MESSAGE_FIELDS)
    row = _row(model, names)
    built = model.from_db("default", names, row)
    light = instance_from_row(model, "default", names, row)
    assert type(light) is model
    assert light.pk == built.pk
    assert light == built
    assert {n: getattr(light, n) for n in names} == {n: getattr(built, n) for n in names}
    assert light.get_deferred_fields() == built.get_deferred_fields() != set()
    assert light._state.adding is False
    assert light._state.db == "default"
    deferred = sorted(built.get_deferred_fields())[0]
    stored = model.objects.filter(pk=built.pk).values_list(deferred, flat=True)[0]
    assert getattr(light, deferred) == stored  # read on first touch, like .only()


def test_an_instance_of_a_row_saves_its_change(world, memory):
    note = memory["laptop_screen"]
    names = _light_columns()[0]
    light = instance_from_row(Note, "default", names, Note.objects.filter(pk=note.pk).values_list(*names)[0])
    light.importance = 0.25
    light.save(update_fields=["importance"])
    note.refresh_from_db()
    assert note.importance == 0.25
    assert note.content == light.content


def test_timestamps_read_by_the_c_loader_are_those_django_reads(world, memory, laptop_conversation):
    sql = "SELECT said_at, stored_at, valid_from FROM memory_note ORDER BY id"
    with connection.cursor() as cursor:
        cursor.execute(sql)
        django_rows = cursor.fetchall()
        fast_timestamps(cursor)
        cursor.execute(sql)
        fast_rows = cursor.fetchall()
    assert fast_rows == django_rows
    assert fast_rows
    assert all(value.tzinfo is not None and value.utcoffset().total_seconds() == 0
               for row in fast_rows for value in row if value is not None)
    assert type(fast_rows[0][1].tzinfo) is type(django_rows[0][1].tzinfo)  # stored_at: always set
    with connection.cursor() as cursor:  # the next cursor has Django's loader again
        assert "Specific" in cursor.cursor.adapters.get_loader(1184, 0).__name__
