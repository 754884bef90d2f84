"""A correction that gives the right value without naming the wrong one replaces the value of
the same point in the stored note.

"之前说的入职时间搞错了……是2019年9月入职的", "月收入应该是1万5", "定金是15万（等一下，我看了下合同）",
"准确数是27个": the client says a value is corrected and which point it is about, not which value was
wrong. The point is told by the words around the value: the stored note's clause holding a value
of the same kind that shares a word of two characters with the clause of the new value (and the
clause before it: "我们车间没签合同的人……准确数是27个") is that point — "2019年4月入职" for "…9月入职",
"我们车间二十来个人都没签合同" for the count of workers without a contract. Its value is replaced
in the note's own form, and the revised note supersedes the old one (``slots.compare``).

Precision first (a wrong replacement hides what the client said): the turn must say it corrects
something in the sentence holding the new value or the one before, or the stored value was a
guess ("要扣2000左右") that the new exact value makes precise; the new value must be in the
new statement; exactly one value of the stored note may fit; the stored note must not already
state the new value.
"""
from __future__ import annotations

import re

from legaltext import read
from legaltext.names import common_surnames
from legaltext.corrections import CORRECTION_CUE_RE, says_it_corrects
from remember.routing.mentions import read_mentions
from remember.routing.rejected import another_money_point
from legaltext.sentences import SENTENCE_END_RE, span_around
from legaltext.values import MONEY_VERBS, Value, replaced_in, values
from legaltext.words import FUNCTION_CHARS, point_words


def _kind_of(value: Value) -> str:
    return "date" if value.kind == "date" else ("amount" if value.kind in ("money", "number") else value.kind)


#: How far apart a sum or count and its correction may be: a correction moves a value, it does
#: not turn 壹拾贰万元 into 6.
MAX_AMOUNT_RATIO = 10


def _compatible(a: Value, b: Value) -> bool:
    """Values of one kind (two days, two sums or counts, two rates, two lengths in one unit),
    sums and counts within ``MAX_AMOUNT_RATIO`` of each other, days that differ in no more than
    their year or their month and day, a year alone and a day of another year ("2018年买的" is
    "2020年5月买的"; "2025年" is no point of "2025年10月15日")."""
    if _kind_of(a) != _kind_of(b):
        return False
    if _kind_of(a) == "date":  # a correction moves one part of a day: not 2024年7月1日 to 2021年6月1日
        (year_a, month_a, _), (year_b, month_b, _) = a.magnitude, b.magnitude
        if month_a is None or month_b is None:
            return bool(year_a and year_b and year_a != year_b)
        return not (year_a and year_b and year_a != year_b and month_a != month_b)
    if _kind_of(a) not in ("amount", "percent"):
        return True
    # a rate moves as a sum does: not 70% of a price to 千分之一 a day
    low, high = sorted((float(a.magnitude), float(b.magnitude)))
    return low > 0 and high / low <= MAX_AMOUNT_RATIO


#: Verbs of money that name a point alone ("扣" of "要扣4000押金" and "只扣刷墙的钱，2500").
_POINT_VERBS = frozenset("扣付转退赔借欠罚汇垫")
#: The verb of an appointment, the point of its day ("下周三约了店长当面谈" and "约的是下周四下午").
_DATE_POINT_VERBS = frozenset("约")


def _clause_words(text: str, start: int, end: int, without: list[Value]) -> set[str]:
    """The point words of ``text[start:end]``: its values (``without``) and the people it names
    left out ("吴志刚" is who, not which value: "吴志" made 借吴志刚壹拾贰万元 the point of a
    repayment's correction), its verbs of money in."""
    clause = text[start:end]
    inside = [v for v in without if start <= v.start and v.end <= end]
    spans = [(v.start - start, v.end - start) for v in inside]
    spans += [(person.start, person.end) for person in read(clause).people]
    verbs = _POINT_VERBS | (_DATE_POINT_VERBS if any(v.kind == "date" for v in inside) else frozenset())
    return point_words(clause, without=spans) | (set(clause) & verbs)


