"""The streaming marker parser (legaltext/markers.py): whatever the model writes and however the
stream is cut, the text comes back whole and only real markers are read."""
from __future__ import annotations

import random

import pytest

from legaltext.markers import MAX_MARKER_CHARS, Marker, MarkerStream, split_markers, strip_markers


def streamed(chunks: list[str]) -> list:
    stream = MarkerStream()
    pieces = []
    for chunk in chunks:
        pieces += stream.feed(chunk)
    pieces += stream.close()
    merged: list = []
    for piece in pieces:  # the stream may return text in several pieces: join neighbours
        if isinstance(piece, str) and merged and isinstance(merged[-1], str):
            merged[-1] += piece
        else:
            merged.append(piece)
    return merged


def numbers(pieces) -> list[tuple[int, ...]]:
    return [piece.numbers for piece in pieces if isinstance(piece, Marker)]


def text_of(pieces) -> str:
    return "".join(piece if isinstance(piece, str) else piece.raw for piece in pieces)


@pytest.mark.parametrize("text, expected", [
    ("租金每月5000元[2]。", [(2,)]),
    ("租金每月5000元[2][5]。", [(2,), (5,)]),
    ("押金3000元[2, 5]，未退[3，4]。", [(2, 5), (3, 4)]),
    ("全角【2】和［３］都是标注。", [(2,), (3,)]),
    ("顿号[1、2]。", [(1, 2)]),
    ("没有标注的句子。", []),
    ("方括号里不是数字[见上文]。", []),
    ("空的[]和[ ]不是标注。", []),
    ("太大的编号[99999]不读。", []),
    ("编号零[0]不读。", []),
    ("行内代码 `a[1]` 不读，外面的[2]读。", [(2,)]),
    ("```\nx = y[1]\n```\n代码块外[3]。", [(3,)]),
    ("网址 https://example.com/a[1] 不读，之后[2]读。", [(2,)]),
    ("www.court.gov.cn/case[4]。后面[5]", [(5,)]),
    ("嵌套[[2]]。", [(2,)]),
    ("没有闭合的括号[2", []),
    ("全角没有闭合【3", []),
    ("English markers end a sentence [1][12].", [(1,), (12,)]),
])
def test_markers_in_a_whole_text(text, expected):
    pieces = split_markers(text)
    assert numbers(pieces) == expected
    assert text_of(pieces) == text  # nothing is lost or added


@pytest.mark.parametrize("chunks, expected", [
    (["租金5000元", "[", "2", "]", "。"], [(2,)]),
    (["租金5000元[", "2][", "5]。"], [(2,), (5,)]),
    (["【", "２", "】"], [(2,)]),
    (["[1", "2, 1", "3]"], [(12, 13)]),
    (["`", "`", "`\n[1]\n`", "``\n[2]"], [(2,)]),
    (["https://a", ".cn/x[", "1] 后[2]"], [(2,)]),
    (["截断的标注[", "2"], []),  # the stream is cut inside a marker: kept as text
])
def test_markers_split_across_stream_chunks(chunks, expected):
    pieces = streamed(chunks)
    assert numbers(pieces) == expected
    assert text_of(pieces) == "".join(chunks)


def test_every_way_of_cutting_a_stream_reads_the_same_markers():
    text = "押金3000元[2][5]，见《民法典》第五百零九条【3】。代码`[9]`与网址 http://x.cn/[8] 不算。［１，４］"
    whole = numbers(split_markers(text))
    assert whole == [(2,), (5,), (3,), (1, 4)]
    rng = random.Random(52)
    for _ in range(200):
        cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, 12)))
        chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        pieces = streamed(chunks)
        assert numbers(pieces) == whole and text_of(pieces) == text


def test_a_bracket_that_runs_too_long_is_text_at_once():
    stream = MarkerStream()
    held = stream.feed("[" + "1" * (MAX_MARKER_CHARS + 5))
    assert text_of(held).startswith("[1")  # given back before the stream ends
    assert numbers(held) == []


def test_thousands_of_markers_and_junk_never_break_the_stream():
    text = "句子" + "[1]" * 5000 + "【" * 3000 + "[" * 3000 + "]" * 100 + "结尾"
    pieces = streamed([text[i:i + 7] for i in range(0, len(text), 7)])
    assert len(numbers(pieces)) == 5000
    assert text_of(pieces) == text


def test_strip_markers_keeps_everything_else():
    assert strip_markers("押金3000元[2][5]。代码`[1]`。[未闭合") == "押金3000元。代码`[1]`。[未闭合"
