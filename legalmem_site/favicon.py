"""``/favicon.ico``: browsers ask for it on every page (admin and API pages too); the vendored
SVG under static/ answers instead of a 404 (docs/chat-page.md "Favicon")."""
from __future__ import annotations

from django.contrib.staticfiles import finders
from django.http import FileResponse, Http404, HttpRequest
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

FAVICON = "favicon.svg"


@require_safe
@cache_control(max_age=86400, public=True)
def favicon(request: HttpRequest) -> FileResponse:
    path = finders.find(FAVICON)
    if path is None:
        raise Http404(FAVICON)
    return FileResponse(open(path, "rb"), content_type="image/svg+xml")
