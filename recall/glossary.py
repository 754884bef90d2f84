"""A bilingual table of legal words, so a question in one language reaches by keyword what was
said in the other: "押金" also looks for "deposit", "arbitration" also for "仲裁". Clients paste
English e-mails and contracts into Chinese consultations and ask in either language; the
encoder bridges the two only weakly (docs/evaluation.md, "The outside development set").

The table holds the common words of a Chinese law firm's matters — lease, employment, contract,
debt, family, injury, procedure — each Chinese word with its usual English words. Both sides are
matched as the keyword search reads them: Chinese words as jieba segments them, English words by
their folded term (``recall.keywords.term``). A question's own words always come first; the
other language's words only follow them.
"""
from __future__ import annotations

import functools

from recall.keywords import term

# (Chinese word, English words): one row per idea; an English phrase counts word by word.
TERMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # lease
    ("押金", ("deposit",)), ("租金", ("rent",)), ("房租", ("rent",)), ("房东", ("landlord",)),
    ("租客", ("tenant",)), ("承租人", ("tenant", "lessee")), ("出租人", ("landlord", "lessor")),
    ("租赁", ("lease", "tenancy")), ("租期", ("term", "lease")), ("退房", ("move-out",)),
    ("中介", ("agent", "agency")), ("维修", ("repair",)), ("装修", ("renovation",)),
    ("房屋", ("flat", "apartment", "premises")), ("物业", ("property",)),
    # employment
    ("劳动合同", ("employment", "contract")), ("解除", ("termination", "terminate")),
    ("辞退", ("dismissal", "dismiss")), ("开除", ("dismissal",)), ("裁员", ("redundancy", "layoff")),
    ("加班", ("overtime",)), ("加班费", ("overtime", "pay")), ("工资", ("salary", "wage", "pay")),
    ("月薪", ("salary", "monthly")), ("奖金", ("bonus",)), ("补贴", ("allowance",)),
    ("津贴", ("allowance",)), ("经济补偿", ("severance", "compensation")), ("补偿", ("compensation",)),
    ("赔偿金", ("compensation", "damages")), ("代通知金", ("notice", "pay")),
    ("社保", ("social", "insurance")), ("社会保险", ("social", "insurance")), ("公积金", ("housing", "fund")),
    ("失业金", ("unemployment", "benefits")), ("失业保险", ("unemployment", "insurance")),
    ("入职", ("joined", "start", "hired")), ("离职", ("resign", "leave")), ("辞职", ("resign", "resignation")),
    ("调岗", ("transfer", "relocation")), ("调动", ("transfer",)), ("年假", ("annual", "leave")),
    ("病假", ("sick", "leave")), ("竞业限制", ("non-compete",)), ("试用期", ("probation",)),
    ("人事", ("hr",)), ("工伤", ("work", "injury")), ("基数", ("base",)),
    ("协商解除", ("mutual", "termination")), ("和解", ("settlement", "settle")),
    ("和解协议", ("settlement", "agreement")), ("协议", ("agreement",)),
    # contract, debt, company
    ("合同", ("contract",)), ("条款", ("clause", "term")), ("违约", ("breach",)),
    ("违约金", ("penalty", "liquidated", "damages")), ("定金", ("deposit", "earnest")),
    ("货款", ("payment", "price")), ("付款", ("payment", "pay")), ("转账", ("transfer", "payment")),
    ("发票", ("invoice",)), ("欠款", ("debt", "owed")), ("借款", ("loan",)), ("利息", ("interest",)),
    ("担保", ("guarantee",)), ("保证人", ("guarantor",)), ("质保", ("warranty",)), ("保修", ("warranty",)),
    ("退款", ("refund",)), ("商标", ("trademark",)), ("侵权", ("infringement",)), ("供应商", ("supplier",)),
    ("经销", ("distribution", "distributor")), ("公司", ("company",)), ("老板", ("boss", "owner")),
    # family, injury, inheritance
    ("离婚", ("divorce",)), ("抚养权", ("custody",)), ("抚养费", ("child", "support")),
    ("财产", ("property", "assets")), ("继承", ("inheritance", "inherit")), ("遗嘱", ("will",)),
    ("交通事故", ("accident",)), ("医疗费", ("medical", "expenses")), ("误工费", ("lost", "wages")),
    ("伤残", ("disability",)), ("保险", ("insurance",)),
    # procedure and evidence
    ("仲裁", ("arbitration",)), ("仲裁委", ("arbitration", "commission")), ("起诉", ("sue", "lawsuit")),
    ("诉讼", ("lawsuit", "litigation")), ("法院", ("court",)), ("判决", ("judgment",)),
    ("律师函", ("lawyer's", "letter", "demand")), ("证据", ("evidence",)), ("录音", ("recording",)),
    ("截图", ("screenshot",)), ("邮件", ("email", "e-mail")), ("通知", ("notice", "notification")),
    ("通知书", ("notice", "letter")), ("材料", ("documents", "materials")), ("时效", ("limitation",)),
    ("期限", ("deadline", "period")), ("投诉", ("complaint",)), ("调解", ("mediation",)),
    ("会议", ("meeting",)), ("开会", ("meeting",)), ("赔偿", ("compensation", "damages")),
    ("法条", ("article", "statute")),
)


@functools.lru_cache(maxsize=1)
def _index() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """Chinese word → English words, and English folded term → Chinese words."""
    to_english: dict[str, list[str]] = {}
    to_chinese: dict[str, list[str]] = {}
    for chinese, english in TERMS:
        to_english.setdefault(chinese, []).extend(english)
        for word in english:
            to_chinese.setdefault(term(word.lower()), []).append(chinese)
    return ({k: tuple(dict.fromkeys(v)) for k, v in to_english.items()},
            {k: tuple(dict.fromkeys(v)) for k, v in to_chinese.items()})


def other_language(tokens: list[str]) -> list[str]:
    """The words of the other language for ``tokens`` (a question's keyword words), in their
    order, without the tokens themselves; empty when the table knows none of them."""
    to_english, to_chinese = _index()
    found: list[str] = []
    for token in tokens:
        found.extend(to_english.get(token, ()) or to_chinese.get(term(token.lower()), ()))
    own = set(tokens)
    return [word for word in dict.fromkeys(found) if word not in own]
