"""The chronology pages: ``/matters/<id>/chronology/`` (optionally ``?as_of=2026-03-01`` and/or
``?valid_at=2025-06-30``), and the same as ``chronology.md`` / ``chronology.csv`` downloads. A
matter the user may not open is a 404; a bad date is said on the page beside its field (400),
never a crash."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from chronology.exports import file_name, to_csv, to_markdown
from chronology.forms import ChronologyMomentForm
from memory.as_of import moment_label
from chronology.selectors import chronology_matter, matter_chronology
from chronology.services import do_record_chronology_export

EXPORTS = {"md": ("markdown", "text/markdown; charset=utf-8", to_markdown),
           "csv": ("csv", "text/csv; charset=utf-8", to_csv)}


@require_GET
@login_required
def matter_chronology_page(request: HttpRequest, matter_id: int) -> HttpResponse:
    matter = chronology_matter(request.user, matter_id)
    form = ChronologyMomentForm(request.GET, matter=matter)
    if not form.is_valid():
        return render(request, "chronology/matter.html", {"matter": matter, "form": form}, status=400)
    as_of, valid_at = form.moments()
    chronology = matter_chronology(request.user, matter.pk, as_of=as_of, valid_at=valid_at)
    return render(request, "chronology/matter.html", {
        "matter": matter, "form": form, "chronology": chronology, "query": form.query(),
        "as_of_label": moment_label(as_of) if as_of else "",
        "valid_at_label": moment_label(valid_at) if valid_at else "",
    })


@require_GET
@login_required
def matter_chronology_export(request: HttpRequest, matter_id: int, extension: str) -> HttpResponse:
    matter = chronology_matter(request.user, matter_id)
    form = ChronologyMomentForm(request.GET, matter=matter)
    if not form.is_valid():
        refused = " ".join(message for messages in form.messages().values() for message in messages)
        return HttpResponse(refused, status=400, content_type="text/plain; charset=utf-8")
    as_of, valid_at = form.moments()
    export_format, content_type, render_file = EXPORTS[extension]
    chronology = matter_chronology(request.user, matter.pk, as_of=as_of, valid_at=valid_at)
    text = render_file(chronology, base_url=request.build_absolute_uri("/"))
    do_record_chronology_export(user=request.user, chronology=chronology, export_format=export_format)
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{file_name(chronology, extension)}"'
    return response
