"""Create the demo firm and users on first start (idempotent; never touches existing data)."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils.translation import gettext, gettext_lazy

from memory.models import Firm, Role
from memory.services.tenancy import assign_user, create_firm, create_matter, set_membership

DEMO_PASSWORD = "legalmem-demo"
DEMO_FIRM = ("demo-firm", "示例律师事务所 Demo Law Firm")
OTHER_FIRM = ("other-firm", "另一家律所 Other Firm")
DEMO_MATTERS = (
    ("M-001", "电脑花屏退货纠纷"),
    ("M-002", "租房押金返还纠纷"),
    ("M-003", "课程退款纠纷"),
    ("M-004", "加班费争议"),
    ("M-005", "维修费争议"),
)
ACTOR = "system:seed_demo"


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext("Create the demo firm (alice: firm admin, bob: lawyer) and another firm (charlie).")

    def handle(self, *args, **options) -> None:
        if Firm.objects.filter(slug=DEMO_FIRM[0]).exists():
            self.stdout.write(gettext("demo firm already present; nothing to do"))
            return
        with transaction.atomic():
            self._seed()
        self.stdout.write(gettext(
            "demo firm created: log in as alice (firm admin), bob (lawyer) or charlie (other firm), "
            "password '%(password)s'"
        ) % {"password": DEMO_PASSWORD})

    def _seed(self) -> None:
        User = get_user_model()
        demo = create_firm(slug=DEMO_FIRM[0], name=DEMO_FIRM[1], actor=ACTOR)
        other = create_firm(slug=OTHER_FIRM[0], name=OTHER_FIRM[1], actor=ACTOR)
        alice = self._user(User, "alice", staff=True)
        bob = self._user(User, "bob")
        charlie = self._user(User, "charlie", staff=True)
        set_membership(firm=demo, user=alice, role=Role.ADMIN, actor=ACTOR)
        set_membership(firm=demo, user=bob, role=Role.LAWYER, actor=ACTOR)
        set_membership(firm=other, user=charlie, role=Role.ADMIN, actor=ACTOR)
        for index, (reference, title) in enumerate(DEMO_MATTERS):
            matter = create_matter(firm=demo, title=title, reference=reference, actor=ACTOR)
            assign_user(matter=matter, user=alice, actor=ACTOR)
            if index % 2 == 0:  # bob is walled off from every other matter
                assign_user(matter=matter, user=bob, actor=ACTOR)
        walled = create_matter(firm=other, title="另一家律所的保密案件", reference="X-001", actor=ACTOR)
        assign_user(matter=walled, user=charlie, actor=ACTOR)

    def _user(self, User, username: str, *, staff: bool = False):
        user, created = User.objects.get_or_create(username=username, defaults={"is_staff": staff})
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        return user
