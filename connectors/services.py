"""Writes of connectors: making, using and revoking access tokens, and what a connected
assistant asks to change (remember a turn, correct or forget a note) — each through the
product's own write path, in a transaction, with an audit entry naming the token."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Iterable

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from chat.turns import Recall, begin_turn, finish_turn
from connectors.models import TOKEN_PREFIX, AccessToken, TokenRefusal, TokenScope, digest_of, new_secret
from connectors.selectors import COUNTED_REFUSALS, TokenCheck, token_conversations, token_matters, token_notes
from connectors.throttle import BOUNDS, Block, current_blocks
from memory.models import AuditEvent, Firm, Matter, Message, Note
from memory.services.audit import record
from memory.services.conversations import start_conversation
from memory.services.notes import correct_own_note, forget_note

MAX_TOKEN_DAYS = 366
MAX_REPLY_CHARS = 20_000  # an assistant's reply handed in with a remembered message
#: The engine recorded on a reply an assistant handed in through MCP (``Message.engine``).
MCP_ENGINE = "mcp"


class TokenError(ValueError):
    """A token cannot be made or changed as asked; the message says why, in the active language
    (the token page and the MCP client show it as it is)."""


class WriteRefused(PermissionError):
    """The token may not write (read-only scope): nothing was written."""


@dataclass(frozen=True)
class NewToken:
    token: AccessToken
    secret: str  # shown once, never stored


def _token_audit(token: AccessToken, *, actor, event: AuditEvent, **extra: Any) -> None:
    record(actor=actor, event=event, firm_id=token.firm_id, object_type="access_token", object_id=token.pk,
           token_prefix=token.display_prefix, **extra)


def create_token(user, *, firm: Firm, name: str, scope: str, days: int, matters: Iterable[Matter] = (),
                 language: str = "") -> NewToken:
    """A new token of ``user`` for ``firm``; only its digest is kept. ``matters`` must be matters
    of that firm the user is assigned to (a limit narrows, it never widens); ``language`` is the
    one its caller is answered in ("" for the client's or the site's)."""
    if scope not in TokenScope.values:
        raise TokenError(gettext("unknown permission %(scope)r") % {"scope": scope})
    if language and language not in dict(settings.LANGUAGES):
        raise TokenError(gettext("unknown language %(language)r") % {"language": language[:20]})
    if not 1 <= days <= MAX_TOKEN_DAYS:
        raise TokenError(gettext("a token lasts between 1 and %(days)s days") % {"days": MAX_TOKEN_DAYS})
    name = name.strip()
    if not name:
        raise TokenError(gettext("a token needs a name"))
    if not user.memberships.filter(firm=firm).exists():
        raise TokenError(gettext("you are not a member of this firm"))
    matters = list(matters)
    allowed = set(Matter.objects.assigned_to(user).filter(firm=firm).values_list("pk", flat=True))
    if any(matter.pk not in allowed for matter in matters):
        raise TokenError(gettext("a token can only be limited to matters of this firm you are assigned to"))
    secret, prefix = new_secret()
    now = timezone.now()
    with transaction.atomic():
        token = AccessToken(user=user, firm=firm, name=name[:100], prefix=prefix, scope=scope, language=language,
                            created_at=now, expires_at=now + timedelta(days=days))
        token.digest = digest_of(secret)
        token.save()
        token.matters.set(matters)
        _token_audit(token, actor=user, event=AuditEvent.TOKEN_CREATED,
                     after={"name": token.name, "scope": scope, "expires_at": token.expires_at.isoformat(),
                            "matters": sorted(m.pk for m in matters), "language": language})
    return NewToken(token, secret)


def revoke_token(token: AccessToken, *, actor, reason: str = "") -> AccessToken:
    """Revoke a token at once (its owner, or a firm admin in admin); revoking twice is a no-op."""
    with transaction.atomic():
        token = AccessToken.objects.select_for_update().get(pk=token.pk)
        if token.revoked_at is not None:
            return token
        token.revoked_at = timezone.now()
        token.revoked_by = actor
        token.save(update_fields=["revoked_at", "revoked_by"])
        _token_audit(token, actor=actor, event=AuditEvent.TOKEN_REVOKED, reason=reason[:500],
                     after={"status": "revoked"})
    return token


def record_use(token: AccessToken, *, via: str, ip_address: str | None = None, **what: Any) -> None:
    """One use of a token (an API request, an MCP tool call or resource read): audited with the
    token's id, and its last use kept (written at most once a minute)."""
    now = timezone.now()
    with transaction.atomic():
        if token.needs_last_used_update(now):
            AccessToken.objects.filter(pk=token.pk).update(last_used_at=now)
            token.last_used_at = now
        _token_audit(token, actor=token.user, event=AuditEvent.TOKEN_USED, via=via, ip_address=ip_address, **what)


