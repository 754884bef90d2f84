"""Is a new statement the same fact as a stored one, another value of the same slot, or
another event? Read from the two texts (Chinese and English).

A *slot* is a subject and an attribute: the contract's rent, the order's status, the
client's address. A note may supersede another only when both fill the same slot and
their values disagree. Everything that names *which* event a statement is about — a
date, an instalment ordinal, a transaction id, a person, a statute — is an anchor:
different anchors mean different events, which are kept side by side and linked, never
superseded. Explicit correction cues (其实, 更正, 不是…而是, 改为, actually, correction,
I meant, changed to) are what lets a date or a differently worded sentence correct a slot.

``compare(new, old)`` returns a ``Relation``; its ``reason`` is what the routing decision
records, so an auditor can see why two notes were (or were not) joined.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from legaltext import read as read_legal_text
from legaltext.sentences import plain_sentences
from memory.corrections import CORRECTION_CUE_RE, REJECTED_VALUE_RE, says_it_corrects
from memory.erasure_hooks import register_cached_content
from legaltext.values import values as legal_values
from remember.routing.cued_slot import RELATIVE_DAY_RE, RESOLVED_DAY_RE, revised_by_slot
from remember.routing.offers import revised_by_new_offer
from remember.routing.replaced_word import revised_by_replaced_word
from remember.routing.respelled import revised_by_respelling
from remember.routing.swapped import revised_by_swap
from remember.routing.rejected import another_money_point, revised_by_rejection
from remember.routing.mentions import Mentions, dates_compatible, quantity_spans, read_mentions

# --- lexicon -------------------------------------------------------------------------

_NEGATION = re.compile(
    r"尚未|从未|并未|没有|拒不|拒绝|否认|并非|无法|不再|不|没|未"
    r"|\bno longer\b|\bnot\b|n't\b|\bnever\b|\brefuse[sd]?\b|\bdeclined?\b|\bden(?:y|ies|ied)\b|\bfail(?:s|ed)? to\b",
    re.IGNORECASE,
)
_ZH_FILLERS = ("已经", "已", "了", "的", "在", "于", "是", "为", "也", "都", "就", "将", "着", "过", "一共", "总共",
               "共计", "共", "大约", "约", "曾经", "曾", "同意", "承认", "确实", "一下", "个")
_EN_FILLERS = frozenset(
    "the a an has have had was were is are be been being did does do to of on in at for by with that this these "
    "already also just then and it its their his her s agree agreed agrees admit admitted admits indeed yet "
    "some any".split()
)
_IRREGULAR = {"paid": "pay", "sent": "send", "gave": "give", "made": "make", "told": "tell", "sold": "sell",
              "bought": "buy", "lent": "lend", "left": "leave", "held": "hold", "won": "win", "lost": "lose",
              "spent": "spend", "got": "get", "came": "come", "took": "take", "brought": "bring", "found": "find",
              "kept": "keep", "began": "begin", "wrote": "write", "saw": "see", "owed": "owe"}

#: slot attribute → the words that name it (a statement may name several).
ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "rent": ("租金", "房租", "月租", "rent"),
    "security_deposit": ("押金", "保证金", "security deposit"),
    "earnest_deposit": ("定金", "订金", "earnest money"),
    "deposit": ("deposit",),
    "final_payment": ("尾款", "final payment", "balance due"),
    "down_payment": ("首付", "down payment"),
    "price": ("价格", "售价", "价款", "总价", "单价", "price", "cost"),
    "salary": ("工资", "月薪", "薪水", "薪资", "年薪", "salary", "wage"),
    "overtime": ("加班费", "overtime"),
    "address": ("地址", "住址", "住在", "居住", "address", "lives at", "live at", "living at", "resides"),
    "phone": ("电话", "手机号", "phone"),
    "status": ("状态", "进度", "status"),
    "hearing": ("开庭", "庭审", "hearing", "trial"),
    "deadline": ("截止", "期限", "到期", "deadline", "due date"),
    "compensation": ("赔偿", "补偿", "compensation", "damages", "severance"),
    "penalty": ("违约金", "penalty", "liquidated damages"),
    "loan": ("借款", "欠款", "loan", "debt"),
    "refund": ("退款", "refund"),
    "repair_fee": ("维修费", "修理费", "repair"),
    "legal_fee": ("律师费", "legal fee", "attorney fee", "attorney's fee"),
    "fee": ("费用", "课程费", "学费", "fee", "tuition"),
    "signing": ("签订", "签署", "签约", "签的", "signed", "signing"),
    "area": ("面积", "平方米", "square met"),
    "lease_term": ("租期", "lease term"),
    "working_hours": ("工作时间", "工时", "每天工作", "hours a day", "hours per day"),
    "employer": ("employer", "就职于", "任职于"),
}
#: Attributes whose value is words rather than a number or a date (an address, a status).
TEXT_VALUED = frozenset({"address", "status", "employer"})
_EVENT_VERB = re.compile(
    r"付|支付|转账|转给|汇款|借给|借了|还了|偿还|收到|收取|买|购买|花(?!屏)|退还|赔付|缴纳|交了|到账"
    r"|\b(?:paid|pays?|transferr?ed|transfers?|sent|received|bought|purchased|spent|lent|borrowed|repaid|"
    r"refunded|deposited|wired|arrived)\b",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[a-z]+|\d+(?:\.\d+)?")


def _stem(word: str) -> str:
    word = _IRREGULAR.get(word, word)
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if len(word) > 4 and word.endswith(suffix):
            word = word[: -len(suffix)] + replacement
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


# --- a statement ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Statement:
    """One text read for routing: its mentions, slot attributes, polarity, correction cue,
    whether it reports an event (a payment, a purchase) rather than a state (the rent is…),
    and the remaining meaning-bearing words (a multiset)."""

    text: str
    mentions: Mentions
    attributes: frozenset[str]
    negated: bool
    correction: bool
    event: bool
    words: Counter


@lru_cache(maxsize=4096)
def read_statement(text: str) -> Statement:
    """Read ``text`` once (cached: a note is compared with many new statements)."""
    correction = says_it_corrects(text)
    kept = REJECTED_VALUE_RE.sub(" ", text) if correction else text
    kept = CORRECTION_CUE_RE.sub(" ", kept)
    mentions = read_mentions(kept)
    lowered = text.lower()
    attributes = frozenset(slot for slot, words in ATTRIBUTES.items() if any(w in lowered for w in words))
    rest = re.sub(r"n't\b", " not", mentions.rest.lower())
    negated = bool(_NEGATION.search(rest))
    rest = _NEGATION.sub(" ", rest)
    for filler in _ZH_FILLERS:
        rest = rest.replace(filler, " ")
    words: Counter = Counter(_CJK.findall(rest))
    words.update(_stem(w) for w in _WORD.findall(re.sub(r"[\u3400-\u9fff]", " ", rest)) if w not in _EN_FILLERS)
    return Statement(
        text=text,
        mentions=mentions,
        attributes=attributes,
        negated=negated,
        correction=correction,
        event=bool(_EVENT_VERB.search(kept)),
        words=words,
    )


register_cached_content("read_statements", read_statement.cache_clear)


# --- two statements --------------------------------------------------------------------------


class Kind(str, Enum):
    DUPLICATE = "duplicate"  # the same fact said again
    CORRECTION = "correction"  # same slot, other value, with an explicit correction cue
    VALUE_CHANGE = "value_change"  # same slot, other value, otherwise the same statement
    NEGATION = "negation"  # the same statement, negated on one side
    DISTINCT_EVENT = "distinct_event"  # alike, but another date / ordinal / id / person / statute
    OTHER = "other"  # not the same fact


@dataclass(frozen=True)
class Relation:
    kind: Kind
    reason: str
    #: For a correction of one value in a stored note that holds more: the stored note's text
    #: with that value replaced (``revision``) — the note that replaces it.
    revised: str | None = None

    @property
    def replaces(self) -> bool:
        """The new statement fills the old one's slot with another value (an UPDATE candidate)."""
        return self.kind in (Kind.CORRECTION, Kind.VALUE_CHANGE, Kind.NEGATION)


