"""Where a message quotes someone (remember/extraction/quoting.py): quote marks told apart from
apostrophes, long quotes found over several sentences, stray marks ignored, and sentences of a
long quote each closed and reopened so they are never rewritten as the speaker's words."""
from __future__ import annotations

import time

import pytest

from remember.extraction.offline.text import split_sentences
from remember.extraction.quoting import outside_quotes, quote_spans


def quoted(text: str) -> list[str]:
    return [text[start:end] for start, end in quote_spans(text)]


@pytest.mark.parametrize(("text", "quotes"), [
    ("HR wrote: “you are dismissed” today.", ["“you are dismissed”"]),
    ('He said "pay me" twice.', ['"pay me"']),
    ("The remark was '经济补偿'.", ["'经济补偿'"]),
    ("I'm sure it's 'wrong', and I don't agree.", ["'wrong'"]),
    ("They owe me three months' pay.", []),
    ("The notice: 'The Company pays three months' base salary.' Nothing else.",
     ["'The Company pays three months' base salary.'"]),
    ("Two lines: 'first line\nsecond line' end.", []),  # a quote does not run over a paragraph
    ("A stray “ mark and nothing after it.", []),
])
def test_quotes_are_told_from_apostrophes_and_stray_marks(text: str, quotes: list[str]) -> None:
    assert quoted(text) == quotes


def test_outside_quotes_keeps_only_the_speakers_own_words() -> None:
    assert outside_quotes("We said 'we will pay' to them.") == "We said  to them."


def test_each_sentence_of_a_long_quote_is_a_quote_of_its_own() -> None:
    text = "The notice says: 'Your contract ends on 31 March. We pay RMB 99,000.' I never agreed."
    assert split_sentences(text) == [
        "The notice says: 'Your contract ends on 31 March.'",
        "'We pay RMB 99,000.'",
        "I never agreed.",
    ]


def test_a_megabyte_of_quote_marks_is_read_in_one_pass() -> None:
    for text in ("“" * 500_000, "'a" * 300_000, ' "x' * 300_000):
        started = time.perf_counter()
        quote_spans(text)
        assert time.perf_counter() - started < 5


def test_many_short_quotes_are_cut_into_sentences_in_one_pass() -> None:
    text = "他说：“现在付。”" * 50_000
    started = time.perf_counter()
    sentences = split_sentences(text)
    assert time.perf_counter() - started < 5
    assert sentences[:2] == ["他说：“现在付。”", "他说：“现在付。”"]
    assert len(sentences) == 50_000
