"""Changes committed at the same moment by several processes enqueue one navigation refresh, not
one each (navigation.tasks.schedule_refresh holds the firm's lock while it checks and enqueues).
With two servers and two workers: tests/site/test_scale_out.py."""
from __future__ import annotations

import pytest
from django_tasks_db.models import DBTaskResult

from navigation.tasks import refresh_navigation_graphs_task, schedule_refresh
from tests.clients import client_for
from tests.concurrency import all_at_once

pytestmark = pytest.mark.django_db(transaction=True)


def test_simultaneous_changes_enqueue_one_refresh_for_the_firm(world):
    world.note("笔记本电脑购买七天后屏幕出现花屏，商家拒绝退货", matter=world.matter_laptop)
    assert client_for(world.alice).get("/api/navigation/graph").status_code == 200  # a stored graph to keep fresh
    assert client_for(world.charlie).get("/api/navigation/graph").status_code == 200
    DBTaskResult.objects.all().delete()

    outcomes = all_at_once(lambda: schedule_refresh(world.firm_a.pk), times=8)
    assert outcomes == [None] * 8
    refreshes = DBTaskResult.objects.filter(task_path=refresh_navigation_graphs_task.module_path)
    assert [row.args_kwargs["args"] for row in refreshes] == [[world.firm_a.pk]]
    schedule_refresh(world.firm_b.pk)  # charlie's firm has its own refresh
    assert refreshes.filter(args_kwargs__args=[world.firm_b.pk]).count() == 1