#: Word differences a correction may carry besides the value ("之前", "sorry", "owed").
CORRECTION_MAX_WORD_DIFF = 2
#: Words of the stored note a correction may leave out (the verb, the subject): at most this
#: many, or this share of the stored note's words.
CORRECTION_MAX_MISSING_WORDS = 4
CORRECTION_MISSING_SHARE = 0.5
#: Words that may differ between two statements of one fact (a particle, a measure word).
DUPLICATE_MAX_WORD_DIFF = 0
#: Two statements are look-alikes (sibling events) when this few of their words differ.
LOOK_ALIKE_SHARE = 0.25
LOOK_ALIKE_MIN_WORDS = 2


def _short(values) -> str:
    return ", ".join(sorted(_fmt(v) for v in values)) or "none"


def _fmt(value) -> str:
    if isinstance(value, tuple):
        unit, number = value
        return f"{number:g} {unit}" if unit != "money" else f"{number:g}"
    return str(value)


def _anchor_conflict(new: Mentions, old: Mentions, *, allow_dates: bool, allow_ids: bool = False) -> str | None:
    """The first anchor naming another event: ids, ordinals, statutes, people, then dates.
    A corrected date (or a corrected phone number, which reads like an id) is allowed."""
    for label, a, b in (
        ("transaction/document id", set() if allow_ids else new.ids, old.ids),
        ("ordinal (instalment, round, instance)", new.ordinals, old.ordinals),
        ("statute", new.law_refs, old.law_refs),
        ("person", new.people, old.people),
    ):
        if a and b and a != b:
            return f"other {label}: {_short(a)} vs {_short(b)}"
    if not allow_dates and new.dates and old.dates and not _dates_agree(new.dates, old.dates):
        return f"other date: {_short(new.dates)} vs {_short(old.dates)}"
    return None


