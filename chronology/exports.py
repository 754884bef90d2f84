"""A chronology as files a lawyer can file: Markdown (a dated list, each fact with its source
link and, for a replaced value, what replaced it) and CSV (one row per fact or document upload,
its ``kind`` saying which, for a spreadsheet). Text that came from a conversation or a document
never becomes Markdown structure or a spreadsheet formula."""
from __future__ import annotations

import csv
import io

from django.utils import timezone
from django.utils.translation import gettext as _, gettext_lazy as _lazy

from chronology.selectors import Chronology, ChronologyEntry

#: A CSV cell opening with one of these is a formula to a spreadsheet (CSV injection): quoted.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _one_line(text: str) -> str:
    return " ".join(str(text or "").split())


def _markdown_text(text: str) -> str:
    """Conversation text inside a list item: one line, its Markdown marks escaped."""
    line = _one_line(text)
    for mark in ("\\", "`", "*", "_", "[", "]", "#", "|", "<", ">"):
        line = line.replace(mark, "\\" + mark)
    return line


def _when(moment) -> str:
    return f"{timezone.localtime(moment):%Y-%m-%d %H:%M}"


def _dated(entry: ChronologyEntry) -> str:
    if entry.dated_by == "uploaded" and entry.said_at:
        return _("%(day)s (uploaded at %(time)s)") % {"day": entry.label,
                                                       "time": f"{timezone.localtime(entry.said_at):%H:%M}"}
    if entry.dated_by == "said":
        return _("%(day)s (when it was said)") % {"day": entry.label}
    return f"{entry.label} ({_one_line(entry.date_words)})" if entry.date_words else entry.label


def file_name(chronology: Chronology, extension: str) -> str:
    reference = "".join(c for c in chronology.matter.reference if c.isalnum() or c in "-_") or str(chronology.matter.pk)
    suffix = f"-as-of-{timezone.localtime(chronology.as_of):%Y-%m-%d}" if chronology.as_of else ""
    if chronology.valid_at:
        suffix += f"-held-at-{timezone.localtime(chronology.valid_at):%Y-%m-%d}"
    return f"chronology-{reference}{suffix}.{extension}"


def _moment_lines(chronology: Chronology) -> list[str]:
    """What moment the file shows, one sentence each (none for now)."""
    lines = []
    if chronology.valid_at:
        lines.append(_("As it held in the world on %(when)s: a value replaced later is shown as it held then.")
                     % {"when": _when(chronology.valid_at)})
    if chronology.as_of:
        lines.append(_("As the firm's memory stood on %(when)s.") % {"when": _when(chronology.as_of)})
    return lines


def to_markdown(chronology: Chronology, *, base_url: str = "") -> str:
    matter = chronology.matter
    lines = [f"# {_('Chronology')}: {_markdown_text(matter.reference)} {_markdown_text(matter.title)}", ""]
    for line in _moment_lines(chronology):
        lines += [line, ""]
    if not chronology.entries:
        lines.append(_("No facts of this matter are in memory yet."))
    for entry in chronology.entries:
        fact = _markdown_text(entry.content)
        fact = f"~~{fact}~~" if not entry.current else fact
        if entry.state == "replaced_later":
            fact += " " + _("(held then, replaced later)")
        link = f"<{base_url.rstrip('/')}{entry.source_url}>" if entry.source_url else ""
        lines.append(f"- **{_markdown_text(_dated(entry))}** — {fact} "
                     f"({_markdown_text(entry.category_label)}; {_markdown_text(entry.source)}) {link}".rstrip())
        if entry.replacement is not None:
            replaced = entry.replacement
            when = _when(replaced.at) if replaced.at else "—"
            lines.append("  - " + _("replaced on %(when)s by %(who)s with: %(content)s") % {
                "when": when, "who": _markdown_text(replaced.by) or "—", "content": _markdown_text(replaced.content)})
        for _note_id, content in entry.conflicts:
            lines.append("  - " + _("contradicts: %(content)s") % {"content": _markdown_text(content)})
    return "\n".join(lines) + "\n"


STATES = {"current": _lazy("current"), "superseded": _lazy("superseded"),
          "replaced_later": _lazy("held then, replaced later"), "": ""}


def _cell(value: object) -> str:
    text = _one_line(str(value if value is not None else ""))
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def to_csv(chronology: Chronology, *, base_url: str = "") -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([_("date"), _("precision"), _("dated by"), _("date as said"), _("fact"), _("category"),
                     _("speaker"), _("state"), _("replaced on"), _("replaced by"), _("replaced with"),
                     _("contradicts"), _("source"), _("link"), _("kind")])
    for entry in chronology.entries:
        replaced = entry.replacement
        writer.writerow([_cell(v) for v in (
            entry.label, entry.precision, entry.dated_by, entry.date_words, entry.content, entry.category_label,
            entry.speaker, STATES[entry.state],
            _when(replaced.at) if replaced and replaced.at else "",
            replaced.by if replaced else "", replaced.content if replaced else "",
            " / ".join(content for _id, content in entry.conflicts), entry.source,
            f"{base_url.rstrip('/')}{entry.source_url}" if entry.source_url else "", entry.kind,
        )])
    return "\ufeff" + out.getvalue()  # a BOM: spreadsheets open the Chinese text as UTF-8
