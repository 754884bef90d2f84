"""``Authorization: Bearer lm_…`` for the REST API (DRF): the token's user, with the same
visibility as their session. A token that would see less than its user through the API's
``visible_to`` reads (limited to matters, or made for one of several firms) is refused here
rather than widened: the MCP server narrows those (docs/connectors.md)."""
from __future__ import annotations

from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from connectors.models import AccessToken
from connectors.selectors import RefusalReason, TokenCheck, check_secret, narrows_anything
from connectors.services import record_refusal, record_use

KEYWORD = "Bearer"


def bearer_secret(header: bytes | str) -> str | None:
    """The secret of an ``Authorization: Bearer <secret>`` header, or None for another scheme."""
    if isinstance(header, bytes):
        header = header.decode("latin-1")
    scheme, _sep, secret = header.strip().partition(" ")
    if scheme.lower() != KEYWORD.lower():
        return None
    return secret.strip()


def client_address(meta: dict) -> str | None:
    return meta.get("REMOTE_ADDR") or None


def refusal_message(reason: str) -> str:
    """What the client is told: revoked and expired tokens say so (the owner made them), anything
    else is "invalid" (no hint whether a guessed prefix exists)."""
    if reason == RefusalReason.THROTTLED:
        return _("This token, or this address, was refused too often lately; check the token and try again later.")
    if reason == RefusalReason.REVOKED:
        return _("This access token was revoked.")
    if reason == RefusalReason.EXPIRED:
        return _("This access token has expired.")
    return _("Invalid access token.")


class TokenRefused(Exception):
    """A presented token that may not be used here: the HTTP status and the client's message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def authenticate_bearer(secret: str, *, address: str | None, method: str, path: str) -> AccessToken:
    """The token a REST request presents, audited as used; ``TokenRefused`` (audited, counted for
    the throttle) when it is dead, wrong, throttled, or narrower than its user."""
    where = {"method": method, "path": path[:200]}
    check = check_secret(secret, ip_address=address)
    if not check.ok:
        record_refusal(check, via="api", ip_address=address, **where)
        raise TokenRefused(429 if check.refused == RefusalReason.THROTTLED else 401, refusal_message(check.refused))
    token = check.token
    if narrows_anything(token):
        record_refusal(TokenCheck(token, "narrowed_token_on_api", check.prefix), via="api", ip_address=address,
                       **where)
        raise TokenRefused(403, _(
            "This token is limited to some matters or to one of your firms; the REST API needs an "
            "unlimited token. Use it with the MCP server instead."))
    record_use(token, via="api", ip_address=address, **where)
    return token


class AccessTokenAuthentication(BaseAuthentication):
    """DRF authentication by personal access token; every use and refusal is audited."""

    def authenticate(self, request: Request) -> tuple[object, AccessToken] | None:
        secret = bearer_secret(get_authorization_header(request))
        if secret is None:
            return None
        try:
            token = authenticate_bearer(secret, address=client_address(request.META), method=request.method,
                                        path=request.path)
        except TokenRefused as refused:
            if refused.status == 429:
                raise exceptions.Throttled(detail=refused.message) from None
            if refused.status == 403:
                raise exceptions.PermissionDenied(refused.message) from None
            raise exceptions.AuthenticationFailed(refused.message) from None
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return f'{KEYWORD} realm="api"'
