"""Keyword terms of questions and stored text, for Chinese and English alike.

PostgreSQL does the full-text matching (``english`` configuration over the jieba-segmented
``search_text``: English words stemmed and stop words dropped, Chinese words unchanged). The
fusion also scores the overlap of query words and a candidate's words in Python; ``term``
folds English inflections there the same way for both sides ("signed" / "signs" → "sign",
"married" / "marry" → "marri"), so an English question matches what was said in another tense.
"""
from __future__ import annotations

import functools
from typing import Iterable

from memory.erasure_hooks import register_cached_content
from memory.segmentation import segment

# Function words that carry no retrieval signal in a question (Chinese and English).
STOP_WORDS = frozenset(
    "的 了 是 我 你 他 她 它 们 我们 你们 吗 呢 啊 吧 呀 在 和 与 及 或 也 就 都 要 会 能 有 没有 这 那 这个 那个 "
    "个 怎么 怎么办 怎样 什么 如何 一下 可以 应该 请问 请 帮 帮我 说 说过 过 之前 上次 刚才 一个 还 吗 哪些 哪 "
    "多少 为 为什么 是否 对 把 被 给 让 "
    "the a an of to is are was were be been being am what how when where who whom which why "
    "do does did done doing have has had having i me my we our you your he him his she her it its "
    "they them their this that these those and or but if then so than too very can could would "
    "should will shall may might must not no nor on in at by for from with about into over after "
    "before up down out off again there here all any both each few more most other some such only "
    "own same just also as s t don didn doesn isn wasn aren weren ever".split()
)
_SUFFIXES = ("ingly", "edly", "ing", "ied", "ies", "ed", "es", "ly", "s", "e", "y")
_REPLACEMENTS = {"ied": "i", "ies": "i", "y": "i"}


@functools.lru_cache(maxsize=65536)
def term(word: str) -> str:
    """A light English stem (one suffix off, ``y``/``ied``/``ies`` → ``i``); other words as given."""
    if not (word.isascii() and word.isalpha()) or len(word) <= 3:
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + _REPLACEMENTS.get(suffix, "")
    return word


register_cached_content("keyword_terms", term.cache_clear)


def query_tokens(query: str) -> list[str]:
    """Segmented query words without function words, in order, de-duplicated (for PostgreSQL)."""
    tokens = [token for token in segment(query) if token not in STOP_WORDS]
    return list(dict.fromkeys(tokens))


#: Function words of asking and of the conversation itself: a line that holds them is another
#: question or a remark about the chat ("你说过…"), never the fact a question asks for.
ASKING_WORDS = frozenset(
    "吗 呢 啊 吧 呀 怎么 怎么办 怎样 什么 如何 哪些 哪 多少 为什么 是否 请问 请 帮 帮我 一下 可以 应该 "
    "你 你们 说 说过 之前 上次 刚才".split()
)


def function_words(query: str) -> list[str]:
    """The question's Chinese function words that a statement holds too ("我", "给", "的"), in
    order, de-duplicated: the raw-message keyword read weighs them by their BM25 IDF as a plain
    index does (common, so they count little, but "房东又给我转了2000" answers "退给我的钱" a little
    better than a line without "给我"). Words of asking (``ASKING_WORDS``) are left out."""
    return list(dict.fromkeys(t for t in segment(query)
                              if t in STOP_WORDS and t not in ASKING_WORDS and not t.isascii()))


def terms(words: Iterable[str]) -> set[str]:
    """The folded terms of already segmented words."""
    return {term(word) for word in words}


def text_terms(search_text: str) -> set[str]:
    """The folded terms of a stored ``search_text`` (space-separated segmented words)."""
    return terms(search_text.split())
