"""Compaction after an erasure waits for other sessions' older transactions: a snapshot taken
before the erasure committed keeps the erased row versions alive, and VACUUM FULL would copy
them into the new files (docs/records.md, "Physical removal")."""
from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest
from django.db import connection

from records.services import compaction

pytestmark = pytest.mark.django_db(transaction=True)


def open_session(statement: str, database: str | None = None):
    """A second session of the test database (or of ``database`` on the same server), left
    inside a transaction after ``statement``."""
    params = connection.get_connection_params()
    other = connection.get_new_connection({**params, "dbname": database} if database else params)
    other.autocommit = False
    with other.cursor() as cursor:
        cursor.execute(statement)
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    return other, pid


def open_snapshot():
    """A transaction with an id and no lock on the erased tables (a session busy elsewhere)."""
    return open_session("SELECT pg_current_xact_id()")


def compact_beside(statement: str, database: str | None = None) -> tuple[dict, int]:
    """Compact while another session sits in a transaction after ``statement``; that session is
    rolled back and closed afterwards. Returns compaction's report and the other session's pid."""
    other, pid = open_session(statement, database)
    try:
        return compaction.compact_after_erasure(), pid
    finally:
        other.rollback()
        other.close()


def test_an_older_transaction_that_stays_open_is_named_not_silently_compacted_around(world, settings):
    settings.ERASURE_SNAPSHOT_WAIT_SECONDS = 0.6
    done, pid = compact_beside("SELECT pg_current_xact_id()")
    refusals = [line for line in done["refused"] if line.startswith("older transactions still open")]
    assert len(refusals) == 1 and f"pid {pid} (idle in transaction" in refusals[0], done
    assert done["tables"] > 0  # it still compacts what it can


def test_a_writing_transaction_in_another_database_of_the_server_is_named_too(world, settings):
    """Its transaction id is server-wide: while it runs, VACUUM FULL's own snapshot here counts it
    as running and keeps every row deleted after it began (what made verify_erasure find erased
    bytes when another pytest worker's database held a transaction)."""
    settings.ERASURE_SNAPSHOT_WAIT_SECONDS = 0.6
    done, pid = compact_beside("SELECT pg_current_xact_id()", database="postgres")
    refusals = [line for line in done["refused"] if line.startswith("older transactions still open")]
    assert len(refusals) == 1 and f"pid {pid} (idle in transaction" in refusals[0], done


def test_a_read_only_snapshot_in_another_database_is_not_waited_for(world, settings):
    """Without a transaction id it holds nothing back here: compaction does not wait for it (had
    it waited, the wait would end by naming it). Only this session is asked about: the other
    pytest worker's database may hold a writing transaction, which compaction rightly waits for."""
    settings.ERASURE_SNAPSHOT_WAIT_SECONDS = 5.0
    done, pid = compact_beside("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM pg_class",
                               database="postgres")  # the snapshot is held to the transaction's end
    assert not [line for line in done["refused"] if f"pid {pid} " in line], done


def test_compaction_waits_for_an_older_transaction_that_ends(world, settings):
    settings.ERASURE_SNAPSHOT_WAIT_SECONDS = 20.0
    other, pid = open_snapshot()
    ender = threading.Timer(0.5, lambda: (other.rollback(), other.close()))
    ender.start()
    try:
        done = compaction.compact_after_erasure()
    finally:
        ender.join()
    # Only this session is asked about (the other pytest worker's writing transactions are waited for too).
    assert not [line for line in done["refused"] if f"pid {pid} " in line], done
    assert done["seconds"] >= 0.4  # it waited for the other session


def test_a_table_another_session_holds_is_named_not_waited_for_forever(world, settings):
    """A session idle in a transaction that read the notes holds a lock VACUUM FULL must wait for."""
    settings.ERASURE_SNAPSHOT_WAIT_SECONDS = 0.5
    done, _pid = compact_beside("SELECT count(*) FROM memory_note")
    assert any(line.startswith("memory_note: ") and "lock timeout" in line for line in done["refused"]), done
    assert done["tables"] > 0
    with connection.cursor() as cursor:
        cursor.execute("SHOW lock_timeout")
        assert cursor.fetchone() == ("0",)  # the session's setting is back


def test_the_wait_is_the_bound_set_when_compaction_runs(world, settings, monkeypatch):
    """``settings.ERASURE_SNAPSHOT_WAIT_SECONDS`` is read when compaction runs, not when the module was loaded (a
    default argument had kept 30 s whatever a deployment or test set; verify_erasure's patient
    300 s then gave up after 30 s behind another pytest worker's long test). At 0 it names the
    session at once, without one pause."""
    settings.ERASURE_SNAPSHOT_WAIT_SECONDS = 0.0
    monkeypatch.setattr(compaction, "time", SimpleNamespace(  # this module's clock, its pause refused
        monotonic=time.monotonic, sleep=lambda seconds: pytest.fail(f"compaction paused {seconds} s")))
    other, pid = open_snapshot()
    try:
        horizon = compaction.next_transaction_id()
        assert pid in [found for found, _state, _start in compaction.wait_for_older_snapshots(horizon)]
    finally:
        other.rollback()
        other.close()


def test_a_later_snapshot_taken_while_an_older_transaction_ran_is_waited_for_too(world, settings, monkeypatch):
    """A session of this database that began *after* the erasure committed, while another
    database's older writing transaction still ran, holds that transaction's id as its xmin:
    VACUUM keeps every row deleted after it, the erased ones included, for as long as the later
    session lives. Compaction waits by transaction id, not by start time (a start-time rule let
    verify_erasure find erased bytes once in a full suite)."""
    settings.ERASURE_SNAPSHOT_WAIT_SECONDS = 1.0
    writer, writer_pid = open_session("SELECT pg_current_xact_id()", database="postgres")
    later: dict[str, object] = {}
    real_sleep = time.sleep

    def first_pause_opens_the_later_snapshot(seconds: float) -> None:
        if not later:  # compaction is waiting for the writer: a session here takes a snapshot now
            later["session"], later["pid"] = open_session(
                "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM pg_class")
            writer.commit()  # then the older transaction ends
        real_sleep(seconds)

    monkeypatch.setattr(compaction, "time", SimpleNamespace(monotonic=time.monotonic,
                                                            sleep=first_pause_opens_the_later_snapshot))
    try:
        done = compaction.compact_after_erasure()
    finally:
        writer.close()
        if later:
            later["session"].rollback()
            later["session"].close()
    assert later, "compaction never waited for the writing transaction of the other database"
    refusals = [line for line in done["refused"] if line.startswith("older transactions still open")]
    assert len(refusals) == 1 and f"pid {later['pid']} (idle in transaction" in refusals[0], done
    assert f"pid {writer_pid} " not in refusals[0], done
