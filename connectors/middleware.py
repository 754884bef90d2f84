"""``Authorization: Bearer`` on the API views that are plain Django views (the matter export,
``login_required``): DRF views authenticate themselves (``AccessTokenAuthentication``), every
other ``/api/`` view gets the token's user here, with the same checks and audit."""
from __future__ import annotations

from typing import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework.views import APIView

from connectors.authentication import KEYWORD, TokenRefused, authenticate_bearer, bearer_secret, client_address

API_PREFIX = "/api/"


class BearerOnPlainApiViews:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs) -> HttpResponse | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header or not request.path.startswith(API_PREFIX):
            return None
        view_class = getattr(view_func, "cls", None) or getattr(view_func, "view_class", None)
        if isinstance(view_class, type) and issubclass(view_class, APIView):
            return None  # DRF authenticates it
        secret = bearer_secret(header)
        if secret is None:
            return None
        try:
            token = authenticate_bearer(secret, address=client_address(request.META), method=request.method,
                                        path=request.path)
        except TokenRefused as refused:
            response = JsonResponse({"detail": refused.message}, status=refused.status)
            if refused.status == 401:
                response["WWW-Authenticate"] = f'{KEYWORD} realm="api"'
            return response
        request.user = token.user
        request.access_token = token
        return None