def _dates_agree(a: set[str], b: set[str]) -> bool:
    return all(any(dates_compatible(x, y) for y in b) for x in a) and all(any(dates_compatible(y, x) for x in a) for y in b)


def _quantity_conflict(new: Mentions, old: Mentions) -> str | None:
    """Both sides give a value in one unit and the values differ: '20000 vs 30000 (money)'."""
    for unit in {u for u, _ in new.quantities} & {u for u, _ in old.quantities}:
        a = {v for u, v in new.quantities if u == unit}
        b = {v for u, v in old.quantities if u == unit}
        if a != b:
            return f"{unit} {_short(a)} vs {_short(b)}"
    return None


def _shared_anchor(new: Mentions, old: Mentions) -> str | None:
    """An anchor both name identically — proof that two statements are about one event."""
    for label, a, b in (("id", new.ids, old.ids), ("ordinal", new.ordinals, old.ordinals),
                        ("person", new.people, old.people)):
        if a and a == b:
            return f"{label} {_short(a)}"
    if new.dates and old.dates and _dates_agree(new.dates, old.dates) and any("?" not in d.split("-")[2] for d in new.dates):
        return f"date {_short(new.dates)}"
    return None


def word_difference(new: Statement, old: Statement) -> int:
    """How many meaning-bearing words one side has that the other lacks (order ignored)."""
    return sum(((new.words - old.words) + (old.words - new.words)).values())


def _only_the_slot(new: Statement, old: Statement) -> bool:
    """The stored note says little beyond the slot a correction replaces: few of its words are
    missing from the correction. "已经付了3万元定金，房东承诺月底前交房" is not superseded by
    "定金其实是2万元" — the promise would vanish with it."""
    missing = sum((old.words - new.words).values())
    return missing <= max(CORRECTION_MAX_MISSING_WORDS, CORRECTION_MISSING_SHARE * sum(old.words.values()))


def _one_value_replaced(new: Mentions, old: Mentions) -> bool:
    """Exactly one of the stored note's values is gone from the correction: the corrected one.
    A note holding other values too ("3万元定金和5000元中介费") is not superseded by a
    correction of one of them."""
    return len(old.quantities - new.quantities) == 1