def _cue_clause_words(said: str, value: Value, said_values: list[Value]) -> set[str]:
    """The words of the clause that says what is corrected ("之前说的医疗费不对，…总共是6万4":
    医疗费), when it is in the sentence of ``value`` (a cue of the sentence before names the point
    of that sentence: "万分之五是他记成了…合同的。另外对方…退回来40个" is no correction of 40)."""
    start, end = span_around(said, value.start, value.end, SENTENCE_END_RE)
    words: set[str] = set()
    for cue in (*CORRECTION_CUE_RE.finditer(said, start, end), *RESTATING_RE.finditer(said, start, end),
                *_SAID_WRONG_RE.finditer(said, start, end)):
        clause_start, clause_end = span_around(said, cue.start(), cue.end())
        words |= _clause_words(said, clause_start, clause_end,
                               [v for v in said_values if clause_start <= v.start and v.end <= clause_end])
    return words


#: A clause that says its point was wrong ("还有工期也不对", "地址有误"): its words name the point.
_SAID_WRONG_RE = re.compile(r"(?:也|都)?不对(?![，,]?(?:吧|吗))|有误|搞错了|弄错了")


def _about_another_stored_value(said: str, value: Value, near: list[Value], old_text: str,
                                stored: list[Value], old: Value) -> bool:
    """``value`` is said of another point of the stored note than ``old``'s: "月租是5400不是5200，
    所以押金是两个月10800" names the rent (the note's 月租5200) before the deposit it corrects, and
    the rent is no rival point of the note's 押金10400."""
    words = _own_clause_words(said, value, near) - _GENERIC_WORDS
    return bool(words) and any(
        other is not old and _compatible(other, value)
        and words & (_own_clause_words(old_text, other, stored) - _GENERIC_WORDS)
        for other in stored)


#: The measure word after a count ("24节", "5次", "27个"): counts of other measures are other points.
_COUNTERS = frozenset("节次个件台辆套份张笔期批名位家项条袋箱")


def _counted_apart(said: str, new: Value, old_text: str, old: Value) -> bool:
    """Both values are counts with a measure word after them, and not the same one."""
    if new.kind != "number" or old.kind != "number":
        return False
    mine, theirs = said[new.end:new.end + 1], old_text[old.end:old.end + 1]
    return mine in _COUNTERS and theirs in _COUNTERS and mine != theirs


#: The mark of a point found only by the stored value's whole sentence (``_sentence_of_one_value``).
_TOLD_ANEW = "told anew"


def _sentence_of_one_value(text: str, value: Value, stored: list[Value]) -> tuple[int, int]:
    """The sentence of ``value`` when it holds no other value of its kind ("还有，对方司机昨天打电话，
    说愿意私了，一次性给胡晓峰2万…": who offered is two clauses before the sum), else an empty span."""
    start, end = span_around(text, value.start, value.end, SENTENCE_END_RE)
    if _LATIN_WORD_RE.search(text, start, end) or any(
            v is not value and _compatible(v, value) and start <= v.start and v.end <= end for v in stored):
        return value.start, value.start  # English sentences end at a full stop, which this cut does not know
    return start, end


_LATIN_WORD_RE = re.compile(r"[A-Za-z]{3,}")


def _one_slip(a: Value, b: Value) -> bool:
    """Two sums of four digits or more written with the same digits but one after the first
    ("138,000" for "128,000") or two swapped ("4680" for "4860"): a slip of the pen, the point of a
    correction that names no other. Not "$1,000" for "$2,000": another first digit is another sum."""
    if _kind_of(a) != "amount" or _kind_of(b) != "amount":
        return False
    x, y = (re.sub(r"\D", "", str(int(v.magnitude))) for v in (a, b))
    if len(x) != len(y) or len(x) < 4 or x == y:
        return False
    differ = [i for i in range(len(x)) if x[i] != y[i]]
    if differ[0] == 0 and len(differ) == 1:
        return False
    return len(differ) == 1 or (len(differ) == 2 and differ[1] == differ[0] + 1
                                and x[differ[0]] == y[differ[1]] and x[differ[1]] == y[differ[0]])


def _head(text: str, value: Value) -> set[str]:
    """The character right before ``value`` when it carries a point of its own ("扣" of "要扣2500",
    "欠" of "还欠3000"), and the one right after a length of time ("假" of "请了3天假"): what one
    value is about when the clause has no two-character word for it."""
    before = text[value.start - 1:value.start] if value.start else ""
    after = text[value.end:value.end + 1] if value.kind in _TIME_UNITS else ""
    return {c for c in (before, after) if re.fullmatch(r"[\u4e00-\u9fff]", c) and c not in FUNCTION_CHARS
            and c not in _CALENDAR_CHARS}


