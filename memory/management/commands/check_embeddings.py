"""Refuse to start when the embedding backend and the stored vectors disagree (width, or the
backend/model recorded by the active embedding generation: docs/operations.md)."""
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext, gettext_lazy

from infra.embeddings import EmbeddingDimensionMismatch, get_embedder
from memory.embedding_checks import check_dimensions
from memory.services.reembed import record_active_generation


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext("Check that the configured embedding backend fits the database column.")

    def handle(self, *args, **options) -> None:
        embedder = get_embedder()
        try:
            dimensions = check_dimensions(embedder)
        except EmbeddingDimensionMismatch as error:
            raise CommandError(str(error)) from None
        embedder.embed_query("健康检查")
        record_active_generation(embedder)  # a database older than generations adopts this backend
        self.stdout.write(gettext("embeddings: %(backend)s, %(dimensions)s-d, column agrees") % {
            "backend": embedder.name, "dimensions": dimensions})
