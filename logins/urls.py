from django.urls import path

from logins.views import TruthfulPasswordResetView

urlpatterns = [
    path("password_reset/", TruthfulPasswordResetView.as_view(), name="password_reset"),
]
