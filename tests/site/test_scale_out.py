"""Two Daphne servers and three workers on one PostgreSQL and one Redis (issue 17; docs/operations.md,
"Several servers and workers"), all real processes started as `make run` starts them.

Chat sockets are spread over both servers. Proven: every turn completes and streams exactly the
fake LLM's answer (no token lost, repeated or crossed into another socket); a turn finished on
one server reaches the user's tabs on the other through Redis, and nobody else's; each
extraction job runs once, and a job whose worker is killed with SIGKILL mid-job (its pid is
gone) or frozen with SIGSTOP (its heartbeat stops) is taken over by another worker and still
writes its notes once; the rate limit holds for questions arriving
at once on both servers; the firm's navigation graph is refreshed once for a burst of notes
written by the workers, and both servers then serve that stored graph without building.
"""
from __future__ import annotations

import json
import os
import re
import signal
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

import pytest
from django_tasks_db.models import DBTaskResult
from websockets.sync.client import ClientConnection, connect

from bench.daphne import session_cookie
from memory.models import Message, Note, TurnExtraction
from navigation.models import NavigationGraphSnapshot
from navigation.tasks import refresh_navigation_graphs_task
from tests.fake_llm.replies import json_reply, stall_reply, text_reply, tokenize
from tests.fake_llm.server import FakeLLMServer
from tests.live_server import test_database_url
from tests.site.cluster import Cluster, cluster, redis_server
from tests.overrides import overrides_env

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.cluster]

RATE_LIMIT = 4  # questions per user and minute
REFRESH_DELAY = 30  # s: the navigation refresh's debounce, well beyond the burst of notes below (~10 s)
TOKEN = "scale-out-metrics"
WAIT = 120  # s: the bound of every wait on a loaded 2-core machine (each wait polls)

NOTHING_HELD = "【记忆中没有这方面的记录】以下内容并非来自本所记忆，仅供参考：\n"
ANSWERS = [
    "第一位律师的回答：先固定花屏证据，再书面要求退货。",
    "Second answer: keep the receipt and the video, then write to the seller.",
    "第三个回答：向消费者协会投诉，同时保留聊天记录。",
    "Fourth answer: 七日内可以无理由退货，质量问题另有三包期。",
]
FACTS = [  # what the extraction LLM finds in alice's four turns (one each, in whatever order)
    "张三于2024年3月5日在京东购买了联想笔记本电脑，价格5999元",
    "商家客服在3月12日书面拒绝了张三的退货申请",
    "张三已向消费者协会提交投诉，受理编号为XH-2024-0312",
    "维修点检测报告认定屏幕花屏属于质量问题",
]
CHARLIE_FACTS = ["Beta 所客户的仓库租约将于2025年6月30日到期", "Beta 所客户的仓库押金为十二万元"]


def knowledge(fact: str) -> dict:
    return {"knowledge": [{"content": fact, "category": "事实"}]}


