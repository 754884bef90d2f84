"""The note statement on a second connection (recall/alongside.py): it runs there
only outside a transaction, and the answer and the visibility rule are those of one connection
— alice, bob (walled off from matter_deposit) and charlie (another firm)."""
from __future__ import annotations

import pytest
from django.db import connection

from recall import search_memory
from recall import alongside
from recall.alongside import WORKERS, can_run_alongside, close_read_connections, run_alongside

QUESTIONS = ["这个电脑花屏纠纷下一步怎么走？", "押金被扣了怎么办", "并购估值", "之前商家怎么说花屏的？"]
ALICE_MAY_SEE = {"laptop_screen", "laptop_report", "deposit_fact", "deposit_photos", "alice_profile",
                 "law", "cross", "procedure"}
BOB_MAY_SEE = {"laptop_screen", "laptop_report", "bob_profile", "law", "cross", "procedure"}
CHARLIE_MAY_SEE = {"beta_fact", "beta_law"}


def _is_note_statement(sql: str) -> bool:
    return "query_vector" in sql and "memory_message" not in sql


def _search(user, question: str) -> tuple[list[tuple[str, object]], int]:
    """The hits (kind, id) of a layered search, and how many note statements ran on this
    thread's connection."""
    on_this_connection = []

    def count(execute, sql, params, many, context):
        if _is_note_statement(sql):
            on_this_connection.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        result = search_memory(user, question, k=10)
    hits = [("note", hit.note.pk) if hit.note is not None else ("message", hit.message.pk) for hit in result.hits]
    return hits, len(on_this_connection)


def _note_keys(hits, memory) -> set[str]:
    by_id = {note.pk: key for key, note in memory.items()}
    return {by_id[pk] for kind, pk in hits if kind == "note"}


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_notes_are_read_on_another_connection_with_the_same_answer(
    world, memory, laptop_conversation, settings
):
    """Committed rows: the note statement leaves the request's connection, and every user's
    hits are exactly those of the one-connection search (which also keeps the walls)."""
    assert can_run_alongside()
    for user, may_see in ((world.alice, ALICE_MAY_SEE), (world.bob, BOB_MAY_SEE),
                          (world.charlie, CHARLIE_MAY_SEE)):
        for question in QUESTIONS:
            settings.SEARCH_PARALLEL_READS = True
            alongside, here = _search(user, question)
            assert here == 0, "the note statement ran on the request's connection"
            settings.SEARCH_PARALLEL_READS = False
            single, here = _search(user, question)
            assert here == 1
            assert alongside == single, (user.username, question)
            assert _note_keys(alongside, memory) <= may_see
    assert _note_keys(_search(world.alice, "电脑花屏")[0], memory) & {"laptop_screen", "laptop_report"}
    assert _note_keys(_search(world.charlie, "电脑花屏 检测报告")[0], memory) & CHARLIE_MAY_SEE


@pytest.mark.django_db(transaction=True)
def test_a_failing_note_read_on_the_other_connection_reaches_the_caller(world, memory, monkeypatch):
    """An error of the worker's read is the search's error, not a silently missing layer."""
    from recall import candidate_sql

    def broken(*args, **kwargs):
        raise RuntimeError("note read failed")

    monkeypatch.setattr(candidate_sql, "read_prepared_notes", broken)
    with pytest.raises(RuntimeError, match="note read failed"):
        search_memory(world.alice, "电脑花屏", k=5)


@pytest.mark.django_db
def test_inside_a_transaction_the_notes_are_read_on_the_callers_connection(world, memory):
    """Uncommitted rows (the test's transaction here, a writing service in production) are
    invisible to a second connection: the statement stays on the caller's and still finds them."""
    assert not can_run_alongside()
    hits, here = _search(world.alice, "电脑花屏的检测报告")
    assert here == 1
    assert "laptop_report" in _note_keys(hits, memory)
    hits, here = _search(world.charlie, "电脑花屏的检测报告")
    assert _note_keys(hits, memory) <= CHARLIE_MAY_SEE


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _worker_pids(times: int) -> list[int]:
    return [run_alongside(_backend_pid)() for _ in range(times)]


