"""Erasure: after it no table, search, graph or export holds the erased content or its vector;
a tombstone says who, when, what kind and how many; holds, reruns, crashes and running jobs."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django_tasks_db.models import DBTaskResult

from memory.models import AuditEvent, AuditLog, Conversation, Matter, Message, Note, TurnExtraction
from remember import turns as turn_jobs
from remember.services.turn_jobs import do_claim_turn
from remember.turns import TurnGone, process_turn
from recall import search_memory
from memory.services.notes import supersede_note
from records.services import erasure as erasure_service
from records.erasure import (
    ErasureError,
    conversation_unit,
    erase,
    matter_unit,
    preview,
    subject_unit,
    user_unit,
)
from navigation.models import NavigationGraphSnapshot
from tests.clients import client_for
from tests.records.conftest import (
    SECRET_NAME,
    SECRET_REPLY,
    SECRET_TURN,
    tables_containing,
    tables_holding_vectors,
    vectors_of,
)

pytestmark = pytest.mark.django_db


def searched_text(user) -> str:
    """Everything the user's searches return for the landlord: layered (notes and turns),
    semantic notes, and the navigation search."""
    client = client_for(user)
    found = []
    for strategy in ("layered", "semantic", "layered_nav"):
        response = client.post("/api/memory/search", {"query": f"{SECRET_NAME} 押金 8000元", "k": 20,
                                                      "strategy": strategy}, format="json")
        assert response.status_code == 200, response.content
        body = response.json()  # what was recalled, not the echoed query
        found.append([body["hits"], body["messages"], body["system_message"]])
    response = client.post("/api/navigation/search", {"query": f"{SECRET_NAME} 押金", "k": 20}, format="json")
    assert response.status_code == 200, response.content
    found.append(response.json()["hits"])
    return json.dumps(found, ensure_ascii=False)


def graph_text(user) -> str:
    response = client_for(user).get("/api/navigation/graph", {"l0_limit": 500})
    assert response.status_code == 200, response.content
    return json.dumps(response.json(), ensure_ascii=False)


def assert_everything_holds_the_secret() -> None:
    """The scan can fail: before erasure it finds the content where the write path put it."""
    found = tables_containing(SECRET_NAME)
    for column in ("memory_note.content", "memory_message.content",
                   "memory_routingdecision.content", "memory_turnextraction.items", "memory_auditlog.after"):
        assert column in found, (column, found)


def test_erasing_a_matter_leaves_no_row_search_graph_or_vector_with_its_content(world, deposit_memory):
    assert_everything_holds_the_secret()
    vectors = vectors_of(SECRET_NAME)
    assert len(vectors) >= 3
    assert tables_holding_vectors(vectors)
    assert SECRET_NAME in graph_text(world.alice)
    assert SECRET_NAME in searched_text(world.alice)
    assert NavigationGraphSnapshot.objects.filter(firm=world.firm_a).exists()
    kept = set(Note.objects.filter(matter=world.matter_laptop).values_list("pk", flat=True))

    result = erase(matter_unit(world.matter_deposit), actor=world.alice, reason="client request 2026-11-30")

    assert tables_containing(SECRET_NAME) == {}
    assert tables_containing("押金8000元") == {}
    assert tables_containing("翠花") == {}
    assert tables_holding_vectors(vectors) == {}
    assert SECRET_NAME not in graph_text(world.alice)
    assert SECRET_NAME not in searched_text(world.alice)
    hits = search_memory(world.alice, f"{SECRET_NAME} 押金", k=20).hits
    assert hits
    assert all(SECRET_NAME not in (hit.note or hit.message).content for hit in hits)  # the laptop turn
    # the rest of the firm's memory is untouched
    assert set(Note.objects.filter(matter=world.matter_laptop).values_list("pk", flat=True)) == kept
    assert tables_containing("5999元")
    tombstone = result.tombstone
    assert tombstone.event_type == AuditEvent.ERASED
    assert tombstone.actor == world.alice
    assert tombstone.extra["reason"] == "client request 2026-11-30"
    assert tombstone.extra["counts"]["notes"] >= 1
    assert tombstone.extra["counts"]["messages"] == 2
    assert SECRET_NAME not in json.dumps(tombstone.extra, ensure_ascii=False)
    assert AuditLog.objects.filter(extra__redacted_by=tombstone.pk).count() == tombstone.extra["counts"]["audit_entries_redacted"] > 0
    matter = Matter.objects.get(pk=world.matter_deposit.pk)
    assert matter.erased_at
    assert matter.title == ""
    assert not matter.assignments.exists()


def test_erasing_twice_is_a_no_op_that_says_so(world, deposit_memory):
    secret, _ = deposit_memory
    first = erase(conversation_unit(world.firm_a, secret.pk), actor="system:test", reason="request")
    entries = AuditLog.objects.count()
    again = erase(conversation_unit(world.firm_a, secret.pk), actor="system:test", reason="request")
    assert again.already_erased
    assert again.tombstone == first.tombstone
    assert "already erased" in again.message
    matter = erase(matter_unit(world.matter_deposit), actor="system:test", reason="request")
    assert not matter.already_erased  # the matter's row still had its title and wall: retired now
    twice = erase(matter_unit(Matter.objects.get(pk=world.matter_deposit.pk)), actor="system:test", reason="again")
    assert twice.already_erased
    assert twice.tombstone == matter.tombstone
    assert AuditLog.objects.count() == entries + 1  # only the matter's tombstone was added
    with pytest.raises(ErasureError, match="nothing to erase"):
        erase(subject_unit(world.firm_a, "从未提过的人"), actor="system:test", reason="request")


def test_a_subject_erased_twice_reports_the_first_tombstone(world, deposit_memory):
    first = erase(subject_unit(world.firm_a, SECRET_NAME), actor="system:test", reason="data subject request")
    assert tables_containing(SECRET_NAME) == {}
    assert SECRET_NAME not in searched_text(world.alice)
    assert SECRET_NAME not in graph_text(world.alice)
    export = client_for(world.alice).get(f"/api/memory/matters/{world.matter_deposit.pk}/export")
    assert export.status_code == 200
    assert SECRET_NAME not in export.content.decode()
    assert tables_containing("5999元")  # the laptop turn does not name the landlord
    second = erase(subject_unit(world.firm_a, SECRET_NAME), actor="system:test", reason="data subject request")
    assert second.already_erased
    assert second.tombstone == first.tombstone
    assert first.tombstone.object_id != SECRET_NAME
    assert SECRET_NAME not in first.tombstone.object_id


def test_erasing_a_user_removes_their_conversations_private_notes_and_persona(world, make_turn):
    bob_talk = Conversation.objects.create(firm=world.firm_a, user=world.bob, matter=None, title="私人")
    make_turn(bob_talk, SECRET_TURN, SECRET_REPLY)
    world.note(f"{SECRET_NAME}是bob的私人笔记", owner=world.bob)
    assert tables_containing(SECRET_NAME)
    result = erase(user_unit(world.firm_a, world.bob), actor=world.alice, reason="left the firm")
    assert tables_containing(SECRET_NAME) == {}
    assert result.counts["conversations"] == 1


def test_legal_hold_refuses_erasure_and_changes_nothing(world, deposit_memory):
    Matter.objects.filter(pk=world.matter_deposit.pk).update(legal_hold=True, legal_hold_reason="litigation pending")
    before = tables_containing(SECRET_NAME)
    with pytest.raises(ErasureError, match="legal hold"):
        erase(matter_unit(Matter.objects.get(pk=world.matter_deposit.pk)), actor="system:test", reason="request")
    with pytest.raises(ErasureError, match="legal hold"):
        erase(subject_unit(world.firm_a, SECRET_NAME), actor="system:test", reason="request")
    assert tables_containing(SECRET_NAME) == before


def test_a_crash_mid_erasure_leaves_everything_and_a_rerun_completes(world, deposit_memory, monkeypatch):
    before = tables_containing(SECRET_NAME)
    entries = AuditLog.objects.count()

    def crash(*_args):  # after tombstone, redaction, scrubbing and the first deletes
        raise RuntimeError("power cut")

    monkeypatch.setattr(erasure_service, "_delete_admin_log", crash)
    with pytest.raises(RuntimeError):
        erase(matter_unit(world.matter_deposit), actor="system:test", reason="request")
    assert tables_containing(SECRET_NAME) == before
    assert AuditLog.objects.count() == entries
    assert not AuditLog.objects.filter(event_type=AuditEvent.ERASED).exists()
    monkeypatch.undo()
    erase(matter_unit(world.matter_deposit), actor="system:test", reason="request")
    assert tables_containing(SECRET_NAME) == {}


def test_a_queued_extraction_job_of_an_erased_conversation_writes_nothing(world, make_turn):
    talk = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit)
    queued = make_turn(talk, SECRET_TURN, SECRET_REPLY, run=False)
    erase(conversation_unit(world.firm_a, talk.pk), actor="system:test", reason="request")
    assert process_turn(queued.pk) is None
    assert tables_containing(SECRET_NAME) == {}


def test_a_running_extraction_job_stops_at_its_next_write(world, make_turn):
    talk = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit)
    turn = make_turn(talk, SECRET_TURN, SECRET_REPLY, run=False)
    running = do_claim_turn(turn.pk)  # the worker took it, read the turn and waits for the LLM
    assert running.status == TurnExtraction.Status.RUNNING
    assert running.user_message.content
    assert running.assistant_message.content
    assert running.conversation
    erase(conversation_unit(world.firm_a, talk.pk), actor="system:test", reason="request")
    with pytest.raises(TurnGone):
        turn_jobs._run(running, None)  # the LLM answered: nothing of it may land
    assert tables_containing(SECRET_NAME) == {}


@pytest.mark.django_db(transaction=True)
def test_the_audit_log_refuses_updates_and_deletes_outside_an_erasure(world, deposit_memory):
    entry = AuditLog.objects.filter(after__isnull=False).first()
    for statement in ("UPDATE memory_auditlog SET after = NULL, before = NULL, "
                      "extra = jsonb_build_object('redacted_by', 1) WHERE id = %s",
                      "DELETE FROM memory_auditlog WHERE id = %s"):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement, [entry.pk])
    # naming an old tombstone (not written in this transaction) is refused too
    old = erase(subject_unit(world.firm_a, "电脑"), actor="system:test", reason="request").tombstone
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('legalmem.audit_redaction', %s, true)", [str(old.pk)])
        cursor.execute(
            "UPDATE memory_auditlog SET after = NULL, before = NULL, extra = jsonb_build_object('redacted_by', %s::bigint) "
            "WHERE id = %s", [old.pk, AuditLog.objects.exclude(event_type=AuditEvent.ERASED).filter(
                extra__redacted_by__isnull=True).first().pk])


def test_dry_run_prints_counts_and_changes_nothing(world, deposit_memory, capsys):
    before = tables_containing(SECRET_NAME)
    call_command("erase", "--matter", world.matter_deposit.reference, "--firm", "alpha", "--dry-run")
    out = capsys.readouterr().out
    assert "would be erased" in out
    assert "2 messages" in out
    assert tables_containing(SECRET_NAME) == before
    assert preview(matter_unit(world.matter_deposit)).counts["messages"] == 2


def test_the_command_erases_and_a_second_run_says_already_erased(world, deposit_memory, capsys):
    secret, _ = deposit_memory
    call_command("erase", "--conversation", str(secret.pk), "--reason", "request")
    assert "erased:" in capsys.readouterr().out
    call_command("erase", "--conversation", str(secret.pk), "--reason", "request")
    assert "already erased" in capsys.readouterr().out
    with pytest.raises(Exception, match="reason is required"):
        call_command("erase", "--matter", world.matter_laptop.reference)
    assert tables_containing("5999元")


def test_rows_that_stay_lose_what_points_at_the_erased_notes(world, deposit_memory):
    secret, other = deposit_memory
    old = world.note("房东答应七日内退还押金", matter=world.matter_laptop)
    new = world.note(f"{SECRET_NAME}改口说十五日内退还押金", matter=world.matter_laptop)
    supersede_note(old, new, actor=world.alice, reason=f"{SECRET_NAME}改口")
    kept = Note.objects.filter(matter=world.matter_laptop).exclude(pk__in=[old.pk, new.pk]).first()
    reply = Message.objects.filter(conversation=other, role="assistant").get()
    Message.objects.filter(pk=reply.pk).update(recalled=[
        {"id": str(new.pk), "layer": "case", "score": 0.9}, {"id": str(kept.pk), "layer": "case", "score": 0.5}])

    tombstone = erase(subject_unit(world.firm_a, SECRET_NAME), actor="system:test", reason="request").tombstone

    old.refresh_from_db()
    assert old.superseded_by is None
    assert old.status == Note.Status.SUPERSEDED  # its own history stays true
    assert [step.get("redacted_by") for step in old.evolution_history if step["event"] == "superseded"] == [tombstone.pk]
    assert not Note.objects.filter(pk=new.pk).exists()
    assert Message.objects.get(pk=reply.pk).recalled == [{"id": str(kept.pk), "layer": "case", "score": 0.5}]
    superseded_entry = AuditLog.objects.get(object_id=str(old.pk), event_type=AuditEvent.NOTE_SUPERSEDED)
    assert superseded_entry.extra == {"redacted_by": tombstone.pk}
    assert superseded_entry.after is None
    assert superseded_entry.actor_label == "alice"
    assert superseded_entry.object_type == "note"
    assert tables_containing(SECRET_NAME) == {}


@pytest.mark.django_db(transaction=True)
def test_a_job_that_reaches_its_write_during_an_erasure_waits_and_then_writes_nothing(world, make_turn, monkeypatch):
    """Two real connections: the erasure holds the turn's row lock while it collects; the job,
    done with its LLM call, blocks on that lock, then finds its turn gone."""
    import threading

    from django.db import connections

    talk = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit)
    turn = make_turn(talk, SECRET_TURN, SECRET_REPLY, run=False)
    queued = DBTaskResult.objects.filter(task_path=turn_jobs.extract_turn_task.module_path, status="READY")
    assert queued.filter(args_kwargs__args=[turn.pk]).count() == 1  # committed: its task is on the queue
    running = do_claim_turn(turn.pk)
    assert running.user_message.content
    assert running.assistant_message.content
    assert running.conversation
    locked, proceed, outcome = threading.Event(), threading.Event(), {}
    real_collect = erasure_service.collect

    def collect_slowly(unit):
        locked.set()  # the turn rows are locked by now
        assert proceed.wait(30)
        return real_collect(unit)

    monkeypatch.setattr(erasure_service, "collect", collect_slowly)

    def in_thread(name, work):
        try:
            outcome[name] = work()
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            outcome[name] = exc
        finally:
            connections.close_all()

    eraser = threading.Thread(target=in_thread, args=("erase", lambda: erase(
        conversation_unit(world.firm_a, talk.pk), actor="system:test", reason="request")))
    eraser.start()
    assert locked.wait(30)
    job = threading.Thread(target=in_thread, args=("job", lambda: turn_jobs._run(running, None)))
    job.start()
    job.join(2)
    assert job.is_alive(), outcome  # waiting for the erasure's lock, nothing written
    proceed.set()
    eraser.join(30)
    job.join(30)
    assert not isinstance(outcome["erase"], BaseException), outcome
    assert isinstance(outcome["job"], TurnGone), outcome
    assert tables_containing(SECRET_NAME) == {}
    assert outcome["erase"].counts["jobs_cancelled"] == 1
    assert not queued.exists()  # the queued task is dropped