def look_alike(new: Statement, old: Statement, diff: int) -> bool:
    """Worded alike apart from their mentions: at most a quarter of the shorter statement's
    words (and at least two) differ. Only look-alikes are linked as sibling events."""
    shorter = min(sum(new.words.values()), sum(old.words.values()))
    return diff <= max(LOOK_ALIKE_MIN_WORDS, LOOK_ALIKE_SHARE * shorter)


def turn_correction(said: str, new: Statement, old: Statement) -> str | None:
    """Why the client's own words ``said`` make ``new`` a correction of ``old`` — or None.

    A model that extracts "更正：月租金是8500元，不是8000元" may write "王磊的月租金为8500元":
    the cue is gone from the item but not from the turn. The turn counts for this pair only
    when a sentence of it with a cue (read with the sentence after it: "I misspoke. The rent
    is $1,200.") names a slot both statements fill, or rejects a value the stored note holds
    ("不是8000元"); names no person the stored note does not name; and every value the new
    statement adds was said in it. Precision first: anything else is not a correction."""
    if not said.strip():
        return None
    parts = plain_sentences(said)
    added = new.mentions.quantities - old.mentions.quantities
    added_dates = {d for d in new.mentions.dates if not any(dates_compatible(d, o) for o in old.mentions.dates)}
    for index, sentence in enumerate(parts):
        if not says_it_corrects(sentence):
            continue
        window = " ".join(parts[index:index + 2])
        lowered = window.lower()
        named = {slot for slot, words in ATTRIBUTES.items() if any(w in lowered for w in words)}
        named &= new.attributes & old.attributes
        rejected: set[tuple[str, float]] = set()
        for match in REJECTED_VALUE_RE.finditer(window):
            rejected |= read_mentions(match.group(0)).quantities
        rejected &= old.mentions.quantities
        if not named and not rejected:
            continue
        window_mentions = read_mentions(window)
        if window_mentions.people - old.mentions.people:
            continue  # "我同事李明的工资其实是…" corrects no note that does not name 李明
        if not added <= window_mentions.quantities:
            continue
        if added_dates and not all(any(dates_compatible(d, w) for w in window_mentions.dates) for d in added_dates):
            continue
        what = ", ".join(sorted(named)) if named else f"the stored value {_short(rejected)}"
        return f"the client's turn corrects {what}"
    return None


def compare(new_text: str, old_text: str, said: str = "") -> Relation:
    """How the new statement relates to the stored one (see the module docstring). ``said``
    is what the client said in the turn the new statement was taken from (``turn_correction``).
    A correction of one value of a stored note that holds more is a correction with the
    note's revised text (``revision``)."""
    new, old = read_statement(new_text), read_statement(old_text)
    relation = _with_cue(new, old, new_text, said)
    if relation.kind == Kind.CORRECTION:
        return _and_the_other_points(relation, old_text, new_text, said)
    offered = revised_by_new_offer(new_text, old_text, said)  # "保险公司那边又涨到8万5了" after "…可以一次性赔6万"
    if offered:
        return Relation(Kind.CORRECTION, offered[1], revised=offered[0])
    respelled = revised_by_respelling(said or new_text, new_text, old_text)  # "是“鼎晟物业”，不是茂盛的盛"
    if respelled:
        return Relation(Kind.CORRECTION, respelled[1], revised=respelled[0])
    replaced = revised_by_replaced_word(said or new_text, new_text, old_text)  # "不是出租车，是网约车"
    if replaced:
        return Relation(Kind.CORRECTION, replaced[1], revised=replaced[0])
    if new.mentions.people - old.mentions.people:
        # "孙丽娟今天来电话说，…是2019年9月入职的" against "她…2019年4月入职": a stored note that names
        # nobody may be the relayed client's; the slot rule keeps people out of the value's clause.
        if old.mentions.people:
            # "…净利润审计报告上写的是760万，不是之前说的800万" names the value it rejects, in words
            # that name nobody: the note that states 800万 once is revised, whoever else both name
            if _a_rejection_names_another(said or new_text, old.mentions.people):
                return relation  # "我同事李明住院不是7天，是9天" is about 李明
            rejected = revised_by_rejection(said or new_text, new_text, old_text, unnamed_only=True)
            return Relation(Kind.CORRECTION, rejected[1], revised=rejected[0]) if rejected else relation
        revised = _revised(said or new_text, new_text, old_text, unnamed_only=True)
        return Relation(Kind.CORRECTION, revised[1], revised=revised[0]) if revised else relation
    revised = _revised(said or new_text, new_text, old_text)
    return Relation(Kind.CORRECTION, revised[1], revised=revised[0]) if revised else relation


