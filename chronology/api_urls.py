from django.urls import path

from chronology import apis

urlpatterns = [
    path("matters/<int:matter_id>/chronology/", apis.MatterChronologyApi.as_view(), name="api-matter-chronology"),
]
