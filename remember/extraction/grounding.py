"""Whether an extracted item is true to its turn: who said it, and that its speaker said it.

A small model reading a turn files the assistant's sums as the client's facts, answers the
client's question in the client's name ("这合法吗？" → "…这不合法。"), keeps half a sentence,
and writes "用户" for a client the turn names (issue 30). The checks here compare one item
with the turn's text (``TurnText``); ``items.validate_items`` applies them and records the
reason for every item it refuses (docs/write-path.md, "Speaker rules").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from legaltext.acts import ASKS_RE
from legaltext.acts import is_question as clause_asks
from legaltext.dates import DateParts, calendar_dates, date_parts
from legaltext.numbers import LONG_DIGITS_RE, amount_value, chinese_number, normalised, number_values
from legaltext.sentences import plain_sentences
from legaltext import read
from legaltext.values import values
from legaltext.words import point_words, share_said
from memory.segmentation import is_common_word

from . import lexicon

#: Speaker names that mean the product's assistant rather than a second person.
ASSISTANT_NAMES = frozenset({"", "assistant", "ai", "bot", "system", "助手"})

#: Shortest sentence kept: Chinese content needs this many characters (a Latin word or a
#: number counts as one), content without Chinese this many words.
MIN_CJK_CHARS = 6
MIN_ENGLISH_WORDS = 3


@dataclass(frozen=True)
class TurnText:
    """What was said in the turn an item was extracted from.

    ``user_name`` / ``reply_name`` are the speakers as stored on the messages; a reply
    without a name (live chat) or named like the assistant is the product's answer, a
    named reply (an imported conversation between two people) is a person's words.
    ``client_name`` is the name the user message's speaker gave earlier in the matter ("我叫王磊"),
    for a turn that names nobody (``remember.client_name``); ``said_on`` the day it was said.
    """

    user_msg: str
    reply: str = ""
    user_name: str = ""
    reply_name: str = ""
    client_name: str = ""
    said_on: date | None = None
    #: The client a lawyer named earlier in the matter ("我的客户林晓雯…"): ``remember.client_name``.
    relayed_client: str = ""

    @property
    def reply_is_person(self) -> bool:
        """Whether the reply is a second person's words rather than the assistant's."""
        return (self.reply_name or "").strip().lower() not in ASSISTANT_NAMES

    def said_by(self, speaker: str) -> str:
        """The text of ``speaker`` ("user", "assistant", or "turn" for both messages)."""
        if speaker == "user":
            return self.user_msg
        if speaker == "assistant":
            return self.reply
        return f"{self.user_msg}\n{self.reply}"

    @property
    def persons_text(self) -> str:
        """What people said: the user's message, and the reply when a person wrote it."""
        return self.said_by("turn") if self.reply_is_person else self.user_msg

    @property
    def persons(self) -> str:
        """How a reason calls those people ("the client", or "Caroline or Melanie")."""
        if not self.reply_is_person:
            return "the client"
        return " or ".join(name for name in (self.user_name, self.reply_name) if name) or "the speakers"


# --- fragments ------------------------------------------------------------------------------

_CJK_RE = re.compile(r"[\u4e00-\u9fff]")
_WORD_RE = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?|\d[\d,.]*")


def fragment_reason(content: str) -> str | None:
    """Why ``content`` is not a self-contained sentence, or None: it ends with a colon (it only
    introduces what follows: "…可以按照以下方式进行主张："), or it is shorter than
    ``MIN_CJK_CHARS`` Chinese characters / ``MIN_ENGLISH_WORDS`` words ("提出违约")."""
    if content.rstrip().endswith(("：", ":")):
        return "a fragment: it ends with a colon, introducing what is not there"
    words = len(_WORD_RE.findall(content))
    cjk = len(_CJK_RE.findall(content))
    if cjk and cjk + words < MIN_CJK_CHARS:
        return f"a fragment, not a sentence (under {MIN_CJK_CHARS} characters)"
    if not cjk and words < MIN_ENGLISH_WORDS:
        return f"a fragment, not a sentence (under {MIN_ENGLISH_WORDS} words)"
    return None


