"""Password reset tells the truth: with no mail server configured, or a real local SMTP server that
refuses the connection or the recipient, the page says no email was sent (never "sent"); a server
that accepts gets the reset link for the right address."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.logins.smtp_server import TinySMTPServer

pytestmark = pytest.mark.django_db

RESET = "/accounts/password_reset/"


@pytest.fixture
def alice_email(world) -> str:
    world.alice.email = "alice@alpha.example"
    world.alice.save(update_fields=["email"])
    return world.alice.email


@pytest.fixture
def smtp_settings(settings):
    def use(server: TinySMTPServer) -> None:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", server.port, 5
    return use


def test_with_no_mail_server_the_page_says_so_and_sends_nothing(alice_email, settings):
    settings.EMAIL_BACKEND = "logins.mail.NoMailServerBackend"  # what settings.py picks without EMAIL_HOST
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    assert 'href="/accounts/password_reset/"' in client.get("/accounts/login/").content.decode()
    page = client.get(RESET).content.decode()
    assert "no mail server is configured" in page
    assert 'name="email"' not in page
    response = client.post(RESET, {"email": alice_email})
    assert response.status_code == 503
    assert "no mail server is configured" in response.content.decode()
    chinese = Client().post(RESET, {"email": alice_email})
    assert "未配置邮件服务器" in chinese.content.decode()


@pytest.mark.parametrize("mode", ["refuse_greeting", "refuse_recipient"])
def test_a_mail_server_that_refuses_gives_a_clear_error_not_sent(alice_email, smtp_settings, mode):
    with TinySMTPServer(mode=mode) as server:
        smtp_settings(server)
        response = Client(HTTP_ACCEPT_LANGUAGE="en").post(RESET, {"email": alice_email})
    assert response.status_code == 502, response.content.decode()[:500]
    assert "did not accept the message, so no email was sent" in response.content.decode()
    assert server.received == []


def test_a_refusing_server_gives_the_same_answer_for_an_unknown_address(world, smtp_settings):
    with TinySMTPServer(mode="refuse_greeting") as server:
        smtp_settings(server)
        response = Client(HTTP_ACCEPT_LANGUAGE="en").post(RESET, {"email": "nobody@nowhere.example"})
    assert response.status_code == 502


def test_a_server_that_accepts_gets_the_reset_link(alice_email, smtp_settings):
    with TinySMTPServer(mode="accept") as server:
        smtp_settings(server)
        response = Client().post(RESET, {"email": alice_email})
    assert response.status_code == 302
    assert response["Location"] == "/accounts/password_reset/done/"
    [mail] = server.received
    assert mail.recipients == [alice_email]
    assert re.search(rb"/accounts/reset/[^/\s]+/[^/\s]+/", mail.data)
