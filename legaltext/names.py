"""Names of people and companies: 周房东, 张律师, 证人王强, 林晓雯, Ms. Lin, 杭州某某科技有限公司,
Acme Trading Co., Ltd.

One ranked table of Chinese surnames (the commonest first): each reader takes as many as it
can afford — a longer list finds rarer names and also more words that only look like names —
through ``common_surnames``. The name patterns are built from it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

#: Chinese surnames, commonest first.
SURNAMES_RANKED = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁"
    "任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武"
    "戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮"
    "柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓古"
    "吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾隋商刁沙荣巫"
    "寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝"
)


def common_surnames(count: int | None = None) -> str:
    """The ``count`` commonest surnames (all of them when None), as one string of characters."""
    return SURNAMES_RANKED if count is None else SURNAMES_RANKED[:count]


def name_ending_at(text: str, end: int, said: str) -> str | None:
    """The two- or three-character name that ends at ``end`` of ``text`` when ``said`` (what the
    client's side wrote) holds it too: it opens on a surname and does not end as a statute's party
    does ("罗建平可以要求…" when the client wrote 罗建平; not 消费者, 承租人, 对方, 单位). Reads a name
    the cue-based readers miss because nothing introduces it ("罗建平家装修的纠纷…")."""
    for length in (3, 2):
        name = text[max(0, end - length):end]
        if len(name) == length and name[0] in SURNAMES_RANKED and name[-1] not in _PARTY_ENDINGS and name in said:
            return name
    return None


#: How the parties a statute names end: 消费者, 承租人, 对方, 单位.
_PARTY_ENDINGS = frozenset("者人方位")


#: What follows a surname to name a person politely or by role (张先生, 王某, 周房东).
TITLES = r"某某|某|先生|女士|律师|法官|经理|老师|总|师傅"
READER_TITLES = TITLES + r"|房东|小姐|阿姨|医生|主任|老板|会计|科长|处长|院长|主管|警官"
_ROLES = r"(?:证人|同事|原告|被告|房东|租客|代理人是?|委托人|当事人|员工|老板|经理|法官|律师|朋友|邻居)"


def titled_name_re(surnames: str, titles: str = TITLES) -> re.Pattern[str]:
    """A surname and a title: 张先生, 王某, 周房东 (group 1: the surname)."""
    return re.compile(r"([" + surnames + r"])(?:" + titles + r")")


def role_name_re(surnames: str) -> re.Pattern[str]:
    """A surname-led name after a role word: 证人王强, 房东周建国 (group 1: the name)."""
    return re.compile(
        # "原告和被告" names nobody: a role, "and", another role
        _ROLES + r"(?![和与及或跟]" + _ROLES + r")([" + surnames + r"][\u4e00-\u9fff]{1,2}?)"
        r"(?=[也都还又已曾向在说看和与的，,。是对给把被拿没未不]|$)"
    )


def leading_name_re(surnames: str) -> re.Pattern[str]:
    """A surname-led name opening a sentence before a verb or particle: 张伟向… (group 1)."""
    return re.compile(r"^([" + surnames + r"][\u4e00-\u9fff]{1,2}?)(?=向|的|也|说|在|于|曾|已|把|对|和|与)")


#: English names: a title and a surname, or two capitalised words not opening a sentence.
EN_NAME_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b((?:Mr|Ms|Mrs|Dr)\.?\s+[A-Z][a-z]+|[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+)")
EN_LEADING_NAME_RE = re.compile(r"^([A-Z][a-z]+\s+[A-Z][a-z]+)(?=\s|'s)")
#: Capitalised words that open no name.
NOT_NAMES = frozenset({"I", "The", "On", "In", "At", "Actually", "Correction", "Sorry", "Section", "Article",
                       "Labor", "Contract", "Law", "Witness", "Colleague", "Attorney", "Order", "Invoice",
                       "Case", "Transfer", "Tracking", "Dear", "Regards", "Best", "Kind", "Further", "Following",
                       "Please"})
#: Capitalised words that close no person's name: a job, a body or a document ("HR Business
#: Partner", "Operations Supervisor", "Labour Arbitration Commission", "Settlement Agreement").
NOT_NAME_ENDS = frozenset({"Partner", "Supervisor", "Manager", "Director", "Officer", "Assistant", "Specialist",
                           "Engineer", "Representative", "Department", "Team", "Committee", "Commission", "Bureau",
                           "Office", "Court", "Tribunal", "Centre", "Center", "Agreement", "Insurance",
                           "Regulations", "Act", "Law", "Contract", "Company", "Letter", "Notice"})
_EN_TITLED_RE = re.compile(r"\b(?:Mr|Ms|Mrs|Miss|Dr|Prof|Judge|Attorney|Lawyer)\.?\s+[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?")
_INTRODUCED_RE = re.compile(r"(?:我叫|名叫|叫做|姓名是?|名字是|还是我[，,、]\s*)([" + SURNAMES_RANKED + r"][\u4e00-\u9fff]{1,2}?)(?=[，,。；;！!？?\s、的是]|$)")
_CLAUSE_NAME_RE = re.compile(
    r"(?:^|(?<=[，,。；;！!？?\s、：:“「]))([" + SURNAMES_RANKED[:150] + r"][\u4e00-\u9fff]{1,2}?)"
    r"(?=向|也|说|在|于|曾|已|把|对|和|与|是|的押金|的工资|租|住|签|付|交|称|表示|告诉|认为|要求|同意|拒绝)"
)

#: Words that open a clause like a surname-led name and are none ("付款是签约付40%", "方面是…",
#: "全款已付"): read as a person, 付款 made the client's own message a lawyer's relaying.
NOT_CLAUSE_NAMES = frozenset(
    "付款 付费 付清 付完 方面 方式 方法 方便 高于 金额 时间 时候 明天 明年 明确 全部 全款 全额 应该 应当 和解 于是 "
    "成本 常常 向来 周末 周年 周边 周期 江边 林地 高度 程序 程度 安全 安排 毛坯 白天 车位 车款 车辆 房款 房租 房屋 "
    "房子 房产 项目 单位 尚未 余款 余额 任何 任务 关于 关系 文件 文书 华为 时效 路费 费用 左右 申请 武汉 温州 "
    "宁波 常州 苏州 杭州 成都 柳州 江门".split())


# --- companies ------------------------------------------------------------------------------

_ZH_COMPANY_SUFFIX_RE = re.compile(r"(?:有限责任公司|股份有限公司|有限公司|集团公司|集团|律师事务所|事务所|分公司|公司)")
_ZH_COMPANY_LEAD_RE = re.compile(r"^.*(?:我在|我们在|在|与|和|跟|向|被|是|到|从|对|给|为|于|告|起诉|入职|签约|签了|就职于|任职于|的|把|将|由|让)")
#: What a company is called by its trade alone ("保险公司", "物业公司", "对方公司"): no name.
GENERIC_COMPANY_WORDS = frozenset(
    "保险 物业 装修 快递 中介 租赁 物流 科技 贸易 建筑 地产 房地产 外卖 平台 担保 网络 劳务 派遣 劳务派遣 信息 咨询 投资 "
    "金融 贷款 运输 家政 保安 清洁 外包 装饰 施工 开发 对方 这家 那家 该 本 贵 原 新 老 两家 一家 这个 那个 我们 你们 他们 "
    "母 子 总 上市 国有 私营 民营 外资 合资 这 那".split())
_EN_COMPANY_RE = re.compile(
    r"\b(?:[A-Z][\w&'’-]*\s+){1,6}?(?:Co\.,?\s*Ltd\.?|Company\s+Limited|Ltd\.?|Limited|Inc\.?|LLC|LLP|Corp\.?|Corporation|GmbH|PLC)"
)


def may_be_english_name(words: str) -> bool:
    """Whether capitalised ``words`` ("Emily Zhao") may be a person: not opened by a word of
    ``NOT_NAMES`` ("Dear Lei"), not closed by a job or a body (``NOT_NAME_ENDS``)."""
    parts = words.split()
    return parts[0].rstrip(".") not in NOT_NAMES and parts[-1] not in NOT_NAME_ENDS


@dataclass(frozen=True)
class NameMention:
    """A person's or a company's name with its span; ``kind`` is "person" or "company"."""

    start: int
    end: int
    text: str
    kind: str


def _companies(text: str) -> list[NameMention]:
    found = []
    for match in _ZH_COMPANY_SUFFIX_RE.finditer(text):
        end = match.end()
        start = match.start()
        while start > 0 and start > match.start() - 24 and re.match(r"[\u4e00-\u9fff（）()A-Za-z0-9]", text[start - 1]):
            start -= 1
        name = _ZH_COMPANY_LEAD_RE.sub("", text[start:end])
        start = end - len(name)
        generic = name[:len(name) - len(match.group(0))] in GENERIC_COMPANY_WORDS
        if len(name) - len(match.group(0)) >= 2 and not generic and not any(start < m.end and m.start < end for m in found):
            found.append(NameMention(start, end, name, "company"))
    for match in _EN_COMPANY_RE.finditer(text):
        words = match.group(0)
        if words.split()[0] not in NOT_NAMES:
            found.append(NameMention(match.start(), match.end(), words, "company"))
    return found


def names(text: str) -> list[NameMention]:
    """The people and companies ``text`` names, in order."""
    found = _companies(text)

    def add(start: int, end: int, kind: str = "person") -> None:
        if end > start and not any(start < m.end and m.start < end for m in found):
            found.append(NameMention(start, end, text[start:end], kind))

    for pattern in (_INTRODUCED_RE, role_name_re(SURNAMES_RANKED)):
        for match in pattern.finditer(text):
            add(*match.span(1))
    for match in titled_name_re(SURNAMES_RANKED, READER_TITLES).finditer(text):
        add(*match.span())
    for match in _CLAUSE_NAME_RE.finditer(text):
        if match.group(1) not in NOT_CLAUSE_NAMES:
            add(*match.span(1))
    for match in _EN_TITLED_RE.finditer(text):
        add(*match.span())
    for match in EN_NAME_RE.finditer(text):
        if may_be_english_name(match.group(1)):
            add(*match.span(1))
    return sorted(found, key=lambda m: m.start)