#: The kinds of a length of time ("3天", "两个月"): the word after one names its point ("3天假").
_TIME_UNITS = frozenset({"day", "week", "month", "year", "hour"})


#: The last character of a date or a time ("3月12日下午2点", "工作日晚上7点"): no point of a value.
_CALENDAR_CHARS = frozenset("日月年号点时分天周")


def _a_name_in_both(word: str, said: str, old_text: str) -> bool:
    """``word`` opens the same three-character name in both texts ("吴志" of 吴志刚): a person,
    whom the name reader may not know without a cue, is no point of a value."""
    if word[0] not in common_surnames():
        return False
    following = {said[m.end()] for m in re.finditer(re.escape(word), said) if m.end() < len(said)}
    return any(f"{word}{c}" in old_text for c in following)


#: Words two clauses share that name no point: "外贸公司…月收入9000左右" and "保险公司那边又涨到8万5"
#: share 公司, and the income became 8万5 (dev3, judged false).
_GENERIC_WORDS = frozenset({"公司", "那边", "这边", "对方", "现在", "已经", "之前", "后来", "一下", "时候"})


def _another_verb_of_money(old_clause: str, new_clause: str) -> bool:
    """The stored value's clause says what was done with the sum ("保险垫付的1万没错": 垫) and the
    new value's clause does not say it: a raised offer ("又涨到8万5") is no sum advanced."""
    verbs = set(old_clause) & MONEY_VERBS
    return bool(verbs) and not verbs & set(new_clause)


#: A price or a sum agreed: what a payment is measured against, never the payment itself.
_PRICE_RE = re.compile(r"价|总额|标的|合同金额")


def _a_payment_is_no_price(old_clause: str, new_clause: str) -> bool:
    """The new value is a sum paid ("华纶已经付了86万") and the stored one a price with no verb of
    money ("合同价126万"): "前面的数有误" corrects what was paid, not the contract's price (dev4, judged)."""
    return bool(set(new_clause) & _PAYING) and not set(old_clause) & _PAYING \
        and bool(_PRICE_RE.search(old_clause)) and not _PRICE_RE.search(new_clause)


#: Verbs of a sum paid or taken.
_PAYING = MONEY_VERBS | _POINT_VERBS


def _own_point_words(said: str, value: Value, near: list[Value]) -> set[str]:
    """The words of the clause holding ``value`` that name a point, its words of correction or
    change left out ("开庭改到3月12日": 开庭; "准确数是27个": none, the point is said before)."""
    start, end = span_around(said, value.start, value.end)
    clause = said[start:end]
    for cue in (*CORRECTION_CUE_RE.finditer(clause), *RESTATING_RE.finditer(clause)):
        clause = clause[:cue.start()] + " " * (cue.end() - cue.start()) + clause[cue.end():]
    spans = [(v.start - start, v.end - start) for v in near if start <= v.start and v.end <= end]
    spans += [(person.start, person.end) for person in read(clause).people]
    return point_words(clause, without=spans)


def _own_clause_words(said: str, value: Value, near: list[Value]) -> set[str]:
    """The point words of the clause holding ``value`` alone, with the character it follows."""
    start, end = span_around(said, value.start, value.end)
    return _clause_words(said, start, end, near) | _head(said, value)


def _clause_and_the_one_before(text: str, value: Value) -> tuple[int, int]:
    """The span of the clause holding ``value`` and of the clause before it in its sentence."""
    start, end = span_around(text, value.start, value.end)
    sentence_start, _ = span_around(text, value.start, value.end, SENTENCE_END_RE)
    if start > sentence_start:
        start = span_around(text, start - 1, start - 1)[0]
    return max(start, sentence_start), end


#: Words that, beside a value, say it replaces one said before, though alone they correct
#: nothing ("之前说的三百二十万是中介报的价", "实际约定是2026年2月28日", "the amount is now …").
RESTATING_RE = re.compile(
    r"(?:之前|上次|刚才|前面)(?:说|讲|提)的|实际(?:约定|写的|上)?是|准确(?:数|地说|的说)?是|有误|抄错|核实|核对"
    r"|\binstead of\b|\bis now\b|\bnow is\b"
    # a value that changed since ("手机号换了，新号码是…", "月薪现在是8000", "涨到了5200")
    r"|换(?:了|成)|新(?:的)?(?:号码|手机号?|电话|地址|住址)|现在(?:是|改|变)|(?:涨|降|提高|降低)(?:到|为)"
    # an offer raised or lowered ("公司又加到了3万5", "对方司机又降到了1万2")
    r"|(?:又|再)(?:加|减|让|压|提)到",
    re.IGNORECASE,
)
#: Words that confirm a value said again beside the corrected one ("合同金额是4万8没错").
_CONFIRMED_RE = re.compile(r"^\s*(?:没错|没问题|是对的|不变|也对|correct|is right)", re.IGNORECASE)


