"""``{% memory_labels %}``: the translated names of layers, categories, sources, score terms,
reply statuses and navigation trace steps as one JSON script element (``#memory-labels``),
so the chat and navigation scripts never show internal names such as ``chat_story``
(docs/chat-page.md "Labels")."""
from __future__ import annotations

from django import template
from django.utils.html import json_script
from django.utils.safestring import SafeString
from django.utils.translation import pgettext

from memory.labels import SPEAKERS, speaker_label
from memory.models import MemoryScope

register = template.Library()


def labels() -> dict[str, dict[str, str]]:
    """Every internal name a page may show, with its label in the active language."""
    return {
        # One name per layer: the product's own table (MemoryScope), as admin and my-memory say it.
        "layer": {
            **{value: str(label) for value, label in MemoryScope.choices},
            "conversation": pgettext("memory layer", "What was said"),
            "document": pgettext("memory layer", "Documents"),
        },
        "category": {
            "fact": pgettext("note category", "Fact"),
            "evidence": pgettext("note category", "Evidence"),
            "law": pgettext("note category", "Law"),
            "claim": pgettext("note category", "Claim"),
            "preference": pgettext("note category", "Preference"),
            "action": pgettext("note category", "Action"),
        },
        "source": {
            "chat": pgettext("note source", "Chat"),
            "import": pgettext("note source", "Import"),
            "chat_story": pgettext("note source", "Story conversation"),
            "manual": pgettext("note source", "Entered by hand"),
            "message": pgettext("note source", "Message"),
            "document": pgettext("note source", "Document"),
        },
        "score": {
            "total": pgettext("score term", "Total"),
            "rank": pgettext("score term", "Rank"),
            "semantic": pgettext("score term", "Semantic"),
            "keyword": pgettext("score term", "Keywords"),
            "importance": pgettext("score term", "Importance"),
            "confidence": pgettext("score term", "Confidence"),
            "graph": pgettext("score term", "Graph"),
            "recency": pgettext("score term", "Recency"),
            "layer_weight": pgettext("score term", "Layer weight"),
            # a document passage's two rankings (docs/documents.md, "Recall with citations")
            "keyword_rank": pgettext("score term", "Keyword rank"),
            "dense_rank": pgettext("score term", "Meaning rank"),
        },
        "status": {
            "complete": pgettext("reply status", "Complete"),
            "streaming": pgettext("reply status", "Answering…"),
            "cancelled": pgettext("reply status", "Stopped"),
            "failed": pgettext("reply status", "Failed"),
            "pending": pgettext("reply status", "Sending…"),
            "sent": pgettext("reply status", "Sent"),
            "rejected": pgettext("reply status", "Rejected, not saved"),
        },
        "speaker": {key: str(label) for key, label in SPEAKERS.items()},
        "trace": {
            # the steps in plain words; their technical names are one hover away (title)
            "descent": pgettext("navigation trace step", "Getting close"),
            "beam": pgettext("navigation trace step", "Searching nearby"),
            "descentTerm": pgettext("navigation trace step", "Greedy descent"),
            "beamTerm": pgettext("navigation trace step", "Beam search"),
        },
    }


@register.simple_tag
def memory_labels() -> SafeString:
    return json_script(labels(), "memory-labels")


@register.filter
def speaker(value: str) -> str:
    """Who said it: a person by name, the product ("assistant", "offline") by its translated name."""
    return speaker_label(value) if value else ""
