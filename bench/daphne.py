"""A real Daphne server for a benchmark: a free port, a logged-in session cookie, and the server
started and listening."""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from legalmem_site.serving import daphne_command

BASE_DIR = Path(__file__).resolve().parent.parent


def start_daphne(port: int, env: dict[str, str], *, timeout: float = 60) -> subprocess.Popen:
    """Daphne serving the product on 127.0.0.1:``port`` with ``env``; returns once it listens
    (its own session, so the caller can kill its whole process group)."""
    process = subprocess.Popen(
        daphne_command("127.0.0.1", port),
        cwd=BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("daphne did not start")
            time.sleep(0.2)


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
