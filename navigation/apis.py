"""Navigation REST API: the graph, the trace to a note, and layered_nav search.

Thin views: validate input (400), resolve the user's context through the visibility rule
(navigation.selectors), get its current graph (navigation.freshness), and let the response
serializers — the same ones that document the payloads — produce them. A note the user may not see is a 404, whatever the reason.
"""
from __future__ import annotations

from dataclasses import asdict
from datetime import datetime

from django.http import Http404
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.as_of import BadDate, memory_began, parse_as_of
from memory.disclosure import redact_note_payload, viewer_of
from memory.models import Note
from navigation import freshness, selectors
from navigation.search import layered_nav_search
from navigation.serializers import (
    GraphPage,
    GraphQuerySerializer,
    GraphTrace,
    NoteTrace,
    GraphResponseSerializer,
    NavSearchRequestSerializer,
    NavSearchResponseSerializer,
    TraceQuerySerializer,
    TraceResponseSerializer,
    TraceSerializer,
)

FILTER_PARAMETERS = [
    OpenApiParameter("firm", int, description="Firm id (default: the user's first firm)."),
    OpenApiParameter("matter", int, description="Only notes of this matter (must be assigned to you)."),
    OpenApiParameter("scope", str, description="Only this memory layer."),
    OpenApiParameter("event", str, description="Only this event key (tag:…, story:… or matter:…)."),
    OpenApiParameter("as_of", str, description="2026-03-01 or an ISO date and time: the graph of the memory "
                     "as it stood then (notes stored by then and not yet retired); empty for now."),
]


def _as_of(user, text: str | None) -> datetime | None:
    """``as_of`` read by the one parser (memory.as_of); a bad date is a 400 that says why."""
    try:
        return parse_as_of(text, began=memory_began(user))
    except BadDate as error:
        raise ValidationError({"as_of": [str(error)]}) from None


def _context(user, data: dict):
    as_of = _as_of(user, data.get("as_of"))
    try:
        return selectors.resolve_context(
            user, firm_id=data.get("firm"), matter_id=data.get("matter"),
            scope=data.get("scope"), event=data.get("event"), as_of=as_of,
        )
    except selectors.NavigationInputError as error:
        raise ValidationError({"detail": str(error)}) from None


class GraphApi(APIView):
    """The navigation graph of the notes you may see: upper levels in full, L0 one region
    (page) at a time in layout order, edges among the returned nodes with their levels."""

    @extend_schema(
        parameters=[
            *FILTER_PARAMETERS,
            OpenApiParameter("l0_offset", int, description="First L0 node (layout order) of this page."),
            OpenApiParameter("l0_limit", int, description="L0 nodes in this page (0 = upper levels only)."),
        ],
        responses=GraphResponseSerializer,
    )
    def get(self, request: Request) -> Response:
        query = GraphQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        context = _context(request.user, data)
        if context is None:
            return Response({"detail": gettext("You are not a member of any firm.")}, status=404)
        built = freshness.current_graph(context)
        page = GraphPage(built, l0_offset=data["l0_offset"], l0_limit=data["l0_limit"])
        return Response(GraphResponseSerializer(page).data)


class TraceApi(APIView):
    """The real search trace to a note, its content used as the query (docs/navigation.md, Trace)."""

    @extend_schema(
        parameters=[*FILTER_PARAMETERS, OpenApiParameter("k", int, description="Results wanted (ef = max(k, EF_SEARCH)).")],
        responses=TraceResponseSerializer,
    )
    def get(self, request: Request, note_id) -> Response:
        query = TraceQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        try:
            note = selectors.visible_note(request.user, note_id)
        except Note.DoesNotExist:
            raise Http404(gettext("Not found.")) from None
        if data.get("firm") not in (None, note.firm_id):
            raise Http404(gettext("Not found."))
        context = _context(request.user, {**data, "firm": note.firm_id})
        built = freshness.current_graph(context)
        target = built.graph.index_of.get(str(note.pk))
        if target is None and context.as_of is not None:
            raise Http404(gettext("This note was not in the memory at that moment."))
        if target is None:
            raise Http404(gettext("This note is not in the navigation graph (replaced by a newer version, not searchable yet, or filtered out)."))
        if context.as_of is not None:  # read only: the wording the memory held then (Note.content_at)
            note.content = note.content_at(context.as_of)
        result = selectors.trace_query(built, note.content, k=data["k"], target=target)
        payload = TraceResponseSerializer(NoteTrace(note, built, target, result), context={"user": request.user}).data
        payload["note"] = redact_note_payload(dict(payload["note"]), note, viewer_of(request.user))
        return Response(payload)


class SearchApi(APIView):
    """Search with ``strategy=layered_nav``: the graph route fused with vector search (``as_of``:
    on the graph of that moment)."""

    @extend_schema(request=NavSearchRequestSerializer, responses=NavSearchResponseSerializer)
    def post(self, request: Request) -> Response:
        body = NavSearchRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        as_of = _as_of(request.user, data.get("as_of"))
        try:
            result = layered_nav_search(
                request.user, data["query"], k=data["k"], matter_id=data.get("matter"),
                scopes=data.get("scopes"), firm_id=data.get("firm"), as_of=as_of,
            )
        except selectors.NavigationInputError as error:
            raise ValidationError({"detail": str(error)}) from None
        return Response({
            "strategy": "layered_nav",
            "query": result.query,
            "k": result.k,
            "graph_version": result.graph_version,
            "hits": [asdict(hit) for hit in result.hits],
            "trace": result.trace or TraceSerializer(GraphTrace(None, None)).data,
        })
