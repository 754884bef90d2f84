"""Top-level URL map: each app brings its own urls module."""
from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from legalmem_site import health
from legalmem_site.favicon import favicon
from infra.metrics import metrics_view

urlpatterns = [
    path("favicon.ico", favicon, name="favicon"),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("accounts/", include("logins.urls")),  # before Django's: a password reset that tells the truth
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", login_required(SpectacularSwaggerView.as_view(url_name="api-schema")), name="api-docs"),
    path("api/memory/", include("my_memory.api_urls")),
    path("api/memory/", include("records.api_urls")),
    path("api/chat/", include("chat.api_urls")),
    path("api/", include("documents.api_urls")),
    path("api/", include("chronology.api_urls")),
    path("", include("chat.urls")),
    path("", include("navigation.urls")),
    path("", include("my_memory.urls")),
    path("", include("connectors.urls")),
    path("", include("documents.urls")),
    path("", include("chronology.urls")),
]
