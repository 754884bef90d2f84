"""Websocket helpers: a communicator logged in with a real session cookie."""
from __future__ import annotations

from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from legalmem_site.asgi import application

HOST = (b"host", b"127.0.0.1:8000")
ORIGIN = (b"origin", b"http://127.0.0.1:8000")


def _session_cookie(user) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    return (b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode())


async def open_socket(user=None, *, origin: tuple[bytes, bytes] = ORIGIN) -> WebsocketCommunicator:
    headers = [origin, HOST]
    if user is not None:
        headers.append(await sync_to_async(_session_cookie)(user))
    return WebsocketCommunicator(application, "/ws/chat/", headers=headers)
