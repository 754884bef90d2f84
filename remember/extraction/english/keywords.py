"""English keywords of a note: content words ranked by salience, deterministic.

jieba's TF-IDF table knows Chinese; on English it would rank every word the
same. Here a word scores by how often it occurs, whether it is a name or an
acronym written in capitals mid-sentence ('Caroline', 'LGBTQ');
ties keep the order of appearance. Function words and chat fillers come from
the vendored list in ``stopwords``.
"""

from __future__ import annotations

import re

from .stopwords import STOPWORDS

_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*")
_MAX_CHARS = 20_000
_MAX_WORD_CHARS = 30


def english_keywords(text: str, k: int = 8) -> list[str]:
    """Up to ``k`` keywords of the Latin-script words of ``text`` (Chinese is left to jieba)."""
    if k <= 0 or not text:
        return []
    scores: dict[str, float] = {}
    shown: dict[str, str] = {}
    first_seen: dict[str, int] = {}
    sentence_start = True
    for match in _WORD_RE.finditer(text[:_MAX_CHARS]):
        word = match.group(0)
        before = text[max(0, match.start() - 2) : match.start()]
        starts_sentence = sentence_start or bool(re.search(r"[.!?。！？:\"“]\s*$", before))
        sentence_start = False
        if word.lower().endswith("'s"):
            word = word[:-2]
        key = word.lower()
        if len(key) < 3 or len(key) > _MAX_WORD_CHARS or key in STOPWORDS or key.replace("'", "") in STOPWORDS:
            continue
        is_name = (word[0].isupper() and not starts_sentence) or (word.isupper() and len(word) > 1)
        score = 1.0 + (1.5 if is_name else 0.0)
        if key not in scores:
            first_seen[key] = len(first_seen)
            shown[key] = word  # 'Caroline' opening a sentence keeps its capital …
            scores[key] = score
        else:
            scores[key] += 1.0
            if word == key:
                shown[key] = key  # … unless the word also appears in lower case ('Painting' / 'painting')
    ranked = sorted(scores, key=lambda key: (-scores[key], first_seen[key]))
    return [shown[key] for key in ranked[:k]]
