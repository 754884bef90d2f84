from django.urls import path

from memory import apis, records_views

urlpatterns = [
    path("notes/", apis.NoteListApi.as_view(), name="api-note-list"),
    path("notes/<uuid:note_id>/", apis.NoteDetailApi.as_view(), name="api-note-detail"),
    path("search", apis.SearchApi.as_view(), name="api-memory-search"),
    path("matters/<int:matter_id>/export", records_views.matter_export, name="api-matter-export"),
]
