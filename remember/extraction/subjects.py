"""Who a Chinese note is about, written as a lawyer would write it (issue 50): a note names the
client, or the lawyer when the lawyer speaks of their own plans, and never "用户" or "alice说".

The engines write the speaker's "我" as "用户" and unclassified words as "alice说：…"; a lawyer
reading *My memory* a month later cannot tell from "用户" whether the client or a colleague
is meant, and "alice" is an account, not a party. Who said it is the note's provenance
(``Note.speaker``, its source messages); the text says whom the fact is about.

The rewriting is a table of named rules (``SUBJECT_RULES``), applied in order after the
client has been named (``grounding.with_names``): each rule has a name, one line of why, and
a function over the note's text and the turn's ``Party``. ``manage.py rules`` lists them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from legaltext import read
from memory.rules import Rule, register

from . import lexicon
from .grounding import TurnText
from .items import MAX_CONTENT_CHARS, ExtractedItem

#: How a lawyer speaks of the person whose matter it is.
CLIENT_WORD_RE = re.compile(r"客户(?!端)|当事人|委托人|\b(?:my|our) client\b", re.IGNORECASE)
#: "用户" as the engines write the speaker (not "用户名", "用户端", "用户协议").
_SPEAKER_RE = re.compile(r"用户(?!名|端|协议)")
#: The reported-speech frame of an unclassified statement: "alice说：", "用户说：".
_FRAME_RE = re.compile(r"^(?:[A-Za-z0-9_.@\-]{1,40}|用户|客户)说：")
#: "用户的客户林晓雯": the lawyer's words about their client, as the engines rewrite "我的客户".
_RELAY_RE = re.compile(r"(?:用户|律师)(?:的|这边的|那位)?(?:客户|当事人|委托人)")
#: Labels the engines put before a subject-less claim or preference.
_LABEL_RE = re.compile(r"^用户(诉求|偏好)：")


#: "林晓雯的事情跟你说一下", "Quick update on 何建军's case": a lawyer opening a client's matter
#: by the client's name.
MATTER_OF_RE = re.compile(r"的(?:事情|事儿|案子|案件|纠纷)|['’]s (?:case|matter)")


#: What follows a client's name that opens a lawyer's message about them ("何建军是杭州禾丰食品有限公司
#: 的老板…合同我传上来了", "林晓雯的租房合同我扫描传上来了"): the speaker's "我" is then someone else.
#: Not "王磊是我房东": a name the speaker relates to themselves is the other party.
_OPENS_ON_RE = r"(?:是(?!我|俺)|说|的(?!我)|家|那边|这边|今天|昨天|刚才?|又)"


@lru_cache(maxsize=256)
def relayed_clients(text: str) -> tuple[str, ...]:
    """The names a lawyer gives their client in ``text`` ("我的客户林晓雯", "当事人叫王磊",
    "林晓雯的事情…", a message opening on the client's name: "何建军是…的老板"); cached: every
    item of a turn asks about the same message."""
    names = list(dict.fromkeys([*lexicon.person_names(text), *(person.text for person in read(text).people)]))
    opening = text.lstrip()
    opens_on = [name for name in names if re.match(rf"{re.escape(name)}{_OPENS_ON_RE}", opening)]
    if not CLIENT_WORD_RE.search(text) and not MATTER_OF_RE.search(text) and not opens_on:
        return ()
    return tuple(name for name in names
                 if name in opens_on or re.search(rf"(?:客户|当事人|委托人)(?:叫|是|名叫)?{re.escape(name)}"
                                                  rf"|{re.escape(name)}(?:{MATTER_OF_RE.pattern})", text))


@dataclass(frozen=True)
class Party:
    """Whom the turn's "我" means: the client speaking for themselves, or a lawyer relaying
    a client's matter (``lawyer_speaks``); ``client`` is the client's name, "" when unknown."""

    client: str
    lawyer_speaks: bool

    @classmethod
    def of(cls, turn: TurnText) -> "Party":
        if turn.client_name and not turn.relayed_client and not CLIENT_WORD_RE.search(turn.user_msg):
            # the speaker gave their own name before ("还是我，周婷婷"): a client speaking for
            # themselves, and "林川的片子我看了几套" opens on a photographer's name, not on a client relayed
            return cls(client=turn.client_name, lawyer_speaks=False)
        relayed = relayed_clients(turn.user_msg)
        lawyer = bool(CLIENT_WORD_RE.search(turn.user_msg)) or bool(relayed) or bool(turn.relayed_client)
        # the matter's client, once a lawyer named them, stays the client: "邓浩昨天回微信了" in 孟雪's
        # matter opens on the other side's name
        client = turn.relayed_client or (relayed[0] if len(relayed) == 1 else turn.client_name)
        return cls(client=client, lawyer_speaks=lawyer)

    @property
    def client_word(self) -> str:
        """How a note calls the client: by name, else "当事人" (the party)."""
        return self.client or "当事人"

    @property
    def speaker_word(self) -> str:
        """How a note calls the speaker of the user message."""
        return "律师" if self.lawyer_speaks else self.client_word


@dataclass(frozen=True)
class SubjectRule:
    """One named rewriting of a note's subject."""

    name: str
    why: str | Promise
    rewrite: Callable[[str, Party], str]


def _drop_frame(text: str, party: Party) -> str:
    return _FRAME_RE.sub("", text, count=1)


def _relayed_client(text: str, party: Party) -> str:
    def named(match: re.Match[str]) -> str:
        rest = text[match.end():]
        return "" if party.client and rest.startswith(party.client) else party.client_word
    return _RELAY_RE.sub(named, text)


def _labels(text: str, party: Party) -> str:
    def label(match: re.Match[str]) -> str:
        owner = party.client_word if match.group(1) == "诉求" or not party.lawyer_speaks else party.speaker_word
        return "" if owner in text[match.end():] else f"{owner}{match.group(1)}："
    return _LABEL_RE.sub(label, text, count=1)


def _speaker(text: str, party: Party) -> str:
    return _SPEAKER_RE.sub(party.speaker_word, text)


SUBJECT_RULES: tuple[SubjectRule, ...] = (
    SubjectRule("reported-speech-frame",
                _("Who said it is the note's source; a login such as \"alice说：\" in its text names an account, "
                  "not a party."),
                _drop_frame),
    SubjectRule("relayed-client",
                _("\"我的客户林晓雯…\" is a lawyer relaying: the fact is the client's, under her name."),
                _relayed_client),
    SubjectRule("claim-and-preference-owner",
                _("A claim is the client's; a preference is its speaker's, named."),
                _labels),
    SubjectRule("speaker-by-role",
                _("\"我\" is the client when the client speaks and the lawyer when a lawyer relays a client's "
                  "matter; a note never says \"用户\"."),
                _speaker),
)
#: The table ``manage.py rules`` lists these under.
TABLE = "wording"
for _rule in SUBJECT_RULES:
    register(Rule(TABLE, _rule.name, _rule.why, lambda pair, rewrite=_rule.rewrite: rewrite(*pair)))


def named_subjects(content: str, turn: TurnText) -> str:
    """``content`` with every ``SUBJECT_RULES`` rule applied: Chinese notes of a consultation
    only (an English note names its speaker already, "Caroline said they …")."""
    if turn.reply_is_person:
        return content  # between two people (an imported chat) "alice说：" is who of the two spoke
    if not re.search(r"[\u4e00-\u9fff]", content):
        return english_subject(content, turn)
    party = Party.of(turn)
    for rule in SUBJECT_RULES:
        content = rule.rewrite(content, party)
    return content


def english_subject(content: str, turn: TurnText) -> str:
    """An English note of a consultation without the account's login: "client_b said …" is
    who typed it (the note's source); the text names the client, or says "the client"."""
    login = turn.user_name.strip()
    if not login or re.search(r"\s", login):
        return content
    who = Party.of(turn).client or "the client"
    said = re.compile(rf"^(?:{re.escape(login)} said:?\s*)+", re.IGNORECASE)
    content = said.sub("", content, count=1)
    content = re.sub(rf"\b{re.escape(login)}['’]s\b", f"{who}'s", content)
    content = re.sub(rf"\b{re.escape(login)}\b", who, content)
    return content[:1].upper() + content[1:] if content else content


def with_named_subject(item: ExtractedItem, turn: TurnText) -> ExtractedItem:
    """``item`` with its text's subject named (``named_subjects``)."""
    content = named_subjects(item.content, turn)[:MAX_CONTENT_CHARS]
    return item if content == item.content else replace(item, content=content)