def _a_rejection_names_another(said: str, people: set) -> bool:
    """A sentence of ``said`` that rejects a value names a person ``people`` leaves out."""
    return any(read_legal_text(sentence).corrections and read_mentions(sentence).people - people
               for sentence in plain_sentences(said))


def _with_resolved_days(said: str, new_text: str) -> str:
    """The turn as the new statement restates it, with its relative days resolved, when the
    statement is the turn's words ("约的是下周四下午" noted as "约的是下周四（2026年2月26日）下午"):
    a relative day is no value the correction rules can read. A turn with days of its own is
    resolved only where the statement restates it, and only when that part names no day itself."""
    resolved = new_text.strip().rstrip("。.！!")
    plain = RESOLVED_DAY_RE.sub("", resolved).strip()
    if plain == resolved or len(plain) < 6 or plain not in said:
        return said
    if not any(v.kind == "date" for v in legal_values(said)):
        return new_text
    if any(v.kind == "date" for v in legal_values(plain)) or \
            len(RELATIVE_DAY_RE.findall(resolved)) != len(RESOLVED_DAY_RE.findall(resolved)):
        return said  # "还款期限是2025年6月30日，不是5月31日": the turn's own days, the rejected one named as such
    # "约谈改到这周五下午3点了" in a turn that names another day elsewhere ("入职时间其实是2021年3月"); a
    # resolved month of the turn's story ("去年12月（2025年12月）") moves no appointment
    return said.replace(plain, resolved, 1)



def _revised(said: str, new_text: str, old_text: str, *, unnamed_only: bool = False) -> tuple[str, str] | None:
    """The stored note revised by the values the turn rejects ("不是住院7天，是住院9天") and then
    by the points it corrects without naming the old value ("入职时间搞错了，是2019年9月入职的"):
    "月租是5400不是5200，所以押金是两个月10800" revises the rent and the deposit of one note."""
    said = _with_resolved_days(said, new_text)
    swapped = revised_by_swap(said, old_text)  # "比例说反了：签约时付的是70%，验收后付30%"
    if swapped:
        return swapped
    rejected = revised_by_rejection(said, new_text, old_text, unnamed_only=unnamed_only)
    if rejected is None:
        return revised_by_slot(said, new_text, old_text)
    return _then_by_slot(rejected, old_text, said, new_text)


def _then_by_slot(first: tuple[str, str], old_text: str, said: str, new_text: str) -> tuple[str, str]:
    """``first`` (a revision of ``old_text``) revised further by the slot rule, unless that would
    bring back a value ``first`` replaced ("上次说医疗费23600元…其实是25180元" names 23600 too)."""
    more = revised_by_slot(said, new_text, first[0])
    if more is None or more[0] == new_text:  # an offer told anew is no further point of a revision
        return first
    replaced = [v for v in legal_values(old_text) if not any(v.matches(k) for k in legal_values(first[0]))]
    brought_back = [v for v in legal_values(more[0]) if any(v.matches(r) for r in replaced)]
    return first if brought_back else (more[0], f"{first[1]}; {more[1]}")


