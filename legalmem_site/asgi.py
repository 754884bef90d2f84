"""ASGI entry point: HTTP through Django (``/mcp`` through the MCP server of ``connectors``),
websockets through Channels.

``get_asgi_application()`` must run before anything imports models, so the
websocket routing is imported after it.
"""
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legalmem_site.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from chat.origin import StrictOriginValidator  # noqa: E402
from chat.routing import websocket_urlpatterns  # noqa: E402
from connectors.mcp_http import with_mcp  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": with_mcp(django_asgi_app),
        "websocket": StrictOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
