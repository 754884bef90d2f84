"""Login throttling (django-axes): after LOGIN_FAILURE_LIMIT wrong passwords even the right one is
refused with a translated page, on the site login and /admin/login/; the lock-out is in the audit
log of the user's firm, shown to that firm's admins (not to charlie's firm) and can be unlocked."""
from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from memory.models import AuditEvent, AuditLog
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

SITE_LOGIN = "/accounts/login/"
ADMIN_LOGIN = "/admin/login/?next=/admin/"


def fail_until_locked(client: Client, url: str, username: str) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(url, {"username": username, "password": "wrong-password"})


def is_logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_the_right_password_is_refused_after_too_many_wrong_ones_on_the_site_login(world):
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        response = client.post(SITE_LOGIN, {"username": "bob", "password": "wrong-password"})
        assert response.status_code == 200
        assert not is_logged_in(client)
    client.post(SITE_LOGIN, {"username": "bob", "password": "wrong-password"})

    response = client.post(SITE_LOGIN, {"username": "bob", "password": PASSWORD})
    assert response.status_code == 429
    assert not is_logged_in(client)
    page = response.content.decode()
    assert "Too many failed logins" in page
    assert f"after {settings.AXES_FAILURE_LIMIT} wrong passwords" in page
    assert "Try again in 15 minutes" in page

    chinese = Client().post(SITE_LOGIN, {"username": "bob", "password": PASSWORD})
    assert chinese.status_code == 429
    assert "登录失败次数过多" in chinese.content.decode()

    # one audit entry, in bob's firm's log
    entry = AuditLog.objects.get(event_type=AuditEvent.LOGIN_LOCKED_OUT)
    assert (entry.firm, entry.object_id, entry.after["ip_address"]) == (world.firm_a, "bob", "127.0.0.1")
    # another user from the same address is not affected
    other = Client()
    other.post(SITE_LOGIN, {"username": "alice", "password": PASSWORD})
    assert is_logged_in(other)


def test_the_admin_login_is_throttled_too(world):
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    fail_until_locked(client, ADMIN_LOGIN, "alice")
    response = client.post(ADMIN_LOGIN, {"username": "alice", "password": PASSWORD, "next": "/admin/"})
    assert response.status_code == 429
    assert not is_logged_in(client)
    assert "Too many failed logins" in response.content.decode()
    assert AuditLog.objects.filter(event_type=AuditEvent.LOGIN_LOCKED_OUT, object_id="alice").count() == 1


def test_firm_admins_see_and_unlock_their_members_lockouts_and_charlie_sees_none(world):
    fail_until_locked(Client(), SITE_LOGIN, "bob")
    fail_until_locked(Client(), SITE_LOGIN, "nobody-known")  # not a user: operators only

    alice = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    alice.force_login(world.alice)
    page = alice.get("/admin/logins/failedlogin/").content.decode()
    assert "bob" in page
    assert "nobody-known" not in page
    assert "登录失败与锁定" in page  # translated model name
    assert "登录被锁定" in alice.get("/admin/memory/auditlog/").content.decode()

    charlie = Client()
    charlie.force_login(world.charlie)
    page = charlie.get("/admin/logins/failedlogin/").content.decode()
    assert "bob" not in page
    from logins.models import FailedLogin

    bob_row = FailedLogin.objects.get(username="bob")
    assert charlie.get(f"/admin/logins/failedlogin/{bob_row.pk}/change/").status_code == 404
    assert charlie.post(f"/admin/logins/failedlogin/{bob_row.pk}/delete/", {"post": "yes"}).status_code == 404
    assert "bob" not in charlie.get("/admin/memory/auditlog/?event_type=login_locked_out").content.decode()
    assert not AuditLog.objects.visible_to(world.charlie).filter(event_type=AuditEvent.LOGIN_LOCKED_OUT).exists()

    # alice unlocks bob: audited, and bob logs in again
    response = alice.post(f"/admin/logins/failedlogin/{bob_row.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert AuditLog.objects.filter(event_type=AuditEvent.LOGIN_UNLOCKED, object_id="bob", actor=world.alice).exists()
    bob = Client()
    bob.post(SITE_LOGIN, {"username": "bob", "password": PASSWORD})
    assert is_logged_in(bob)


def test_a_credential_check_without_a_request_still_works(world):
    """Django's test client login() (no request) is not throttled and not broken by the backend."""
    client = Client()
    assert client.login(username="bob", password=PASSWORD)
    assert not Client().login(username="bob", password="wrong-password")
