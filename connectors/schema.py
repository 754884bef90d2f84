"""The OpenAPI schema names the Bearer token (drf-spectacular), so `check --deploy` and
/api/schema/ document it instead of warning about an unknown authentication class."""
from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class AccessTokenScheme(OpenApiAuthenticationExtension):
    target_class = "connectors.authentication.AccessTokenAuthentication"
    name = "accessToken"

    def get_security_definition(self, auto_schema) -> dict:
        return {"type": "http", "scheme": "bearer",
                "description": "A personal access token made on /tokens/ (docs/connectors.md)."}
