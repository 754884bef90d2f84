"""Stored navigation graphs, so a page view after notes changed does not rebuild from scratch."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from memory.models import Firm


class NavigationGraphSnapshot(models.Model):
    """One built graph for one visibility key at one version of its notes.

    The key (``key_hash``) covers the firm, the user, the matters the user is assigned to, the
    page filters and the graph parameters, so a snapshot only ever holds notes of that user's
    visible set at that time; after an assignment change the key differs and the snapshot is
    never served. Written by the background refresh (and after a full build on a request);
    read by every server process (navigation.freshness)."""

    key_hash = models.CharField(max_length=64)
    firm = models.ForeignKey(Firm, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    filters = models.JSONField(default=dict, help_text=_("matter, scope and event of the page"))
    version = models.CharField(max_length=200)
    node_count = models.PositiveIntegerField(default=0)
    changes_since_build = models.PositiveIntegerField(default=0)
    data = models.BinaryField(help_text=_("navigation.snapshots.encode of the built graph"))
    created_at = models.DateTimeField(auto_now_add=True)
    used_at = models.DateTimeField(help_text=_("last page view of this key (roughly, at most every few minutes)"))

    class Meta:
        constraints = [models.UniqueConstraint(fields=["key_hash", "version"], name="nav_snapshot_key_version")]
        indexes = [
            models.Index(fields=["key_hash", "-created_at"], name="nav_snapshot_key_idx"),
            models.Index(fields=["firm", "used_at"], name="nav_snapshot_firm_used_idx"),
        ]
        verbose_name = _("navigation graph snapshot")
        verbose_name_plural = _("navigation graph snapshots")

    def __str__(self) -> str:
        return f"{self.key_hash[:12]}@{self.version} ({self.node_count} notes)"
