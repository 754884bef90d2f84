"""``GET /api/matters/<id>/chronology/?as_of=…&valid_at=…``: the chronology as JSON, the page's own read."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from chronology.forms import ChronologyMomentForm
from chronology.selectors import chronology_matter, matter_chronology


class MatterChronologyApi(APIView):
    """A matter's facts by the date they held and its documents by their upload, each with its
    source and state; 404 for a matter the caller may not open, 400 for a bad ``as_of`` or
    ``valid_at``."""

    @extend_schema(
        parameters=[
            OpenApiParameter("as_of", str, description="2026-03-01, or an ISO date and time: the chronology as "
                             "the firm's memory stood then (system time)"),
            OpenApiParameter("valid_at", str, description="2025-06-30, or an ISO date and time (any real date): "
                             "the facts whose value held then in the world, as the memory knows them now — or "
                             "at as_of when both are given (world time)"),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request, matter_id: int):
        matter = chronology_matter(request.user, matter_id)
        form = ChronologyMomentForm(request.query_params, matter=matter)
        if not form.is_valid():
            raise ValidationError(form.messages())
        as_of, valid_at = form.moments()
        return Response(matter_chronology(request.user, matter.pk, as_of=as_of, valid_at=valid_at).payload())