# --- questions --------------------------------------------------------------------------------

#: Yes/no verdicts, grouped so that "合法吗？" and "不合法" / "违法" are one question.
_VERDICTS: tuple[re.Pattern[str], ...] = (
    re.compile(r"合法|违法|非法|\b(?:il)?legal\b|\b(?:un)?lawful\b", re.IGNORECASE),
    re.compile(r"有效|无效|\b(?:in)?valid\b", re.IGNORECASE),
    re.compile(r"违约|\bbreach", re.IGNORECASE),
    re.compile(r"侵权|\binfring", re.IGNORECASE),
    re.compile(r"合规|违规"),
    re.compile(r"合理|\b(?:un)?reasonable\b", re.IGNORECASE),
)


def sentences(text: str) -> list[str]:
    """Sentences of ``text``, split at Chinese and Latin terminators and line breaks."""
    return plain_sentences(text)


def is_question(sentence: str) -> bool:
    """A sentence that asks ("这合法吗？", "押金是否该退", "Is this legal?")."""
    return bool(ASKS_RE.search(sentence))


def asserted_question(content: str, said: str) -> str | None:
    """The question of ``said`` that ``content`` turns into an assertion, or None.

    The rule is kept simple: ``content`` states a yes/no verdict (legal, valid, a breach …),
    and every sentence of its speaker that mentions that verdict is a question — the speaker
    only asked, so the item's answer is nobody's statement. A verdict its speaker stated, or
    that its speaker never mentioned, is not this rule's business.
    """
    if is_question(content):
        return None
    said_sentences = sentences(said)
    for verdict in _VERDICTS:
        if not verdict.search(content):
            continue
        mentions = [s for s in said_sentences if verdict.search(s)]
        if mentions and all(is_question(s) for s in mentions):
            return mentions[0]
    return None


# --- numbers and dates: read by ``legaltext`` -------------------------------------------------

_normalised = normalised
_ID_RE = LONG_DIGITS_RE
_RELATIVE_EDGES_RE = re.compile(r"^(?:约|大约|大概|将近|不到|超过)|(?:以后|以前|之后|之前|以来|左右|后|前|内|多)$")


def _date_said(parts: DateParts, said_dates: list[DateParts]) -> bool:
    """Every part the item writes is written, the same, in one date of the turn."""
    return any(all(mine is None or mine == theirs for mine, theirs in zip(parts, other)) for other in said_dates)


def unsaid_number(content: str, said: str) -> str | None:
    """The first amount, date or ID-like number of ``content`` that ``said`` does not state, or
    None. Amounts compare by value ('8,000元' = '8000元' = '八千元'), calendar dates by their
    parts (the item may leave out the year, not add one), relative dates ('约两周', '上周三')
    and runs of five or more digits as written."""
    values = number_values(said)
    for amount in lexicon.extract_amounts(content):
        value = amount_value(amount)
        if value is not None and value not in values:
            return amount
    compact_said = re.sub(r"\s+", "", _normalised(said)).lower()
    said_dates = calendar_dates(said)
    for phrase in lexicon.extract_dates(content):
        parts = date_parts(phrase)
        if parts is not None:
            if not _date_said(parts, said_dates):
                return phrase
        elif _RELATIVE_EDGES_RE.sub("", re.sub(r"\s+", "", _normalised(phrase)).lower()) not in compact_said:
            return phrase
    bare = lexicon.AMOUNT_RE.sub(" ", lexicon.DATE_RE.sub(" ", _normalised(content)))
    said_ids = set(_ID_RE.findall(_normalised(said)))
    return next((number for number in _ID_RE.findall(bare) if number not in said_ids), None)


# --- names ------------------------------------------------------------------------------------

#: How an item may call the person the turn is about.
#: ("当事人" is left alone: statutes use it for anyone.)
_PERSON_WORDS_RE = re.compile(r"该用户|用户(?!名|端|协议)|该客户|客户(?!端)|\b[Tt]he (?:user|client)\b")
#: How a lawyer speaks of their client.
_CLIENT_WORDS_RE = re.compile(r"客户(?!端)|\b(?:my|our) client\b", re.IGNORECASE)
#: How an item may call the speaker of the user message.
_USER_WORDS_RE = re.compile(r"该用户|用户(?!名|端|协议)|\b[Tt]he user\b")


