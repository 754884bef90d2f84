"""Personal access tokens: a user's key for the REST API and the MCP server.

Only a SHA-256 digest of the secret is stored, with a short visible prefix to find the row; the
secret itself is shown once, when the token is made. A token user is exactly that user: it
reaches what ``visible_to`` lets the user reach, narrowed (never widened) by the token's scope
and matters.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from memory.models import Firm, Matter, Membership

#: Every token starts with this, so a leaked one is recognisable (secret scanners, logs).
TOKEN_PREFIX = "lm_"
PREFIX_CHARS = 8  # the visible, indexed part after ``lm_``: the lookup key shown in lists
SECRET_BYTES = 32  # 256 bits of randomness behind the prefix
LAST_USED_RESOLUTION = timedelta(minutes=1)  # last use is written at most once a minute


def digest_of(secret: str) -> str:
    """The stored form of a token: hex SHA-256 (the secret is random, so no salt or slow hash)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def new_secret() -> tuple[str, str]:
    """A fresh ``(secret, prefix)``: ``lm_<prefix>_<random>``."""
    prefix = secrets.token_hex(PREFIX_CHARS // 2)
    return f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(SECRET_BYTES)}", prefix


def prefix_of(secret: str) -> str | None:
    """The lookup prefix of a presented secret, or None when it is not shaped like ours."""
    if not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
        return None
    prefix, sep, rest = secret[len(TOKEN_PREFIX):].partition("_")
    if not sep or len(prefix) != PREFIX_CHARS or not rest or not prefix.isalnum() or not prefix.isascii():
        return None
    return prefix


class TokenScope(models.TextChoices):
    READ = "read", _("read only")
    READ_WRITE = "read_write", _("read and write")


class AccessTokenQuerySet(models.QuerySet["AccessToken"]):
    def owned_by(self, user) -> "AccessTokenQuerySet":
        """A user's own tokens (their page)."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(user=user)

    def visible_to(self, user) -> "AccessTokenQuerySet":
        """Tokens a firm admin may see and revoke: their own, and their firm's members' tokens
        made for that firm (a member of two firms has each firm's tokens seen by that firm)."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(models.Q(user=user) | models.Q(firm__in=Firm.objects.administered_by(user)))

    def usable(self) -> "AccessTokenQuerySet":
        now = timezone.now()
        return self.filter(revoked_at__isnull=True, expires_at__gt=now)


class AccessToken(models.Model):
    """One named personal access token of one user, for one of their firms."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="access_tokens", verbose_name=_("user")
    )
    firm = models.ForeignKey(Firm, on_delete=models.CASCADE, related_name="+", verbose_name=_("firm"))
    name = models.CharField(_("name"), max_length=100)
    prefix = models.CharField(_("prefix"), max_length=PREFIX_CHARS, unique=True)
    digest = models.CharField(max_length=64, editable=False)
    scope = models.CharField(_("permission"), max_length=12, choices=TokenScope.choices, default=TokenScope.READ)
    language = models.CharField(
        _("language"), max_length=10, blank=True, choices=settings.LANGUAGES,
        help_text=_("The language of the messages its assistant is given; empty: the client's or the site's."),
    )
    matters = models.ManyToManyField(
        Matter, blank=True, related_name="+", verbose_name=_("limited to matters"),
        help_text=_("Empty: every matter the user is assigned to."),
    )
    created_at = models.DateTimeField(_("created at"), default=timezone.now)
    expires_at = models.DateTimeField(_("expires at"))
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        verbose_name=_("revoked by"),
    )

    objects = AccessTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("access token")
        verbose_name_plural = _("access tokens")

    def __str__(self) -> str:
        return f"{self.name} ({TOKEN_PREFIX}{self.prefix}…)"

    @property
    def display_prefix(self) -> str:
        return f"{TOKEN_PREFIX}{self.prefix}…"

    def matches(self, secret: str) -> bool:
        """Constant-time comparison of a presented secret with the stored digest."""
        return hmac.compare_digest(self.digest, digest_of(secret))

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    def is_expired(self, now=None) -> bool:
        return self.expires_at <= (now or timezone.now())

    def is_usable(self, now=None) -> bool:
        return not self.is_revoked and not self.is_expired(now)

    @property
    def can_write(self) -> bool:
        return self.scope == TokenScope.READ_WRITE

    def is_member(self) -> bool:
        """The user still belongs to the token's firm (a token outlives no membership)."""
        return Membership.objects.filter(user_id=self.user_id, firm_id=self.firm_id).exists()

    def matter_ids(self) -> frozenset[int] | None:
        """The matters the token is limited to, or None for every matter the user may open."""
        ids = frozenset(self.matters.values_list("pk", flat=True))
        return ids or None

    def allows_matter(self, matter_id: int | None) -> bool:
        """Whether the token may reach memory of this matter (None: matter-less memory)."""
        limited = self.matter_ids()
        return matter_id is None or limited is None or matter_id in limited

    def answer_language(self, asked: str | None = None) -> str:
        """The language this token's caller is answered in: the one its owner chose for it (as the
        web's language menu beats the browser's), else what the client asks for (``Accept-Language``),
        else the site's."""
        return self.language or asked or settings.LANGUAGE_CODE

    def needs_last_used_update(self, now) -> bool:
        return self.last_used_at is None or now - self.last_used_at >= LAST_USED_RESOLUTION

    def status_label(self) -> str:
        if self.is_revoked:
            return str(_("revoked"))
        if self.is_expired():
            return str(_("expired"))
        return str(_("active"))


class TokenRefusal(models.Model):
    """One refused token presentation: the throttle counts these per presented token (its
    ``fingerprint``, a keyed hash: never the secret) and per address; the audit log keeps the
    story. A lifted block keeps its rows, marked so they no longer count
    (``connectors.throttle``, docs/connectors.md "Throttling")."""

    ip_address = models.GenericIPAddressField(null=True, blank=True)
    prefix = models.CharField(max_length=PREFIX_CHARS, blank=True)
    fingerprint = models.CharField(max_length=64, blank=True)
    token = models.ForeignKey(AccessToken, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    lifted_for_token = models.BooleanField(default=False)
    lifted_for_address = models.BooleanField(default=False)

    class Meta:
        indexes = [models.Index(fields=["ip_address", "created_at"], name="token_refusal_ip_idx"),
                   models.Index(fields=["fingerprint", "created_at"], name="token_refusal_fingerprint_idx")]
