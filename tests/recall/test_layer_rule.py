"""The layer rule is declared once (``layer_rules.layer_rule``) and rendered twice: as a ``Q``
for the ORM reads and as SQL for the one-statement hot path. Both renderings must pick the
same notes for every layer, every user (alice: firm admin on two matters; bob: lawyer on one;
charlie: admin of the other firm; dora: no firm) and with or without a current matter."""
from __future__ import annotations

import numpy as np
import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection

from memory.models import MemoryScope, Note
from recall import search_memory
from recall.candidate_sql import _vector_parts, read_candidates, vector_candidates_by_layer
from recall.layer_rules import _layers_condition, layer_filter
from recall.plan import RetrievalPlan
from recall.reach import _visible_where, reach_of
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

LAYERS = tuple(MemoryScope.values)


def _plan(layers: tuple[str, ...], matter_id: int | None) -> RetrievalPlan:
    return RetrievalPlan(layers=layers, matter_id=matter_id, conversation_id=None, persona_first=False,
                         search_messages=False, graph_expansion=False)


def _by_q(user, plan, reach) -> set:
    return set(Note.objects.visible_to(user).active().filter(layer_filter(plan, reach))
               .values_list("pk", flat=True))


def _by_sql(user, plan, reach) -> set:
    visible = _visible_where(user, reach)
    if visible is None:
        return set()
    condition, params = _layers_condition(plan, reach, plan.layers)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM memory_note WHERE ({visible.sql}) AND {condition}",
                       [*visible.params, *params])
        return {row[0] for row in cursor.fetchall()}


def _by_parts(user, plan, reach, *, exact_case: bool) -> set:
    """The union of what every nearest-neighbour part's condition admits (no LIMIT)."""
    visible = _visible_where(user, reach)
    if visible is None:
        return set()
    found: set = set()
    with connection.cursor() as cursor:
        for part in _vector_parts(plan, reach, plan.layers, 10, exact_case=exact_case):
            cursor.execute(f"SELECT id FROM memory_note WHERE ({visible.sql}) AND {part.condition}",
                           [*visible.params, *part.params])
            found |= {row[0] for row in cursor.fetchall()}
    return found


def test_q_and_sql_select_the_same_notes_for_every_layer_and_user(world, memory):
    dora = UserFactory(username="dora")  # no firm at all
    users = {"alice": world.alice, "bob": world.bob, "charlie": world.charlie, "dora": dora}
    matters = {"alice": world.matter_laptop.pk, "bob": world.matter_laptop.pk, "charlie": world.matter_b.pk,
               "dora": None}
    seen: dict[str, set] = {}
    for name, user in users.items():
        reach = reach_of(user)
        for matter_id in (None, matters[name]):
            for layers in [(layer,) for layer in LAYERS] + [LAYERS]:
                plan = _plan(layers, matter_id)
                by_q = _by_q(user, plan, reach)
                assert _by_sql(user, plan, reach) == by_q, (name, layers, matter_id)
                for exact_case in (False, True):
                    assert _by_parts(user, plan, reach, exact_case=exact_case) == by_q, (name, layers, exact_case)
                if layers == LAYERS and matter_id is None:
                    seen[name] = by_q
    # The renderings agree on real selections, not on empty sets.
    n = {key: note.pk for key, note in memory.items()}
    assert {n["laptop_screen"], n["deposit_fact"], n["alice_profile"], n["law"]} <= seen["alice"]
    assert {n["laptop_screen"], n["bob_profile"], n["cross"]} <= seen["bob"]
    assert not {n["deposit_fact"], n["alice_profile"], n["secret_fact"], n["beta_fact"]} & seen["bob"]
    assert {n["beta_fact"], n["beta_law"]} <= seen["charlie"]
    assert not {n["laptop_screen"], n["law"], n["procedure"]} & seen["charlie"]
    assert seen["dora"] == set()


def test_a_user_who_can_see_nothing_gets_nothing(world, memory):
    vector = np.ones(384, dtype=np.float32) / np.sqrt(384)
    plan = _plan(LAYERS, None)
    for user in (UserFactory(username="dora"), AnonymousUser()):
        reach = reach_of(user)
        by_layer, keyword = read_candidates(user, plan, reach, vector, ["电脑"], per_layer=20)
        assert by_layer == {layer: [] for layer in LAYERS}
        assert keyword == []
        assert vector_candidates_by_layer(user, plan, reach, vector, per_layer=5) == {
            layer: [] for layer in LAYERS
        }
    assert search_memory(UserFactory(username="erin"), "电脑花屏检测报告", k=10).hits == []
    # ... while a member of the firm finds the same question's notes.
    assert search_memory(world.bob, "电脑花屏检测报告", k=10).hits