#: The offline engine's "用户叫王磊，…" for "我叫王磊，…": the name becomes the subject.
_INTRODUCTION_RE = re.compile(r"(^|[：:]\s*)(?:该)?用户(?:叫|名叫|是)([\u4e00-\u9fff]{2,4}?)(?=[，,])")


#: "我叫王磊", "我是王磊", "我的名字是王磊", "本人王磊", "还是我，周婷婷": the speaker's name follows the phrase.
SELF_INTRODUCTION_RE = re.compile(r"(?:我叫|我名叫|我的名字(?:是|叫)|我是|本人(?:是|叫)?|还是我[，,、]\s*)([\u4e00-\u9fff]{2,3})")


#: "My name is Claire Donovan", "I'm Claire Donovan": capitalised words after the phrase — after
#: "I'm" / "I am" at least two (a first and a last name: "I'm Canadian" names nobody).
ENGLISH_SELF_INTRODUCTION_RE = re.compile(
    r"\b(?:(?i:my name is)\s+(?P<named>[A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+){0,2})"
    r"|(?i:i[’']m|i am)\s+(?P<full>[A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+){1,2}))\b"
)
#: Capitalised words that are a title, a role or a nationality, not a name: "I'm Senior Counsel
#: at Hongbo" introduces nobody.
NOT_NAME_WORDS = frozenset({
    "senior", "junior", "chief", "head", "general", "legal", "counsel", "manager", "director", "partner",
    "associate", "lead", "principal", "product", "design", "sales", "project", "engineer", "officer",
    "president", "vice", "executive", "assistant", "secretary", "founder", "owner", "consultant",
    "canadian", "chinese", "american", "british", "english", "french", "german", "australian",
    "the", "a", "an", "mr", "ms", "mrs", "dr", "not", "just", "still", "now", "here", "back", "sorry",
})


def introduced_names(text: str) -> list[str]:
    """Names ``text`` introduces its speaker by: the words after "我叫 / 我是 / 本人" that
    jieba also calls a person ("我是宁波峰华公司的法务" introduces nobody), or the capitalised
    words after "My name is / I'm" that are no title, role or nationality."""
    found: list[str] = []
    if text and SELF_INTRODUCTION_RE.search(text):
        names = lexicon.person_names(text)
        for match in SELF_INTRODUCTION_RE.finditer(text):
            name = next((n for n in names if match.group(1).startswith(n)), None) or next(
                (person.text for person in read(text).people if person.start == match.start(1)), None)
            if name and name not in found:
                found.append(name)
    for match in ENGLISH_SELF_INTRODUCTION_RE.finditer(text or ""):
        name = match.group("named") or match.group("full")
        words = name.split()
        possessive = words[-1].endswith(("'s", "’s"))  # "I'm Claire Donovan's assistant": not her name
        if name not in found and not possessive and not any(word.lower() in NOT_NAME_WORDS for word in words):
            found.append(name)
    return found


def _introduction_as_name(content: str, names: set[str]) -> str:
    """"用户叫王磊，…" → "王磊，…" when 王磊 is one of ``names`` (the speaker's own)."""
    match = _INTRODUCTION_RE.search(content)
    if match is None or match.group(2) not in names:
        return content
    return content[: match.start()] + match.group(1) + match.group(2) + content[match.end():]


def _login_as_name(content: str, login: str, name: str) -> str:
    """The speaker's login ("c_donovan", which English notes use for "I") replaced by the name
    they introduced themselves by, as a whole word."""
    login = (login or "").strip()
    if not login or login == name:
        return content
    return re.sub(rf"(?<!\w){re.escape(login)}(?!\w)", lambda _match: name, content)


