"""Memory REST API (DRF). Every query starts from the visibility rule; anything else is a 404."""
from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.exceptions import ValidationError

from memory.models import MemoryScope, Note
from memory.selectors import visible_notes
from memory.serializers import NoteSerializer


class NoteListApi(generics.ListAPIView):
    """The notes the user may see, newest first; filter by scope and matter."""

    serializer_class = NoteSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("scope", str, enum=MemoryScope.values),
            OpenApiParameter("matter", int),
            OpenApiParameter("status", str, enum=[s for s in Note.Status.values]),
        ]
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        queryset = visible_notes(self.request.user)
        params = self.request.query_params
        scope = params.get("scope")
        if scope:
            if scope not in MemoryScope.values:
                raise ValidationError({"scope": f"unknown scope {scope!r}; expected one of {', '.join(MemoryScope.values)}"})
            queryset = queryset.filter(memory_scope=scope)
        matter = params.get("matter")
        if matter:
            if not matter.isdigit():
                raise ValidationError({"matter": "matter must be a numeric id"})
            queryset = queryset.filter(matter_id=int(matter))
        status = params.get("status", Note.Status.ACTIVE)
        if status not in Note.Status.values:
            raise ValidationError({"status": f"unknown status {status!r}"})
        return queryset.filter(status=status).order_by("-stored_at")


class NoteDetailApi(generics.RetrieveAPIView):
    """One note with its provenance and evolution history."""

    serializer_class = NoteSerializer
    lookup_url_kwarg = "note_id"

    def get_object(self) -> Note:
        try:
            return visible_notes(self.request.user).get(pk=self.kwargs["note_id"])
        except Note.DoesNotExist:
            raise Http404 from None
