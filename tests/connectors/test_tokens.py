"""Personal access tokens: stored hashed and shown once, named, expiring, scoped, limited to the
user's own matters; revocable by the user and their firm's admins; Bearer on the REST API with
the session's visibility; every use and refusal audited with the token's id; throttled like logins."""
from __future__ import annotations

import html
import json

import pytest
from django.test import Client

from connectors.models import AccessToken, digest_of
from connectors.services import TokenError, create_token, revoke_token
from memory.models import AuditEvent, AuditLog
from tests.clients import client_for, logged_in
from tests.connectors.conftest import bearer, expire, make_token

pytestmark = pytest.mark.django_db
SEARCH = "/api/memory/search"


def api_search(client: Client, body: dict, **headers) -> tuple[int, dict]:
    response = client.post(SEARCH, data=json.dumps(body), content_type="application/json", **headers)
    return response.status_code, response.json()


def test_only_a_hash_is_stored_and_the_secret_has_a_visible_prefix(world):
    made = make_token(world.alice)
    row = AccessToken.objects.get(pk=made.token.pk)
    assert made.secret.startswith(f"lm_{row.prefix}_") and len(made.secret) > 40
    assert row.digest == digest_of(made.secret) and made.secret not in row.digest
    assert not any(made.secret in str(value) for value in AccessToken.objects.values().get(pk=row.pk).values())
    assert row.matches(made.secret) and not row.matches(made.secret + "x")


def test_a_limit_narrows_to_the_users_own_matters_never_widens(world):
    with pytest.raises(TokenError):
        make_token(world.bob, matters=[world.matter_deposit])  # bob is walled off from it
    with pytest.raises(TokenError):
        make_token(world.alice, matters=[world.matter_b])  # another firm's matter
    with pytest.raises(TokenError):
        create_token(world.charlie, firm=world.firm_a, name="x", scope="read", days=30)  # not a member
    assert make_token(world.alice, matters=[world.matter_laptop]).token.matter_ids() == {world.matter_laptop.pk}


def test_the_page_shows_the_secret_once_and_revokes(world):
    client = logged_in(world.alice)
    response = client.post("/tokens/", {"name": "Claude Desktop", "scope": "read", "days": 30,
                                        "firm": world.firm_a.pk, "matters": [world.matter_laptop.pk]})
    assert response.status_code == 200
    page = response.content.decode()
    token = AccessToken.objects.get(user=world.alice)
    secret = page.split('id="new-token-secret"')[0].rsplit('value="', 1)[1].split('"')[0]
    assert secret.startswith(token.display_prefix[:-1]) and token.matches(secret)
    config = json.loads(html.unescape(page.split('<pre id="new-token-config">')[1].split("</pre>")[0]))
    assert config == {"mcpServers": {"legalmem": {"type": "http", "url": "http://testserver/mcp",
                                                  "headers": {"Authorization": f"Bearer {secret}"}}}}
    again = client.get("/tokens/").content.decode()
    assert secret not in again and token.display_prefix in again and "Claude Desktop" in again
    assert "<script>" not in again  # CSP: no inline scripts
    assert logged_in(world.bob).post(f"/tokens/{token.pk}/revoke").status_code == 404  # not bob's
    client.post(f"/tokens/{token.pk}/revoke")
    token.refresh_from_db()
    assert token.revoked_at is not None and token.revoked_by == world.alice
    assert AuditLog.objects.filter(event_type=AuditEvent.TOKEN_REVOKED, object_id=str(token.pk)).exists()
    assert AuditLog.objects.filter(event_type=AuditEvent.TOKEN_CREATED, object_id=str(token.pk)).exists()


def test_a_token_answers_in_the_language_its_owner_chose_the_pages_by_default(world):
    client = logged_in(world.alice)
    client.cookies["django_language"] = "en"  # the language menu's choice
    form = client.get("/tokens/").content.decode()
    assert '<option value="en" selected>English</option>' in form
    made = {"name": "Cursor", "scope": "read", "days": 30, "firm": world.firm_a.pk}
    client.post("/tokens/", made)
    client.post("/tokens/", {**made, "name": "Claude Desktop", "language": "zh-hans"})
    assert dict(AccessToken.objects.values_list("name", "language")) == {"Cursor": "en", "Claude Desktop": "zh-hans"}
    assert logged_in(world.alice).post("/tokens/", {**made, "language": "fr"}).status_code == 400
    with pytest.raises(TokenError):
        make_token(world.alice, language="klingon")
    created = AuditLog.objects.filter(event_type=AuditEvent.TOKEN_CREATED).order_by("id")
    assert [entry.after["language"] for entry in created] == ["en", "zh-hans"]


def test_the_page_refuses_a_matter_the_user_is_not_on(world):
    response = logged_in(world.bob).post("/tokens/", {"name": "x", "scope": "read", "days": 30,
                                                      "firm": world.firm_a.pk, "matters": [world.matter_deposit.pk]})
    assert response.status_code == 400
    assert not AccessToken.objects.exists()


