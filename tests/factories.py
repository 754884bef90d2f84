"""factory_boy factories for the memory models (tests create data through these or services)."""
from __future__ import annotations

from functools import cache

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password

from memory.models import Firm, Matter, MatterAssignment, Membership, Role

PASSWORD = "correct horse battery staple"


@cache
def password_hash(raw: str) -> str:
    """``raw`` hashed by the site's own hasher (PBKDF2, a million rounds), once per test process:
    every user of a world used to pay about a second for it, most of a fast test's time."""
    return make_password(raw)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")

    @factory.post_generation
    def password(user, create: bool, extracted: str | None, **kwargs) -> None:
        """What ``set_password(PASSWORD)`` stored (or ``UserFactory(password=...)``), without hashing again."""
        user.password = password_hash(extracted or PASSWORD)

    @factory.post_generation
    def save_password(user, create: bool, extracted, **kwargs) -> None:
        if create:
            user.save(update_fields=["password"])


class FirmFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Firm

    name = factory.Sequence(lambda n: f"Firm {n}")
    slug = factory.Sequence(lambda n: f"firm-{n}")


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    firm = factory.SubFactory(FirmFactory)
    role = Role.LAWYER


class MatterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Matter

    firm = factory.SubFactory(FirmFactory)
    title = factory.Sequence(lambda n: f"Matter {n}")
    reference = factory.Sequence(lambda n: f"M-{n:03d}")


class AssignmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = MatterAssignment

    matter = factory.SubFactory(MatterFactory)
    user = factory.SubFactory(UserFactory)