def _and_the_other_points(relation: Relation, old_text: str, new_text: str, said: str) -> Relation:
    """A revision with every point the turn corrects: "月租是5400不是5200，所以押金是两个月10800"
    revises the note's 月租5200 by its rejected value and its 押金10400 by the slot rule."""
    if relation.revised is None:
        return relation
    revised, reason = _then_by_slot((relation.revised, relation.reason), old_text, said or new_text, new_text)
    return Relation(Kind.CORRECTION, reason, revised=revised)


def _with_cue(new: Statement, old: Statement, new_text: str, said: str) -> Relation:
    """``compare`` by the slot lexicon and the correction cues of the item and its turn."""
    relation = _compare(new, old, cue=new.correction)
    if relation.kind == Kind.CORRECTION:
        return relation
    because = "its own cue" if new.correction else (turn_correction(said, new, old) if said else None)
    if because is None:
        return relation
    if not new.correction:
        turned = _compare(new, old, cue=True)
        if turned.kind == Kind.CORRECTION:
            return Relation(Kind.CORRECTION, f"{turned.reason} ({because})")
    revised = revision(new, old, rejected=rejected_values(f"{new_text}\n{said}"))
    if revised is None:
        return relation
    return Relation(Kind.CORRECTION, f"explicit correction of one value of a note that holds more ({because})",
                    revised=revised)


def rejected_values(text: str) -> set[tuple[str, float]]:
    """The quantities ``text`` rejects: "不是8000元", "not $1,000 but …"."""
    rejected: set[tuple[str, float]] = set()
    for match in REJECTED_VALUE_RE.finditer(text):
        rejected |= read_mentions(match.group(0)).quantities
    return rejected


#: Where a clause ends: punctuation (not a number's ","), or an English "and" / "but".
_CLAUSE_END = re.compile(r"[，；;。！？!?\n]|(?<!\d),|,(?!\d)|\b(?:and|but)\b", re.IGNORECASE)


def _clauses(text: str) -> list[tuple[int, str]]:
    """The clauses of ``text`` with where each starts."""
    clauses, start = [], 0
    for end in _CLAUSE_END.finditer(text):
        clauses.append((start, text[start:end.start()]))
        start = end.end()
    clauses.append((start, text[start:]))
    return [(at, clause) for at, clause in clauses if clause.strip()]


def revision(new: Statement, old: Statement, *, rejected: set[tuple[str, float]] = frozenset()) -> str | None:
    """The stored note's text with the one value a correction replaces, or None.

    "更正：月租金是8500元" against "王磊…，月租金8000元，押金16000元。" gives "王磊…，月租金8500元，
    押金16000元。": superseding the note with the bare correction would lose the deposit and the
    date, adding it beside would leave 8000 current. Precision first — every condition holds or
    nothing is revised: the correction states one quantity and names one slot the note names; it
    names nobody the note does not; exactly one clause of the note names that slot and states
    exactly one value in the quantity's unit, another value (the rejected one, when the client
    rejects one); and the correction says little beyond that clause (at most
    ``CORRECTION_MAX_WORD_DIFF`` words): "房东要扣押金3000元" is no revision of "押金16000元"."""
    if len(new.mentions.quantities) != 1 or new.mentions.people - old.mentions.people:
        return None
    slots = new.attributes & old.attributes
    if len(slots) != 1 or _anchor_conflict(new.mentions, old.mentions, allow_dates=False):
        return None
    unit, value = next(iter(new.mentions.quantities))
    words = ATTRIBUTES[next(iter(slots))]
    found = []
    for at, clause in _clauses(old.text):
        if not any(word in clause.lower() for word in words):
            continue
        values = [span for span in quantity_spans(clause) if span[2][0] == unit]
        if len(values) == 1:
            found.append((at, clause, values[0]))
    if len(found) != 1:
        return None
    at, clause, (start, end, (_unit, old_value)) = found[0]
    if old_value == value or (rejected and (unit, old_value) not in rejected):
        return None
    if another_money_point(old.text, at + start, new.text):
        return None  # "押金是3000元" revises no "要扣2000元押金"
    if sum((new.words - read_statement(clause).words).values()) > CORRECTION_MAX_WORD_DIFF:
        return None
    surface = next((new.text[s:e] for s, e, quantity in quantity_spans(new.text)
                    if quantity == (unit, value)), None)
    if surface is None:
        return None
    return old.text[:at + start] + surface + old.text[at + end:]


