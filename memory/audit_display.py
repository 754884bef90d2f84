"""An audit entry in words, for auditors in admin: its before / after as a field-by-field
difference (field names and choices in the reader's language, times in the firm's time zone,
related rows by their names) and its extra data as labelled lines — never raw JSON with
snake_case keys (docs/my-memory-and-admin.md, "Admin for auditors"). A read: nothing is written.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from django.contrib.auth import get_user_model
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.models import Case, F, OuterRef, Subquery, Value, When
from django.db.models.functions import Cast, Coalesce, Concat, Substr
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext

from memory.labels import (
    data_key_label, data_value_label, embedding_model_label, event_tag, format_counts, link_reason, object_type_label,
    source_key_label, unit_label,
)
from memory.models.notes import FIRM_WIDE_SCOPES
from memory.models import AuditLog, Conversation, Firm, Matter, Membership, Note, NoteLink, TurnExtraction

#: The model whose fields name the keys of an entry's before / after, by object type.
MODELS: dict[str, type[models.Model]] = {
    "note": Note, "link": NoteLink, "matter": Matter, "firm": Firm, "membership": Membership,
    "turn_extraction": TurnExtraction,
}
#: Object type → {key: the stored (English) value in the reader's words}, for keys whose value
#: is more than a choice of the model's field (a document's failure reason).
VALUE_WORDS: dict[str, dict[str, Callable[[str], str]]] = {}
#: Object type → what names its row in the audit list, for types an app above registers.
NAMES: dict[str, Any] = {}


def register_audited_type(object_type: str, model: type[models.Model], *, name: Any = None,
                          value_words: dict[str, Callable[[str], str]] | None = None) -> None:
    """An app above ``memory`` whose rows are audited says how an auditor reads them: ``model``
    names the keys of an entry's before / after, ``name`` (an expression over the row) names the
    row in the audit list, ``value_words`` says stored values in words (``documents`` registers
    its documents in ``DocumentsConfig.ready``). Registering a type twice replaces it."""
    MODELS[object_type] = model
    if name is not None:
        NAMES[object_type] = name
    VALUE_WORDS[object_type] = dict(value_words or {})


MAX_VALUE_CHARS = 300
_TIME_KEYS = ("valid_from", "valid_to", "said_at", "closed_at", "erased_at", "previous_valid_from", "as_of")


@dataclass(frozen=True)
class Change:
    """One field of an audit entry: its label, and its value before and after in words."""

    label: str
    before: str
    after: str


def _field(model: type[models.Model] | None, key: str) -> models.Field | None:
    if model is None:
        return None
    for name in (key, key.removesuffix("_id")):
        try:
            return model._meta.get_field(name)
        except FieldDoesNotExist:
            continue
    return None


def _label(model: type[models.Model] | None, key: str) -> str:
    field = _field(model, key)
    if field is not None and not key.endswith("_ids") and hasattr(field, "verbose_name"):
        return str(field.verbose_name)
    return data_key_label(key)


def _object_type(model: type[models.Model] | None) -> str | None:
    """The object type ``model`` is registered under (``MODELS``), None for none."""
    return next((object_type for object_type, known in MODELS.items() if known is model), None)


def _short(text: str) -> str:
    return text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS] + "…"


def note_words(value: str, entry: AuditLog | None) -> str:
    """A note an entry refers to, by its words: when it shares the entry's firm and matter (or,
    without a matter, is firm-wide), which whoever reads the entry may see; else "another note"."""
    if entry is None:
        return gettext("another note")
    notes = Note.objects.filter(pk=value, firm_id=entry.firm_id)
    notes = (notes.filter(matter_id=entry.matter_id) if entry.matter_id is not None
             else notes.filter(matter__isnull=True, memory_scope__in=FIRM_WIDE_SCOPES))
    content = notes.values_list("content", flat=True).first()
    if content is None:
        return gettext("another note")
    return "「" + (content if len(content) <= OBJECT_NAME_CHARS else content[:OBJECT_NAME_CHARS] + "…") + "」"


def value_text(model: type[models.Model] | None, key: str, value: Any, entry: AuditLog | None = None) -> str:
    """One value in words: choices by their label, times local, related rows by name, lists joined."""
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return gettext("yes") if value else gettext("no")
    if key == "source_message_ids" and isinstance(value, list):
        return "、".join(gettext("message #%(id)s") % {"id": item} for item in value)
    if key == "tags" and isinstance(value, list):
        return "、".join(event_tag(str(item)) for item in value)
    if key == "cited" and isinstance(value, list):  # an answer's sources (docs/citations.md)
        return _short("、".join(f"[{item.get('number')}] {object_type_label(str(item.get('kind') or 'note'))}"
                                for item in value if isinstance(item, dict)))
    if key == "marked" and isinstance(value, list):
        return _short(" / ".join(str(item.get("sentence", "")) for item in value if isinstance(item, dict)))
    if key == "counts" and isinstance(value, dict):
        return format_counts(value)
    if isinstance(value, list):
        return _short("、".join(str(item) for item in value))
    if isinstance(value, dict):
        return _short("; ".join(f"{data_key_label(k)}: {value_text(None, k, v)}" for k, v in value.items()))
    if key in ("matter_id", "matter") and isinstance(value, int):
        matter = Matter.objects.filter(pk=value).only("reference", "title").first()
        return f"{matter.reference} {matter.title}" if matter else gettext("matter #%(id)s") % {"id": value}
    if key in ("owner_id",) and isinstance(value, int):
        user = get_user_model().objects.filter(pk=value).first()
        return user.get_username() if user else gettext("user #%(id)s") % {"id": value}
    if key == "conversation_id":
        return gettext("conversation #%(id)s") % {"id": value}
    if key in ("superseded_by", "superseded_by_id", "supersedes", "triggered_by", "target", "source",
               "corrected_note") \
            and isinstance(value, str) and len(value) == 36 and value.count("-") == 4:
        return note_words(value, entry)
    if key == "source" and isinstance(value, str):
        return source_key_label(value)
    if key == "embedding_model" and isinstance(value, str):
        return embedding_model_label(value)
    if key == "reason" and isinstance(value, str):
        return _short(link_reason(value))
    words = VALUE_WORDS.get(_object_type(model), {}).get(key)
    if words is not None and isinstance(value, str):
        return _short(words(value))  # stored in English, said in the reader's language
    text = str(value)
    if key in _TIME_KEYS or key.endswith("_at"):
        moment = parse_datetime(text) if isinstance(value, str) else None
        if moment is not None:
            if timezone.is_aware(moment):
                moment = timezone.localtime(moment)
            return f"{moment:%Y-%m-%d %H:%M}"
    field = _field(model, key)
    choices = dict(field.choices or ()) if field is not None and getattr(field, "choices", None) else {}
    if text in choices:
        return str(choices[text])
    return _short(str(data_value_label(key, text)))


def changes(entry: AuditLog) -> list[Change]:
    """The fields that differ between the entry's before and after (all of them when one is
    missing: a creation or a deletion), in the order of the entry."""
    model = MODELS.get(entry.object_type)
    before = entry.before if isinstance(entry.before, dict) else {}
    after = entry.after if isinstance(entry.after, dict) else {}
    keys = list(dict.fromkeys([*before, *after]))
    both = entry.before is not None and entry.after is not None
    rows = []
    for key in keys:
        old, new = before.get(key), after.get(key)
        if both and old == new:
            continue
        if not both and old in (None, "", [], {}) and new in (None, "", [], {}):
            continue
        rows.append(Change(_label(model, key), value_text(model, key, old, entry), value_text(model, key, new, entry)))
    return rows


def extra_lines(entry: AuditLog) -> list[tuple[str, str]]:
    """The entry's extra data as (label, value) lines; an erasure's unit by its name."""
    extra = entry.extra if isinstance(entry.extra, dict) else {}
    lines = []
    for key, value in extra.items():
        if key == "unit" and isinstance(value, str):
            lines.append((data_key_label(key), unit_label(str(extra.get("kind", "")), value.partition(" ")[2])))
        elif key == "redacted_by":
            lines.append((data_key_label(key), gettext("audit entry #%(id)s") % {"id": value}))
        elif key == "fingerprints" and isinstance(value, dict):  # keyed hashes, for verify_erasure
            count = len(value.get("tokens", [])) + sum(len(hashes) for hashes in value.get("names", {}).values())
            lines.append((data_key_label(key), gettext("%(count)s keyed hashes") % {"count": count}))
        else:
            lines.append((data_key_label(key), value_text(MODELS.get(entry.object_type), key, value, entry)))
    return lines


_NUMBER = r"^[0-9]{1,18}$"
_UUID = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
#: Characters of a note's content that name it in the audit list.
OBJECT_NAME_CHARS = 40


def _name_of(model: type[models.Model], name: Any, id_pattern: str) -> dict[str, Any]:
    """The ``When`` arguments naming an entry's object by ``name`` read from ``model``'s row."""
    cast = models.UUIDField() if id_pattern == _UUID else models.BigIntegerField()
    rows = model.objects.filter(pk=Cast(OuterRef("object_id"), cast)).annotate(object_name=name)
    return {"object_id__regex": id_pattern, "then": Subquery(rows.values("object_name")[:1])}


def with_object_names(entries: models.QuerySet) -> models.QuerySet:
    """Entries with ``object_name``: what their object is called (a note by its words, a matter by
    its reference and title, a conversation or document by its title, a firm by its name), read
    in the list's one query; "" when it is not stored any more (erased, deleted)."""
    short = Substr("content", 1, OBJECT_NAME_CHARS)
    matter = Concat("reference", Value(" "), "title", output_field=models.CharField())
    return entries.annotate(object_name=Coalesce(Case(
        When(object_type="note", **_name_of(Note, short, _UUID)),
        When(object_type="matter", **_name_of(Matter, matter, _NUMBER)),
        When(object_type="conversation", **_name_of(Conversation, F("title"), _NUMBER)),
        When(object_type="firm", **_name_of(Firm, F("name"), _NUMBER)),
        *(When(object_type=object_type, **_name_of(MODELS[object_type], name, _NUMBER))
          for object_type, name in NAMES.items()),
        output_field=models.CharField(),
    ), Value("")))


def object_name(entry: AuditLog) -> str:
    """An entry's object in words for the audit list: its name (``with_object_names``), else a
    numbered row ("#12"), else "—" — never a raw UUID (the id stays in the row's tooltip)."""
    name = getattr(entry, "object_name", "") or ""
    if name:
        return " ".join(name.split())
    if re.match(_NUMBER, entry.object_id or ""):
        return f"#{entry.object_id}"
    return gettext("(no longer stored)") if entry.object_type == "note" else "—"
