"""Logged-in HTTP test clients (real Django request handling, real session): one helper per kind."""
from __future__ import annotations

from django.test import Client
from rest_framework.test import APIClient


def client_for(user) -> APIClient:
    """A DRF API client logged in as ``user`` (``format="json"`` posts, the API's views)."""
    client = APIClient()
    client.force_login(user)
    return client


def logged_in(user) -> Client:
    """A plain Django client logged in as ``user`` (pages, forms, admin, Django's own JSON posts)."""
    client = Client()
    client.force_login(user)
    return client
