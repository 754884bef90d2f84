"""Query words that name the topic of the neighbourhood weigh less than the words that pick one line out.

"陈志强住院期间谁照顾他？" holds the client's name and the thing asked (住院). Over the user's
whole history the name is rare, so its IDF is high; but among the lines nearest to the question
nearly every one names the client ("hub" lines that restate the situation: 陈志强…被出租车撞了,
陈志强是外卖骑手…). Matching the name then tells those lines apart from nothing, and with its
high global IDF it lifted every line about the client above the one line that answers.

The rule (docs/evaluation.md, "Topic words"): each query word's weight is multiplied by the share
of the nearest messages the search read (the dense candidates) that do NOT hold it::

    discount(word) = 1 - holding / (nearest + 1)

A word none of the neighbours holds keeps its full weight; a word all of them hold keeps
1 / (nearest + 1) of it. The same weights serve the note keyword share, the raw-message keyword
share and the raw keyword list's BM25, so one word weighs the same wherever it is matched. No
constant is tuned: the neighbourhood is exactly the nearest messages the search already read.
"""
from __future__ import annotations

from typing import Iterable

from recall.messages import MessageCandidate, score_bm25, word_idf


def query_word_weights(words: set[str], said: list[MessageCandidate]) -> dict[str, float]:
    """Each query word's weight (its BM25 IDF over what was said, times its topic discount),
    with every message's keyword share and BM25 re-scored to match; the layered search uses
    the returned weights for the note keyword share."""
    discount = topic_discount(words, said)
    weights = discounted(word_idf(words, said), discount)
    if discount:
        rescore_keywords(said, words, weights)
        score_bm25(said, discount)
    return weights


def topic_discount(words: Iterable[str], said: list[MessageCandidate]) -> dict[str, float]:
    """Query word -> the share (0–1] of its weight it keeps: 1 minus the share of the nearest
    messages (those with a distance) holding it; empty when there are no nearest messages."""
    nearest = [candidate for candidate in said if candidate.distance is not None]
    if not nearest:
        return {}
    return {
        word: 1.0 - sum(1 for candidate in nearest if word in candidate.matched_words) / (len(nearest) + 1)
        for word in words
    }


def discounted(weights: dict[str, float], discount: dict[str, float]) -> dict[str, float]:
    """``weights`` (query word -> IDF) with each word's topic discount applied."""
    return {word: weight * discount.get(word, 1.0) for word, weight in weights.items()}


def rescore_keywords(said: list[MessageCandidate], words: Iterable[str], weights: dict[str, float]) -> None:
    """Set each message's keyword share from the discounted ``weights`` (the share of the query
    words' weight it holds, as a note's keyword share is computed)."""
    total = sum(weights.get(word, 0.0) for word in set(words)) or 1.0
    for candidate in said:
        candidate.keyword = round(sum(weights.get(word, 0.0) for word in set(candidate.matched_words)) / total, 4)
