"""Chinese-aware word segmentation for keyword search (jieba, loaded once, never downloads)."""
from __future__ import annotations

import logging
import re
import threading

import jieba

_lock = threading.Lock()
_initialised = False
_TOKEN = re.compile(r"\w", re.UNICODE)
# Text beyond this is not segmented: keyword search needs the gist, not a megabyte.
MAX_SEGMENT_CHARS = 20_000


def ensure_initialised() -> None:
    """Load jieba's dictionary once per process (thread-safe)."""
    global _initialised
    with _lock:
        if not _initialised:
            jieba.setLogLevel(logging.WARNING)
            jieba.initialize()
            _initialised = True


def segment(text: str) -> list[str]:
    """Search-mode tokens (jieba ``cut_for_search``), lower-cased, punctuation dropped."""
    ensure_initialised()
    tokens = jieba.cut_for_search((text or "")[:MAX_SEGMENT_CHARS])
    return [token.lower() for token in (t.strip() for t in tokens) if token and _TOKEN.search(token)]


#: A word jieba's dictionary counts more often than this is a common word it may mis-tag as a
#: person's name ("余杭" 56, "申请书" 83, "段时间" in "那段时间") or a famous person (李强 159);
#: real clients' names are rare or unknown to it. Shared by the write path (who a client is)
#: and the read path (which names anchor a question).
MAX_NAME_FREQUENCY = 5


def is_common_word(word: str) -> bool:
    """Whether jieba's dictionary counts ``word`` more often than ``MAX_NAME_FREQUENCY``."""
    ensure_initialised()
    return (jieba.dt.FREQ.get(word) or 0) > MAX_NAME_FREQUENCY


def search_text(text: str) -> str:
    """Space-joined tokens, stored beside a note or message for PostgreSQL full-text search
    with the ``simple`` configuration (which cannot segment Chinese itself)."""
    return " ".join(segment(text))


#: Where a quoted text is best cut: after a clause or sentence ends.
_CLAUSE_END = re.compile(r"[，。？！；：、,.?!;:\s]")


def shorten(text: str, limit: int) -> str:
    """``text`` whole when it has at most ``limit`` characters; else its start up to the last
    clause end within ``limit`` (a comma, a full stop…), or else up to the last whole word
    (jieba's precise cut), then "…" — never a word cut in half ("关于“…押”")."""
    text = (text or "").strip()
    if len(text) <= limit:
        return text
    head = text[:limit]
    ends = [match.end() for match in _CLAUSE_END.finditer(head)]
    if ends and ends[-1] >= limit // 3:
        return head[:ends[-1]].rstrip("，、,;；：: ") + "…"
    ensure_initialised()
    kept = ""
    for word in jieba.cut(text[:MAX_SEGMENT_CHARS]):
        if len(kept) + len(word) > limit:
            break
        kept += word
    return (kept or head).rstrip() + "…"
