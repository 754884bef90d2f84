"""Context injection: recalled notes as one system message grouped by layer (docs/read-path.md, Inject), and
the recalled raw messages as "what was said" (date, speaker, words), in the order they were said.

Token budget: ``infra.tokens.estimate_tokens`` (no tokenizer; slightly above what DeepSeek /
OpenAI tokenizers give for Chinese legal text, so staying under the budget is safe). Notes are
added best-first; a note that does not fit is skipped (never cut in half).
"""
from __future__ import annotations

from django.utils.timezone import localtime

from infra.tokens import estimate_tokens
from memory.models import MemoryScope
from recall.plan import MESSAGES
from recall.types import Hit, SearchResult

NOTHING_HELD = (
    "长期记忆中没有任何提到 %(names)s 的内容（在当前用户有权查看的范围内）。"
    "请如实告诉用户记忆里没有这方面的记录，不要根据其他案件或常识编造事实。"
)
HEADER = (
    "以下是从长期记忆中按层检索到的内容，请优先结合当前案件层，"
    "其次参考用户画像、跨案经验和通用法律层。"
    "只使用与问题直接相关的记忆：不同案件的事实各属其案，不要混用；记忆与问题无关时，直说记忆中没有相关内容。"
)
# Without a current matter the case layer holds the facts of every visible matter, each
# labelled with its matter: nothing there is "the current case".
CASE_FACTS_OF_MATTERS = "【各案件的事实（按案件标注，勿混用）】"
LAYER_TITLES = {
    MemoryScope.CASE: "【当前案件层】",
    MemoryScope.USER_PROFILE: "【用户画像层】",
    MemoryScope.CROSS_CASE: "【跨案经验层】",
    MemoryScope.GENERAL_LAW: "【通用法律层】",
    MemoryScope.GLOBAL: "【本所办案流程层】",
    MESSAGES: "【对话原文】",
}
DOCUMENTS_TITLE = "【文件原文（回答时请注明出处，如《房屋租赁合同》第 3 页）】"
# A long raw message is quoted up to this many characters (marked "…"); notes are never cut.
MESSAGE_QUOTE_CHARS = 300
DEFAULT_TOKEN_BUDGET = 1200


def _quote(message) -> str:
    words = message.content if len(message.content) <= MESSAGE_QUOTE_CHARS else message.content[:MESSAGE_QUOTE_CHARS] + "…"
    return f"[{localtime(message.said_at):%Y-%m-%d %H:%M} {message.speaker or message.role}] {words}"


def _line(hit: Hit, number: int | None = None) -> str:
    """A hit's line; with ``number``, it starts "- [n] " so that an answer can cite it
    (docs/citations.md)."""
    lead = "- " if number is None else f"- [{number}] "
    if hit.message is not None:  # the whole turn: the question, then the reply under it
        return "\n  ↳ ".join([lead + _quote(m) if i == 0 else _quote(m) for i, m in enumerate(hit.turn_messages)])
    return lead + _note_line(hit.note).removeprefix("- ")


def _matter_label(note) -> str:
    """"【M-003 课程退款纠纷】 " before a case fact: which matter it belongs to."""
    if note.memory_scope != MemoryScope.CASE or note.matter_id is None:
        return ""
    return "【" + " ".join(part for part in (note.matter.reference, note.matter.title) if part) + "】 "


def _note_line(note) -> str:
    if note.status == note.Status.SUPERSEDED:
        until = f"{localtime(note.valid_to):%Y-%m-%d}" if note.valid_to else "?"
        return (f"- {_matter_label(note)}[{note.get_category_display()}·已被取代，"
                f"有效期 {localtime(note.valid_from):%Y-%m-%d} – {until}] {note.content}")
    return (f"- {_matter_label(note)}[{note.get_category_display()}] {note.content} "
            f"（重要性 {note.importance:.2f}，可信度 {note.confidence:.2f}）")


def nothing_held_message(result: SearchResult) -> dict | None:
    """For a question about names or identifiers nothing in memory holds: tell the model so,
    so that it says so instead of answering from unrelated memories or inventing."""
    if not result.nothing_on:
        return None
    names = "、".join(f"“{name}”" for name in result.nothing_on)
    return {"role": "system", "content": NOTHING_HELD % {"names": names}}


def build_system_message(result: SearchResult, *, token_budget: int = DEFAULT_TOKEN_BUDGET,
                         with_passages: bool = False, numbered: bool = False) -> dict | None:
    """``{"role": "system", "content": ...}`` with the hits grouped in plan order, or None if nothing fits.
    ``with_passages``: the search's document passages follow as a block of their own, each under
    its citation, in what the budget leaves (the chat sends them in a message of its own).
    ``numbered``: each hit's line carries its number, 1… in rank order (the chat's sources)."""
    titles = dict(LAYER_TITLES)
    if result.plan.matter_id is None:
        titles[MemoryScope.CASE] = CASE_FACTS_OF_MATTERS
    used = estimate_tokens(HEADER)
    chosen: dict[str, list[str]] = {}
    said_at: dict[str, object] = {}
    for number, hit in enumerate(sorted(result.hits, key=lambda h: h.rank), start=1):
        line = _line(hit, number if numbered else None)
        if hit.message is not None:
            said_at[line] = hit.turn_messages[0].said_at
        title_cost = 0 if hit.layer in chosen else estimate_tokens(titles.get(hit.layer, hit.layer))
        cost = estimate_tokens(line) + title_cost
        if used + cost > token_budget:
            continue
        chosen.setdefault(hit.layer, []).append(line)
        used += cost
    passages = _passage_lines(result, token_budget - used - estimate_tokens(DOCUMENTS_TITLE),
                              numbered=numbered) if with_passages else []
    if not chosen and not passages:
        return nothing_held_message(result)
    if MESSAGES in chosen:  # what was said reads best in the order it was said
        chosen[MESSAGES].sort(key=lambda line: said_at[line])
    order = list(result.plan.layers) + [layer for layer in chosen if layer not in result.plan.layers]
    blocks = [titles.get(layer, layer) + "\n" + "\n".join(chosen[layer]) for layer in order if layer in chosen]
    if passages:
        blocks.append(DOCUMENTS_TITLE + "\n" + "\n".join(passages))
    return {"role": "system", "content": HEADER + "\n\n" + "\n\n".join(blocks)}


def _passage_lines(result: SearchResult, budget: int, *, numbered: bool = False) -> list[str]:
    """The document passages best first, each "- 【《…》第 N 页】words", as many as ``budget`` takes;
    ``numbered``: "- [n] 【…】", numbered after the hits (the n-th passage is hits + n)."""
    lines: list[str] = []
    for number, passage in enumerate(result.passages, start=len(result.hits) + 1):
        words = passage.text if len(passage.text) <= MESSAGE_QUOTE_CHARS else passage.text[:MESSAGE_QUOTE_CHARS] + "…"
        lead = f"- [{number}] " if numbered else "- "
        line = f"{lead}【{passage.citation}】{' '.join(words.split())}"
        if estimate_tokens(line) > budget:
            continue
        lines.append(line)
        budget -= estimate_tokens(line)
    return lines
