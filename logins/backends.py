"""django-axes' backend, minus its refusal of credential checks made without a request."""
from __future__ import annotations

from axes.backends import AxesStandaloneBackend


class ThrottledBackend(AxesStandaloneBackend):
    """Refuses a locked-out login (django-axes). A check without a request (Django's test client
    ``login()``, a management command) is no web login: there is no address to throttle, so it is
    left to the next backend instead of raising."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