def with_names(content: str, turn: TurnText) -> str:
    """``content`` with the person the turn is about named, in this order:

    - the user message introduces its speaker ("我叫王磊…"): "用户" / "客户" / "the user" / "the
      client" becomes that name, except "客户" when the speaker speaks of a client ("我是范晓，
      客户孙立强…": a lawyer, whose client is someone else);
    - the speaker gave a name earlier in the matter (``turn.client_name``): the same, with it;
    - in both cases the speaker's login, which English notes use for "I", becomes the name too;
    - the message names one person jieba's dictionary does not know as a common word ("余杭"):
      "用户" / "客户" / "the user" / "the client" becomes that name;
    - in a conversation between two people, the user message's speaker (live chat's speaker is
      the lawyer's login, not the client, so it names nobody).

    "用户叫王磊，月租金…" (also after "alice说：") becomes "王磊，月租金…". Several names, or
    content that already holds the name, leave the content as it is."""
    introduced = introduced_names(turn.user_msg)
    content = _introduction_as_name(content, {*introduced, turn.client_name} - {""})
    names = lexicon.person_names(turn.user_msg)
    # A speaker who talks of "客户" is a lawyer: their client is someone else.
    speakers_words = _USER_WORDS_RE if _CLIENT_WORDS_RE.search(turn.user_msg) else _PERSON_WORDS_RE
    if len(introduced) == 1:
        name, words = introduced[0], speakers_words
        content = _login_as_name(content, turn.user_name, name)
    elif not introduced and turn.client_name:
        name, words = turn.client_name, speakers_words
        content = _login_as_name(content, turn.user_name, name)
    elif len(names) == 1 and not is_common_word(names[0]):
        name, words = names[0], _PERSON_WORDS_RE
    elif not names and turn.reply_is_person and turn.user_name.strip():
        name, words = turn.user_name.strip(), _USER_WORDS_RE
    else:
        return content
    if name in content:
        return content
    return words.sub(name, content)


# --- whose words --------------------------------------------------------------------------------

#: How much of an item's words its speaker must have said: below it, nobody in the turn said
#: the item (generic legal text a model wrote for a question, "被告所在地的法院" said by nobody).
MIN_SHARE_SAID = 0.3
#: An item filed as the client's whose words are this much the answer's, and this much more the
#: answer's than the client's, is the answer's ("建议您先书面催告…" filed as alice's claim).
ANSWER_WORDED_SHARE = 0.6
ANSWER_WORDED_MARGIN = 0.3
#: Fewer words than this say too little to tell whose they are.
MIN_WORDS_TO_JUDGE = 4


def own_words(content: str, turn: TurnText) -> set[str]:
    """The words of an item that carry its point: not the names of the people, not its values
    (``numbers-were-said`` checks those), not its statutes (``statutes-were-cited``)."""
    text = content
    for name in {turn.client_name, turn.user_name, turn.relayed_client, turn.reply_name} - {""}:
        text = text.replace(name, " ")
    text = _PERSON_WORDS_RE.sub(" ", text)
    reading = read(text)
    return point_words(text, without=[(found.start, found.end)
                                      for found in (*values(text), *reading.statutes, *reading.articles)])


@dataclass(frozen=True)
class WhoseWords:
    """How much of an item's words each message of its turn says."""

    words: int
    in_message: float
    in_reply: float

    @property
    def judged(self) -> bool:
        return self.words >= MIN_WORDS_TO_JUDGE

    @property
    def worded_as_answer(self) -> bool:
        return (self.judged and self.in_reply >= ANSWER_WORDED_SHARE
                and self.in_reply - self.in_message >= ANSWER_WORDED_MARGIN)

    @property
    def said_by_nobody(self) -> bool:
        return self.judged and max(self.in_message, self.in_reply) < MIN_SHARE_SAID


def whose_words(content: str, turn: TurnText) -> WhoseWords:
    """The share of ``content``'s words in the user's message and in the reply."""
    words = own_words(content, turn)
    return WhoseWords(len(words), share_said(words, turn.user_msg), share_said(words, turn.reply) if words else 0.0)