@pytest.mark.django_db(transaction=True)
def test_the_workers_keep_their_connections_until_closed(world):
    """A fresh backend per search made the second connection slower than none (docs/performance.md):
    the workers reuse theirs; ``close_read_connections`` ends them (the next read opens new ones)."""
    here = _backend_pid()
    first = _worker_pids(3 * WORKERS)
    assert here not in first
    assert len(set(first)) <= WORKERS
    close_read_connections()
    again = _worker_pids(3 * WORKERS)
    assert not set(again) & set(first)
    close_read_connections()


@pytest.mark.django_db(transaction=True)
def test_a_failed_read_drops_its_connection_and_a_dead_one_is_replaced(world, settings):
    failing_pid = []

    def fails() -> None:
        failing_pid.append(_backend_pid())
        raise RuntimeError("broken read")

    with pytest.raises(RuntimeError, match="broken read"):
        run_alongside(fails)()
    assert failing_pid[0] not in _worker_pids(3 * WORKERS)

    kept = set(_worker_pids(3 * WORKERS))
    with connection.cursor() as cursor:  # the server ends them (a restart, an idle timeout); waits until gone
        cursor.execute("SELECT pg_terminate_backend(pid, 5000) FROM unnest(%s::int[]) AS pid", [list(kept)])
    settings.SEARCH_READ_IDLE_CHECK_SECONDS = 0.0
    assert not set(_worker_pids(3 * WORKERS)) & kept
    close_read_connections()


@pytest.mark.django_db(transaction=True)
def test_without_a_current_matter_the_case_layer_is_read_beside_the_other_layers(
    world, memory, laptop_conversation, settings, monkeypatch
):
    """No current matter: the case layer over the assigned matters, compared in PostgreSQL, is
    read on a connection of its own, beside the other layers' statement (and the keyword read over
    every layer); the hits are exactly those of one connection, and the walls hold (bob, charlie:
    no case layer to split). With its vectors kept in process it stays in the one statement."""
    from memory.models import MemoryScope
    from recall import strategies

    settings.SEARCH_EXACT_VECTORS_MB = 0

    calls: list[tuple] = []
    read_notes = strategies._read_notes

    def spy(request, access, tokens, per_layer, layers=None, **kwargs):
        calls.append((request.user.username, tuple(layers or ()), kwargs.get("keyword", True)))
        return read_notes(request, access, tokens, per_layer, layers, **kwargs)

    monkeypatch.setattr(strategies, "_read_notes", spy)
    for user, may_see in ((world.alice, ALICE_MAY_SEE), (world.bob, BOB_MAY_SEE),
                          (world.charlie, CHARLIE_MAY_SEE)):
        for question in QUESTIONS:
            calls.clear()
            settings.SEARCH_PARALLEL_READS = True
            apart, _here = _search(user, question)
            if user == world.alice:
                assert (user.username, (MemoryScope.CASE,), False) in calls, calls
                assert any(layers and MemoryScope.CASE not in layers and keyword for _, layers, keyword in calls)
            settings.SEARCH_PARALLEL_READS = False
            calls.clear()
            single, _here = _search(user, question)
            assert len(calls) == 1, "one connection: one note read"
            assert apart == single, (user.username, question)
            assert _note_keys(apart, memory) <= may_see
    settings.SEARCH_EXACT_VECTORS_MB = 64
    settings.SEARCH_PARALLEL_READS = True
    calls.clear()
    kept, _here = _search(world.alice, QUESTIONS[0])
    assert len(calls) == 1, "kept vectors: the case layer stays in the one note statement"
    settings.SEARCH_EXACT_VECTORS_MB = 0
    assert kept == _search(world.alice, QUESTIONS[0])[0]

