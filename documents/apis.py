"""Documents REST API (DRF): upload to a matter, list, status, retry, search with citations."""
from __future__ import annotations

from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from documents.selectors import matter_documents, visible_document, visible_matter
from documents.serializers import DocumentSerializer
from documents.views import empty_message, too_large_message
from documents.services import EmptyUpload, UploadTooLarge
from documents.search import search_documents
from documents.ingest import retry_document, upload_document


class PayloadTooLarge(APIException):
    status_code = 413
    default_code = "too_large"


class MatterDocumentsApi(APIView):
    """GET: the matter's documents with their status. POST (multipart ``file``, one or more):
    upload; each is queued for the worker (202)."""

    serializer_class = DocumentSerializer
    parser_classes = [MultiPartParser]

    def get(self, request, matter_id: int):
        matter = visible_matter(request.user, matter_id)
        return Response(DocumentSerializer(matter_documents(request.user, matter), many=True).data)

    def post(self, request, matter_id: int):
        matter = visible_matter(request.user, matter_id)
        files = request.FILES.getlist("file")
        if not files:
            raise ValidationError({"file": [_("Choose a file to upload.")]})
        created = []
        for upload in files:
            try:
                created.append(upload_document(actor=request.user, matter=matter, stream=upload, filename=upload.name))
            except UploadTooLarge as error:
                raise PayloadTooLarge(too_large_message(error))
            except EmptyUpload:
                raise ValidationError({"file": [empty_message(upload.name)]})
        return Response(DocumentSerializer(created, many=True).data, status=202)


class DocumentDetailApi(APIView):
    serializer_class = DocumentSerializer
    def get(self, request, document_id: int):
        return Response(DocumentSerializer(visible_document(request.user, document_id)).data)


class DocumentRetryApi(APIView):
    serializer_class = DocumentSerializer
    def post(self, request, document_id: int):
        document = visible_document(request.user, document_id)
        if not document.can_retry:
            raise ValidationError({"status": [
                _("Only a failed document can be retried (it is %(status)s).") % {"status": document.get_status_display()}]})
        return Response(DocumentSerializer(retry_document(document, actor=request.user)).data, status=202)


@extend_schema(responses=OpenApiTypes.OBJECT)
class DocumentSearchApi(APIView):
    """The best passages of the documents the user may see, each with its citation and viewer URL."""

    def get(self, request):
        query = request.query_params.get("q", "").strip()
        if not query:
            raise ValidationError({"q": [_("A query is required.")]})
        matter = request.query_params.get("matter")
        matter_id = None
        if matter:
            if not (matter.isascii() and matter.isdigit()):
                raise ValidationError({"matter": [_("The matter must be a numeric ID.")]})
            matter_id = visible_matter(request.user, int(matter)).pk
        hits = search_documents(request.user, query[:2000], matter_id=matter_id)
        return Response({"query": query, "results": [hit.payload() for hit in hits]})