def states_nothing(message: str) -> bool:
    """A message that only asks: every clause a question or too short to state anything
    ("房东有哪些权利？那我能要求他做什么？"), no value in it. Nothing in it is the client's fact."""
    if not message.strip() or values(message):
        return False
    clauses = [c.strip() for c in _CLAUSE_RE.findall(message) if c.strip()]
    asks = [c for c in clauses if is_question(c) or clause_asks(c)]
    return bool(asks) and all(c in asks or len(point_words(c)) < 2 for c in clauses)


_CLAUSE_RE = re.compile(r"[^，,。.！!？?；;\n]+[，,。.！!？?；;\n]*")

#: A clause that only announces material or news, or asks the assistant to look: "合同我传上来了",
#: "原文贴一下", "林晓雯那边有新情况", "你帮忙看看", "我先跟她说一声", "Again, two updates".
_ANNOUNCES_RE = re.compile(
    r"(?:传|发|贴|拍|扫描|转)(?:了)?(?:上来|过来|给你|给助手|一下|到你|助手|你)|(?:发|传)(?:到)?(?:你|助手)的?邮箱"
    r"|有(?:个|些)?新(?:情况|进展|消息|的情况|的进展)|(?:你|助手)(?:帮忙|帮我)?看(?:一)?看|帮(?:忙|我)看(?:一)?看|先跟[她他][^，。]{0,4}说一声"
    r"|^[^，。,]{2,6}要用[。.]?$|\b(?:two|some|a few|an?) (?:updates?|news)\b|\bhere (?:is|are) the\b"
    # "吴佩琳物业费的事有两个更新", "韩立军的事有几个变化", and a bare assent: "就按这个思路", "就照您说的办"
    r"|有(?:[一两二三四五几]|\d)(?:个|处|件|点)(?:更新|变化|进展|新情况|情况)"
    r"|^(?:好的?|行|可以|没问题)?[，,]?(?:那)?就?(?:按|照)(?:这个|你说的|您说的)(?:思路|办|来|方案)",
    re.IGNORECASE,
)


def only_announces(content: str) -> bool:
    """Every clause of ``content`` announces material or news, or asks the assistant to look,
    and none holds a value: "郑国强的劳动合同传上来了", "HR今天发来一封邮件，原文贴一下"."""
    if values(_ANNOUNCES_RE.sub(" ", content)):  # "有两个更新" counts the news, it states no value
        return False
    clauses = [c.strip() for c in _CLAUSE_RE.findall(content) if c.strip()]
    return bool(clauses) and all(_ANNOUNCES_RE.search(c) or len(point_words(c)) < 2 for c in clauses) \
        and any(_ANNOUNCES_RE.search(c) for c in clauses)


_CLAUSE_PUNCT_RE = re.compile(r"[。，,.！!？?；;：:、\s]+")


def cut_clause(content: str, turn: TurnText) -> str | None:
    """The sentence of the user's message that ``content`` only cuts a part of, when that part
    loses what it is about: it opens with a pronoun whose person is in the part left out ("他答应
    这钱他出，到现在还欠着我"), or it names no thing and holds a value without its point ("我花了
    800元" of "热水器…我花了800元，他答应这钱他出") or the client as an object without the subject
    ("到现在还欠着我"). None when the item is not such a cut."""
    core = content
    for name in {turn.client_name, turn.user_name, turn.relayed_client, *introduced_names(turn.user_msg)} - {""}:
        core = core.replace(name, "")
    core = _CLAUSE_PUNCT_RE.sub("", _PERSON_WORDS_RE.sub("", core))
    if not core or len(core) > 40:
        return None
    for sentence in plain_sentences(turn.user_msg):
        whole = _CLAUSE_PUNCT_RE.sub("", sentence)
        plain = whole.replace("我们", "").replace("我", "")
        if core not in plain or len(core) >= len(plain) or len(_CLAUSE_PUNCT_RE.split(sentence.strip("。！!？?；;"))) < 2:
            continue
        if core.startswith(_DANGLING_PRONOUNS):
            return sentence
        if lexicon.names_a_thing(core):
            return None
        if values(core) or f"{core}我" in whole:
            return sentence
    return None


#: Words that stand for a person or thing named elsewhere: a part of a sentence opening with one
#: has lost it.
_DANGLING_PRONOUNS = ("他", "她", "它", "这", "那")
