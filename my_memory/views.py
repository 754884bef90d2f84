"""Pages of the memory app: the home page, and "my memory" where a user reads, corrects and
forgets what the assistant remembers about them and their matters
(docs/my-memory-and-admin.md). Reads go through my_memory.pages, writes through
memory.services.notes; nothing here decides who may see or change what."""
from __future__ import annotations

from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from infra.embeddings import EmbeddingUnavailable
from my_memory.forms import CorrectNoteForm, ForgetNoteForm, MemoryFilterForm
from memory.models import Note
from my_memory.pages import (
    MemoryFilters, MemoryListing, mark_contradictions, my_memory_notes, note_details, worded_as_of,
)
from recall import InvalidSearch, NotFound
from memory.selectors import get_visible_note, home_summary
from memory.services.notes import NoteNotChangeable, NoteValidationError, correct_own_note, forget_note

NOTES_PER_PAGE = 25


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "memory/home.html", {"summary": home_summary(request.user)})


@login_required
def my_memory(request: HttpRequest) -> HttpResponse:
    """The list: filters, search, and one row per note linking to its details."""
    form = MemoryFilterForm(request.GET or None, user=request.user)
    listing, status, filters = MemoryListing(notes=[]), 200, MemoryFilters()
    if not form.is_bound or form.is_valid():
        filters = form.filters() if form.is_bound else MemoryFilters()
        try:
            listing = my_memory_notes(request.user, filters)
        except InvalidSearch as error:
            form.add_error("q", error.message)
            status = 400
        except NotFound:
            form.add_error("matter", _("You are not assigned to this matter."))
            status = 400
        except EmbeddingUnavailable:
            form.add_error(None, _("Search is unavailable right now; try again shortly."))
            status = 503
    else:
        status = 400
    page = Paginator(listing.notes, NOTES_PER_PAGE).get_page(request.GET.get("page"))
    mark_contradictions(request.user, list(page))
    worded_as_of(list(page), filters.as_of)
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "memory/my_memory.html",
        {"form": form, "page": page, "listing": listing, "query_string": query.urlencode(), "as_of": filters.as_of},
        status=status,
    )


def _note_or_404(request: HttpRequest, note_id: UUID) -> Note:
    try:
        return get_visible_note(request.user, note_id)
    except Note.DoesNotExist:
        raise Http404(_("No such note.")) from None


def _note_page(request: HttpRequest, note: Note, *, correct_form=None, forget_form=None, status=200) -> HttpResponse:
    details = note_details(request.user, note)
    return render(
        request,
        "memory/my_memory_note.html",
        {
            "details": details,
            "note": details.note,
            "correct_form": correct_form
            or CorrectNoteForm(initial={"content": note.content, "category": note.category}),
            "forget_form": forget_form or ForgetNoteForm(),
        },
        status=status,
    )


@login_required
def my_memory_note(request: HttpRequest, note_id: UUID) -> HttpResponse:
    """One note: source turn, history, validity window, and the correct / forget forms."""
    return _note_page(request, _note_or_404(request, note_id))


@login_required
@require_POST
def correct(request: HttpRequest, note_id: UUID) -> HttpResponse:
    note = _note_or_404(request, note_id)
    form = CorrectNoteForm(request.POST)
    if form.is_valid():
        try:
            correct_own_note(
                note,
                {"content": form.cleaned_data["content"], "category": form.cleaned_data["category"]},
                user=request.user,
                reason=form.cleaned_data["reason"],
            )
        except NoteNotChangeable:
            raise PermissionDenied(_("You may not correct this note.")) from None
        except NoteValidationError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, _("The note was corrected."))
            return redirect("my-memory-note", note_id=note.pk)
    return _note_page(request, _note_or_404(request, note_id), correct_form=form, status=400)


@login_required
@require_POST
def forget(request: HttpRequest, note_id: UUID) -> HttpResponse:
    note = _note_or_404(request, note_id)
    form = ForgetNoteForm(request.POST)
    if form.is_valid():
        try:
            forget_note(note, user=request.user, reason=form.cleaned_data["reason"])
        except NoteNotChangeable:
            raise PermissionDenied(_("You may not forget this note.")) from None
        except NoteValidationError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, _("The note is forgotten: the assistant will not recall it again."))
            return redirect("my-memory")
    return _note_page(request, note, forget_form=form, status=400)