#: What comes right before a value the client names as the one said before ("比之前说的18万8",
#: "不是4月", "instead of 31 March"); "去年10月还的2万" names an event, not the corrected value.
_SAID_BEFORE_RE = re.compile(r"(?:(?:之前|上次|刚才|前面)(?:说|讲|提)的(?:是)?|不是|而非|并非|以为是|\bnot|\binstead of|\brather than)\s*$",
                             re.IGNORECASE)


#: What comes right after a value the client names as wrong ("10%是马德胜凭印象说的", "4万6是我看反了",
#: "12000是到手的" is no such thing: it is said as true).
_SAID_WRONG_AFTER_RE = re.compile(r"^\s*(?:是[^，。；,;]{0,12}?(?:说错|记错|看反|写错|打错|算错|凭印象|搞错|记成)|不对|有误|错了)")


def _corrected_value(said: str, value: Value) -> bool:
    """The turn names ``value`` as the wrong one after it ("4万6是我把两位数字看反了")."""
    return bool(_SAID_WRONG_AFTER_RE.match(said[value.end:]))


def _named_as_said_before(said: str, value: Value) -> bool:
    return bool(_SAID_BEFORE_RE.search(said[max(0, value.start - 12):value.start]))


#: "其实" corrects only as "其实是": "房东其实要扣押金3000元" tells of a deduction.
_WEAK_CUE_RE = re.compile(r"(?:其实|实际上|事实上)(?![是为])")


def _cued(said: str, value: Value) -> bool:
    """Whether the turn says it corrects something in the sentence of ``value`` or the one before."""
    start, end = span_around(said, value.start, value.end, SENTENCE_END_RE)
    before = span_around(said, start - 1, start - 1, SENTENCE_END_RE)[0] if start else start
    window = _WEAK_CUE_RE.sub("", said[before:end])
    return says_it_corrects(window) or bool(RESTATING_RE.search(window))


#: What tells two like points apart: an ordinal ("第二期", "the second instalment") or an
#: identifier ("TX0002"). A correction of the second instalment is no correction of the first.
_MARKER_RE = re.compile(
    r"第[一二三四五六七八九十\d]+[期次笔个项条份批]|\b(?:first|second|third|fourth|fifth|last)\b|\b[A-Z]{1,5}-?\d{3,}\b",
    re.IGNORECASE,
)


def _other_marker(new_clause: str, old_clause: str) -> bool:
    """Both clauses name their point by an ordinal or identifier, and not by the same one."""
    mine = {m.group(0).lower() for m in _MARKER_RE.finditer(new_clause)}
    theirs = {m.group(0).lower() for m in _MARKER_RE.finditer(old_clause)}
    return bool(mine and theirs and not mine & theirs)


def _garbled(said: str, new_text: str, old: Value) -> bool:
    """The new statement states the stored value as current though the client's words never
    name it ("之前说的押金是6000元，现在修正为5000元" for "我刚才说错了，押金其实是6000元"): a
    model's garbled item, not a correction to use."""
    if any(v.matches(old) for v in values(said)):
        return False
    return any(v.matches(old) and not _named_as_said_before(new_text, v) for v in values(new_text))


#: Words beside a value that say it was a guess ("2000左右", "大概两万", "二十来个"): a later exact
#: value of the same point replaces it with no word of correction ("他当面说要扣2500" after "要扣2000左右").
_GUESS_AFTER_RE = re.compile(r"^(?:来|多|余|左右|上下)")
_GUESS_BEFORE_RE = re.compile(r"大约|大概|差不多|估计|可能|约(?=\d)|\b(?:about|around|roughly|approximately)\b", re.IGNORECASE)


