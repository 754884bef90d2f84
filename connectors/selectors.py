"""Reads of connectors: finding a presented token (throttled: ``connectors.throttle``) and what a
token may reach.

A token reaches what its user may reach (``visible_to``), narrowed to the token's firm and,
when it is limited, to its matters: every function here only ever removes rows.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from connectors.models import AccessToken, prefix_of
from connectors.throttle import fingerprint_of, is_blocked
from memory.models import Conversation, Firm, Matter, Note
from recall import Hit, SearchResult
from memory.selectors import visible_notes


class RefusalReason:
    """Why a presented token was refused (stored in the audit entry, shown to nobody else)."""

    MALFORMED = "malformed"
    UNKNOWN = "unknown"
    REVOKED = "revoked"
    EXPIRED = "expired"
    NO_LONGER_MEMBER = "no_longer_member"
    THROTTLED = "throttled"


#: Refusals that count towards the throttle: a wrong or dead secret (not a valid token asking
#: for something it may not do).
COUNTED_REFUSALS = frozenset({RefusalReason.MALFORMED, RefusalReason.UNKNOWN, RefusalReason.REVOKED,
                              RefusalReason.EXPIRED, RefusalReason.NO_LONGER_MEMBER})


@dataclass(frozen=True)
class TokenCheck:
    """The outcome of checking a presented secret: the token when it may be used, else why not
    (``token`` is still set when the secret was right but the token is revoked or expired).
    ``fingerprint`` is what the throttle counts (``connectors.throttle``), never the secret."""

    token: AccessToken | None
    refused: str = ""
    prefix: str = ""
    fingerprint: str = ""

    @property
    def ok(self) -> bool:
        return not self.refused


def check_secret(secret: str, *, ip_address: str | None) -> TokenCheck:
    """Find the token a secret belongs to and say whether it may be used now. A valid token
    always may; a bad one is "throttled" (429) once it, or its address, has been refused too
    often lately (``connectors.throttle``): one client's bad token never locks out the others."""
    prefix = prefix_of(secret) or ""
    fingerprint = fingerprint_of(secret)
    check = _check(secret, prefix)
    if check.refused and is_blocked(fingerprint, ip_address):
        return TokenCheck(check.token, RefusalReason.THROTTLED, prefix, fingerprint)
    return dataclasses.replace(check, fingerprint=fingerprint)


def _check(secret: str, prefix: str) -> TokenCheck:
    if not prefix:
        return TokenCheck(None, RefusalReason.MALFORMED)
    token = AccessToken.objects.select_related("user", "firm").filter(prefix=prefix).first()
    if token is None or not token.matches(secret):
        return TokenCheck(None, RefusalReason.UNKNOWN, prefix)
    if token.is_revoked:
        return TokenCheck(token, RefusalReason.REVOKED, prefix)
    if token.is_expired():
        return TokenCheck(token, RefusalReason.EXPIRED, prefix)
    if not token.user.is_active or not token.is_member():
        return TokenCheck(token, RefusalReason.NO_LONGER_MEMBER, prefix)
    return TokenCheck(token, "", prefix)


def tokens_of(user) -> QuerySet[AccessToken]:
    """The user's own tokens for their page, newest first, with their matters."""
    return AccessToken.objects.owned_by(user).select_related("firm").prefetch_related("matters")


def firms_for_new_token(user) -> QuerySet[Firm]:
    """The firms a user may make a token for: their memberships' firms."""
    return Firm.objects.of_user(user).order_by("name")


def token_matters(token: AccessToken) -> QuerySet[Matter]:
    """The matters a token reaches: the user's assigned matters of the token's firm, narrowed to
    the token's list when it has one."""
    matters = Matter.objects.assigned_to(token.user).filter(firm_id=token.firm_id)
    limited = token.matter_ids()
    if limited is not None:
        matters = matters.filter(pk__in=limited)
    return matters.order_by("reference", "title")


def _reach(token: AccessToken, matter_field: str = "matter") -> Q:
    """Rows of the token's firm, and of its matters when limited (matter-less rows stay)."""
    limited = token.matter_ids()
    condition = Q(firm_id=token.firm_id)
    if limited is not None:
        condition &= Q(**{f"{matter_field}__isnull": True}) | Q(**{f"{matter_field}__in": limited})
    return condition


def token_notes(token: AccessToken) -> QuerySet[Note]:
    """The notes a token may read: ``visible_notes`` of its user, narrowed."""
    return visible_notes(token.user).filter(_reach(token))


def token_conversations(token: AccessToken) -> QuerySet[Conversation]:
    return Conversation.objects.visible_to(token.user).filter(_reach(token))


def narrows_anything(token: AccessToken) -> bool:
    """Whether the token sees less than its user: limited to matters, or the user belongs to
    other firms than the token's."""
    if token.matter_ids() is not None:
        return True
    return token.user.memberships.exclude(firm_id=token.firm_id).exists()


def narrowed_result(token: AccessToken, result: SearchResult) -> SearchResult:
    """``result`` without the hits and document passages the token may not reach (another firm of
    the user, a matter the token is not limited to); unchanged — the very same object — when the
    token narrows nothing."""
    if not narrows_anything(token):
        return result
    conversation_ids = {m.conversation_id for hit in result.hits for m in _messages_of(hit)}
    allowed_conversations = set(
        token_conversations(token).filter(pk__in=conversation_ids).values_list("pk", flat=True)
    )
    kept: list[Hit] = []
    for hit in result.hits:
        if hit.note is not None and not _note_reachable(token, hit.note):
            continue
        if hit.message is not None and hit.message.conversation_id not in allowed_conversations:
            continue
        kept.append(dataclasses.replace(hit, rank=len(kept) + 1))
    matters = set(token_matters(token).filter(pk__in={p.matter_id for p in result.passages})
                  .values_list("pk", flat=True)) if result.passages else set()
    passages = [passage for passage in result.passages if passage.matter_id in matters]
    return dataclasses.replace(result, hits=kept, passages=passages)


def _messages_of(hit: Hit):
    return [m for m in (hit.message, hit.partner) if m is not None]


def _note_reachable(token: AccessToken, note: Note) -> bool:
    return note.firm_id == token.firm_id and token.allows_matter(note.matter_id)
