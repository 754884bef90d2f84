"""``manage.py token_blocks``: the token throttle's current blocks (a presented token refused too
often, an address that presented too many bad tokens), and ``--lift-token KEY`` /
``--lift-address IP`` to end one now, audited (docs/connectors.md "Throttling")."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext, gettext_lazy

from connectors.services import NoSuchBlock, lift_block
from connectors.throttle import Block, current_blocks

#: The shortest start of a token block's key that ``--lift-token`` takes.
MIN_KEY_CHARS = 8
ACTOR = "system:token_blocks"


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext("List the access-token throttle's current blocks, or lift one (audited).")

    def add_arguments(self, parser) -> None:
        lift = parser.add_mutually_exclusive_group()
        lift.add_argument("--lift-token", metavar="KEY",
                          help=gettext_lazy("lift the block of one presented token (its key as listed)"))
        lift.add_argument("--lift-address", metavar="IP", help=gettext_lazy("lift the block of one address"))
        parser.add_argument("--actor", default="",
                            help=gettext("who lifts it (username); default %(actor)s") % {"actor": ACTOR})
        parser.add_argument("--reason", default="", help=gettext_lazy("why (kept in the audit log)"))

    def handle(self, *args, lift_token: str | None, lift_address: str | None, actor: str, reason: str,
               **options) -> None:
        if lift_token is None and lift_address is None:
            self._list()
            return
        who = self._actor(actor)
        kind, key = ("token", self._token_key(lift_token)) if lift_token is not None else ("address", lift_address)
        try:
            block = lift_block(kind, key, actor=who, reason=reason)
        except NoSuchBlock:
            raise CommandError(gettext("nothing is blocked under %(key)s now") % {"key": key}) from None
        self.stdout.write(self.style.SUCCESS(gettext("lifted: %(block)s") % {"block": describe(block)}))

    def _list(self) -> None:
        blocks = current_blocks()
        if not blocks:
            self.stdout.write(gettext("No token or address is blocked."))
            return
        for block in blocks:
            self.stdout.write(describe(block))

    def _token_key(self, start: str) -> str:
        """The one current token block whose key starts with ``start``."""
        start = start.strip().lower()
        if len(start) < MIN_KEY_CHARS:
            raise CommandError(gettext("give at least %(n)d characters of the key") % {"n": MIN_KEY_CHARS})
        keys = [b.key for b in current_blocks() if b.kind == "token" and b.key.startswith(start)]
        if len(keys) > 1:
            raise CommandError(gettext("%(key)s names more than one block; give more of it") % {"key": start})
        return keys[0] if keys else start

    def _actor(self, username: str):
        if not username:
            return ACTOR
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(gettext("no user %(username)r") % {"username": username})
        return user


def describe(block: Block) -> str:
    """One block in one line, in the operator's language."""
    return block.description()
