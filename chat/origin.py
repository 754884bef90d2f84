"""The websocket origin check: scheme, host and port (docs/chat-page.md "Websocket protocol").

A browser page may open ``/ws/chat/`` only from the site itself: the ``Origin`` header must be
exactly the origin the socket was opened on (``http://`` for ``ws://``, ``https://`` for
``wss://``, the ``Host`` header — itself one of ``ALLOWED_HOSTS`` — with the same port), or one
of ``CSRF_TRUSTED_ORIGINS`` (for a TLS-terminating proxy, say ``https://legalmem.example``).
Channels' ``AllowedHostsOriginValidator`` compared host names only, so a page served from any
port of an allowed host (``http://127.0.0.1:9999``) could talk to the chat with the user's cookie.
A refused origin gets the handshake denied (HTTP 403), before any session is read.
"""
from __future__ import annotations

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

_DEFAULT_PORTS = {"http": 80, "https": 443}
_HTTP_SCHEME = {"ws": "http", "wss": "https"}

Origin = tuple[str, str, int]


def _normalised(url: str) -> Origin | None:
    """(scheme, host, port) of an origin URL, the default port filled in; None when malformed."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    return parts.scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[parts.scheme]


def _header(scope: dict, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin1")
    return None


def own_origin(scope: dict) -> Origin | None:
    """The origin of the page that may open this socket: the request's scheme and Host."""
    host = _header(scope, b"host")
    if not host:
        return None
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return None
    scheme = _HTTP_SCHEME.get(scope.get("scheme", "ws"), "http")
    return _normalised(f"{scheme}://{host}")


def origin_allowed(scope: dict) -> bool:
    """True when the socket's Origin is the site's own origin or a trusted one."""
    header = _header(scope, b"origin")
    origin = _normalised(header) if header else None
    if origin is None:
        return False
    if origin == own_origin(scope):
        return True
    return origin in {_normalised(trusted) for trusted in settings.CSRF_TRUSTED_ORIGINS}


class StrictOriginValidator:
    """ASGI middleware in front of the websocket routes: deny a socket whose origin is not allowed."""

    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not origin_allowed(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
