from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvaluationConfig(AppConfig):
    """The evaluation sets, their scorers and their commands (docs/evaluation.md); no models."""

    name = "evaluation"
    verbose_name = _("Evaluation")
