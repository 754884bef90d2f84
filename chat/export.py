"""A conversation as a Markdown file a lawyer can file or send (docs/citations.md, "Export"):
every message in order and, under each answer, its numbered sources — the items its ``[n]``
markers name, with what they say and a link to where they came from (the turn, the note's page,
the document viewer at its page). Only what the reader may still see is listed
(``chat.selectors.recalled_as_seen_by``): a source behind a wall they since left is named as no
longer visible, never quoted. The export is recorded in the audit log."""
from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.timezone import localtime
from django.utils.translation import gettext as _, pgettext

from chat.selectors import conversations_of, messages_of, recalled_as_seen_by
from memory.models import AuditEvent, Conversation, Message
from memory.services import audit

#: Characters of a source's text quoted under an answer (the link leads to the whole).
SOURCE_QUOTE_CHARS = 300


def _one_line(text: Any) -> str:
    return " ".join(str(text or "").split())


def _quoted(text: str) -> list[str]:
    """A message's text as a Markdown quote: what was said never becomes a heading or a table."""
    return [f"> {line}" if line.strip() else ">" for line in (text or "").splitlines()] or [">"]


def _source_line(item: dict[str, Any], base_url: str) -> str:
    number, words = item.get("number"), _one_line(item.get("content"))
    if len(words) > SOURCE_QUOTE_CHARS:
        words = words[:SOURCE_QUOTE_CHARS] + "…"
    if item.get("kind") == "message":
        kind = pgettext("memory layer", "What was said") + f" · {_one_line(item.get('speaker'))} · {str(item.get('said_at') or '')[:16]}"
    elif item.get("kind") == "document":
        kind = _one_line(item.get("citation"))
        words = _one_line(item.get("text")) or words
    else:
        kind = " · ".join(part for part in (_one_line(item.get("category_label")), _one_line(item.get("layer_label")))
                          if part)
    if item.get("changed"):
        words += " " + _("(changed since)")
    url = item.get("source_url") or ""
    link = f" — <{base_url.rstrip('/')}{url}>" if url else ""
    return f"- [{number}] {kind}: {words}{link}"


def _answer_lines(message: Message, seen: list[dict[str, Any]], base_url: str) -> list[str]:
    citations = message.citations if isinstance(message.citations, dict) else {}
    lines: list[str] = []
    if citations.get("nothing_in_memory"):
        lines += [_("Memory holds nothing on this question: what this answer says is not from the firm's memory."), ""]
    numbered = sorted((item for item in seen if isinstance(item.get("number"), int)), key=lambda item: item["number"])
    shown = {item["number"] for item in numbered}
    gone = sorted({entry.get("number") for entry in citations.get("cited") or []
                   if isinstance(entry, dict) and entry.get("number") not in shown})
    if numbered or gone:
        lines += [_("Sources:"), ""]
        lines += [_source_line(item, base_url) for item in numbered]
        lines += [f"- [{n}] " + _("(no longer visible to you)") for n in gone if isinstance(n, int)]
        lines.append("")
    return lines


def conversation_markdown(user, conversation: Conversation, messages: list[Message], *, base_url: str = "") -> str:
    """The conversation as Markdown for ``user`` (who may see it): its ``messages`` in order and
    each answer's numbered sources."""
    seen = recalled_as_seen_by(user, messages)
    lines = [f"# {_one_line(conversation.title) or _('Conversation %(id)s') % {'id': conversation.pk}}", ""]
    if conversation.matter_id:
        matter = conversation.matter
        lines.append(f"- {_('Matter')}: {_one_line(f'{matter.reference} {matter.title}')}")
    lines += [f"- {_('Exported')}: {localtime(timezone.now()):%Y-%m-%d %H:%M} · {user.get_username()}",
              f"- {_('Each [n] in an answer names the source listed under it with that number.')}", ""]
    for message in messages:
        who = (_("Assistant") if message.role == Message.Role.ASSISTANT
               else _one_line(message.speaker) or message.role)
        lines += [f"## {who} · {localtime(message.said_at):%Y-%m-%d %H:%M}", ""]
        lines += _quoted(message.content)
        lines.append("")
        if message.role == Message.Role.ASSISTANT:
            lines += _answer_lines(message, seen.get(message.pk, []), base_url)
    return "\n".join(lines)


def export_conversation(user, conversation_id: int, *, base_url: str = "") -> tuple[str, str]:
    """(file name, Markdown) of one of ``user``'s conversations, recorded in the audit log;
    raises ``Conversation.DoesNotExist`` for a conversation they may not open."""
    messages = list(messages_of(user, conversation_id))  # the page's rule: their own conversation, or none
    conversation = conversations_of(user).get(pk=conversation_id)
    with transaction.atomic():
        text = conversation_markdown(user, conversation, messages, base_url=base_url)
        audit.record(actor=user, event=AuditEvent.CONVERSATION_EXPORTED, firm_id=conversation.firm_id,
                     object_type="conversation", object_id=conversation.pk, matter_id=conversation.matter_id,
                     private_to_id=conversation.user_id, after={"format": "markdown"})
    return f"conversation-{conversation.pk}.md", text
