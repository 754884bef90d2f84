from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DocumentsConfig(AppConfig):
    """A matter's documents: the upload page and API, the viewer, the file download, the
    document search; no models (they live in ``memory``)."""

    name = "documents"
    label = "documents"
    verbose_name = _("Documents")
