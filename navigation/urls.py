"""Navigation URLs (included once at the site root): the page and its API."""
from django.urls import include, path

from navigation import views

urlpatterns = [
    path("navigation/", views.navigation_page, name="navigation"),
    path("api/navigation/", include("navigation.api_urls")),
]
