"""The ASGI websocket stack: session auth and origin checks in front of the chat consumer."""
from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from legalmem_site.asgi import application

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

ORIGIN = (b"origin", b"http://127.0.0.1:8000")


def session_cookie_for(user) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    return (b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode())


async def test_authenticated_user_is_greeted_with_their_firms_only(world):
    from asgiref.sync import sync_to_async

    cookie = await sync_to_async(session_cookie_for)(world.bob)
    communicator = WebsocketCommunicator(application, "/ws/chat/", headers=[ORIGIN, (b"host", b"127.0.0.1:8000"), cookie])
    connected, _ = await communicator.connect()
    assert connected
    assert await communicator.receive_json_from(timeout=5) == {"type": "ready", "user": "bob", "firms": ["alpha"]}
    await communicator.disconnect()


async def test_anonymous_connection_is_closed():
    communicator = WebsocketCommunicator(application, "/ws/chat/", headers=[ORIGIN, (b"host", b"127.0.0.1:8000")])
    connected, code = await communicator.connect()
    assert not connected and code == 4401
    await communicator.disconnect()


async def test_foreign_origin_is_rejected(world):
    from asgiref.sync import sync_to_async

    cookie = await sync_to_async(session_cookie_for)(world.alice)
    communicator = WebsocketCommunicator(
        application, "/ws/chat/", headers=[(b"origin", b"http://evil.example"), (b"host", b"127.0.0.1:8000"), cookie]
    )
    connected, _ = await communicator.connect()
    assert not connected
    await communicator.disconnect()
