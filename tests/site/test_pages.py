"""Login, logout and the home page over real HTTP requests through Django's stack."""
from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def test_home_requires_login():
    response = Client().get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_login_with_a_wrong_password_fails_and_the_right_one_opens_home(world):
    client = Client()
    response = client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    assert response.status_code == 200
    assert "_auth_user_id" not in client.session
    response = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD}, follow=True)
    assert response.redirect_chain[-1][0] == "/"
    page = response.content.decode()
    assert "电脑花屏退货纠纷" in page
    assert "租房押金返还纠纷" in page


def test_logout_ends_the_session(world):
    client = Client()
    client.force_login(world.bob)
    client.post("/accounts/logout/")
    assert client.get("/").status_code == 302


def test_openapi_schema_and_docs_are_served_without_a_cdn(world):
    client = Client()
    client.force_login(world.alice)
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/memory/notes/" in schema.content
    docs = client.get("/api/docs/").content.decode()
    assert "cdn." not in docs
    assert "unpkg" not in docs


def test_chinese_by_default_and_english_on_request(world):
    client = Client()
    client.force_login(world.alice)
    assert "您负责的案件" in client.get("/").content.decode()
    assert "您负责的案件" in client.get("/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()
    page = client.get("/", HTTP_ACCEPT_LANGUAGE="en-US,en;q=0.9").content.decode()
    assert "Your matters" in page
    assert "Memory graph" in page
