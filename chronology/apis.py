"""``GET /api/matters/<id>/chronology/?as_of=…``: the chronology as JSON, the page's own read."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from chronology.selectors import chronology_matter, matter_chronology, parse_as_of
from memory.as_of import BadDate


class MatterChronologyApi(APIView):
    """A matter's facts by the date they held, each with its source and state; 404 for a matter
    the caller may not open, 400 for a bad ``as_of``."""

    @extend_schema(
        parameters=[OpenApiParameter("as_of", str, description="2026-03-01, or an ISO date and time: the "
                                     "chronology as the firm's memory stood then")],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request, matter_id: int):
        matter = chronology_matter(request.user, matter_id)
        try:
            as_of = parse_as_of(request.query_params.get("as_of", ""), matter)
        except BadDate as error:
            raise ValidationError({"as_of": [str(error)]}) from None
        return Response(matter_chronology(request.user, matter.pk, as_of=as_of).payload())
