"""The token page (included at the site root)."""
from django.urls import path

from connectors import views

urlpatterns = [
    path("tokens/", views.tokens, name="connector-tokens"),
    path("tokens/<int:token_id>/revoke", views.revoke, name="connector-token-revoke"),
]
