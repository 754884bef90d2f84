"""The request gate: at most N requests to a server across processes (PostgreSQL advisory
locks, one connection per lease — as separate as two processes), chat before background
work, and a cancelled chat never keeps its slot."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from infra.llm import LLMUnavailable, Priority, RequestGate

pytestmark = pytest.mark.django_db

URL = "http://llm.test:8080/v1"


def gate(slots: int = 1, wait: float = 5.0) -> RequestGate:
    return RequestGate(slots, base_url=URL, wait_seconds=wait)


def in_thread(function, *args) -> tuple[threading.Thread, dict]:
    """Run ``function`` in a thread (another 'process'); the result lands in the dict."""
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = function(*args)
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            out["error"] = exc
        out["at"] = time.monotonic()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def test_slots_bound_requests_in_flight() -> None:
    two = gate(2, wait=0.3)
    first, second = two.acquire(Priority.BACKGROUND), two.acquire(Priority.BACKGROUND)
    assert {first.slot, second.slot} == {1, 2}
    with pytest.raises(LLMUnavailable, match="slot"):
        two.acquire(Priority.BACKGROUND)
    first.release()
    third = two.acquire(Priority.BACKGROUND)
    assert third.slot == first.slot
    second.release()
    third.release()


def test_background_work_waits_while_a_chat_is_waiting() -> None:
    """The slot is busy; a chat and a background job both wait. When the slot frees up the
    chat gets it, even though the background job asked first."""
    one = gate(1)
    busy = one.acquire(Priority.BACKGROUND)
    background, background_out = in_thread(one.acquire, Priority.BACKGROUND)
    time.sleep(0.2)
    chat, chat_out = in_thread(one.acquire, Priority.CHAT)
    time.sleep(0.2)
    assert "value" not in background_out
    assert "value" not in chat_out

    released_at = time.monotonic()
    busy.release()
    chat.join(5)
    assert chat_out["value"].slot == 1
    time.sleep(0.3)
    assert "value" not in background_out  # the chat holds the slot and is present

    chat_out["value"].release()
    background.join(5)
    assert background_out["value"].slot == 1
    assert background_out["at"] > chat_out["at"] > released_at
    background_out["value"].release()


def test_without_a_limit_nothing_waits() -> None:
    open_gate = gate(0)
    leases = [open_gate.acquire(Priority.BACKGROUND) for _ in range(5)]
    assert all(lease.connection is None for lease in leases)


@pytest.mark.asyncio
async def test_a_cancelled_chat_wait_releases_everything() -> None:
    one = gate(1)
    busy = await asyncio.to_thread(one.acquire, Priority.BACKGROUND)

    async def chat() -> None:
        async with one.ahold(Priority.CHAT):
            await asyncio.sleep(10)

    waiting = asyncio.create_task(chat())
    await asyncio.sleep(0.2)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await asyncio.to_thread(busy.release)

    # no chat is left 'present' and no slot is held: background work goes at once
    quick = RequestGate(1, base_url=URL, wait_seconds=0.5)
    lease = await asyncio.to_thread(quick.acquire, Priority.BACKGROUND)
    assert lease.slot == 1
    await asyncio.to_thread(lease.release)


@pytest.mark.asyncio
async def test_a_cancelled_running_chat_gives_its_slot_back() -> None:
    one = gate(1)
    entered = asyncio.Event()

    async def chat() -> None:
        async with one.ahold(Priority.CHAT):
            entered.set()
            await asyncio.sleep(10)

    running = asyncio.create_task(chat())
    await asyncio.wait_for(entered.wait(), 5)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running

    lease = await asyncio.to_thread(RequestGate(1, base_url=URL, wait_seconds=0.5).acquire, Priority.BACKGROUND)
    assert lease.slot == 1
    await asyncio.to_thread(lease.release)


def test_gates_of_different_servers_are_independent() -> None:
    a = RequestGate(1, base_url="http://a.test/v1", wait_seconds=0.3)
    b = RequestGate(1, base_url="http://b.test/v1", wait_seconds=0.3)
    held = a.acquire(Priority.BACKGROUND)
    other = b.acquire(Priority.BACKGROUND)
    assert other.slot == 1
    other.release()
    held.release()


def test_an_unreachable_database_is_a_clear_llm_error() -> None:
    def refuse():
        raise OSError("connection refused")

    broken = RequestGate(1, base_url=URL, connect=refuse)
    with pytest.raises(LLMUnavailable, match="database is unreachable"):
        broken.acquire(Priority.CHAT)
