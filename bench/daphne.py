"""A real Daphne server for a benchmark: a free port, a logged-in session cookie, and the server
started and listening."""
from __future__ import annotations

from legalmem_site.serving import free_port, start_daphne, stop_daphne

__all__ = ["free_port", "session_cookie", "start_daphne", "stop_daphne"]


def session_cookie(user) -> str:
    """A ``Cookie`` header value logging ``user`` in (a real database session, as after a login)."""
    from django.conf import settings
    from django.contrib.sessions.backends.db import SessionStore

    session = SessionStore()
    session["_auth_user_id"] = str(user.pk)
    session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
    session["_auth_user_hash"] = user.get_session_auth_hash()
    session.create()
    return f"{settings.SESSION_COOKIE_NAME}={session.session_key}"
