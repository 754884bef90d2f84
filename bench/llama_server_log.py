"""Read a llama-cpp-python server log (with a wall-clock stamp in front of every line) into the
requests it served: when each began generating, when it ended, how many tokens it generated —
to count requests that ran on after the product gave up on them (issue 30).

The server prints, per request, ``Llama.generate: … prompt tokens to eval`` when it starts and
``llama_perf_context_print: … eval time = … / N runs`` and ``total time`` when it ends; a
streamed request whose client closed the connection ends with ``Disconnected from client``
(no timings) as soon as the server notices, within a token. Stamp the log as
docs/story-and-real-llm.md shows (``… 2>&1 | python3 -u ts.py > server.log``, ``HH:MM:SS.mmm``
in front of each line).

    python bench/llama_server_log.py /work/llama-server.log [--since HH:MM:SS] [--giveups product.log]

``--giveups`` takes the product's log and lists, for every line in which it gave up on a request
(a stall, a missed first token, a budget or a deadline: "the stream is closed", "LLMTooSlow",
"stalled", "no first token", "budget"), the server request running at that moment and how long
it went on afterwards. A request counts as *running after give-up* when it ended more than
``--grace`` seconds (default 5) after the give-up.
"""
from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

_STAMP = re.compile(r"^(\d{2}:\d{2}:\d{2}\.\d{3}) (.*)$")
_START = re.compile(r"Llama\.generate: ")
_EVAL = re.compile(r"llama_perf_context_print:\s+eval time =\s+([\d.]+) ms /\s+(\d+) runs")
_TOTAL = re.compile(r"llama_perf_context_print:\s+total time =\s+([\d.]+) ms")
_CLOSED = re.compile(r"Disconnected from client")  # a streamed request the client closed: no perf lines
_PRODUCT_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}),(\d{3}) ")
_GIVE_UP = re.compile(r"the stream is closed|LLMTooSlow|stalled|no first token|budget|deadline", re.IGNORECASE)


@dataclass
class ServedRequest:
    began: datetime
    ended: datetime | None = None
    tokens: int = 0
    eval_seconds: float = 0.0
    closed: bool = False  # the client closed the stream (the server printed no timings)

    @property
    def tokens_per_second(self) -> float | None:
        return self.tokens / self.eval_seconds if self.eval_seconds else None


def _time(stamp: str, day: datetime) -> datetime:
    clock = datetime.strptime(stamp, "%H:%M:%S.%f")
    return day.replace(hour=clock.hour, minute=clock.minute, second=clock.second, microsecond=clock.microsecond)


def served_requests(lines: list[str], since: str | None = None) -> list[ServedRequest]:
    """The requests of a stamped server log, in order (the day is today's: only times matter)."""
    day = datetime.now().replace(hour=0, minute=0, second=0, microsecond=0)
    requests: list[ServedRequest] = []
    for line in lines:
        match = _STAMP.match(line)
        if not match or (since and match.group(1) < since):
            continue
        at, text = _time(match.group(1), day), match.group(2)
        if _START.search(text):
            requests.append(ServedRequest(began=at))
        elif requests and (evaluated := _EVAL.search(text)):
            requests[-1].eval_seconds = float(evaluated.group(1)) / 1000
            requests[-1].tokens = int(evaluated.group(2))
        elif requests and requests[-1].ended is None and (_TOTAL.search(text) or _CLOSED.search(text)):
            requests[-1].ended = at
            requests[-1].closed = bool(_CLOSED.search(text))
    return requests


def give_ups(lines: list[str], utc_offset_hours: float) -> list[tuple[datetime, str]]:
    """(server-clock time, line) of every give-up the product logged (its stamps are local time:
    ``utc_offset_hours`` converts them to the server log's clock)."""
    found = []
    day = datetime.now().replace(hour=0, minute=0, second=0, microsecond=0)
    for line in lines:
        match = _PRODUCT_STAMP.match(line)
        if match and _GIVE_UP.search(line):
            local = datetime.strptime(f"{match.group(1)}.{match.group(2)}", "%Y-%m-%d %H:%M:%S.%f")
            at = local - timedelta(hours=utc_offset_hours)
            found.append((day.replace(hour=at.hour, minute=at.minute, second=at.second, microsecond=at.microsecond),
                          line.strip()))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("server_log")
    parser.add_argument("--since", help="only requests from this HH:MM:SS on (the server log's clock)")
    parser.add_argument("--giveups", help="the product's log (its lines stamped 'YYYY-MM-DD HH:MM:SS,mmm')")
    parser.add_argument("--utc-offset", type=float, default=8.0, help="the product log's hours ahead of the server log")
    parser.add_argument("--grace", type=float, default=5.0)
    options = parser.parse_args()
    with open(options.server_log, encoding="utf-8", errors="replace") as handle:
        requests = served_requests(handle.readlines(), options.since)
    for number, request in enumerate(requests, start=1):
        if request.ended is None:
            print(f"request {number}: {request.began:%H:%M:%S} → still running")
            continue
        speed = request.tokens_per_second
        print(f"request {number}: {request.began:%H:%M:%S} → {request.ended:%H:%M:%S} "
              f"({(request.ended - request.began).total_seconds():.1f} s), "
              + ("closed by the client" if request.closed else f"{request.tokens} tokens")
              + (f", {speed:.2f} tokens/s" if speed else ""))
    if not options.giveups:
        return
    with open(options.giveups, encoding="utf-8", errors="replace") as handle:
        events = give_ups(handle.readlines(), options.utc_offset)
    late = 0
    for at, line in events:
        running = [r for r in requests if r.began <= at and (r.ended is None or r.ended > at)]
        for request in running:
            after = (request.ended - at).total_seconds() if request.ended else float("inf")
            late += after > options.grace
            print(f"give-up {at:%H:%M:%S}: the request begun {request.began:%H:%M:%S} ran {after:.1f} s more — {line[:160]}")
        if not running:
            print(f"give-up {at:%H:%M:%S}: no request running on the server — {line[:160]}")
    print(f"{len(requests)} request(s) served; {len(events)} give-up(s) logged; "
          f"{late} request(s) ran more than {options.grace:g} s after the product gave up")


if __name__ == "__main__":
    main()