def wait_for(condition: Callable[[], Any], what: str, the_cluster: Cluster, timeout: float = WAIT) -> Any:
    """Poll ``condition`` until it returns something true; fail naming ``what`` with the logs."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}\n{the_cluster.logs()}"
        time.sleep(0.3)


class Tab:
    """One browser tab's chat socket on one server."""

    def __init__(self, sockets: ExitStack, the_cluster: Cluster, server: int, cookie: str) -> None:
        self.server = server
        self.socket: ClientConnection = sockets.enter_context(connect(
            the_cluster.ws(server), origin=the_cluster.http(server), additional_headers={"Cookie": cookie},
            max_size=None, open_timeout=60, close_timeout=5,
        ))
        self.notices: list[dict] = []  # conversation_updated frames: turns of the user's other tabs
        assert self.receive()["type"] == "ready"

    def receive(self, timeout: float = WAIT) -> dict:
        return json.loads(self.socket.recv(timeout=timeout))

    def ask(self, question: str, **ids: int) -> list[dict]:
        """The frames of one turn, up to ``done`` (or an ``error`` that saved nothing); notices
        of other tabs arriving meanwhile are kept aside."""
        self.socket.send(json.dumps({"type": "ask", "question": question, **ids}))
        frames: list[dict] = []
        while True:
            frame = self.receive()
            if frame["type"] == "conversation_updated":
                self.notices.append(frame)
                continue
            frames.append(frame)
            if frame["type"] == "done" or (frame["type"] == "error" and "user_message_id" not in frame):
                return frames

    def await_notices(self, count: int, the_cluster: Cluster) -> list[dict]:
        deadline = time.monotonic() + WAIT
        while len(self.notices) < count:
            assert time.monotonic() < deadline, f"{len(self.notices)} of {count} notices\n{the_cluster.logs()}"
            frame = self.receive(timeout=max(1.0, deadline - time.monotonic()))
            assert frame["type"] == "conversation_updated", frame
            self.notices.append(frame)
        return self.notices

    def hears_nothing(self, seconds: float = 1.0) -> bool:
        try:
            frame = self.socket.recv(timeout=seconds)
        except TimeoutError:
            return True
        raise AssertionError(f"unexpected frame on server {self.server}: {frame}")


def at_once(calls: list[Callable[[], Any]]) -> list[Any]:
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(lambda call: call(), calls))


