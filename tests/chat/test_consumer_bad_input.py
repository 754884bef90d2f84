"""The chat websocket and bad input (issue 13, findings 1, 2 and 7): NUL and lone surrogates get
a `bad_request` frame naming the field and nothing is stored; deep frames too; an oversized
frame gets an `error` frame before a clean close; an anonymous socket is closed with 4401 and a
page on another port of an allowed host is refused — over a real Daphne server."""
from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from memory.models import Message
from tests.chat.conftest import open_socket
from tests.chat.test_consumer import connected, frames_until
from tests.site.conftest import cookie_of, live_daphne, live_daphne_env  # noqa: F401 — the real Daphne server

HOSTILE_QUESTIONS = [  # (frame, the field the error names)
    ('{"type": "ask", "question": "押金\\u0000问题"}', "question"),
    ('{"type": "ask", "question": "\\ud800"}', "question"),
    ('{"type": "ask", "question": "正常问题", "conversation_id": 1, "note": "x\\udfff"}', "note"),
    ('{"type": "ask", "question": "deep", "x": ' + "[" * 2000 + "]" * 2000 + "}", "body"),
    ('{"type": "ask", "question": "deep", "x": ' + "[" * 40 + "]" * 40 + "}", "x[0]"),
]


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.parametrize("raw, field", HOSTILE_QUESTIONS)
async def test_unstorable_or_deep_frames_get_bad_request_and_the_socket_recovers(world, llm_offline, raw, field):
    communicator, _ = await connected(world.alice)
    await communicator.send_to(text_data=raw)
    frame = await communicator.receive_json_from(timeout=5)
    assert frame["type"] == "error", frame
    assert frame["code"] == "bad_request", frame
    assert frame["field"].startswith(field)
    assert frame["message"].startswith(frame["field"])
    assert await sync_to_async(Message.objects.count)() == 0  # nothing half-stored
    await communicator.send_json_to({"type": "ask", "question": "押金的事情怎么办？"})
    assert (await frames_until(communicator, "done"))[-1]["status"] == "complete"
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_page_on_another_port_of_an_allowed_host_is_refused(world):
    for origin in (b"http://127.0.0.1:9999", b"https://127.0.0.1:8000", b"http://127.0.0.1:8000.evil.example"):
        communicator = await open_socket(world.alice, origin=(b"origin", origin))
        connected_, _ = await communicator.connect()
        assert not connected_, origin
        await communicator.disconnect()
    communicator = await open_socket(world.alice)  # the site's own origin
    assert (await communicator.connect())[0]
    await communicator.disconnect()


def _ws(server, cookie: str | None, *, origin: str | None = None):
    headers = {"Cookie": cookie} if cookie else {}
    return connect(server.ws_url, origin=origin or server.url, additional_headers=headers,
                   max_size=None, open_timeout=10, close_timeout=5)


@pytest.mark.live_server
def test_over_the_wire_anonymous_4401_oversized_frame_error_then_4413(world, live_daphne, cookie_of):
    # Anonymous: the handshake succeeds and the close code says why (README "Chat protocol").
    with _ws(live_daphne, None) as socket:
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=5)
    assert closed.value.rcvd.code == 4401

    # Another port of an allowed host: refused at the handshake.
    with pytest.raises(InvalidStatus):
        _ws(live_daphne, cookie_of(world.alice), origin=f"http://127.0.0.1:{live_daphne.port + 1}")

    # A 2 MB frame (over Daphne's former 1 MiB cap): an error frame, then a clean 4413 close.
    with _ws(live_daphne, cookie_of(world.alice)) as socket:
        assert json.loads(socket.recv(timeout=10))["type"] == "ready"
        socket.send(json.dumps({"type": "ask", "question": "长" * (2 * 1024 * 1024 // 3)}))
        frame = json.loads(socket.recv(timeout=20))
        assert frame["type"] == "error"
        assert frame["code"] == "frame_too_large"
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=10)
    assert closed.value.rcvd.code == 4413
    assert Message.objects.count() == 0

    # The same user reconnects and asks normally.
    with _ws(live_daphne, cookie_of(world.alice)) as socket:
        assert json.loads(socket.recv(timeout=10))["type"] == "ready"
        socket.send(json.dumps({"type": "ask", "question": "押金\u0000问题"}))
        frame = json.loads(socket.recv(timeout=10))
        assert frame["code"] == "bad_request"
        assert frame["field"] == "question"