def _a_guess(text: str, value: Value) -> bool:
    """``value`` is said as a guess: a guess word after it, or earlier in its clause."""
    clause_start, _ = span_around(text, value.start, value.end)
    return bool(_GUESS_AFTER_RE.match(text[value.end:]) or _GUESS_BEFORE_RE.search(text[clause_start:value.start]))


def revised_by_slot(said: str, new_text: str, old_text: str) -> tuple[str, str] | None:
    """The stored note ``old_text`` with the value of the point ``said`` corrects replaced by the
    new one, and why — or None (see the module docstring)."""
    if not said.strip():
        return None
    said_values = values(said)
    new_values = values(new_text)
    stored = values(old_text)
    replacements: list[tuple[Value, Value, str]] = []
    for new in said_values:
        if not any(v.matches(new) for v in new_values) or any(v.matches(new) for v in stored):
            continue
        if _named_as_said_before(said, new):
            continue  # "押金是3000不是2000": 2000 is the value rejected, never the new one
        cued = _cued(said, new)
        if not cued and (_a_guess(said, new) or not any(_a_guess(old_text, old) for old in stored)):
            continue
        start, end = _clause_and_the_one_before(said, new)
        if read_mentions(said[span_around(said, new.start, new.end)[0]:end]).people:
            continue  # "我同事李明的月薪其实是8000" is about 李明, not the stored point
        near = [v for v in said_values if start <= v.start and v.end <= end]
        sentence_start, sentence_end = span_around(said, new.start, new.end, SENTENCE_END_RE)
        in_sentence = [v for v in said_values if v is not new and sentence_start <= v.start and v.end <= sentence_end]
        words = _clause_words(said, start, end, near) | _head(said, new)
        cue_words = _cue_clause_words(said, new, said_values) if cued else set()
        words |= cue_words
        own_point = _own_point_words(said, new, near)
        fits, wide_fits, slips = [], [], []
        for old in stored:
            if not _compatible(old, new) or old.matches(new) or not (cued or _a_guess(old_text, old)):
                continue
            if _named_as_said_before(old_text, old):
                continue  # "更正：月租是5400元，不是5200元": 5200 is the note's rejected value, no point of it
            if _counted_apart(said, new, old_text, old):
                continue  # "上了5次" is no correction of "私教课24节": sessions attended, not bought
            told = [v for v in near if v is not new and _compatible(v, new) and not _CONFIRMED_RE.match(said[v.end:])
                    and not _about_another_stored_value(said, v, near, old_text, stored, old)]
            if told and not any(v.matches(old) for v in told):
                continue  # "他说的12000是到手的，税前月薪是15000": 12000 is the point, not this note's 9000
            again = [v for v in near if v is not new and v.matches(old)]
            if any(_CONFIRMED_RE.match(said[v.end:]) for v in again):
                continue  # "合同金额是4万8没错": the stored value is confirmed, not corrected
            if old.kind == "date" and any(v.matches(old) and not _named_as_said_before(said, v)
                                          and not _corrected_value(said, v) for v in said_values if v is not new):
                continue  # "住院应该是15天，1月8号进去，1月23号出院": the day 1月8日 is said again, not corrected
            # "价格最后谈到18万2，比之前说的18万8便宜了6000": the corrected value named in its sentence
            named = [v for v in in_sentence if v.matches(old) and _named_as_said_before(said, v)]
            clause_start, clause_end = span_around(old_text, old.start, old.end)
            if _other_marker(said[start:end], old_text[clause_start:clause_end]) or _garbled(said, new_text, old):
                continue
            if another_money_point(old_text, old.start, said) or _another_verb_of_money(
                    old_text[clause_start:clause_end], said[start:end]) or _a_payment_is_no_price(
                    old_text[clause_start:clause_end], said[span_around(said, new.start, new.end)[0]:end]):
                continue
            if cued and _one_slip(old, new):
                slips.append(old)
            # the stored value's clause; failing that, with the one before ("保险公司理赔员…打电话来，
            # 说可以一次性赔6万了结"). A guess made exact with no word of correction is held to the two
            # values' own clauses: "月收入9000左右" is no point of "保险公司…说可以一次性赔6万" (公司).
            spans = (span_around(old_text, old.start, old.end), _clause_and_the_one_before(old_text, old),
                     _sentence_of_one_value(old_text, old, stored))
            point_words_said = words if cued else _own_clause_words(said, new, near)
            for wide, (point_start, point_end) in enumerate(spans if cued else spans[:1]):
                others = [v for v in stored if point_start <= v.start and v.end <= point_end]
                shared = point_words_said & (_clause_words(old_text, point_start, point_end, others)
                                             | _head(old_text, old))
                if wide == 2:  # the whole sentence only for the words the correction's cue clause names
                    shared &= cue_words
                if named:  # "比之前说的18万8便宜了6000": the corrected value is named beside the new one
                    shared = shared | {old.text}
                shared = {word for word in shared if not _a_name_in_both(word, said, old_text)} - _GENERIC_WORDS
                if shared and own_point and not named and not shared & (own_point | cue_words):
                    break  # "仲裁委发了通知，开庭改到3月12日": 开庭 is the point, not the 通知 of a dismissal
                if shared:
                    (wide_fits if wide else fits).append((old, shared | ({_TOLD_ANEW} if wide == 2 else set())))
                    break
        if not fits:
            fits = wide_fits
        if not fits and len(slips) == 1:  # "Sorry, I meant RMB 128,000" for the stored 138,000
            fits = [(slips[0], {f"{slips[0].text}→{new.text}"})]
        fits = _one_value(fits)
        if len(fits) > 1:  # the words of the value's own clause decide ("开庭改到3月12日" after "仲裁委发了通知")
            own = _own_clause_words(said, new, near)
            fits = _one_value([(old, shared & own) for old, shared in fits if shared & own])
        if len(fits) != 1 or any(old is fits[0][0] for old, _new, _why in replacements):
            continue
        old, shared = fits[0]
        replacements.append((old, new, f"the client corrects {'、'.join(sorted(shared))}: {old.text} is now "
                                       f"{new.text} (“{said[start:end][:60]}”)"))
    if not replacements:
        return None
    if len(replacements) == 1 and _TOLD_ANEW in replacements[0][2]:
        # an offer raised or lowered is told anew ("对方司机又降到了1万2，说保险会赔大头"): the new
        # statement replaces the old one, whose other words ("让胡晓峰别找保险公司") were the old offer's
        return new_text, replacements[0][2]
    # every value the turn corrects ("开庭改到3月12日下午2点": the day and the hour), from the end
    # of the note so that the earlier spans stay where they are; the day as resolved when it was
    # noted ("2月27日（2026年2月27日）") goes with the day it restated
    revised = old_text
    for old, new, _why in sorted(replacements, key=lambda r: -r[0].start):
        resolved = RESOLVED_DAY_RE.match(revised, old.end)
        if resolved and _the_day_in(resolved.group(1), old):
            revised = revised[:resolved.start()] + revised[resolved.end():]
        said_day, noted_day = _relative_day(said, new), _relative_day(revised, old)
        if said_day and noted_day:  # "下周三（2026年2月25日）" is now "下周四（2026年2月26日）"
            revised = revised[:noted_day.start()] + said_day.group(0) + revised[noted_day.end():]
            continue
        revised = replaced_in(revised, old, new)
    return revised, "; ".join(why for _old, _new, why in replacements)


