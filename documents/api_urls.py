from django.urls import path

from documents import apis

urlpatterns = [
    path("matters/<int:matter_id>/documents/", apis.MatterDocumentsApi.as_view(), name="api-matter-documents"),
    path("documents/search/", apis.DocumentSearchApi.as_view(), name="api-document-search"),
    path("documents/<int:document_id>/", apis.DocumentDetailApi.as_view(), name="api-document"),
    path("documents/<int:document_id>/retry/", apis.DocumentRetryApi.as_view(), name="api-document-retry"),
]
