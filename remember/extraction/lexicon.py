"""Chinese legal lexicon for knowledge extraction: category cues, dispute
topics, date / amount / statute patterns and jieba keywords.

Everything here is data plus the small functions that apply it, shared by the
offline engine (``offline.py``) and by the validation of LLM output
(``items.py``), so both describe notes with the same vocabulary. Categories are
keyed by their Chinese labels (``Category.zh`` of ``memory.categories``); this module
imports nothing else from the package at run time.

All patterns are plain alternations without nested quantifiers, so matching
stays linear in the text length.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Protocol, Sequence

from legaltext import dates as legal_dates
from legaltext import dates_en as english_dates
from legaltext.corrections import CORRECTION_RE  # noqa: F401 (the engine's sentence cue)
from legaltext.names import common_surnames
from legaltext.numbers import AMOUNT_RE
from legaltext.statutes import LAW_REF_RE, NOT_CONTRACT as _NOT_CONTRACT
from memory.categories import Category

from .english.keywords import english_keywords

# --- categories ---------------------------------------------------------------

FACT = Category.FACT.zh
EVIDENCE = Category.EVIDENCE.zh
LAW = Category.LAW.zh
CLAIM = Category.CLAIM.zh
PREFERENCE = Category.PREFERENCE.zh
ACTION = Category.ACTION.zh

#: When two categories score the same, the earlier one wins: a statute or a
#: preference is rarer and more specific than a plain fact.
CATEGORY_PRIORITY: tuple[str, ...] = (LAW, PREFERENCE, CLAIM, EVIDENCE, ACTION, FACT)

#: Weight of a cue that on its own is enough to classify a sentence.
STRONG = 2


@dataclass(frozen=True)
class Cue:
    """One lexicon entry: a pattern and how much a match says about a category."""

    pattern: re.Pattern[str]
    weight: int

    @property
    def strong(self) -> bool:
        """A strong cue classifies a sentence by itself; a weak one only tips a balance."""
        return self.weight >= STRONG


def _cues(weight: int, *patterns: str) -> tuple[Cue, ...]:
    return tuple(Cue(re.compile(p), weight) for p in patterns)


_NUM = legal_dates.NUM

CATEGORY_CUES: dict[str, tuple[Cue, ...]] = {
    PREFERENCE: _cues(
        STRONG,
        r"偏好", r"(?<!不)喜欢", r"不喜欢", r"习惯", r"倾向于",
        r"先(?:给|说|讲|写|列|出|告诉我)?(?:出)?结论", r"结论先行", r"证据清单",
        r"清单形式", r"分点", r"分条", r"列表", r"表格", r"简洁", r"简短", r"简明",
        r"言简意赅", r"详细(?:一点|一些)", r"通俗", r"口语化", r"术语",
        r"(?:别|不要|不用)太长", r"(?:以后|每次|今后)(?:的)?(?:回答|回复|都)",
        r"(?:回答|回复)(?:时|的时候)", r"用中文", r"用英文",
    )
    + _cues(1, r"希望", r"最好", r"请你", r"以后")
    # how the client wants to be reached or answered outweighs the call it mentions ("别打电话" is
    # no fact of a call): "沟通都用微信", "别在工作日白天给我打电话", "有事发消息就行", "列要点"
    + _cues(
        3,
        r"(?:别|不要|不用|尽量别|尽量不要)[^，。；]{0,12}?打(?:电话|给)", r"(?:不太|不)(?:喜欢|方便)接电话",
        r"(?:沟通|联系|联络)(?:都|就|最好|尽量)?(?:用|走|通过)(?:微信|短信|邮件|邮箱|电话|email)",
        r"(?:发|回)(?:个)?(?:消息|短信|微信|邮件)就(?:行|好|可以)", r"(?:用|说)(?:中文|英文|英语)(?:回复|回答|沟通|交流)",
        r"列(?:个)?要点",
        # where the client wants papers sent and how told: "定稿以后直接发我邮箱…，微信上跟我说一声就行",
        # "文书材料都发到她邮箱…，不要寄纸质的", "别发短信", "回复麻烦发文字，不要发语音", "晚上8点以后才方便看消息"
        r"(?:直接)?(?:发|寄|送)(?:到)?[我她他](?:的)?(?:邮箱|微信|手机|家里)", r"(?:跟|和|给)[我她他]说一声就(?:行|好|可以)",
        r"(?:别|不要|不用)(?:发|寄)(?:短信|语音|纸质)", r"(?:回复|消息)(?:麻烦|请)?发文字",
        r"才方便(?:看|接|回)",
        r"列成要点", r"(?:别|不要)写长段落", r"(?:回复|回答)(?:用)?(?:中文|英文)就(?:行|好|可以)",
    ),
    CLAIM: _cues(
        STRONG,
        r"(?<!质量)(?<!符合)要求", r"索赔", r"主张", r"诉求",
        r"想(?:要)?[^，。,]{0,6}?(?:退|赔|拿回|要回|讨回|补发|追回|返还)", r"要回", r"讨回", r"追回", r"讨要",
        r"申请退", r"请求(?:法院)?判令", r"我要退",
    )
    # what the client wants of the dispute, outweighing the facts it names: "想让厂里把加班费都补给他",
    # "还想继续在这干", "不想跟对方私了", "不想再折腾"
    + _cues(
        3,
        r"想让[^，。；]{0,20}?(?:补|赔|退|付|还)", r"(?:想|希望|要求)(?:继续|回去|回到)[^，。；]{0,6}?(?:上班|工作|干|岗位)",
        r"不太?想(?:再)?(?:跟|和|与)?[^，。；]{0,8}?(?:私了|闹僵|打官司|上法院|折腾|追究|撕破脸|翻脸)",
        r"希望尽快(?:拿到|拿回|要回|退回)", r"(?:就|便)不(?:去)?(?:仲裁|起诉|告)了",
        # how the client wants it settled, and the least they take: "希望先协商，实在不行再起诉",
        # "尽量不打官司，最好能和保险公司直接谈", "低于5万就不谈了", "想要房子，不想要钱"
        r"希望先(?:协商|调解|谈)", r"尽量不(?:打官司|上法院|起诉)", r"(?:想|希望|最好)(?:能)?(?:和|跟)[^，。；]{0,8}直接谈",
        r"低于[^，。；]{1,8}就不(?:谈|接受|同意)", r"想尽快拿到(?:钱|赔偿|补偿)", r"(?:想|还想)在[^，。；]{0,8}?加一条",
        r"(?:我|他|她)?想要(?:房子|车|孩子|抚养权)", r"不想要钱",
        # what matters most to the client and what they would rather (dev5): "他更想把账查清楚",
        # "最在意的不是钱，是要韩磊当面道歉", "能拿到六千多就行", "宁可等物业去起诉", "不想让母亲上法庭"
        r"更想|最想|最在意|最看重", r"宁可|宁愿", r"不想让[^，。；]{0,12}?(?:上法庭|出庭|知道|参与|受)",
        r"(?:拿到|给到|赔到|退到)[^，。；]{0,8}?就(?:行|可以|接受)", r"希望能(?:给|让|再|多|延|宽限)",
    )
    + _cues(
        1,
        r"退款", r"退费", r"退货", r"退换", r"退还", r"返还", r"赔偿", r"补偿",
        r"双倍", r"三倍", r"违约金", r"全额", r"补发", r"希望",
    ),
    EVIDENCE: _cues(
        STRONG,
        r"发票", r"截图", r"录音", r"照片", r"聊天记录", r"收据", r"检测报告",
        r"鉴定(?:报告|意见)", r"(?:转账|付款|交易|通话|考勤|打卡|维修|订单)记录",
        r"银行流水", r"工资条", r"监控", r"录像", r"视频", r"证人", r"凭证", r"借条",
        r"欠条", r"快递单", r"维修单", r"报价单", r"保修卡", r"收条", r"公证",
    )
    + _cues(
        1,
        r"证据", r"合同", r"协议", r"订单", r"记录", r"保存", r"保留", r"留有", r"存有",
        r"拍了", r"录了", r"截了",
    ),
    LAW: _cues(
        3,
        r"《[^《》\n]{1,40}(?:法|法典|条例|规定|解释|办法|规则|通则)》",
    )
    + _cues(
        STRONG,
        _NOT_CONTRACT + r"第" + _NUM + r"条", r"法律规定", r"司法解释", r"法律依据", r"依法", r"依照",
        r"根据[^，。,]{0,12}法",
    )
    + _cues(1, r"规定", r"法律", r"有权", r"权利", r"义务", r"条款"),
    ACTION: _cues(3, r"建议")
    + _cues(
        STRONG,
        # "住院应该是15天" says what is, not what to do: "应该是" is no advice.
        r"应当(?!是)", r"应该(?!是)", r"可以先", r"下一步", r"尽快", r"务必", r"及时", r"最好先",
        r"需要先", r"不妨", r"拨打", r"向[^，。,]{0,12}(?:投诉|举报|申请|起诉|提起)",
        r"申请(?:劳动)?仲裁", r"提起(?:诉讼|仲裁)", r"律师函", r"保留(?:好)?(?:相关)?证据",
        r"固定证据", r"打算", r"准备去", r"计划",
    )
    + _cues(1, r"可以", r"协商", r"投诉", r"起诉", r"仲裁", r"诉讼", r"12315", r"12345",
            r"劳动监察", r"调解"),
    FACT: _cues(3, r"已(?:经)?(?:向|和|与|跟)?[^，。,]{0,8}(?:投诉|起诉|申请|协商|联系|沟通|报警|寄)")
    # what a doctor, the police or the other side advised is a fact of the matter, not our advice
    + _cues(4, r"(?:医生|大夫|医院|交警|警察|法官|仲裁员|调解员|HR|人事|老板|房东|中介|物业|对方)(?:也|还|就|当时)?建议")
    + _cues(
        STRONG,
        r"购买", r"买了", r"买的", r"下单", r"支付", r"付款", r"付了", r"花了", r"交了",
        r"缴纳", r"签订", r"签了", r"入职", r"离职", r"辞退", r"解雇", r"开除", r"拖欠",
        r"扣(?:了|除|留|押)", r"(?:没|未|不)(?:退|给|支付|发)", r"拒不", r"拒绝", r"不同意",
        r"出现", r"发生", r"损坏", r"故障", r"坏了", r"花屏", r"黑屏", r"漏水", r"维修(?![费单店])",
        r"修理(?!费)", r"送修", r"寄回", r"加班(?!费)", r"报名", r"上了", r"退租",
        r"搬走", r"租了", r"承诺", r"答应", r"声称", r"以[^，。,]{1,15}为由", r"通知",
        r"(?:投诉|起诉|申请|协商|联系|沟通|报警)(?:过|了)", r"不能(?:退|换)", r"(?:打|接)了?(?:个)?电话",
    )
    + _cues(1, r"说", r"称", r"表示", r"已经", r"一直", r"检测", r"鉴定"),
}

#: Words that open a clause with its own subject ('商家…', '笔记本电脑…'): such a
#: clause can stand alone as a note even next to one of the same category.
SUBJECT_RE = re.compile(
    r"^(?:我们|我|本人|商家|卖家|店家|客服|平台|厂家|房东|中介|公司|单位|老板|领导|人事|HR|机构|学校|老师|"
    r"维修店|维修人员|师傅|对方|被告|原告|法院|仲裁委|快递|物业|电脑|笔记本电脑|笔记本|手机|产品|商品|房子|房屋)"
)

#: Preference cues that are about how the assistant should answer.
# The user correcting an earlier statement: ``CORRECTION_RE`` (legaltext.corrections).

ANSWER_STYLE_RE = re.compile(
    r"结论|清单|分点|分条|列表|表格|简洁|简短|简明|言简意赅|详细|通俗|口语|术语|太长|回答|回复|用中文|用英文"
)

# --- entities -----------------------------------------------------------------
# Dates, amounts and statute references are read by ``legaltext``; these are the names the
# engine and the validation of LLM output call them by.

DATE_RE = legal_dates.DATE_RE


def extract_dates(text: str) -> list[str]:
    """Dates and event-anchored durations as written: '2024年3月5日', '上周三', '两周后', and
    English ones ('yesterday', 'last Tuesday', '7 May 2023')."""
    return legal_dates.date_phrases(text)


def extract_amounts(text: str) -> list[str]:
    """Money amounts as written: '5000元', '￥3,299', '三千元', '1.5万元', '18万8'."""
    return legal_dates.find_all(AMOUNT_RE, text)


def extract_law_refs(text: str) -> list[str]:
    """Statute references: '《消费者权益保护法》第二十四条', '第二十四条'."""
    return legal_dates.find_all(LAW_REF_RE, text)


# --- dispute topics -------------------------------------------------------------

#: (topic, family, patterns that must all match), most specific first. Topics
#: of one family (消费, 租房, 教育, 劳动, ...) refine each other.
_TOPIC_TABLE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("电脑花屏纠纷", "消费", (r"电脑|笔记本", r"花屏")),
    ("租房押金纠纷", "租房", (r"押金", r"租|房东|房屋|退房")),
    ("课程退款纠纷", "教育", (r"课程|培训|课时|网课|学费|报班", r"退")),
    ("加班费纠纷", "劳动", (r"加班",)),
    ("维修费纠纷", "消费", (r"维修费|修理费|维修店|送修|修理厂",)),
    ("手机质量纠纷", "消费", (r"手机", r"花屏|黑屏|故障|坏|质量|维修|退货|退换")),
    ("商品质量纠纷", "消费", (r"花屏|黑屏|故障|质量问题|退换|退货|三包|无理由",)),
    ("租房纠纷", "租房", (r"房东|租房|房租|租金|退租",)),
    ("教育培训合同纠纷", "教育", (r"课程|培训|课时|网课|学费|报班",)),
    ("劳动报酬纠纷", "劳动", (r"工资|薪资|欠薪|薪水|劳动报酬",)),
    ("劳动合同纠纷", "劳动", (r"辞退|解雇|劳动合同|入职|离职|试用期|经济补偿",)),
    ("民间借贷纠纷", "借贷", (r"借款|借钱|借条|欠款|欠条",)),
    ("交通事故纠纷", "交通", (r"交通事故|车祸|追尾|撞车|被撞",)),
)
TOPIC_RULES: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...] = tuple(
    (name, tuple(re.compile(p) for p in patterns)) for name, _, patterns in _TOPIC_TABLE
)
_TOPIC_FAMILY: dict[str, str] = {name: family for name, family, _ in _TOPIC_TABLE}
TOPIC_NAMES: frozenset[str] = frozenset(name for name, _ in TOPIC_RULES)


_TOPIC_RANK: dict[str, int] = {name: rank for rank, (name, _) in enumerate(TOPIC_RULES)}


def detect_topic(text: str) -> str | None:
    """The dispute a text is about ('租房押金纠纷'), or None when no rule matches."""
    for name, patterns in TOPIC_RULES:
        if all(p.search(text) for p in patterns):
            return name
    return None


def topic_for(content: str, turn_topic: str | None) -> str | None:
    """Topic of one item, using the whole turn's topic when it says more.

    '用户已保存…花屏照片' alone only says 商品质量纠纷; when the turn is about
    a laptop, the turn's more specific 电脑花屏纠纷 of the same family wins. A
    deposit fact in a turn about a laptop keeps 租房押金纠纷 (another family).
    """
    own = detect_topic(content)
    if turn_topic is None or turn_topic not in _TOPIC_RANK:
        return own
    if own is None:
        return turn_topic
    same_family = _TOPIC_FAMILY[own] == _TOPIC_FAMILY[turn_topic]
    if same_family and _TOPIC_RANK[turn_topic] < _TOPIC_RANK[own]:
        return turn_topic
    return own


# --- keywords (jieba) -------------------------------------------------------------

#: Legal and consumer terms jieba's default dictionary splits apart; added so
#: keywords come out whole ('付款截图', not '付款' + '截图').
DOMAIN_WORDS: tuple[str, ...] = (
    "花屏", "人为损坏", "电子发票", "付款截图", "客服录音", "聊天记录", "检测报告",
    "转账记录", "租房押金", "押金", "加班费", "维修费", "课时费", "退费", "七天无理由",
    "先给结论", "证据清单", "消费者权益保护法", "劳动合同法", "民法典", "劳动仲裁",
    "经济补偿", "违约金", "三包", "维修店", "维修单", "考勤记录", "工资条",
)

#: Words that say nothing about what a note is about.
KEYWORD_STOPWORDS: frozenset[str] = frozenset(
    """用户 助手 我们 你们 他们 自己 这个 那个 这些 那些 现在 时候 因为 所以 但是 没有 还是
    就是 觉得 知道 一下 可以 应该 需要 进行 表示 认为 情况 事情 东西 直接 其实 已经 目前
    当时 然后 之后 之前 左右 大概 大约 可能 存在 一直 每周 希望 以后 最后 先给 再列 如果
    或者 以及 还有 什么 怎么 这样 那样 一个 一些 不是 是否 不过 而且 并且 同时 对方 说是
    这是 不能 一点 手上 同样 偏好 回答 列出 想要 一下 只有 只是 还要 任何 只能 作为
    the and for with that this was were are you your my me our his her its they them
    not but have has had from into about then than what when which who would could should""".split()
)

_JIEBA_LOCK = threading.Lock()
_JIEBA_READY = False
_MAX_KEYWORD_CHARS = 20_000


def _jieba() -> ModuleType:
    """Initialise jieba once (thread-safe) and return ``jieba.analyse``.

    jieba reads its bundled dictionary and IDF table from the wheel and caches
    the prefix dictionary in the temp directory; it never downloads anything
    unless paddle mode is enabled, which this module never does. Its own
    stderr handler is removed and its level raised so "Building prefix
    dict..." chatter stays out of the logs; warnings still propagate to the
    project's logging configuration.
    """
    global _JIEBA_READY
    import jieba
    import jieba.analyse

    if _JIEBA_READY:
        return jieba.analyse
    with _JIEBA_LOCK:
        if not _JIEBA_READY:
            logger = logging.getLogger("jieba")
            for handler in list(logger.handlers):
                logger.removeHandler(handler)
            jieba.setLogLevel(logging.WARNING)
            jieba.initialize()
            for word in DOMAIN_WORDS:
                jieba.add_word(word, freq=20_000, tag="n")
            _JIEBA_READY = True
    return jieba.analyse


_CJK_RE = re.compile(r"[\u4e00-\u9fff]")
_LATIN_RE = re.compile(r"[A-Za-z]{2}")
_NUMERIC_RE = re.compile(r"^[\d.,，%]+$")
#: Counted quantities ('三次', '一台', '两年'): never what a note is about.
_COUNT_RE = re.compile(r"^[\d一二两三四五六七八九十百几半每]+[次个台家年月周天日份件张条节元块号项]$|^节课$")


def keywords_for(text: str, k: int = 8) -> list[str]:
    """Up to ``k`` TF-IDF keywords of ``text`` (jieba), stopwords and bare numbers dropped.

    Only the first 20,000 characters are read: keywords of a note are a
    handful of terms, and segmenting megabytes would only cost time.
    """
    if k <= 0 or not text or not text.strip():
        return []
    if not _CJK_RE.search(text[:_MAX_KEYWORD_CHARS]):
        return english_keywords(english_dates.DATE_RE.sub(" ", text[:_MAX_KEYWORD_CHARS]), k)
    analyse = _jieba()
    text = text[:_MAX_KEYWORD_CHARS]
    # Dates and amounts are stored on their own; cut out, they cannot glue to
    # neighbouring characters ('3月5日花' → '日花').
    text = AMOUNT_RE.sub(" ", DATE_RE.sub(" ", text))
    candidates = analyse.extract_tags(text, topK=k * 3)
    keywords: list[str] = []
    for word in candidates:
        word = word.strip()
        if (
            len(word) < 2
            or word.lower() in KEYWORD_STOPWORDS
            or _NUMERIC_RE.match(word)
            or _COUNT_RE.match(word)
        ):
            continue
        keywords.append(word)
        if len(keywords) == k:
            break
    if len(keywords) < k and _LATIN_RE.search(text):  # mixed text: English words jieba ranked low
        taken = {w.lower() for w in keywords}
        english = english_keywords(english_dates.DATE_RE.sub(" ", text), k)
        keywords.extend(w for w in english if w.lower() not in taken and not _CJK_RE.search(w))
    return keywords[:k]


# --- person names -----------------------------------------------------------------

#: Common Chinese surnames: a word jieba tags as a person ("nr") is taken for a name only when
#: it starts with one, so tagged terms such as "花屏" are not.
COMMON_SURNAMES: frozenset[str] = frozenset(common_surnames())


def person_names(text: str) -> list[str]:
    """Chinese personal names in ``text`` ('王磊', '李强'), distinct, in order: words jieba's
    part-of-speech tagger calls a person, two or three characters, opening with a common surname.
    It also tags some common words so ("余杭", "申请书"): ``memory.segmentation.is_common_word`` tells them apart."""
    if not text or not _CJK_RE.search(text):
        return []
    _jieba()
    import jieba.posseg

    names: dict[str, None] = {}
    for word in jieba.posseg.cut(text[:_MAX_KEYWORD_CHARS]):
        if word.flag.startswith("nr") and 2 <= len(word.word) <= 3 and word.word[0] in COMMON_SURNAMES:
            names.setdefault(word.word, None)
    return list(names)


def names_a_thing(text: str) -> bool:
    """Whether ``text`` holds a noun jieba's tagger knows (a person, place, thing or idea; not a
    pronoun, a time word or a measure): "押金2000元" does, "我花了800元" and "现在还欠着" do not."""
    if not _CJK_RE.search(text):
        return True
    _jieba()
    import jieba.posseg

    return any(word.flag.startswith("n") or word.flag == "vn" for word in jieba.posseg.cut(text[:_MAX_KEYWORD_CHARS]))


# --- context ----------------------------------------------------------------------

_CONTEXT_LABELS: dict[str, str] = {
    FACT: "事实",
    EVIDENCE: "证据",
    LAW: "法律依据",
    CLAIM: "诉求",
    PREFERENCE: "偏好",
    ACTION: "行动建议",
}


_ENGLISH_LABELS: dict[str, str] = {
    FACT: "Fact", EVIDENCE: "Evidence", LAW: "Legal basis", CLAIM: "Claim", PREFERENCE: "Preference", ACTION: "Advice",
}
#: Tag of a note that reports what an English speaker said (the offline engine's reported speech).
SAID_TAG_EN = "said"


class Describable(Protocol):
    """What ``context_for`` reads of an item (``items.ExtractedItem`` is one); a protocol, so
    this module depends on nothing else in the package."""

    content: str
    category: str
    memory_type: str
    tags: Sequence[str]
    keywords: Sequence[str]


def _english_context(item: Describable) -> str:
    """'Event about LGBTQ and support', 'Statement about painting and sunsets'."""
    label = _ENGLISH_LABELS.get(item.category, "Note")
    if item.category == FACT and item.memory_type == "event":
        label = "Event"
    if SAID_TAG_EN in item.tags:
        label = "Statement"
    subjects = item.keywords[:2]
    if subjects:
        return f"{label} about {' and '.join(subjects)}"
    return f"{label} mentioned in the conversation"


def context_for(item: Describable) -> str:
    """One sentence saying what a note is about, e.g. '关于电脑花屏纠纷的证据', or in English
    for a note without Chinese ('Event about LGBTQ and support').

    The subject comes from, in order: a statute reference (for 法条), the
    answer-style cue (for 偏好), a dispute topic among the item's tags or in its
    content, then its first keywords.
    """
    if not _CJK_RE.search(item.content):
        return _english_context(item)
    label = _CONTEXT_LABELS.get(item.category, item.category or "记录")
    if item.category == FACT and item.memory_type == "event":
        label = "事件经过"
    if item.category == LAW:
        refs = extract_law_refs(item.content)
        if refs:
            return f"关于{refs[0]}的{label}"
    if item.category == PREFERENCE:
        if ANSWER_STYLE_RE.search(item.content):
            return f"关于用户回答方式的{label}"
        return f"关于用户个人习惯的{label}"
    topic = next((t for t in item.tags if t in TOPIC_NAMES), None) or detect_topic(item.content)
    if topic:
        return f"关于{topic}的{label}"
    subjects = [kw for kw in item.keywords if kw not in KEYWORD_STOPWORDS][:2]
    if subjects:
        return f"关于{'与'.join(subjects)}的{label}"
    return f"对话中提到的{label}"
