"""Background refresh of stored navigation graphs (django-tasks; ``manage.py db_worker`` runs it,
``make run`` starts the worker). Enqueued after a committed note or assignment change."""
from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_tasks import task

from infra.logs.jobs import job_run
from infra.locks import lock_for_transaction
from navigation.freshness import refresh_firm

logger = logging.getLogger("legalmem.navigation")


@task()
def refresh_navigation_graphs_task(firm_id: int) -> dict:
    """Update the stored graphs of the firm's recently used pages (navigation.freshness)."""
    with job_run("navigation_refresh", firm_id=firm_id) as run:
        done = refresh_firm(firm_id)
        run.note(**{f"graphs_{kind}": count for kind, count in done.items()})
    return done


def schedule_refresh(firm_id: int) -> None:
    """Enqueue the firm's refresh, debounced: it runs ``settings.NAV_REFRESH_DELAY_SECONDS`` after the first
    change, and a change while one is still waiting adds nothing (that one will see it). Nothing
    is enqueued for a firm whose graph page nobody has opened. The firm's lock makes changes
    committed at once by several workers or servers check and enqueue one after the other."""
    from django_tasks_db.models import DBTaskResult
    from navigation.models import NavigationGraphSnapshot

    if not NavigationGraphSnapshot.objects.filter(firm_id=firm_id).exists():
        return
    waiting = DBTaskResult.objects.filter(
        task_path=refresh_navigation_graphs_task.module_path, status="READY", args_kwargs__args=[firm_id],
    )
    try:
        with transaction.atomic():
            lock_for_transaction("navigation.refresh", firm_id)
            if waiting.exists():
                return
            refresh_navigation_graphs_task.using(
                run_after=timezone.now() + timedelta(seconds=settings.NAV_REFRESH_DELAY_SECONDS)
            ).enqueue(firm_id)
    except Exception:  # the page still updates incrementally; only the head start is lost
        logger.exception("could not enqueue the navigation refresh of firm %s", firm_id)
