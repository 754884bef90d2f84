"""The token throttle punishes the bad token, not the office: refusals are counted per presented
token (a keyed fingerprint, never the secret) with the login throttle's small bound and per
address with a much higher one; a valid token is never refused for another token's failures;
an operator lists the current blocks and lifts one, audited (``manage.py token_blocks``), and a
firm admin does so in admin for her firm's tokens."""
from __future__ import annotations

import asyncio
from io import StringIO

import httpx
import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from connectors import throttle
from connectors.mcp_http import McpEndpoint, WithMcp
from connectors.mcp_server import server
from connectors.models import TokenRefusal
from connectors.services import revoke_token
from memory.models import AuditEvent, AuditLog
from tests.clients import logged_in
from tests.connectors.conftest import bearer, make_token
from tests.factories import UserFactory

NOTES = "/api/memory/notes/"
BLOCKS = "/admin/connectors/accesstoken/blocks/"
OFFICE = "203.0.113.7"  # one NAT address for the whole firm
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}


def rest(secret: str, address: str = OFFICE) -> int:
    return Client(REMOTE_ADDR=address).get(NOTES, **bearer(secret)).status_code


def mcp_statuses(secrets: list[str], address: str = OFFICE) -> list[int]:
    """POST ``initialize`` to /mcp once per secret, from ``address``, through the site's ASGI app."""
    async def django_app(scope, receive, send) -> None:
        raise AssertionError(f"{scope['path']} went to Django")

    async def go() -> list[int]:
        transport = httpx.ASGITransport(app=WithMcp(django_app, McpEndpoint(server)), client=(address, 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            return [(await client.post("/mcp", json=INITIALIZE, headers={
                "Accept": "application/json, text/event-stream", "Authorization": f"Bearer {secret}"})).status_code
                for secret in secrets]
    return asyncio.run(go())


def sdk_call(secret: str, tool: str, arguments: dict, address: str = OFFICE):
    """One tool call with the official SDK's client (Streamable HTTP) on /mcp through the site's ASGI app, from
    ``address``."""
    async def django_app(scope, receive, send) -> None:
        raise AssertionError(f"{scope['path']} went to Django")

    async def go():
        transport = httpx.ASGITransport(app=WithMcp(django_app, McpEndpoint(server)), client=(address, 50000))
        http = httpx.AsyncClient(transport=transport, headers={"Authorization": f"Bearer {secret}"})
        async with http, streamable_http_client("http://localhost/mcp", http_client=http) as (read, write, _id):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await session.call_tool(tool, arguments)
    return asyncio.run(go())


@pytest.mark.django_db(transaction=True)  # the endpoint reads the token on its own thread
def test_five_bad_tokens_from_the_office_then_a_valid_one_is_served_and_an_operator_lifts_the_block(world, settings):
    """The walk of issue 51: one office address, five refused tokens, then a colleague's valid token — REST and the
    SDK's own MCP client — while the bad token stays throttled until an operator lifts its block."""
    settings.ALLOWED_HOSTS = ["localhost", "testserver"]
    limit = settings.AXES_FAILURE_LIMIT
    typos = [f"lm_{n:08x}_typo" for n in range(limit)]  # five different bad tokens from the office
    stale = "lm_0badc0de_old-token-in-some-editor"  # and one misconfigured client retrying its token
    assert [rest(secret) for secret in typos] == [401] * limit
    assert mcp_statuses([stale] * (limit + 1)) == [401] * limit + [429]

    good = make_token(world.alice).secret
    served = sdk_call(good, "list_matters", {})
    assert not served.isError, served.content[0].text
    assert world.matter_laptop.reference in served.content[0].text
    assert rest(good) == 200
    assert rest(stale) == 429 and mcp_statuses([stale]) == [429]  # the bad token stays throttled
    assert AuditLog.objects.filter(event_type=AuditEvent.TOKEN_USED, extra__tool="list_matters",
                                   extra__ip_address=OFFICE).count() == 1

    listing = StringIO()
    call_command("token_blocks", stdout=listing)
    key = throttle.fingerprint_of(stale)[:16]
    assert [line for line in listing.getvalue().splitlines() if key in line]  # the operator sees it
    call_command("token_blocks", "--lift-token", key, "--actor", "alice", "--reason", "editor fixed",
                 stdout=StringIO())
    assert rest(stale) == 401 and mcp_statuses([stale]) == [401]  # lifted: refused for what it is
    assert AuditLog.objects.filter(event_type=AuditEvent.TOKEN_BLOCK_LIFTED, extra__reason="editor fixed").exists()


@pytest.mark.django_db
def test_a_bad_token_is_blocked_and_a_valid_one_from_the_same_address_is_not_on_the_rest_api(world):
    good = make_token(world.alice).secret
    bad = "lm_0badc0de_misconfigured-client-secret"
    assert [rest(bad) for _ in range(settings.AXES_FAILURE_LIMIT)] == [401] * settings.AXES_FAILURE_LIMIT
    assert rest(bad) == 429 and rest(bad) == 429  # the bad token itself stays blocked
    assert rest(good) == 200  # the office's valid token works from the same address
    assert rest("lm_0badc0de_another-wrong-secret") == 401  # another token: its own count, not blocked
    rows = TokenRefusal.objects.all()
    assert rows.count() == settings.AXES_FAILURE_LIMIT + 1  # refusals while blocked are not counted
    assert not any(bad in str(value) for row in rows.values() for value in row.values())  # never the secret
    assert {row.fingerprint for row in rows} == {throttle.fingerprint_of(bad),
                                                 throttle.fingerprint_of("lm_0badc0de_another-wrong-secret")}


@pytest.mark.django_db
def test_a_revoked_token_retried_by_its_client_is_blocked_without_blocking_its_owners_new_token(world):
    old = make_token(world.bob)
    revoke_token(old.token, actor=world.bob)
    new = make_token(world.bob).secret
    statuses = [rest(old.secret) for _ in range(settings.AXES_FAILURE_LIMIT + 2)]
    assert statuses == [401] * settings.AXES_FAILURE_LIMIT + [429, 429]
    assert rest(new) == 200
    throttled = AuditLog.objects.filter(event_type=AuditEvent.TOKEN_REFUSED, object_id=str(old.token.pk),
                                        extra__reason="throttled")
    assert throttled.count() == 2 and throttled.first().firm_id == world.firm_a.pk


@pytest.mark.django_db
def test_the_address_bound_still_stops_a_flood_of_different_bad_tokens(world):
    good = make_token(world.alice).secret
    flood = [f"lm_{n:08x}_guess" for n in range(settings.TOKEN_ADDRESS_FAILURE_LIMIT)]
    assert settings.TOKEN_ADDRESS_FAILURE_LIMIT >= 10 * settings.AXES_FAILURE_LIMIT  # "much higher" than a token's
    assert {rest(secret) for secret in flood} == {401}
    assert rest("lm_ffffffff_never-seen-before") == 429  # a fresh bad token from the flooding address
    assert rest(good) == 200  # still never a valid one
    assert rest("lm_ffffffff_never-seen-before", address="198.51.100.1") == 401  # elsewhere: not blocked
    assert [block.kind for block in throttle.current_blocks()] == ["address"]


@pytest.mark.django_db(transaction=True)  # the endpoint reads the token on its own thread
def test_on_mcp_too_the_bad_token_is_blocked_and_a_valid_one_from_the_same_address_is_served(world, settings):
    settings.ALLOWED_HOSTS = ["localhost", "testserver"]  # /mcp's Host check; the REST client's host
    good = make_token(world.alice).secret
    bad = "lm_0badc0de_misconfigured-client-secret"
    limit = settings.AXES_FAILURE_LIMIT
    assert mcp_statuses([bad] * (limit + 1) + [good, "lm_0badc0de_other"]) == [401] * limit + [429, 200, 401]
    # and the REST API agrees: one throttle
    assert rest(bad) == 429 and rest(good) == 200


@pytest.mark.django_db
def test_an_operator_lists_the_blocks_and_lifts_one_audited(world):
    revoked = make_token(world.alice)
    revoke_token(revoked.token, actor=world.alice)
    unknown = "lm_0badc0de_misconfigured-client-secret"
    for _ in range(settings.AXES_FAILURE_LIMIT):
        rest(revoked.secret)
        rest(unknown)
    assert rest(revoked.secret) == 429 and rest(unknown) == 429

    listing = StringIO()
    call_command("token_blocks", stdout=listing)
    lines = listing.getvalue().splitlines()
    revoked_key = throttle.fingerprint_of(revoked.secret)[:16]
    unknown_key = throttle.fingerprint_of(unknown)[:16]
    [revoked_line] = [line for line in lines if revoked_key in line]
    [unknown_line] = [line for line in lines if unknown_key in line]
    assert revoked.token.display_prefix in revoked_line and "alice" in revoked_line
    assert "lm_0badc0de…" in unknown_line and unknown not in listing.getvalue()

    call_command("token_blocks", "--lift-token", revoked_key, "--actor", "alice", "--reason", "client fixed",
                 stdout=StringIO())
    assert rest(revoked.secret) == 401  # lifted: refused again for what it is, not throttled
    assert rest(unknown) == 429  # the other block stays
    entry = AuditLog.objects.get(event_type=AuditEvent.TOKEN_BLOCK_LIFTED)
    assert (entry.actor, entry.firm_id, entry.object_id) == (world.alice, world.firm_a.pk, str(revoked.token.pk))
    assert entry.extra["block"] == "token" and entry.extra["reason"] == "client fixed"
    assert entry.before["refusals"] == settings.AXES_FAILURE_LIMIT
    assert AuditLog.objects.visible_to(world.alice).filter(pk=entry.pk).exists()  # her firm's admin reads it
    assert "访问令牌封锁已解除" in logged_in(world.alice).get("/admin/memory/auditlog/").content.decode()

    call_command("token_blocks", "--lift-token", unknown_key[:10], stdout=StringIO())
    assert rest(unknown) == 401
    operators = AuditLog.objects.filter(event_type=AuditEvent.TOKEN_BLOCK_LIFTED).exclude(pk=entry.pk).get()
    assert (operators.actor_label, operators.firm_id, operators.extra["token_prefix"]) == (
        "system:token_blocks", None, "lm_0badc0de…")
    with pytest.raises(CommandError):
        call_command("token_blocks", "--lift-token", unknown_key, stdout=StringIO())  # nothing left to lift
    empty = StringIO()
    call_command("token_blocks", stdout=empty)
    assert revoked_key not in empty.getvalue() and unknown_key not in empty.getvalue()


@pytest.mark.django_db
def test_lifting_an_address_leaves_its_bad_tokens_own_blocks(world, settings):
    settings.TOKEN_ADDRESS_FAILURE_LIMIT = 2 * settings.AXES_FAILURE_LIMIT
    stubborn = "lm_0badc0de_stubborn"
    for _ in range(settings.AXES_FAILURE_LIMIT):
        rest(stubborn)
    for n in range(settings.AXES_FAILURE_LIMIT):
        rest(f"lm_{n:08x}_guess")
    assert rest("lm_ffffffff_fresh") == 429
    call_command("token_blocks", "--lift-address", OFFICE, stdout=StringIO())
    assert rest("lm_ffffffff_fresh") == 401 and rest(stubborn) == 429
    entry = AuditLog.objects.get(event_type=AuditEvent.TOKEN_BLOCK_LIFTED)
    assert (entry.object_type, entry.object_id, entry.extra["block"]) == ("token_block", OFFICE, "address")


@pytest.mark.django_db
def test_a_firm_admin_sees_and_lifts_her_firms_token_blocks_in_admin_audited(world):
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    bobs = make_token(world.bob)
    revoke_token(bobs.token, actor=world.bob)  # bob's editor keeps retrying his revoked token
    unknown = "lm_0badc0de_misconfigured-client-secret"
    for _ in range(settings.AXES_FAILURE_LIMIT):
        rest(bobs.secret)
        rest(unknown)
    bobs_key = throttle.fingerprint_of(bobs.secret)
    alice, charlie = logged_in(world.alice), logged_in(world.charlie)

    assert "限流：1 项封锁" in alice.get("/admin/connectors/accesstoken/").content.decode()
    page = alice.get(BLOCKS).content.decode()
    assert bobs.token.display_prefix in page and "bob" in page and "lm_0badc0de…" not in page  # no firm: operators'
    assert f'data-key="{bobs_key[:16]}"' in page
    assert bobs_key[:16] not in charlie.get(BLOCKS).content.decode()  # another firm's admin sees nothing of it
    assert "lm_0badc0de…" in logged_in(root).get(BLOCKS).content.decode()
    assert charlie.post(BLOCKS, {"kind": "token", "key": bobs_key, "reason": "x"}).status_code == 404
    assert alice.post(BLOCKS, {"kind": "token", "key": throttle.fingerprint_of(unknown)}).status_code == 404
    assert logged_in(world.bob).get(BLOCKS).status_code in (302, 404)  # not staff: admin's login, never the list
    assert rest(bobs.secret) == 429

    response = alice.post(BLOCKS, {"kind": "token", "key": bobs_key, "reason": "editor reconfigured"})
    assert response.status_code == 302
    assert rest(bobs.secret) == 401 and rest(unknown) == 429  # only that block
    entry = AuditLog.objects.get(event_type=AuditEvent.TOKEN_BLOCK_LIFTED)
    assert (entry.actor, entry.firm_id, entry.object_id, entry.extra["reason"]) == (
        world.alice, world.firm_a.pk, str(bobs.token.pk), "editor reconfigured")
    after = alice.get(BLOCKS).content.decode()
    assert f'data-key="{bobs_key[:16]}"' not in after and "已解除" in after  # gone, and the lift confirmed
