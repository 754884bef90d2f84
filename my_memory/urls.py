from django.urls import path

from my_memory import views

urlpatterns = [
    path("", views.home, name="home"),
    path("memory/", views.my_memory, name="my-memory"),
    path("memory/<uuid:note_id>/", views.my_memory_note, name="my-memory-note"),
    path("memory/<uuid:note_id>/correct/", views.correct, name="my-memory-correct"),
    path("memory/<uuid:note_id>/forget/", views.forget, name="my-memory-forget"),
]
