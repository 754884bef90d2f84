"""The checks an extracted item passes before it may become a note, as named rules.

Each rule is registered in the "extraction" table of ``memory.rules`` with a name, one line
on why in a lawyer's words, and a function over the item under check (``ItemCheck``, with the
``Reading`` of its content) that answers None (the item passes), a ``Refusal`` (the item is
refused, with the detail recorded beside the rule's name) or a ``Category`` (the item is filed
under that category instead). ``items.validate_items`` runs them in the order registered,
stage by stage: the raw entry ("entry"), its cleaned content ("content"), then against the
other items and the turn it came from ("turn"; the rules marked ``needs_turn`` only when the
turn is known). docs/write-path.md, "Speaker rules".
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from django.utils.translation import gettext_lazy as _

from legaltext import Reading, read
from legaltext.names import name_ending_at
from memory.categories import Category
from memory.rules import Rule, register, rules

from . import lexicon
from .grounding import (TurnText, asserted_question, cut_clause, fragment_reason, only_announces, states_nothing,
                        unsaid_number, whose_words)
from .statutes import uncited

TABLE = "extraction"
ENTRY, CONTENT, TURN = "entry", "content", "turn"

#: The client's own categories: what the assistant said is never one of them.
CLIENT_CATEGORIES: frozenset[Category] = frozenset({Category.FACT, Category.EVIDENCE})
#: Advice and next steps, whatever label an extractor put on them (Chinese and English).
_ADVICE_RE = re.compile(
    r"建议|应立即|应当立即|尽快|最好|可以向|您可以|你可以|需要(?:联系|准备|保留|收集|提交)|请(?:先|立即|尽快)"
    r"|\b(?:should|recommend\w*|advis\w*|suggest\w*|next step|you (?:can|may|must))\b",
    re.IGNORECASE,
)
#: A statute, regulation or rule: a named law, an article number, or their English forms.
_ENGLISH_STATUTE_RE = re.compile(r"\b(?:Act|Code|Article|Section|Regulation|Statute)s?\b")


def is_advice(content: str) -> bool:
    """Whether the text tells someone what to do (advice / action item)."""
    return bool(_ADVICE_RE.search(content))


def cites_statute(content: str) -> bool:
    """Whether the text names a statute or rule ('《民法典》第五百零九条', 'Article 24 of the ... Act')."""
    return bool(lexicon.extract_law_refs(content) or _ENGLISH_STATUTE_RE.search(content))


def content_key(content: str) -> str:
    """Normalised form used to spot duplicates: letters and digits only, lower case."""
    return "".join(ch for ch in content.lower() if ch.isalnum())


@dataclass(frozen=True)
class Refusal:
    """Why a rule refuses an item (the detail a reviewer reads beside the rule's name)."""

    detail: str


@dataclass
class ItemCheck:
    """One raw item under check: what the extractor gave, what is made of it so far, and the
    turn it came from (None when unknown)."""

    index: int
    entry: Any
    turn: TurnText | None = None
    content: str = ""
    category: Category | None = None
    speaker: str = "turn"
    seen: set[str] = field(default_factory=set)

    @property
    def reading(self) -> Reading:
        """The content as it stands, read by ``legaltext.read`` (cached there, so every rule
        asking about the same content gets the same reading), said on the turn's day."""
        return read(self.content, said_at=self.turn.said_on if self.turn else None)


@dataclass(frozen=True)
class SaidBy:
    """The item is another speaker's words, filed under ``category`` (the rules after it read it
    as theirs: the assistant's "fact" is then advice or refused)."""

    speaker: str
    category: Category


Answer = Refusal | Category | SaidBy | None


@dataclass(frozen=True)
class ExtractionRule(Rule):
    needs_turn: bool = False
    #: Also applied to the offline engine's items (``offline_answer``), not only to a model's.
    both_engines: bool = False


def extraction_rule(name: str, why, stage: str, *, needs_turn: bool = False, both_engines: bool = False
                    ) -> Callable[[Callable[[ItemCheck], Answer]], Callable[[ItemCheck], Answer]]:
    """Register the decorated function as the rule ``name`` of the extraction table."""
    def decorate(check: Callable[[ItemCheck], Answer]) -> Callable[[ItemCheck], Answer]:
        register(ExtractionRule(TABLE, name, why, check, stage, needs_turn, both_engines))
        return check
    return decorate


def snippet(text: str, limit: int = 30) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


# --- the raw entry -----------------------------------------------------------------------------

@extraction_rule("item-is-an-object", _("An item the extractor wrote is a record with fields, or it is not read."), ENTRY)
def item_is_an_object(item: ItemCheck) -> Answer:
    return None if isinstance(item.entry, dict) else Refusal(f"not an object ({type(item.entry).__name__})")


@extraction_rule("content-is-text", _("What a note says must be text."), ENTRY)
def content_is_text(item: ItemCheck) -> Answer:
    content = item.entry.get("content")
    if content is not None and not isinstance(content, str):
        return Refusal(f"content is not text ({type(content).__name__})")
    return None


# --- the cleaned content -----------------------------------------------------------------------

@extraction_rule("content-present", _("A note must say something."), CONTENT)
def content_present(item: ItemCheck) -> Answer:
    return None if item.content else Refusal("missing content")


@extraction_rule("content-has-words", _("A note of punctuation or symbols alone says nothing."), CONTENT)
def content_has_words(item: ItemCheck) -> Answer:
    return None if content_key(item.content) else Refusal(f"content has no words: {snippet(item.content)!r}")


@extraction_rule("known-category", _("Every note is filed under one of the six kinds a lawyer reads: fact, evidence, "
                                      "claim, law, action, preference."), CONTENT)
def known_category(item: ItemCheck) -> Answer:
    if item.category is not None:
        return None
    raw = item.entry.get("category")
    shown = raw if isinstance(raw, str) else repr(raw)
    return Refusal(f"unknown category {shown!r} for {snippet(item.content)!r}")


@extraction_rule("whole-statement", _("Half a sentence can say the opposite of the whole: a note is a complete "
                                       "statement."), CONTENT)
def whole_statement(item: ItemCheck) -> Answer:
    fragment = fragment_reason(item.content)
    return Refusal(f"{fragment}: {snippet(item.content)!r}") if fragment else None


# --- against the turn --------------------------------------------------------------------------

@extraction_rule("once-per-turn", _("The same thing said twice in one turn is one note."), TURN)
def once_per_turn(item: ItemCheck) -> Answer:
    return Refusal(f"duplicate within the turn: {snippet(item.content)!r}") if content_key(item.content) in item.seen \
        else None


@extraction_rule("answers-are-not-client-facts", _("What the assistant answered is advice or law, never the client's "
                                                    "own facts or evidence."), TURN, needs_turn=True)
def answers_are_not_client_facts(item: ItemCheck) -> Answer:
    if item.speaker == "assistant" and item.category is Category.CLAIM and not item.turn.reply_is_person:
        return Category.ACTION  # "给装修公司一个合理期限完工…可以解除合同": the client's claim is the client's to make
    if item.speaker == "assistant" and item.category in CLIENT_CATEGORIES and not item.turn.reply_is_person:
        if not is_advice(item.content):
            return Refusal(f"said by the assistant: an answer is advice or law, never the client's {item.category.zh}: "
                           f"{snippet(item.content)!r}")
        return Category.ACTION
    return None


@extraction_rule("law-cites-a-statute", _("A law note that cites no statute is not law: the assistant's view is advice, "
                                           "the client's words are the client's statement."), TURN, needs_turn=True)
def law_cites_a_statute(item: ItemCheck) -> Answer:
    """Re-filed before ``numbers-were-said``, so the client's "law" is held to the numbers said
    (the live Qwen 1.5B filed "押金的金额为1000元", half of the 2000 said, as the client's 法条)."""
    if item.category is not Category.LAW or cites_statute(item.content):
        return None
    if item.speaker == "assistant":
        return Category.ACTION
    return Category.FACT if item.speaker == "user" else None


@extraction_rule("questions-stay-questions", _("A question the client only asked is not an answer they gave."), TURN,
                 needs_turn=True)
def questions_stay_questions(item: ItemCheck) -> Answer:
    question = asserted_question(item.content, item.turn.said_by(item.speaker))
    if question:
        return Refusal(f"turns the question {snippet(question)!r} into an assertion: {snippet(item.content)!r}")
    return None


@extraction_rule("no-clause-cut-from-its-point", _("Half a clause cut from the client's sentence loses what it is "
                                                  "about (\"我花了800元\" — for what?): the whole sentence is noted "
                                                  "instead."), TURN, needs_turn=True)
def no_clause_cut_from_its_point(item: ItemCheck) -> Answer:
    if item.speaker == "user":
        clause = cut_clause(item.content, item.turn)
        if clause:
            return Refusal(f"cut from {snippet(clause)!r}, it names nothing of what it is about: {snippet(item.content)!r}")
    return None


@extraction_rule("a-question-states-no-fact", _("A message that only asks states nothing: no note is filed from it "
                                               "in the client's name."), TURN, needs_turn=True)
def a_question_states_no_fact(item: ItemCheck) -> Answer:
    if item.speaker == "user" and states_nothing(item.turn.user_msg):
        return Refusal(f"the client only asked ({snippet(item.turn.user_msg)!r}): {snippet(item.content)!r}")
    return None


@extraction_rule("an-announcement-is-no-fact", _("\"合同我传上来了\", \"有新情况\", \"你帮忙看看\" announce what follows: "
                                                 "nothing in them is filed."), TURN, needs_turn=True, both_engines=True)
def an_announcement_is_no_fact(item: ItemCheck) -> Answer:
    if item.speaker in ("user", "turn") and only_announces(item.content):
        return Refusal(f"only announces material or news: {snippet(item.content)!r}")
    return None


@extraction_rule("the-answers-words-are-the-answers", _("A note worded as the assistant's answer is the assistant's "
                                                     "advice, not the client's fact or claim."), TURN, needs_turn=True)
def the_answers_words_are_the_answers(item: ItemCheck) -> Answer:
    if item.speaker in ("user", "turn") and item.category is not Category.LAW and not item.turn.reply_is_person:
        if whose_words(item.content, item.turn).worded_as_answer:
            if item.category in CLIENT_CATEGORIES and not is_advice(item.content):
                return Refusal(f"worded as the assistant's answer, which is advice or law, never the client's "
                               f"{item.category.zh}: {snippet(item.content)!r}")
            return SaidBy("assistant", Category.ACTION if item.category in (*CLIENT_CATEGORIES, Category.CLAIM)
                          else item.category)
    return None


@extraction_rule("numbers-were-said", _("A fact holds only the sums, dates and numbers a person said, not ones the "
                                         "answer worked out."), TURN, needs_turn=True)
def numbers_were_said(item: ItemCheck) -> Answer:
    if item.category in CLIENT_CATEGORIES:
        number = unsaid_number(item.content, item.turn.persons_text)
        if number:
            return Refusal(f"the number {number} is not in what {item.turn.persons} said: {snippet(item.content)!r}")
    return None


@extraction_rule("statutes-were-cited", _("A law note cites only the statutes its speaker cited."), TURN, needs_turn=True)
def statutes_were_cited(item: ItemCheck) -> Answer:
    if item.category is Category.LAW:
        citation = uncited(item.content, item.turn.said_by(item.speaker))
        if citation:
            return Refusal(f"cites {citation}, which {who(item.speaker, item.turn)} did not cite: "
                           f"{snippet(item.content)!r}")
    return None


@extraction_rule("the-clients-words-are-the-clients", _("A note in the client's name holds what the client said: "
                                                      "words nobody in the turn said are nobody's."), TURN,
                 needs_turn=True)
def the_clients_words_are_the_clients(item: ItemCheck) -> Answer:
    if item.speaker != "user" or item.category in (Category.LAW, Category.PREFERENCE):
        return None
    whose = whose_words(item.content, item.turn)
    if whose.said_by_nobody:
        return Refusal(f"not what {who('user', item.turn)} said ({whose.in_message:.0%} of its words in the message, "
                       f"{whose.in_reply:.0%} in the reply): {snippet(item.content)!r}")
    return None


@extraction_rule("advice-that-cites-a-statute-is-advice", _("\"Ask which legal ground the company relies on "
                                                              "(Article 40(3)…)\", \"律师函可以写明…依据…\": what to say "
                                                              "or do, with the statute as its support, is advice, not law."),
                 TURN, needs_turn=True, both_engines=True)
def advice_that_cites_a_statute_is_advice(item: ItemCheck) -> Answer:
    if item.category is Category.LAW and item.speaker == "assistant" and _SAY_OR_DO_RE.search(item.content):
        return Category.ACTION
    return None


#: What to say or do, the statute only its support: an order to ask, tell or write; "can mention
#: Article 55 as leverage"; "律师函可以写明…", "可以援引…".
_SAY_OR_DO_RE = re.compile(
    r"^(?:The assistant advised:\s*)?(?:Ask|Tell|Send|Write|Mention|Remind|Refuse|Reply|Keep|Do not|Don't|Never)\b"
    r"|\b(?:can|could|may|should)\s+(?:still\s+|also\s+)?(?:mention|cite|invoke|refer to|point to|raise)\b[^.;]{0,80}"
    r"\b(?:as leverage|in the (?:demand|letter|reply|email|meeting|negotiation))"
    r"|可以(?:在[^，。；]{1,12}(?:中|里))?(?:写明|写上|注明|援引|引用|提及)|(?:律师函|函件|回复|回函|邮件|催告函)[^，。；]{0,6}(?:写明|写上|注明)")


@extraction_rule("a-statute-applied-is-advice", _("“罗建平可以要求修理…（第七百八十一条）”“8万5仍低于可主张的约92100元（解释第十二条）”: "
                                                  "a statute applied to the client's case — a sum, a day, what the client "
                                                  "may claim — is the assistant's advice; only the statute's own words are law."),
                 TURN, needs_turn=True, both_engines=True)
def a_statute_applied_is_advice(item: ItemCheck) -> Answer:
    if item.category is Category.LAW and item.speaker == "assistant" and not _a_contracts_article(item) and (
            item.reading.amounts or item.reading.dates or _applied(item.content, item.turn.persons_text)):
        return Category.ACTION
    return None


#: Words that apply a rule to the case at hand: what the client may claim or do, a judgement of the
#: other side's position, a sum worked out. "可以请求/要求" alone is the statute's own ("…过分高于造成的
#: 损失的，可以请求予以适当减少"): it applies the rule when a person of the case is its subject.
_APPLIED_RE = re.compile(
    r"可以起诉|都可以|可能(?:会)?被|(?:对方|公司|房东)可能|(?:不)?建议|依据不足|没有(?:合同|法律)?依据|折合|合计"
    r"|(?:当事人|客户|委托人|[他她你您])(?:也|还|仍|就)?可以(?:主张|要求|请求|申请|拒绝)"
    r"|\b(?:the client|you) (?:can|may|could)\b",
    re.IGNORECASE)


def _applied(text: str, persons_text: str) -> bool:
    """``text`` applies a rule to the case: words of application, or a person the client's side
    named who may ask for something ("罗建平可以要求修理"; not "消费者可以要求退货", a statute's party)."""
    return bool(_APPLIED_RE.search(text)) or any(
        name_ending_at(text, match.start(), persons_text) for match in _NAMED_ASKS_RE.finditer(text))


_NAMED_ASKS_RE = re.compile(r"(?<=[\u4e00-\u9fff])可以(?:主张|要求|请求|申请|拒绝)")


@extraction_rule("contract-articles-are-terms", _("A contract's article (\"第八条约定…\") is what the parties agreed: "
                                                  "a fact of the matter, never 法条."), TURN, needs_turn=True,
                 both_engines=True)
def contract_articles_are_terms(item: ItemCheck) -> Answer:
    """Last of the table: the re-filed term was checked as law (its citations) and is kept as said."""
    if item.category is Category.LAW and _a_contracts_article(item):
        return Category.FACT
    return None


def _a_contracts_article(item: ItemCheck) -> bool:
    """The item quotes an article of the contract, and no statute."""
    reading = item.reading
    return bool(reading.contract_articles) and not reading.statutes and bool(_CONTRACTS_ARTICLE_RE.search(item.content))


#: An article said to be the contract's: "合同第十条", "第十条约定…", "协议里第三条写明…" — not a bare
#: "第五百八十六条" of a reply that mentions 合同 elsewhere (a statute the reply leaves unnamed).
_CONTRACTS_ARTICLE_RE = re.compile(
    r"(?:合同|协议|租约|借条)(?:的|上|里|中)?第[0-9一二三四五六七八九十百]+条"
    r"|第[0-9一二三四五六七八九十百]+条(?:明确|还|也|中|里)?(?:约定|写明|写着)")


def who(speaker: str, turn: TurnText) -> str:
    """How a reason calls the speaker of an item."""
    if speaker == "assistant":
        return turn.reply_name if turn.reply_is_person else "the assistant"
    return turn.persons if speaker == "turn" else (turn.user_name or "the client")


def run_stage(stage: str, item: ItemCheck) -> tuple[Rule, Refusal] | None:
    """Apply the rules of ``stage`` to ``item`` in their order: a re-filing changes the item's
    category for the rules after it; the first refusal ends the run and is returned with its rule."""
    for found in rules(TABLE):
        if found.stage != stage or (getattr(found, "needs_turn", False) and item.turn is None):
            continue
        answer = found.check(item)
        if isinstance(answer, Refusal):
            return found, answer
        if isinstance(answer, Category):
            item.category = answer
        if isinstance(answer, SaidBy):
            item.speaker, item.category = answer.speaker, answer.category
    return None


def offline_answer(content: str, category: Category, speaker: str, turn: TurnText) -> tuple[Rule, Answer] | None:
    """The first answer of the rules marked ``both_engines`` to an item of the offline engine
    (whose own lexicon already did what the other rules check of a model's items)."""
    item = ItemCheck(0, None, turn=turn, content=content, category=category, speaker=speaker)
    for found in rules(TABLE):
        if getattr(found, "both_engines", False):
            answer = found.check(item)
            if answer is not None:
                return found, answer
    return None
