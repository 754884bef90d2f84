from django.urls import path

from navigation import apis

urlpatterns = [
    path("graph", apis.GraphApi.as_view(), name="api-navigation-graph"),
    path("trace/<uuid:note_id>", apis.TraceApi.as_view(), name="api-navigation-trace"),
    path("search", apis.SearchApi.as_view(), name="api-navigation-search"),
]