def _compare(new: Statement, old: Statement, *, cue: bool) -> Relation:
    diff = word_difference(new, old)
    shared_slot = new.attributes & old.attributes
    dates_differ = bool(new.mentions.dates and old.mentions.dates
                        and not _dates_agree(new.mentions.dates, old.mentions.dates))
    narrow = _only_the_slot(new, old)
    date_correction = cue and dates_differ and narrow and (shared_slot or diff <= CORRECTION_MAX_WORD_DIFF)
    phone_correction = cue and "phone" in shared_slot and narrow
    anchor = _anchor_conflict(new.mentions, old.mentions, allow_dates=date_correction, allow_ids=phone_correction)
    if anchor:
        if look_alike(new, old, diff):
            return Relation(Kind.DISTINCT_EVENT, f"distinct event ({anchor})")
        return Relation(Kind.OTHER, f"another statement ({diff} word(s) differ; {anchor})")
    quantities = _quantity_conflict(new.mentions, old.mentions)
    if new.negated != old.negated:
        if diff == 0 and not quantities and not dates_differ:
            side = "new" if new.negated else "old"
            return Relation(Kind.NEGATION, f"the same statement negated ({side} side)")
        return Relation(Kind.OTHER, f"negation of a different statement ({diff} word(s) differ)")
    slot = ", ".join(sorted(shared_slot)) or "same wording"
    if date_correction:
        return Relation(Kind.CORRECTION, f"explicit correction of {slot}: date "
                                         f"{_short(new.mentions.dates)} vs {_short(old.mentions.dates)}")
    if quantities:
        if cue and narrow and _one_value_replaced(new.mentions, old.mentions) and (
            shared_slot or diff <= CORRECTION_MAX_WORD_DIFF
        ):
            return Relation(Kind.CORRECTION, f"explicit correction of {slot}: {quantities}")
        if diff == 0:
            same_event = _shared_anchor(new.mentions, old.mentions)
            if same_event:
                return Relation(Kind.VALUE_CHANGE, f"same event ({same_event}), other value: {quantities}")
            if not new.event and not old.event and shared_slot:
                return Relation(Kind.VALUE_CHANGE, f"same attribute ({slot}), other value: {quantities}")
            kind = f"{slot} event" if shared_slot else "event worded the same"
            return Relation(Kind.DISTINCT_EVENT, f"distinct event (another {kind}, no shared date or id: {quantities})")
        return Relation(Kind.OTHER, f"other values in a different statement ({diff} word(s) differ)")
    if phone_correction and new.mentions.ids and old.mentions.ids and new.mentions.ids != old.mentions.ids:
        return Relation(Kind.CORRECTION, f"explicit correction of phone: {_short(new.mentions.ids)} vs "
                                         f"{_short(old.mentions.ids)}")
    text_slots = shared_slot & TEXT_VALUED
    if cue and text_slots and diff > 0 and not (new.mentions.quantities or old.mentions.quantities):
        return Relation(Kind.CORRECTION, f"explicit correction of {', '.join(sorted(text_slots))}")
    if dates_differ and look_alike(new, old, diff):
        return Relation(Kind.DISTINCT_EVENT, f"distinct event (other date: {_short(new.mentions.dates)} vs "
                                             f"{_short(old.mentions.dates)})")
    same_mentions = all(
        getattr(new.mentions, k) == getattr(old.mentions, k) for k in ("quantities", "ids", "ordinals", "people", "law_refs")
    ) and (new.mentions.dates == old.mentions.dates or _dates_agree(new.mentions.dates, old.mentions.dates))
    if same_mentions and diff <= DUPLICATE_MAX_WORD_DIFF and not cue:
        return Relation(Kind.DUPLICATE, "the same statement (same values, same words)")
    return Relation(Kind.OTHER, f"not the same fact ({diff} word(s) differ)")
