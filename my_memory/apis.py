"""Memory REST API (DRF). Every query starts from the visibility rule; anything else is a 404."""
from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from infra.embeddings import EmbeddingUnavailable
from infra.http_input import MAX_DB_ID
from memory.as_of import BadDate, memory_began, parse_as_of
from memory.models import MemoryScope, Note
from recall import InvalidSearch, NotFound, search_memory
from memory.selectors import visible_notes
from my_memory.serializers import NoteSerializer, SearchRequestSerializer, SearchResponseSerializer


class NoteListApi(generics.ListAPIView):
    """The notes the user may see, newest first; filter by scope and matter."""

    serializer_class = NoteSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("scope", str, enum=MemoryScope.values),
            OpenApiParameter("matter", int),
            OpenApiParameter("status", str, enum=[s for s in Note.Status.values]),
            OpenApiParameter("as_of", str, description="2026-03-01 or an ISO date and time: the notes of that "
                             "status as they stood then (a forgotten note is on no date)"),
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
            if not (matter.isascii() and matter.isdigit()) or int(matter) > MAX_DB_ID:
                raise ValidationError({"matter": "matter must be a numeric id"})
            queryset = queryset.filter(matter_id=int(matter))
        status = params.get("status", Note.Status.ACTIVE)
        if status not in Note.Status.values:
            raise ValidationError({"status": f"unknown status {status!r}"})
        try:
            self.as_of = parse_as_of(params.get("as_of"), began=memory_began(self.request.user))
        except BadDate as error:
            raise ValidationError({"as_of": [str(error)]}) from None
        return queryset.in_state(status, self.as_of).order_by("-stored_at")

    def get_serializer_context(self) -> dict:
        return {**super().get_serializer_context(), "as_of": getattr(self, "as_of", None)}


class NoteDetailApi(generics.RetrieveAPIView):
    """One note with its provenance and evolution history."""

    serializer_class = NoteSerializer
    lookup_url_kwarg = "note_id"

    def get_object(self) -> Note:
        try:
            return visible_notes(self.request.user).get(pk=self.kwargs["note_id"])
        except Note.DoesNotExist:
            raise Http404 from None


class EmbeddingsDown(APIException):
    status_code = 503
    default_detail = "the embedding service is unavailable; try again shortly"
    default_code = "embeddings_unavailable"


class SearchApi(APIView):
    """Layered, explainable memory search: the recalled notes, the plan and why each note came back."""

    @extend_schema(
        request=SearchRequestSerializer,
        responses={
            200: SearchResponseSerializer,
            400: OpenApiResponse(description="Bad input: empty or too long query, k out of 1..50, "
                                 "unknown strategy or scope, non-integer ids."),
            404: OpenApiResponse(description="A matter or conversation you may not see."),
            503: OpenApiResponse(description="The embedding service is down."),
        },
        examples=[
            OpenApiExample(
                "current matter",
                value={"query": "这个电脑花屏纠纷下一步怎么走？", "k": 10, "strategy": "layered", "matter": 1},
                request_only=True,
            )
        ],
    )
    def post(self, request: Request) -> Response:
        serializer = SearchRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            as_of = parse_as_of(data.get("as_of"), began=memory_began(request.user))
        except BadDate as error:
            raise ValidationError({"as_of": [str(error)]}) from None
        try:
            valid_at = parse_as_of(data.get("valid_at"), began=None, world=True)
        except BadDate as error:
            raise ValidationError({"valid_at": [str(error)]}) from None
        try:
            result = search_memory(
                request.user,
                data["query"],
                k=data["k"],
                strategy=data["strategy"],
                matter_id=data.get("matter"),
                scopes=data.get("scopes"),
                conversation=data.get("conversation"),
                as_of=as_of,
                valid_at=valid_at,
            )
        except NotFound:
            raise Http404 from None
        except InvalidSearch as error:
            raise ValidationError({error.field: [error.message]}) from None
        except EmbeddingUnavailable:
            raise EmbeddingsDown() from None
        return Response(SearchResponseSerializer(result, context={"request": request}).data)