def test_firm_admins_see_and_revoke_their_firms_tokens_only(world):
    bobs = make_token(world.bob).token
    charlies = make_token(world.charlie).token
    alice = logged_in(world.alice)
    listing = alice.get("/admin/connectors/accesstoken/").content.decode()
    assert bobs.display_prefix in listing and charlies.display_prefix not in listing
    assert alice.get(f"/admin/connectors/accesstoken/{charlies.pk}/change/").status_code == 404
    alice.post("/admin/connectors/accesstoken/", {"action": "revoke_selected", "_selected_action": [bobs.pk, charlies.pk]})
    bobs.refresh_from_db()
    charlies.refresh_from_db()
    assert bobs.revoked_by == world.alice and charlies.revoked_at is None
    assert logged_in(world.bob).get("/admin/connectors/accesstoken/").status_code in (302, 403)  # no admin for lawyers


def test_bearer_on_the_rest_api_sees_exactly_what_the_session_sees(world, memory):
    secret = make_token(world.bob).secret
    body = {"query": "电脑花屏 押金 检测报告", "k": 20}
    status, by_token = api_search(Client(), body, **bearer(secret))
    assert status == 200
    _status, by_session = api_search(client_for(world.bob), body)
    assert [h["note"]["id"] if h["note"] else h["message"]["id"] for h in by_token["hits"]] == \
        [h["note"]["id"] if h["note"] else h["message"]["id"] for h in by_session["hits"]]
    ids = {h["note"]["id"] for h in by_token["hits"] if h["note"]}
    assert str(memory["deposit_fact"].pk) not in ids and str(memory["beta_fact"].pk) not in ids
    notes = Client().get("/api/memory/notes/", **bearer(secret))
    assert notes.status_code == 200
    assert {n["id"] for n in notes.json()["results"]} == {
        n["id"] for n in client_for(world.bob).get("/api/memory/notes/").json()["results"]}
    assert Client().get(f"/api/memory/notes/{memory['deposit_fact'].pk}/", **bearer(secret)).status_code == 404


def test_revoked_expired_and_wrong_tokens_are_401_and_audited(world, memory):
    made = make_token(world.alice)
    assert Client().get("/api/memory/notes/", **bearer(made.secret)).status_code == 200
    revoke_token(made.token, actor=world.alice)
    assert Client().get("/api/memory/notes/", **bearer(made.secret)).status_code == 401
    other = make_token(world.alice)
    expire(other.token)
    response = Client().get("/api/memory/notes/", **bearer(other.secret))
    assert response.status_code == 401 and response["WWW-Authenticate"].startswith("Bearer")
    assert Client().get("/api/memory/notes/", **bearer("lm_deadbeef_nope")).status_code == 401
    assert Client().get("/api/memory/notes/", **bearer("garbage")).status_code == 401
    used = AuditLog.objects.filter(event_type=AuditEvent.TOKEN_USED, object_id=str(made.token.pk))
    assert used.count() == 1 and used.get().extra["via"] == "api" and used.get().firm_id == world.firm_a.pk
    refused = AuditLog.objects.filter(event_type=AuditEvent.TOKEN_REFUSED)
    assert {(e.object_id, e.extra["reason"]) for e in refused} >= {
        (str(made.token.pk), "revoked"), (str(other.token.pk), "expired"), ("deadbeef", "unknown"), ("-", "malformed")}
    made.token.refresh_from_db()
    assert made.token.last_used_at is not None


def test_refused_tokens_are_throttled_with_the_login_limits(world, settings):
    """The per-token bound is AXES_FAILURE_LIMIT (and AXES_ENABLED turns it off): tests/connectors/test_throttle.py."""
    settings.AXES_FAILURE_LIMIT = 3
    for _attempt in range(3):
        assert Client().get("/api/memory/notes/", **bearer("lm_00000000_guess")).status_code == 401
    assert Client().get("/api/memory/notes/", **bearer("lm_00000000_guess")).status_code == 429
    settings.AXES_ENABLED = False
    assert Client().get("/api/memory/notes/", **bearer("lm_00000000_guess")).status_code == 401


def test_a_token_limited_to_matters_is_refused_by_the_rest_api_not_widened(world, memory):
    secret = make_token(world.alice, matters=[world.matter_laptop]).secret
    response = Client().get("/api/memory/notes/", **bearer(secret))
    assert response.status_code == 403
    assert "limited" in response.json()["detail"] or response.json()["detail"]


def test_session_requests_are_unchanged(world, memory):
    assert client_for(world.alice).get("/api/memory/notes/").status_code == 200
    assert Client().get("/api/memory/notes/").status_code in (401, 403)


def test_bearer_works_on_the_plain_django_api_view_too(world, memory):
    """The matter export is a plain Django view (login_required), not DRF: same token, same wall."""
    secret = make_token(world.bob).secret
    ok = Client().get(f"/api/memory/matters/{world.matter_laptop.pk}/export", **bearer(secret))
    assert ok.status_code == 200
    assert Client().get(f"/api/memory/matters/{world.matter_deposit.pk}/export", **bearer(secret)).status_code == 404
    assert Client().get(f"/api/memory/matters/{world.matter_laptop.pk}/export",
                        **bearer("lm_00000000_wrong")).status_code == 401
    limited = make_token(world.alice, matters=[world.matter_laptop]).secret
    assert Client().get(f"/api/memory/matters/{world.matter_laptop.pk}/export", **bearer(limited)).status_code == 403
    assert AuditLog.objects.filter(event_type=AuditEvent.TOKEN_USED, extra__path__endswith="/export").count() == 2