def record_refusal(check: TokenCheck, *, via: str, ip_address: str | None = None, **what: Any) -> None:
    """A refused token (unknown, revoked, expired, throttled) or a refused call (a read-only
    token asked to write): audited with the token's id when it is known, counted for the
    throttle by the presented token's fingerprint and its address (never the secret)."""
    with transaction.atomic():
        if check.refused in COUNTED_REFUSALS:
            TokenRefusal.objects.create(ip_address=ip_address, prefix=check.prefix, fingerprint=check.fingerprint,
                                        token=check.token)
        if check.token is not None:
            _token_audit(check.token, actor=check.token.user, event=AuditEvent.TOKEN_REFUSED, via=via,
                         reason=check.refused, ip_address=ip_address, **what)
        else:
            record(actor="system:access-tokens", event=AuditEvent.TOKEN_REFUSED, object_type="access_token",
                   object_id=check.prefix or "-", via=via, reason=check.refused, ip_address=ip_address, **what)


class NoSuchBlock(LookupError):
    """Nothing is blocked under that token fingerprint or address now."""


def lift_block(kind: str, key: str, *, actor, reason: str = "") -> Block:
    """End a current block now (``manage.py token_blocks --lift-…``): its refusals stop counting
    for that bound (kept, for the record) and the lift is audited — in the token's firm when
    the refused secret was a real (dead) token's, else for the operators. Lifting an address
    leaves its bad tokens' own blocks in place, and the other way round."""
    bound = BOUNDS[kind]
    with transaction.atomic():
        block = next((b for b in current_blocks() if b.kind == kind and b.key == key), None)
        if block is None:
            raise NoSuchBlock(key)
        TokenRefusal.objects.filter(**{bound.field: key, bound.lifted_field: False}).update(
            **{bound.lifted_field: True})
        change = {"before": {"refusals": block.refusals, "first_at": block.first_at.isoformat(),
                             "last_at": block.last_at.isoformat()},
                  "after": {"refusals": 0}, "reason": reason[:500]}
        if block.token is not None:
            _token_audit(block.token, actor=actor, event=AuditEvent.TOKEN_BLOCK_LIFTED, block=kind, **change)
        else:
            record(actor=actor, event=AuditEvent.TOKEN_BLOCK_LIFTED, object_type="token_block",
                   object_id=key[:16] if kind == "token" else key, block=kind,
                   token_prefix=f"{TOKEN_PREFIX}{block.prefix}…" if block.prefix else "", **change)
    return block


def refuse_write(token: AccessToken, *, via: str, **what: Any) -> None:
    """Audit and refuse a write asked with a read-only token."""
    record_refusal(TokenCheck(token, "read_only", token.prefix), via=via, **what)
    raise WriteRefused("this token is read-only: nothing was written")


# --- what a connected assistant asks to change ------------------------------------------------

@dataclass(frozen=True)
class Remembered:
    conversation_id: int
    user_message_id: int
    reply_id: int
    turn_id: int


def remember_turn(token: AccessToken, *, message: str, reply: str = "", matter_id: int | None = None,
                  conversation_id: int | None = None, via: str = "mcp") -> Remembered:
    """Save a message (and the assistant's reply, when given) as a turn of the token user's own
    conversation, exactly as the chat saves one (``chat.turns``: validation, rate limit, the
    question first) and enqueue its extraction: the worker makes notes of it. A new
    conversation is started in the token's firm (and matter, when given)."""
    if not token.can_write:
        refuse_write(token, via=via, tool="remember")
    if len(reply) > MAX_REPLY_CHARS:
        raise TokenError(gettext("the reply is longer than %(limit)s characters") % {"limit": MAX_REPLY_CHARS})
    with transaction.atomic():
        if conversation_id is not None:
            if not token_conversations(token).filter(pk=conversation_id, user=token.user).exists():
                raise LookupError("no such conversation of yours (or this token does not reach it)")
        else:
            matter = None
            if matter_id is not None:
                matter = token_matters(token).filter(pk=matter_id).first()
                if matter is None:
                    raise LookupError("no such matter (or this token does not reach it)")
            conversation_id = start_conversation(
                firm=token.firm, user=token.user, matter=matter, title=message.strip().splitlines()[0][:60]
                if isinstance(message, str) and message.strip() else "",
            ).pk
        start = begin_turn(token.user, question=message, conversation_id=conversation_id, matter_id=None)
    saved = finish_turn(start, Recall(result=None, llm_messages=[]), reply=reply, status=Message.Status.COMPLETE,
                        engine=MCP_ENGINE, timings={})
    return Remembered(start.conversation.pk, start.user_message.pk, saved.pk, saved.turn_extraction.pk)


def correct_with_token(token: AccessToken, note_id: str, *, content: str, category: str | None = None,
                       reason: str = "", via: str = "mcp") -> Note:
    """A correction through the user's own rule (``correct_own_note``), of a note the token reaches."""
    if not token.can_write:
        refuse_write(token, via=via, tool="correct_note", note=str(note_id))
    note = token_notes(token).get(pk=note_id)
    changes: dict[str, Any] = {"content": content}
    if category:
        changes["category"] = category
    return correct_own_note(note, changes, user=token.user, reason=reason or "corrected through a connected assistant")


def forget_with_token(token: AccessToken, note_id: str, *, reason: str = "", via: str = "mcp") -> Note:
    """A "forget" through the user's own rule (``forget_note``), of a note the token reaches."""
    if not token.can_write:
        refuse_write(token, via=via, tool="forget_note", note=str(note_id))
    note = token_notes(token).get(pk=note_id)
    return forget_note(note, user=token.user, reason=reason, via=via)
