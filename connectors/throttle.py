"""The token throttle: refused tokens are counted per presented token and per address, and a
block refuses only tokens that are not valid anyway (docs/connectors.md "Throttling").

A firm behind one NAT address must not be locked out by one misconfigured client, so a valid
token always passes: a block answers a bad token 429 instead of 401 (stop retrying), it never
stands between a right secret and its user. Guessing is not what the throttle holds off — a
secret has 256 random bits — it tells a broken client to stop and keeps a flood of bad tokens
from one address short.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Max, Min, QuerySet
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext

from connectors.models import TOKEN_PREFIX, AccessToken, TokenRefusal

FINGERPRINT_SALT = "connectors.throttle.fingerprint"


def fingerprint_of(secret: str) -> str:
    """What the throttle knows of a presented secret: an HMAC keyed with SECRET_KEY, so neither
    the secret nor a password pasted by mistake can be read back from it."""
    return salted_hmac(FINGERPRINT_SALT, secret, algorithm="sha256").hexdigest()


@dataclass(frozen=True)
class RefusalBound:
    """A rule: ``limit`` counted refusals of one key (a token's fingerprint, an address) within
    ``AXES_COOLOFF_TIME`` block that key's bad tokens."""

    kind: str  # "token" or "address"
    field: str  # the TokenRefusal column that holds the key
    lifted_field: str  # the TokenRefusal flag that stops a row counting once the block is lifted

    @property
    def limit(self) -> int:
        return settings.AXES_FAILURE_LIMIT if self.kind == "token" else settings.TOKEN_ADDRESS_FAILURE_LIMIT

    def counted(self, since: datetime) -> QuerySet[TokenRefusal]:
        return TokenRefusal.objects.filter(created_at__gte=since, **{self.lifted_field: False})

    def blocks(self, key: str | None, since: datetime) -> bool:
        if not key:
            return False
        return self.counted(since).filter(**{self.field: key}).count() >= self.limit


#: One presented token: the login throttle's small bound (AXES_FAILURE_LIMIT, 5).
PER_TOKEN = RefusalBound("token", "fingerprint", "lifted_for_token")
#: One address, whatever tokens it presents: settings.TOKEN_ADDRESS_FAILURE_LIMIT (each token stops
#: counting at its own bound: a refusal while blocked is not counted).
PER_ADDRESS = RefusalBound("address", "ip_address", "lifted_for_address")
BOUNDS = {bound.kind: bound for bound in (PER_TOKEN, PER_ADDRESS)}


def window_start(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - settings.AXES_COOLOFF_TIME


def is_blocked(fingerprint: str, ip_address: str | None) -> bool:
    """Whether a bad token is answered "throttled": its own refusals, or its address's, reached
    their bound lately. Off with ``AXES_ENABLED = False``, like the login throttle."""
    if not settings.AXES_ENABLED:
        return False
    since = window_start()
    return PER_TOKEN.blocks(fingerprint, since) or PER_ADDRESS.blocks(ip_address, since)


@dataclass(frozen=True)
class Block:
    """A current block, as the operator sees it (``manage.py token_blocks``)."""

    kind: str
    key: str  # the fingerprint or the address: what ``--lift-token`` / ``--lift-address`` take
    refusals: int
    first_at: datetime
    last_at: datetime
    prefix: str = ""  # the token's shown prefix when the secret was shaped like ours
    token: AccessToken | None = None  # the token when the secret was right but the token dead

    #: How much of a token block's key is shown (``manage.py token_blocks`` and admin list this many).
    SHOWN_KEY_CHARS = 16

    @property
    def ends_at(self) -> datetime:
        """When it ends at the latest (earlier as its older refusals age out)."""
        return self.last_at + settings.AXES_COOLOFF_TIME

    @property
    def shown_key(self) -> str:
        return self.key[:self.SHOWN_KEY_CHARS] if self.kind == "token" else self.key

    def description(self) -> str:
        """The block in one line, in the reader's language (the command's and admin's listing)."""
        until = timezone.localtime(self.ends_at).strftime("%Y-%m-%d %H:%M")
        if self.kind == "address":
            return gettext("address %(ip)s: %(n)d refused tokens, blocked until %(until)s at the latest") % {
                "ip": self.key, "n": self.refusals, "until": until}
        token = self.token
        what = (gettext("%(user)s's token “%(name)s” (%(status)s)") % {
            "user": token.user.get_username(), "name": token.name, "status": token.status_label()}
                if token is not None else gettext("an unknown token"))
        shown = f"{TOKEN_PREFIX}{self.prefix}…" if self.prefix else gettext("(not shaped like a token)")
        return gettext("token %(key)s %(shown)s, %(what)s: refused %(n)d times, blocked until %(until)s at the "
                       "latest") % {"key": self.shown_key, "shown": shown, "what": what, "n": self.refusals,
                                    "until": until}


def current_blocks(now: datetime | None = None) -> list[Block]:
    """Every key whose counted refusals are at its bound now: tokens first, then addresses."""
    since = window_start(now)
    blocks: list[Block] = []
    for bound in (PER_TOKEN, PER_ADDRESS):
        counted = bound.counted(since).exclude(**{f"{bound.field}__isnull": True})
        if bound is PER_TOKEN:
            counted = counted.exclude(fingerprint="")  # refusals kept from before fingerprints
        rows = (counted.values(bound.field)
                .annotate(refusals=Count("id"), first_at=Min("created_at"), last_at=Max("created_at"),
                          shown_prefix=Max("prefix"), token_pk=Max("token_id"))
                .filter(refusals__gte=bound.limit).order_by("-last_at"))
        tokens = AccessToken.objects.select_related("user", "firm").in_bulk(
            [row["token_pk"] for row in rows if row["token_pk"]])
        blocks += [Block(bound.kind, str(row[bound.field]), row["refusals"], row["first_at"], row["last_at"],
                         prefix=row["shown_prefix"] if bound is PER_TOKEN else "",
                         token=tokens.get(row["token_pk"]) if bound is PER_TOKEN else None)
                   for row in rows]
    return blocks


def blocks_seen_by(user) -> list[Block]:
    """The current blocks ``user`` may see and lift in admin: an operator every block; a firm admin
    the blocks of their firm's real tokens (revoked, expired: ``AccessToken.visible_to``). A secret
    that is no token, and an address, belong to no firm: operators only, as their audit entries."""
    blocks = current_blocks()
    if user.is_superuser:
        return blocks
    visible = set(AccessToken.objects.visible_to(user).values_list("pk", flat=True))
    return [block for block in blocks if block.token is not None and block.token.pk in visible]
