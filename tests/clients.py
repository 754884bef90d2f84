"""A logged-in HTTP test client (real Django request handling, real session)."""
from __future__ import annotations

from rest_framework.test import APIClient


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client