def http_get(the_cluster: Cluster, server: int, path: str, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(the_cluster.http(server) + path, headers=headers)
    with urllib.request.urlopen(request, timeout=WAIT) as response:  # noqa: S310 - the test's own server
        return response.status, response.read().decode()


def navigation_builds(the_cluster: Cluster) -> float:
    """Graphs built or updated by every process (the shared multiprocess metrics directory)."""
    _, text = http_get(the_cluster, 0, "/metrics", {"Authorization": f"Bearer {TOKEN}"})
    return sum(float(value) for value in re.findall(r'^legalmem_navigation_builds_total\{kind="\w+"\} (\S+)$', text, re.M))


def turn_of(message_id: int) -> TurnExtraction:
    return TurnExtraction.objects.get(assistant_message_id=message_id)


def extraction_tasks(turn: TurnExtraction) -> list[str]:
    """The status of every extract_turn_task row of ``turn`` (one per enqueue)."""
    return sorted(DBTaskResult.objects.filter(task_path__endswith="extract_turn_task", args_kwargs__args=[turn.pk])
                  .values_list("status", flat=True))


def job_finished(turn: TurnExtraction) -> bool:
    """The turn's job is done and its task row says so (the row is closed just after the job)."""
    return (TurnExtraction.objects.get(pk=turn.pk).status == "done"
            and "SUCCESSFUL" in extraction_tasks(turn) and "READY" not in extraction_tasks(turn))


@pytest.fixture
def extraction_llm():
    """The extraction server of the workers (the chat answers come from ``fake_llm``)."""
    server = FakeLLMServer(default_reply={"knowledge": []})
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_two_servers_and_three_workers_share_one_database_and_one_redis(world, fake_llm, extraction_llm, tmp_path):
    world.note("笔记本电脑购买七天后屏幕出现花屏，商家拒绝退货", matter=world.matter_laptop)
    world.note("Beta 所的内部流程", firm=world.firm_b, matter=world.matter_b)
    fake_llm.token_delay = 0.01  # streams of both servers interleave
    metrics_dir = tmp_path / "prometheus"
    metrics_dir.mkdir()
    env = {
        **os.environ, "DATABASE_URL": test_database_url(), "PYTHONUNBUFFERED": "1",
        "LLM_BASE_URL": fake_llm.base_url, "LLM_MODEL": fake_llm.model, "LLM_API_KEY": "test-key",
        "LLM_EXTRACTION_BASE_URL": extraction_llm.base_url, "LLM_EXTRACTION_MODEL": extraction_llm.model,
        "LLM_EXTRACTION_API_KEY": "test-key", "LLM_TIMEOUT_SECONDS": "300",
        **overrides_env(settings={
            "LLM_MAX_RETRIES": 0, "TURN_HEARTBEAT_SECONDS": 0.5,
            "CHAT_RATE_LIMIT_PER_MINUTE": RATE_LIMIT, "NAV_REFRESH_DELAY_SECONDS": REFRESH_DELAY,
        }),
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir), "METRICS_TOKEN": TOKEN,
    }
    alice, bob, charlie = (session_cookie(user) for user in (world.alice, world.bob, world.charlie))
    with (redis_server(tmp_path) as redis_url, cluster({**env, "REDIS_URL": redis_url}, tmp_path, workers=3) as servers,
          ExitStack() as sockets):
        started = time.monotonic()
        for server in (0, 1):  # both ready, their channel layer a round trip through Redis
            status, body = http_get(servers, server, "/readyz", {})
            assert status == 200
            assert json.loads(body)["checks"]["channel_layer"]["detail"] == "RedisChannelLayer"
        # alice's graph page is stored (its first view: one full build), so note changes refresh it
        assert http_get(servers, 0, "/api/navigation/graph", {"Cookie": alice})[0] == 200
        assert NavigationGraphSnapshot.objects.filter(user=world.alice).count() == 1

        # --- 1. alice in four tabs over both servers, asking at once; bob and charlie listen
        tabs = [Tab(sockets, servers, server, alice) for server in (0, 1, 0, 1)]
        bystanders = [Tab(sockets, servers, 0, bob), Tab(sockets, servers, 1, charlie)]
        fake_llm.script(*(text_reply(answer) for answer in ANSWERS))
        extraction_llm.script(*(json_reply(knowledge(fact)) for fact in FACTS))
        questions = [f"电脑花屏的第{number}个问题：张三2024年3月5日花5999元买的电脑，3月12日被拒绝退货，怎么办？"
                     for number in range(1, 5)]  # the facts' dates and sums are the client's (speaker rules)
        turns = at_once([lambda tab=tab, question=question: tab.ask(question, matter_id=world.matter_laptop.pk)
                         for tab, question in zip(tabs, questions)])
        replies = []
        for frames in turns:
            done = frames[-1]
            assert done["type"] == "done", frames
            assert done["status"] == "complete", frames
            tokens = [frame["text"] for frame in frames if frame["type"] == "token"]
            # a question no recalled item bears on is answered "memory holds nothing" first (docs/citations.md)
            said = done["reply"].removeprefix(NOTHING_HELD)
            assert tokens == tokenize(said), "a token was lost, repeated or reordered"
            assert Message.objects.get(pk=done["message_id"]).content == done["reply"]
            replies.append(said)
        assert sorted(replies) == sorted(ANSWERS), "each scripted answer streamed to exactly one socket"
        assert len(fake_llm.chat_requests()) == len(ANSWERS)

        # each tab hears of the other three turns — two of them finished on the other server
        done_of = [frames[-1] for frames in turns]
        for number, tab in enumerate(tabs):
            heard = {notice["message_id"] for notice in tab.await_notices(3, servers)}
            assert heard == {done["message_id"] for other, done in enumerate(done_of) if other != number}
        for tab in [*tabs, *bystanders]:
            assert tab.hears_nothing()

        # each extraction job ran once, on one of the workers, and wrote its fact once
        worker_pids = {worker.pid for worker in servers.workers}
        alice_turns = [turn_of(done["message_id"]) for done in done_of]
        wait_for(lambda: all(job_finished(turn) for turn in alice_turns), "alice's extraction jobs", servers)
        for turn in map(lambda turn: TurnExtraction.objects.get(pk=turn.pk), alice_turns):
            assert turn.attempts == 1
            assert turn.worker_pid in worker_pids
            assert extraction_tasks(turn) == ["SUCCESSFUL"]
        for fact in FACTS:
            assert Note.objects.filter(content=fact, firm=world.firm_a, matter=world.matter_laptop).count() == 1
        assert len(extraction_llm.chat_requests()) == len(FACTS)

        # --- 2. the rate limit across both servers: bob asks from six tabs at once
        fake_llm.set_default(text_reply("好的，我记下了。"))
        bob_tabs = [Tab(sockets, servers, server, bob) for server in (0, 1, 0, 1, 0, 1)]
        outcomes = at_once([lambda tab=tab, number=number: tab.ask(f"押金的第{number}个问题？")
                            for number, tab in enumerate(bob_tabs)])
        finished = [frames[-1] for frames in outcomes if frames[-1]["type"] == "done"]
        refused = [frames[-1] for frames in outcomes if frames[-1]["type"] == "error"]
        assert len(finished) == RATE_LIMIT, outcomes
        assert all(done["status"] == "complete" for done in finished), outcomes
        assert [frame["code"] for frame in refused] == ["rate_limited"] * (len(bob_tabs) - RATE_LIMIT)
        assert Message.objects.filter(conversation__user=world.bob, role="user").count() == RATE_LIMIT
        bob_turns = [turn_of(done["message_id"]) for done in finished]
        wait_for(lambda: all(job_finished(turn) for turn in bob_turns), "bob's extraction jobs", servers)

        # --- 3. charlie (another firm, his own count) asks twice; the worker holding his job is
        # killed (SIGKILL: its pid is gone), then another one freezes (SIGSTOP: its heartbeat stops)
        live = set(servers.workers)
        for number, (fact, stop) in enumerate([(CHARLIE_FACTS[0], signal.SIGKILL), (CHARLIE_FACTS[1], signal.SIGSTOP)]):
            extraction_llm.script(stall_reply(250, "{}"), json_reply(knowledge(fact)))
            asked = len(extraction_llm.chat_requests())
            frames = bystanders[1].ask(f"Beta 的第{number + 1}个问题：仓库租约2025年6月30日到期，押金十二万元，怎么续租？",
                                       matter_id=world.matter_b.pk)
            done = frames[-1]
            assert done["status"] == "complete"
            firm_a_notes = {str(pk) for pk in Note.objects.filter(firm=world.firm_a).values_list("pk", flat=True)}
            assert not firm_a_notes & {note["id"] for note in done["notes"]}
            turn = turn_of(done["message_id"])
            wait_for(lambda: len(extraction_llm.chat_requests()) > asked, "charlie's job to ask the LLM", servers)
            holder = TurnExtraction.objects.get(pk=turn.pk)
            victim = next(worker for worker in live if worker.pid == holder.worker_pid)
            assert holder.status == "running"
            os.killpg(victim.pid, stop)
            live.discard(victim)
            wait_for(lambda: job_finished(turn), f"the takeover after {stop.name}", servers)
            turn.refresh_from_db()
            assert turn.attempts == 2
            assert turn.worker_pid in {worker.pid for worker in live}
            assert extraction_tasks(turn) == ["RUNNING", "SUCCESSFUL"]  # the stopped worker's row, the takeover's
            assert Note.objects.filter(content=fact).count() == 1
            assert Note.objects.get(content=fact).firm == world.firm_b
        os.killpg(victim.pid, signal.SIGKILL)  # the frozen worker never comes back
        assert bystanders[1].notices == []  # charlie heard nothing of alice's or bob's turns

        # --- 4. one navigation refresh for the burst of notes the workers wrote
        refreshes = DBTaskResult.objects.filter(task_path=refresh_navigation_graphs_task.module_path,
                                                args_kwargs__args=[world.firm_a.pk])
        wait_for(lambda: refreshes.filter(status="SUCCESSFUL").exists(), "the navigation refresh", servers,
                 timeout=WAIT + REFRESH_DELAY)
        assert refreshes.count() == 1
        assert navigation_builds(servers) == 2  # alice's first view, then the refresh
        for server in (0, 1):
            status, body = http_get(servers, server, "/api/navigation/graph", {"Cookie": alice})
            assert status == 200
            assert all(fact in body for fact in FACTS)
        assert navigation_builds(servers) == 2  # both servers serve the stored graph
        print(f"\nscale-out scenario: {time.monotonic() - started:.1f} s after the processes started")
