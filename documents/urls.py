from django.urls import path

from documents import views

urlpatterns = [
    path("documents/", views.documents_home, name="documents"),
    path("matters/<int:matter_id>/documents/", views.matter_documents_page, name="matter-documents"),
    path("documents/<int:document_id>/", views.document_viewer, name="document-viewer"),
    path("documents/<int:document_id>/file", views.document_file, name="document-file"),
    path("documents/<int:document_id>/retry", views.document_retry, name="document-retry"),
]
