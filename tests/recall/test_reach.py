"""``reach_of``: the user's firms and assigned matters, read in one round trip, exactly the ORM
rules (``Firm.objects.of_user``, ``Matter.objects.assigned_to``) — alice, bob (walled off from
matter_deposit), charlie (another firm) and an anonymous user."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser

from memory.models import Firm, Matter
from recall.reach import reach_of
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_reach_is_the_orm_rule_in_one_query(world, django_assert_num_queries):
    for user in (world.alice, world.bob, world.charlie):
        with django_assert_num_queries(1):
            reach = reach_of(user)
        assert reach.user_id == user.pk
        assert reach.firm_ids == tuple(sorted(Firm.objects.of_user(user).values_list("pk", flat=True)))
        assert reach.matter_ids == tuple(sorted(Matter.objects.assigned_to(user).values_list("pk", flat=True)))
    assert reach_of(world.alice).matter_ids == tuple(sorted((world.matter_laptop.pk, world.matter_deposit.pk)))
    assert reach_of(world.bob).matter_ids == (world.matter_laptop.pk,)
    assert reach_of(world.charlie).firm_ids == (world.firm_b.pk,)
    assert reach_of(world.charlie).matter_ids == (world.matter_b.pk,)


def test_a_user_without_firm_or_login_reaches_nothing(world, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert reach_of(AnonymousUser()).firm_ids == ()
    loner = UserFactory(username="loner")
    assert (reach_of(loner).firm_ids, reach_of(loner).matter_ids) == ((), ())


def test_the_compiled_statement_follows_every_change_of_assignment(world, django_assert_num_queries):
    """The statement is compiled once per user, the rule is evaluated on every read: an
    unassignment, a new assignment and charlie's unchanged reach are seen at once."""
    from memory.services.tenancy import unassign_user

    assert world.matter_deposit.pk in reach_of(world.alice).matter_ids
    unassign_user(world.matter_deposit.assignments.get(user=world.alice), actor=world.alice)
    with django_assert_num_queries(1):
        assert reach_of(world.alice).matter_ids == (world.matter_laptop.pk,)
    world.matter_deposit.assignments.create(user=world.bob)
    assert reach_of(world.bob).matter_ids == tuple(sorted((world.matter_laptop.pk, world.matter_deposit.pk)))
    assert reach_of(world.charlie).matter_ids == (world.matter_b.pk,)
