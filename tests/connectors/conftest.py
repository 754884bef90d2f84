"""Tokens for the named users of every access test (alice, bob, charlie: tests/conftest.py), the
retrieval tests' notes of every layer, and an in-process MCP client (the SDK's own
``ClientSession`` over its memory transport) for the tool tests that need no server."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.utils import timezone
from mcp.shared.memory import create_connected_server_and_client_session

from connectors.mcp_server import Caller, current_caller, server
from connectors.models import AccessToken
from connectors.services import NewToken, create_token
from tests.recall.conftest import memory  # noqa: F401 — notes of every layer, both firms


def make_token(user, *, firm=None, scope: str = "read", days: int = 30, matters=(), language: str = "") -> NewToken:
    firm = firm or user.memberships.first().firm
    return create_token(user, firm=firm, name=f"{user.username}'s test token", scope=scope, days=days,
                        matters=matters, language=language)


def expire(token: AccessToken) -> None:
    AccessToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))


def bearer(secret: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def mcp_calls(token: AccessToken, calls: list[tuple[str, dict[str, Any]]], *, language: str | None = "en") -> list[Any]:
    """Call tools as ``token`` (reading ``language``) through the SDK's client session (in process: the tools' ORM work
    runs on this thread, inside the test's transaction)."""

    async def go() -> list[Any]:
        reset = current_caller.set(Caller(token, "127.0.0.1", language))
        try:
            async with create_connected_server_and_client_session(server) as session:
                results = []
                for name, arguments in calls:
                    if name.startswith("legalmem://"):
                        results.append(await session.read_resource(name))
                    else:
                        results.append(await session.call_tool(name, arguments))
                return results
        finally:
            current_caller.reset(reset)

    return async_to_sync(go)()


@pytest.fixture
def tokens(world):
    """A read and a read-write token for each named user."""
    return {
        (user.username, scope): make_token(user, scope=scope)
        for user in (world.alice, world.bob, world.charlie) for scope in ("read", "read_write")
    }


def scores(hit: dict) -> dict:
    """A hit's score breakdown to 4 places: recency decays between the two searches by ~1e-6."""
    return {name: round(value, 4) if isinstance(value, float) else value for name, value in hit["score"].items()}
