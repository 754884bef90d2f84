from django.urls import path

from chronology import views

urlpatterns = [
    path("matters/<int:matter_id>/chronology/", views.matter_chronology_page, name="matter-chronology"),
    path("matters/<int:matter_id>/chronology.md", views.matter_chronology_export, {"extension": "md"},
         name="matter-chronology-md"),
    path("matters/<int:matter_id>/chronology.csv", views.matter_chronology_export, {"extension": "csv"},
         name="matter-chronology-csv"),
]
