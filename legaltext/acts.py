"""What a sentence does: asks (question), tells (statement), wants (wish), intends (plan),
states how the assistant should answer from now on (preference), or corrects what was said
before (correction). Chinese and English; a sentence has one act, the first that applies in
``ACTS`` order.
"""
from __future__ import annotations

import re

from .corrections import CORRECTION_RE, corrections
from .language import detect_language
from .sentences import sentence_spans
from .words import FUNCTION_CHARS

ACTS = ("correction", "question", "preference", "wish", "plan", "statement")

#: A Chinese clause that asks ('那我现在该咋办', '这是不是拖时间'), read without its final punctuation.
ZH_QUESTION_RE = re.compile(
    r"(?:吗|么|呢)$|怎么办|咋办|咋整|怎么弄|怎么处理|该怎么|该如何|如何处理|如何是好|能不能|可不可以|可以吗|"
    r"行不行|是不是|有没有用|要不要|该不该|会不会|为什么|为啥|凭什么|怎么样|多少钱|什么时候|哪里|哪儿|哪个|哪些|啥"
)
#: An English sentence that asks without a question mark ("I wonder if …", "Tell me why …").
EN_QUESTION_RE = re.compile(
    r"^(?:i (?:wonder|was wondering)|do you know|did you know whether|any idea|tell me (?:what|why|how|when|where|who))\b",
    re.IGNORECASE,
)
#: A sentence that asks ("这合法吗？", "押金是否该退", "Is this legal?"): how the verdict checks
#: read a turn's questions.
ASKS_RE = re.compile(
    r"[?？]\s*$|[吗呢么嘛][。.!！\s]*$|是否|是不是|合不合|算不算|有没有|能不能|可不可以|对不对|违不违"
)
#: What else makes a sentence a question for the reader's act: asking for a quantity, or an
#: English sentence opening with a question word or an auxiliary.
_ASKS_MORE_RE = re.compile(
    r"多少|几[个天月年次]"
    r"|^(?:what|why|how|when|where|who|which|is|are|was|were|do|does|did|can|could|should|would|will|may)\b",
    re.IGNORECASE,
)
_TRAILING_PUNCT_RE = re.compile(r"[，,、；;：:。.！!？?…‼⁉\s]+$")
_PREFERENCE_RE = re.compile(
    r"以后|今后|每次|总是|一般都|习惯|偏好|喜欢|倾向于|请用|先说结论|先给结论|回答(?:要|请)"
    r"|\b(?:from now on|in (?:the )?future|always|every time|i prefer|please (?:always|keep|use)|i(?:'d| would) rather)\b",
    re.IGNORECASE,
)
_WISH_RE = re.compile(
    r"(?:还|也|就|很)?想(?:要|主张|让|拿回|追回|争取|索赔)|希望|期望|盼望|诉求是|要求(?:对方|房东|公司|退还|赔偿|支付|返还)"
    r"|\b(?:i|we|she|he|they|the client)\s+(?:(?:would|'d) like|wants?|wish(?:es)?|hopes?|would prefer)\b",
    re.IGNORECASE,
)
_PLAN_RE = re.compile(
    r"打算|准备|计划|下一步|接下来|最好先|先发|先去|先向|将于|将会|拟于|拟向|会去|明天去|安排"
    r"|\b(?:i|we|she|he|they)(?:'ll| will| are going to| am going to|'m going to| plan to| intend to)\b|\bnext step\b|\bthe plan is\b",
    re.IGNORECASE,
)


def is_question(clause: str) -> bool:
    """A clause that asks, by the offline engine's Chinese cue or English opener."""
    if detect_language(clause) == "en":
        return bool(EN_QUESTION_RE.search(clause.strip()))
    return bool(ZH_QUESTION_RE.search(_TRAILING_PUNCT_RE.sub("", clause)))


def act_of(sentence: str) -> str:
    """The act of one sentence, in ``ACTS`` order."""
    text = sentence.strip()
    if CORRECTION_RE.search(text) or corrections(text):
        return "correction"
    if is_question(text) or ASKS_RE.search(text) or _ASKS_MORE_RE.search(text):
        return "question"
    if _PREFERENCE_RE.search(text):
        return "preference"
    if _WISH_RE.search(text):
        return "wish"
    if _PLAN_RE.search(text):
        return "plan"
    return "statement"


#: What makes a message a sentence rather than search-box words: a clause or sentence mark.
_SENTENCE_MARK_RE = re.compile(r"[。！!，,；;]|[.!]$")
#: Shortest message read as telling something ("中介叫王磊。").
MIN_TELLING_CHARS = 5


#: A request to the assistant ("帮我整理一下…", "请列出…", "Please summarise …"): it asks for
#: something, it tells nothing.
REQUEST_RE = re.compile(
    r"^(?:请你?|麻烦你?|能不能|你)?(?:帮我|帮忙|给我|替我)|^(?:请|麻烦你?)(?:整理|总结|列|写|起草|分析|说明|解释|查|看看|讲讲|说说)"
    r"|^(?:请|麻烦你?)?(?:提醒我|告诉我)"
    r"|^(?:please\s+|can you\s+|could you\s+)?(?:summari[sz]e|list|draft|write up|explain|check|review"
    r"|(?:tell|remind|show|give) me|help me|walk me through)\b",
    re.IGNORECASE,
)


def tells(message: str) -> bool:
    """Whether a chat message tells the assistant something rather than asks: a sentence (a
    clause or sentence mark) of at least ``MIN_TELLING_CHARS`` characters with no question in
    it nor a request (``REQUEST_RE``). "中介叫王磊，电话13912345678。" tells; "王磊的电话" (search-box
    words), "押金是多少？" and "帮我整理一下房子的情况。" ask."""
    text = message.strip()
    if len(text) < MIN_TELLING_CHARS or not _SENTENCE_MARK_RE.search(text):
        return False
    return all(act_of(text[a:b]) != "question" and not REQUEST_RE.search(text[a:b].strip())
               for a, b in sentence_spans(text))


#: "…的押金是多少": a thing's point, named after 的 and asked with 是/为 (not "能拿多少", "扣我多少").
_ZH_ASKED = re.compile(r"的([\u4e00-\u9fff]{2,4}?)(?:是|为|一共是|总共是|大概是)多少")
_EN_ASKED = re.compile(r"\bhow much (?:is|was|were|are|did)\s+(?:the |my |her |his |their )?([a-z]+)", re.IGNORECASE)


def asked_point(question: str) -> str | None:
    """The point whose value a question asks for ("押金" of "林晓雯的押金是多少？", "deposit" of "how
    much was the deposit?"), or None (no value asked, or a point of function words: "一共多少")."""
    match = _ZH_ASKED.search(question or "") or _EN_ASKED.search(question or "")
    if match is None:
        return None
    point = match.group(1)
    return None if set(point) & FUNCTION_CHARS else point.lower()
