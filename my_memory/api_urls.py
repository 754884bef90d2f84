from django.urls import path

from my_memory import apis

urlpatterns = [
    path("notes/", apis.NoteListApi.as_view(), name="api-note-list"),
    path("notes/<uuid:note_id>/", apis.NoteDetailApi.as_view(), name="api-note-detail"),
    path("search", apis.SearchApi.as_view(), name="api-memory-search"),
]