#: A relative day said with the day it was resolved to, and the part of the day said after it:
#: "下周三（2026年2月25日）", "下周四（2026年2月26日）下午".
RELATIVE_DAY_RE = re.compile(r"(?:(?:下下|下个?|这个?|本|上个?)?(?:周|星期|礼拜)[一二三四五六日天]|明天|后天|大后天|今天|昨天|前天)"
                              r"（[^（）]{4,20}）(?:上午|中午|下午|傍晚|晚上|早上)?")


def _relative_day(text: str, value: Value) -> re.Match[str] | None:
    """The relative day and its resolution in brackets holding ``value``, if it is one."""
    for match in RELATIVE_DAY_RE.finditer(text):
        if match.start() < value.start and value.end < match.end():
            return match
    return None


#: The day a relative or partial date was resolved to when it was noted: "（2026年2月27日）".
RESOLVED_DAY_RE = re.compile(r"（([^（）]{4,20})）")


def _the_day_in(text: str, day: Value) -> bool:
    """Whether ``text`` states the same day as ``day``."""
    return any(v.matches(day) for v in values(text))


def _one_value(fits: list) -> list:
    """A day and its resolved form ("2月27日（2026年2月27日）") are one value of the note: the first."""
    if len(fits) > 1 and all(old.kind == "date" and old.matches(fits[0][0]) for old, _shared in fits):
        return fits[:1]
    return fits
