from django.urls import path

from records import views

urlpatterns = [
    path("matters/<int:matter_id>/export", views.matter_export, name="api-matter-export"),
]
