"""What the structured logs cost (docs/operations.md, "Logs").

1. Formatting one event line: ``JsonFormatter`` vs the stdlib's plain ``%(asctime)s …``
   formatter on the same ``chat_turn`` record (µs per line, ratio).
2. An HTTP request through Django with the request-log middleware (request id, one JSON
   ``http_request`` line with the user's firms) vs the same middleware stack without it,
   interleaved, for ``/healthz`` (no database, no user) and ``/chat/`` (a signed-in page): p50
   per request and the ratio. Lines go to /dev/null in JSON, as a production host writes them.

Knobs: ``BENCH_REQUESTS`` (per path and variant, default 300), ``BENCH_LINES`` (default 20000).
Command: ``LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage shell -c
"from bench.bench_logs import main; main()"`` (a throw-away database, dropped after).
"""
from __future__ import annotations

import logging
import os
import statistics
import time

from django.conf import settings
from django.test import Client, override_settings

from bench.databases import throwaway_database
from infra.logs import bind
from infra.logs.formatters import ContextFilter, JsonFormatter

LOG_MIDDLEWARE = "infra.logs.requests.RequestLogMiddleware"


def _turn_record() -> logging.LogRecord:
    record = logging.LogRecord("legalmem.chat", logging.INFO, __file__, 1, "chat_turn", None, None)
    record.ids = {"request_id": "4bf92f3577b34da6a3ce929d0e0e4736", "user_id": 12}
    record.fields = {"event": "chat_turn", "outcome": "complete", "engine": "llm:qwen", "firm_id": 3, "matter_id": 41,
                     "conversation_id": 908, "user_message_id": 77120, "message_id": 77121, "turn_id": 38555,
                     "recalled": 8, "duration_ms": 2674.7, "recall_ms": 130.1, "first_token_ms": 301.5}
    return record


def _per_line_us(formatter: logging.Formatter, record: logging.LogRecord, lines: int) -> float:
    started = time.perf_counter()
    for _ in range(lines):
        formatter.format(record)
    return (time.perf_counter() - started) / lines * 1e6


def _json_to_devnull() -> None:
    handler = logging.StreamHandler(open(os.devnull, "w"))  # noqa: SIM115 - lives as long as the process
    handler.setFormatter(JsonFormatter())
    handler.addFilter(ContextFilter())
    logger = logging.getLogger("legalmem")
    logger.handlers = [handler]
    logger.setLevel(logging.INFO)


def _signed_in_client(user, *, middleware: list[str]) -> Client:
    """A test client whose handler loaded ``middleware`` (Django builds the chain once per client)."""
    with override_settings(MIDDLEWARE=middleware):
        client = Client(HTTP_HOST="127.0.0.1")  # one of the default ALLOWED_HOSTS
        client.force_login(user)
        client.get("/healthz")
    return client


def main() -> dict:
    requests = int(os.environ.get("BENCH_REQUESTS", "300"))
    lines = int(os.environ.get("BENCH_LINES", "20000"))
    load = os.getloadavg()
    record = _turn_record()
    plain = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    json_us, plain_us = _per_line_us(JsonFormatter(), record, lines), _per_line_us(plain, record, lines)
    figures: dict = {"load": load, "json_line_us": round(json_us, 2), "plain_line_us": round(plain_us, 2),
                     "line_ratio": round(json_us / plain_us, 2), "paths": {}}
    with throwaway_database("legalmem_bench_logs"):
        from django.contrib.auth import get_user_model

        from memory.models import Firm, Membership

        firm = Firm.objects.create(name="Bench Law", slug="bench-law")
        user = get_user_model().objects.create_user("bench-lawyer", password="x" * 20)
        Membership.objects.create(user=user, firm=firm)
        _json_to_devnull()
        logged = _signed_in_client(user, middleware=list(settings.MIDDLEWARE))
        bare = _signed_in_client(user, middleware=[m for m in settings.MIDDLEWARE if m != LOG_MIDDLEWARE])
        for path in ("/healthz", "/chat/"):
            times: dict[str, list[float]] = {"logged": [], "bare": []}
            for _ in range(requests):
                for name, client in (("logged", logged), ("bare", bare)):
                    started = time.perf_counter()
                    with bind():
                        response = client.get(path)
                    times[name].append((time.perf_counter() - started) * 1000)
                    assert response.status_code == 200, (path, response.status_code)
            p50 = {name: statistics.median(values) for name, values in times.items()}
            figures["paths"][path] = {"logged_p50_ms": round(p50["logged"], 3), "bare_p50_ms": round(p50["bare"], 3),
                                      "ratio": round(p50["logged"] / p50["bare"], 3)}
    print(f"load average before: {', '.join(f'{x:.2f}' for x in load)}")
    print(f"one chat_turn line: JSON {figures['json_line_us']} µs, plain {figures['plain_line_us']} µs "
          f"({figures['line_ratio']}x)")
    print("| path | with request logs p50 ms | without p50 ms | ratio |")
    print("|---|---|---|---|")
    for path, row in figures["paths"].items():
        print(f"| {path} | {row['logged_p50_ms']} | {row['bare_p50_ms']} | {row['ratio']}x |")
    return figures
