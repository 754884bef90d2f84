"""A failed document's reason in the reader's language.

The worker (``documents.ingest``) stores the reason in English (``Document.error``: the audit
trail and the API keep it as written); the pages and the audit entries show it through
``reason_label``, which recognises each refusal of ``formats`` and ``ingest`` and says it in words
from the translation catalogs. A library's own message (in parentheses) stays in the stored
reason only."""
from __future__ import annotations

import re

from django.utils.translation import gettext, gettext_lazy as _

REASONS = [
    (r"unsupported file type (?P<extension>\(no extension\)|\S+); accepted: .*",
     _("Unsupported file type %(extension)s: upload a PDF, an image, a Word document, an e-mail or a text file.")),
    (r"the extension says (?P<extension>\S+) but the content is .*",
     _("The file name ends in %(extension)s but the content is not a file of that type.")),
    (r"no text found: the scan is empty or unreadable", _("No text found: the scan is blank or illegible.")),
    (r"the file holds no text", _("The file contains no text.")),
    (r"the PDF is encrypted .*", _("The PDF is password protected: upload an unprotected copy.")),
    (r"the PDF is damaged or truncated .*", _("The PDF is damaged or incomplete and cannot be opened.")),
    (r"the PDF has no pages", _("The PDF has no pages.")),
    (r"the PDF has (?P<count>\d+) pages; at most (?P<limit>\d+) are accepted",
     _("The PDF has %(count)s pages; at most %(limit)s are accepted.")),
    (r"page (?P<page>\d+) is too large to read", _("Page %(page)s is too large to read.")),
    (r"the image is .*too large.*", _("The image is too large to open safely.")),
    (r"the image is damaged or truncated.*", _("The image is damaged or incomplete.")),
    (r"the DOCX is damaged or truncated.*|not a readable DOCX.*", _("The Word document is damaged or unreadable.")),
    (r"the DOCX would unzip to .*", _("The Word document unpacks to an unsafe size and was refused.")),
    (r"not an e-mail: .*", _("Not an e-mail: it has no sender, recipient, date or subject.")),
    (r"unknown text encoding: .*", _("Unknown text encoding: save the file as UTF-8 (or GBK) and upload it again.")),
    (r"the text file contains NUL bytes.*", _("The text file contains binary data, not text.")),
    (r"the stored file is missing from the data folder", _("The stored file is missing: upload it again.")),
    (r"the worker stopped while reading this document (?P<attempts>\d+) times .*",
     _("The worker stopped %(attempts)s times while reading this document (it may be too large for this "
       "server); it is not tried again automatically. Retry it once the cause is dealt with.")),
    (r"internal error: .*", _("An internal error occurred: retry.")),
]
_PATTERNS = [(re.compile(pattern, re.DOTALL), message) for pattern, message in REASONS]


def reason_label(error: str) -> str:
    """The stored reason said to the reader, or "" when there is none."""
    if not error:
        return ""
    for pattern, message in _PATTERNS:
        match = pattern.fullmatch(error)
        if match:
            params = match.groupdict()
            if params.get("extension") == "(no extension)":
                params["extension"] = gettext("(no extension)")
            return str(message) % params if params else str(message)
    return gettext("The file could not be read.")
