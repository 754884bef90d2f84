"""Figures the database holds for every process, read at scrape time (docs/operations.md,
"Metrics"): turn jobs by status and the age of the oldest waiting one, notes written by routing
action. Registered with ``infra.metrics`` from ``MemoryConfig.ready``."""
from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count, Min, Q
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from memory.models import RoutingDecision, TurnExtraction


class DatabaseCollector(Collector):
    """Figures the database holds for every process: turn jobs and routing decisions."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        jobs = GaugeMetricFamily("legalmem_extraction_jobs", "Turn extraction jobs by status", labels=["status"])
        counts = dict(TurnExtraction.objects.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
        for status in TurnExtraction.Status.values:
            jobs.add_metric([status], counts.get(status, 0))
        yield jobs
        retried = TurnExtraction.objects.filter(attempts__gt=1).count()
        yield GaugeMetricFamily("legalmem_extraction_jobs_retried", "Turn extraction jobs that needed more than one attempt",
                                value=retried)
        waiting = TurnExtraction.objects.filter(
            Q(status=TurnExtraction.Status.PENDING) | Q(status=TurnExtraction.Status.RUNNING)
        ).aggregate(oldest=Min("created_at"))["oldest"]
        age = (timezone.now() - waiting).total_seconds() if waiting else 0.0
        yield GaugeMetricFamily("legalmem_extraction_oldest_unfinished_seconds",
                                "Age of the oldest pending or running turn extraction job", value=age)
        actions = GaugeMetricFamily("legalmem_routing_decisions", "Routing decisions by action (notes written)",
                                    labels=["action"])
        by_action = dict(RoutingDecision.objects.values_list("action").annotate(n=Count("id")).values_list("action", "n"))
        for action in RoutingDecision.Action.values:
            actions.add_metric([action], by_action.get(action, 0))
        yield actions
