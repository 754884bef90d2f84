"""What the product has learnt about the LLM servers it talks to.

One row per (base URL, model): the structured-output mode that works there
(``LLMServerMode``), and how fast the server generates (``LLMServerSpeed``). Kept in the
database, not in a process, so every server process and background worker shares what one
of them found out — a llama.cpp server that answers ``json_schema`` with HTTP 500 is asked
for it once a day, not once per turn per process.
"""
from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class LLMServerMode(models.Model):
    """The JSON mode that works on one server and model, and when it was last probed."""

    class JSONMode(models.TextChoices):
        JSON_SCHEMA = "json_schema", _("json_schema (server enforces the schema)")
        JSON_OBJECT = "json_object", _("json_object (example reply in the prompt)")
        PLAIN = "plain", _("plain request (example reply in the prompt)")

    base_url = models.CharField(max_length=500, verbose_name=_("base url"))
    model = models.CharField(max_length=200, verbose_name=_("model"))
    json_mode = models.CharField(max_length=20, choices=JSONMode.choices, verbose_name=_("json mode"))
    probed_at = models.DateTimeField(help_text=_("When the modes before this one were last tried."), verbose_name=_("probed at"))
    last_error = models.TextField(blank=True, help_text=_("Why the previous mode was refused."), verbose_name=_("last error"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    class Meta:
        ordering = ["base_url", "model"]
        constraints = [models.UniqueConstraint(fields=["base_url", "model"], name="llm_server_mode_unique")]
        verbose_name = _("LLM server mode")
        verbose_name_plural = _("LLM server modes")

    def __str__(self) -> str:
        return f"{self.model} @ {self.base_url}: {self.json_mode}"


class LLMServerSpeed(models.Model):
    """How fast one server and model generate, measured on streamed replies: the budget of
    the next request is derived from it (docs/llm-servers.md, "Budgets")."""

    base_url = models.CharField(max_length=500, verbose_name=_("base url"))
    model = models.CharField(max_length=200, verbose_name=_("model"))
    tokens_per_second = models.FloatField(
        help_text=_("Generation speed, averaged over the recent replies."), verbose_name=_("tokens per second"))
    samples = models.PositiveIntegerField(default=0, verbose_name=_("samples"))
    measured_at = models.DateTimeField(verbose_name=_("measured at"))

    class Meta:
        ordering = ["base_url", "model"]
        constraints = [models.UniqueConstraint(fields=["base_url", "model"], name="llm_server_speed_unique")]
        verbose_name = _("LLM server speed")
        verbose_name_plural = _("LLM server speeds")

    def __str__(self) -> str:
        return f"{self.model} @ {self.base_url}: {self.tokens_per_second:.1f} tokens/s"
