"""Factories for the write path's tests (conversations and messages of the shared world)."""
from __future__ import annotations

import factory
from django.utils import timezone

from memory.models import Conversation


class ConversationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Conversation

    title = factory.Sequence(lambda n: f"咨询 {n}")
    firm = factory.LazyAttribute(lambda c: c.user.memberships.first().firm)


def at(day: int, hour: int = 10, minute: int = 0):
    """A fixed time in March 2026 (Asia/Shanghai), so decay and ordering are deterministic."""
    return timezone.make_aware(timezone.datetime(2026, 3, day, hour, minute))
