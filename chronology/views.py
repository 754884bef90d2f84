"""The chronology pages: ``/matters/<id>/chronology/`` (optionally ``?as_of=2026-03-01``), and
the same as ``chronology.md`` / ``chronology.csv`` downloads. A matter the user may not open is a
404; a bad ``as_of`` is said on the page (400), never a crash."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from chronology.exports import file_name, to_csv, to_markdown
from chronology.selectors import chronology_matter, matter_chronology, parse_as_of
from memory.as_of import BadDate
from chronology.services import do_record_chronology_export

EXPORTS = {"md": ("markdown", "text/markdown; charset=utf-8", to_markdown),
           "csv": ("csv", "text/csv; charset=utf-8", to_csv)}


@require_GET
@login_required
def matter_chronology_page(request: HttpRequest, matter_id: int) -> HttpResponse:
    matter = chronology_matter(request.user, matter_id)
    as_of_text = request.GET.get("as_of", "")
    try:
        as_of = parse_as_of(as_of_text, matter)
    except BadDate as error:
        return render(request, "chronology/matter.html", {"matter": matter, "error": str(error),
                                                          "as_of_text": as_of_text[:40]}, status=400)
    chronology = matter_chronology(request.user, matter.pk, as_of=as_of)
    return render(request, "chronology/matter.html", {
        "matter": matter, "chronology": chronology, "as_of_text": as_of_text[:40] if as_of else "",
    })


@require_GET
@login_required
def matter_chronology_export(request: HttpRequest, matter_id: int, extension: str) -> HttpResponse:
    matter = chronology_matter(request.user, matter_id)
    try:
        as_of = parse_as_of(request.GET.get("as_of", ""), matter)
    except BadDate as error:
        return HttpResponse(str(error), status=400, content_type="text/plain; charset=utf-8")
    export_format, content_type, render_file = EXPORTS[extension]
    chronology = matter_chronology(request.user, matter.pk, as_of=as_of)
    text = render_file(chronology, base_url=request.build_absolute_uri("/"))
    do_record_chronology_export(user=request.user, chronology=chronology, export_format=export_format)
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{file_name(chronology, extension)}"'
    return response
