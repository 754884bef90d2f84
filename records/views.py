"""Download of a matter's export by a user assigned to it (docs/records.md, "Export")."""
from __future__ import annotations

import tempfile

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET

from memory.models import Matter
from records.services.matter_bundle import BUNDLE, write_bundle
from records.services.matter_transfer import FORMATS, export_matter, exportable_matter


def export_response(matter: Matter, *, actor, fmt: str) -> HttpResponse:
    if fmt == BUNDLE:
        return bundle_response(matter, actor=actor)
    name, content_type, text = export_matter(matter, actor=actor, fmt=fmt)
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def bundle_response(matter: Matter, *, actor) -> FileResponse:
    """The bundle (JSON and the documents' files, a zip) streamed from a temporary file that is
    gone once the response is closed (nothing of the matter left in the temporary folder)."""
    handle = tempfile.TemporaryFile(suffix=".zip")
    write_bundle(matter, actor=actor, path=handle)
    handle.seek(0)
    return FileResponse(handle, as_attachment=True, filename=f"matter-{matter.reference or matter.pk}.zip",
                        content_type="application/zip")


@require_GET
@login_required
def matter_export(request: HttpRequest, matter_id: int) -> HttpResponse:
    """``?format=json`` (default), ``markdown`` or ``bundle`` (a zip with the documents' files); a
    matter the user is not assigned to is a 404.
    Errors are JSON in the reader's language, like every other API ({"detail": "未找到。"})."""
    fmt = request.GET.get("format", "json")
    if fmt not in (*FORMATS, BUNDLE):
        return JsonResponse({"detail": gettext("The format must be one of: %(formats)s.") % {
            "formats": ", ".join((*FORMATS, BUNDLE))}}, status=400)
    try:
        matter = exportable_matter(request.user, matter_id)
    except Matter.DoesNotExist:
        return JsonResponse({"detail": gettext("Not found.")}, status=404)
    return export_response(matter, actor=request.user, fmt=fmt)
