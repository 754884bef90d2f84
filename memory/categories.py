"""The six kinds of knowledge a note holds — one enum for the extractor and the models.

The stored value is the English slug (``fact`` …, the ``Note.category`` column); ``zh`` is
the Chinese label the extraction prompt asks the LLM for and the offline lexicon is keyed by
(see docs/architecture.md). Only Django's choices machinery is imported here, so the extractor
can use it without the app registry.
"""
from __future__ import annotations

import re

from django.db import models
from django.utils.translation import gettext_lazy as _


class Category(models.TextChoices):
    """What kind of knowledge a note holds (the extraction categories)."""

    FACT = "fact", _("事实 fact")
    EVIDENCE = "evidence", _("证据 evidence")
    LAW = "law", _("法条 law")
    CLAIM = "claim", _("诉求 claim")
    PREFERENCE = "preference", _("偏好 preference")
    ACTION = "action", _("行动建议 action")

    @property
    def zh(self) -> str:
        """The Chinese label the LLM returns and the lexicon uses (事实, 证据, …)."""
        return _CHINESE[self]

    @property
    def slug(self) -> str:
        """The English slug (the stored value)."""
        return self.value

    @classmethod
    def parse(cls, value: object) -> Category | None:
        """Map a Chinese label, slug or common alias ('facts', 'Fact', '证据材料') to a category."""
        if isinstance(value, Category):
            return value
        if not isinstance(value, str):
            return None
        return _ALIASES.get(re.sub(r"[\s_\-]+", "", value).lower())


_CHINESE: dict[Category, str] = {
    Category.FACT: "事实",
    Category.EVIDENCE: "证据",
    Category.LAW: "法条",
    Category.CLAIM: "诉求",
    Category.PREFERENCE: "偏好",
    Category.ACTION: "行动建议",
}

_ALIAS_TABLE: dict[Category, tuple[str, ...]] = {
    Category.FACT: ("facts", "案件事实", "事实材料", "时间线", "timeline", "event", "events", "金额"),
    Category.EVIDENCE: ("evidences", "证据材料", "证据清单", "proof"),
    Category.LAW: ("laws", "法律", "法律依据", "法律规定", "法规", "legalbasis", "statute", "statutes"),
    Category.CLAIM: ("claims", "请求", "诉讼请求", "demand", "demands"),
    Category.PREFERENCE: ("preferences", "用户偏好", "习惯"),
    Category.ACTION: ("actions", "建议", "行动", "advice", "suggestion", "suggestions", "nextstep", "nextsteps"),
}
_ALIASES: dict[str, Category] = (
    {label: cat for cat, label in _CHINESE.items()}
    | {cat.value: cat for cat in Category}
    | {alias: cat for cat, aliases in _ALIAS_TABLE.items() for alias in aliases}
)
