"""Each extraction rule alone (``remember.extraction.rules``), on the item under check it is
given, and the table validate_items runs."""
from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from memory.categories import Category
from memory.rules import rule, rules
from remember.extraction.grounding import TurnText
from remember.extraction.items import validate_items
from remember.extraction.rules import TABLE, ItemCheck, Refusal

TURN = TurnText(user_msg="我叫王磊，2024年3月1日租了房子，月租金8,000元，押金七千元。租约到期房东不退押金，这合法吗？",
                reply="房东无正当理由不退押金属于违约，《民法典》第五百零九条规定当事人应当全面履行义务。",
                user_name="alice", said_on=date(2026, 2, 3))


def check(name: str, content: str = "", *, entry: object = None, category: Category | None = Category.FACT,
          speaker: str = "user", turn: TurnText | None = TURN, seen: set[str] | None = None):
    found = rule(TABLE, name)
    assert found is not None, name
    item = ItemCheck(1, {"content": content} if entry is None else entry, turn=turn, content=content,
                     category=category, speaker=speaker, seen=seen or set())
    return found.check(item)


def test_the_table_in_its_order() -> None:
    assert [(r.name, r.stage) for r in rules(TABLE)] == [
        ("item-is-an-object", "entry"), ("content-is-text", "entry"),
        ("content-present", "content"), ("content-has-words", "content"), ("known-category", "content"),
        ("whole-statement", "content"),
        ("once-per-turn", "turn"), ("answers-are-not-client-facts", "turn"), ("law-cites-a-statute", "turn"),
        ("questions-stay-questions", "turn"), ("no-clause-cut-from-its-point", "turn"), ("a-question-states-no-fact", "turn"),
        ("an-announcement-is-no-fact", "turn"), ("the-answers-words-are-the-answers", "turn"),
        ("numbers-were-said", "turn"), ("statutes-were-cited", "turn"),
        ("the-clients-words-are-the-clients", "turn"), ("advice-that-cites-a-statute-is-advice", "turn"),
        ("a-statute-applied-is-advice", "turn"), ("contract-articles-are-terms", "turn"),
    ]
    assert [r.name for r in rules(TABLE) if r.both_engines] == [
        "an-announcement-is-no-fact", "advice-that-cites-a-statute-is-advice", "a-statute-applied-is-advice",
        "contract-articles-are-terms"]
    assert all(str(r.why) for r in rules(TABLE))


def test_item_is_an_object() -> None:
    assert check("item-is-an-object", entry={"content": "x"}) is None
    assert check("item-is-an-object", entry="房东不退押金") == Refusal("not an object (str)")


def test_content_is_text() -> None:
    assert check("content-is-text", entry={"content": "房东不退押金。"}) is None
    assert check("content-is-text", entry={"content": 42}) == Refusal("content is not text (int)")


def test_content_present() -> None:
    assert check("content-present", "房东不退押金。") is None
    assert check("content-present", "") == Refusal("missing content")


def test_content_has_words() -> None:
    assert check("content-has-words", "押金") is None
    assert check("content-has-words", "……") == Refusal("content has no words: '……'")


def test_known_category() -> None:
    assert check("known-category", "房东不退押金。") is None
    assert check("known-category", "天气很好。", entry={"category": "闲聊"}, category=None) == \
        Refusal("unknown category '闲聊' for '天气很好。'")


def test_whole_statement() -> None:
    assert check("whole-statement", "房东到期不退还押金三千元。") is None
    assert check("whole-statement", "提出违约") == Refusal("a fragment, not a sentence (under 6 characters): '提出违约'")


def test_once_per_turn() -> None:
    assert check("once-per-turn", "商家拒绝退款。") is None
    assert check("once-per-turn", "商家 拒绝退款！", seen={"商家拒绝退款"}) == \
        Refusal("duplicate within the turn: '商家 拒绝退款！'")


def test_answers_are_not_client_facts() -> None:
    assert check("answers-are-not-client-facts", "房东无正当理由不退押金属于违约。", speaker="user") is None
    refused = check("answers-are-not-client-facts", "房东无正当理由不退押金属于违约。", speaker="assistant")
    assert isinstance(refused, Refusal) and refused.detail.startswith("said by the assistant")
    assert check("answers-are-not-client-facts", "建议王磊先书面催告房东。", speaker="assistant") is Category.ACTION


def test_law_cites_a_statute() -> None:
    assert check("law-cites-a-statute", "《民法典》第五百零九条规定当事人应当全面履行义务。", category=Category.LAW,
                 speaker="assistant") is None
    assert check("law-cites-a-statute", "房东不退押金属于违约。", category=Category.LAW,
                 speaker="assistant") is Category.ACTION
    # the client's "law" that cites nothing is the client's statement, held to the numbers said
    assert check("law-cites-a-statute", "押金的金额为3500元。", category=Category.LAW) is Category.FACT
    assert check("law-cites-a-statute", "房东不退押金属于违约。", category=Category.LAW, speaker="turn") is None


def test_a_clients_law_item_with_a_worked_out_number_is_refused() -> None:
    """What the live Qwen 1.5B made of "林晓雯的押金是多少？" after 2000 was said and 房东 would keep half."""
    items, reasons = validate_items([{"content": "押金的金额为3500元", "category": "法条", "speaker": "user"}], turn=TURN)

    assert items == []
    assert reasons == ["item 1: the number 3500元 is not in what the client said: '押金的金额为3500元' [numbers-were-said]"]


def test_questions_stay_questions() -> None:
    assert check("questions-stay-questions", "王磊租约到期后房东不退押金。") is None
    refused = check("questions-stay-questions", "房东到期不退押金不合法。")
    assert isinstance(refused, Refusal) and "into an assertion" in refused.detail


def test_numbers_were_said() -> None:
    assert check("numbers-were-said", "王磊的押金是七千元。") is None
    assert check("numbers-were-said", "王磊的押金一共是14000元。") == \
        Refusal("the number 14000元 is not in what the client said: '王磊的押金一共是14000元。'")


def test_statutes_were_cited() -> None:
    assert check("statutes-were-cited", "《民法典》第五百零九条规定当事人应当全面履行义务。", category=Category.LAW,
                 speaker="assistant") is None
    refused = check("statutes-were-cited", "《民法典》第七百零三条规定租赁合同是出租人将租赁物交付承租人。",
                    category=Category.LAW, speaker="assistant")
    assert isinstance(refused, Refusal) and refused.detail.startswith("cites 《民法典》第703条, which the assistant")


def test_a_question_states_no_fact() -> None:
    asked = TurnText(user_msg="房东有哪些权利？那我作为租客能要求他做什么？", user_name="alice")
    refused = check("a-question-states-no-fact", "房东的全部权利包括收取租金和押金", turn=asked)
    assert isinstance(refused, Refusal) and refused.detail.startswith("the client only asked")
    assert check("a-question-states-no-fact", "房东的全部权利包括收取租金和押金", speaker="assistant", turn=asked) is None
    assert check("a-question-states-no-fact", "王磊租约到期后房东不退押金。") is None  # TURN states facts
    said_a_sum = TurnText(user_msg="押金3000元能要回来吗？", user_name="alice")
    assert check("a-question-states-no-fact", "押金为3000元", turn=said_a_sum) is None


def test_no_clause_cut_from_its_point() -> None:
    """Live (issue 56): "林晓雯花了800元" and "现在还欠着我" were cut from one sentence."""
    repair = TurnText(user_msg="热水器坏了是房东让我自己找人修的，我花了800元，他答应这钱他出，到现在还欠着我。",
                      user_name="alice", client_name="林晓雯")
    for cut in ("林晓雯花了800元", "现在还欠着林晓雯", "他答应这钱他出，到现在还欠着林晓雯"):
        refused = check("no-clause-cut-from-its-point", cut, turn=repair)
        assert isinstance(refused, Refusal) and refused.detail.startswith("cut from"), cut
    assert check("no-clause-cut-from-its-point", "林晓雯花了800元修热水器，房东答应出这笔钱", turn=repair) is None
    assert check("no-clause-cut-from-its-point", "王磊的押金七千元") is None  # names the deposit
    assert check("no-clause-cut-from-its-point", "花了800元", speaker="assistant", turn=repair) is None


def test_the_answers_words_are_the_answers() -> None:
    advised = TurnText(user_msg="房东不退押金，我手里有转账记录。",
                       reply="建议：1. 与房东协商，要求其按合同约定退还押金；2. 保留转账记录和聊天记录。", user_name="alice")
    moved = check("the-answers-words-are-the-answers", "1. 与房东协商，要求其按合同约定退还押金",
                  category=Category.CLAIM, turn=advised)
    assert (moved.speaker, moved.category) == ("assistant", Category.ACTION)
    refused = check("the-answers-words-are-the-answers", "按合同约定房东应当退还押金并保留聊天记录", turn=advised)
    assert isinstance(refused, Refusal) and refused.detail.startswith("worded as the assistant's answer")
    assert check("the-answers-words-are-the-answers", "房东不退押金，王磊有转账记录", turn=advised) is None


def test_the_clients_words_are_the_clients() -> None:
    refused = check("the-clients-words-are-the-clients", "可以向被告所在地的法院提起诉讼", category=Category.CLAIM)
    assert isinstance(refused, Refusal) and refused.detail.startswith("not what alice said")
    assert check("the-clients-words-are-the-clients", "王磊租约到期后房东不退押金。") is None
    assert check("the-clients-words-are-the-clients", "可以向被告所在地的法院提起诉讼", speaker="assistant") is None


def test_the_item_is_read_once_with_the_turns_day() -> None:
    item = ItemCheck(1, {}, turn=TURN, content="去年3月15日付了押金3000元")
    assert item.reading.dates[0].iso == "2025-03-15" and item.reading.amounts[0].value == 3000


@pytest.mark.parametrize("name", ["answers-are-not-client-facts", "questions-stay-questions", "numbers-were-said"])
def test_the_rules_that_read_the_turn_say_so(name: str) -> None:
    assert rule(TABLE, name).needs_turn


@pytest.mark.parametrize("content", ["郑国强的劳动合同传上来了。", "林晓雯那边有新情况。", "合同草稿发助手邮箱了。",
                                     "你帮忙看看。", "Again, two updates."])
def test_an_announcement_is_no_fact(content: str) -> None:
    assert isinstance(check("an-announcement-is-no-fact", content), Refusal)


@pytest.mark.parametrize("content", ["她把工资条发给你了，月薪8000。", "我周末去看看房子。", "他会用这笔钱还债。",
                                     "林晓雯的租房合同我扫描传上来了，周海峰一直拿刷墙说事。"])
def test_what_comes_with_an_announcement_is_kept(content: str) -> None:
    assert check("an-announcement-is-no-fact", content) is None


def test_contract_articles_are_terms() -> None:
    term = "第十条约定逾期退还押金每日按押金总额的千分之一支付违约金。"
    assert check("contract-articles-are-terms", term, category=Category.LAW, speaker="assistant") == Category.FACT
    statute = "《民法典》第七百三十三条规定，正常使用造成的损耗不需要承租人赔偿。"
    assert check("contract-articles-are-terms", statute, category=Category.LAW, speaker="assistant") is None
    unnamed = "定金不得超过主合同标的额的20%（第五百八十六条），20万元在上限之内。"  # dev2, judged
    assert check("contract-articles-are-terms", unnamed, category=Category.LAW, speaker="assistant") is None


def test_the_rules_of_both_engines_apply_to_the_offline_engine() -> None:
    from remember.extract import extract_turn

    outcome = extract_turn("郑国强的劳动合同传上来了。", "", user_name="alice", said_on=date(2026, 2, 3))
    assert outcome.items == []
    reply = "第十条约定逾期退还押金每日按押金总额的千分之一支付违约金，即每天3元。"
    outcome = extract_turn("押金迟迟不退。", reply, user_name="alice", said_on=date(2026, 2, 3))
    terms = [item for item in outcome.items if "第十条" in item.content]
    assert terms and all(item.category == Category.FACT.zh for item in terms)


@pytest.mark.parametrize(("message", "clients"), [
    ("何建军是杭州禾丰食品有限公司的老板。何建军想退货并要求赔偿。合同我传上来了。", ("何建军",)),
    ("我这有个交通事故的案子，当事人黄淑芬，今年1月6号早上骑电动车被撞了。", ("黄淑芬",)),
    ("付款是签约付40%，水电验收付30%，中期验收付25%，竣工付5%。", ()),  # 付款 is no 付 of a name
    ("王磊是我房东，押金一直不退。", ()),                                # the speaker's own landlord
])
def test_a_lawyer_relaying_names_the_client(message: str, clients: tuple[str, ...]) -> None:
    from remember.extraction.subjects import relayed_clients

    assert relayed_clients(message) == clients


@pytest.mark.parametrize("content", [
    "Ask which legal ground the company relies on (Article 40(3) requires a consultation first).",  # outside dev, judged
    "Tom Becker can still mention Article 55 as leverage in the demand.",                              # dev3, judged
    "律师函可以写明：押金6000元的支付情况，房东无权以自然损耗为由扣款（《民法典》第七百一十条）。",          # outside dev, judged
])
def test_advice_that_cites_a_statute_is_advice(content: str) -> None:
    assert check("advice-that-cites-a-statute-is-advice", content, category=Category.LAW,
                 speaker="assistant") == Category.ACTION


@pytest.mark.parametrize("content", [
    "未签书面劳动合同的，可以主张二倍工资差额（《劳动合同法》第八十二条）。",
    "出租人应当在租期届满后返还押金（《民法典》第七百三十三条）。",
    "An employer may terminate with 30 days' notice under Article 40.",
])
def test_a_statute_stated_stays_law(content: str) -> None:
    assert check("advice-that-cites-a-statute-is-advice", content, category=Category.LAW, speaker="assistant") is None


@pytest.mark.parametrize("content", [
    # dev3 e07-r1, e05-r2, e02-r3 and dev4 w06-r2: judged kind when filed as law
    "卫生间漏水属于工作成果不符合质量要求，罗建平可以要求修理、重作或者赔偿损失（《民法典》第七百八十一条）。",
    "8万5仍低于目前可主张的约92100元，残疾赔偿金还没算（解释第十二条）。",
    "六个月以上不满一年的按一年计算（《劳动合同法》第四十七条），经济补偿43200元、赔偿金86400元都不变。",
    "千分之一折合年化约36.5%，对方可能以违约金过分高于损失为由请求调减（《民法典》第五百八十五条第二款）。",
    "诉讼时效三年，自2025年9月30日还款期限届满起算（《民法典》第一百八十八条）。",
    "Under Article 55 of the Consumer Rights Protection Law the client can ask for a refund.",
])
def test_a_statute_applied_to_the_case_is_advice(content: str) -> None:
    turn = replace(TURN, user_msg="罗建平家卫生间漏水，装修公司不肯修。")
    assert check("a-statute-applied-is-advice", content, category=Category.LAW, speaker="assistant",
                 turn=turn) == Category.ACTION


@pytest.mark.parametrize("content, speaker", [
    ("根据《民法典》第五百八十五条，约定的违约金过分高于造成的损失的，可以请求予以适当减少。", "assistant"),
    ("未签书面劳动合同的，可以主张二倍工资差额（《劳动合同法》第八十二条）。", "assistant"),
    ("承租人可以请求减少租金或者不支付租金（《民法典》第七百二十九条）。", "assistant"),
    ("第十条约定逾期退还押金每日按押金总额的千分之一支付违约金，即每天3元。", "assistant"),  # the contract's: a fact
    ("罗建平可以要求修理（《民法典》第七百八十一条）。", "user"),  # only the assistant's words are re-filed
    ("罗建平可以要求修理（《民法典》第七百八十一条）。", "assistant"),  # a name nobody on the client's side said
    ("经营者提供的商品不符合质量要求的，消费者可以要求退货（《消费者权益保护法》第二十四条）。", "assistant"),
])
def test_a_statute_stated_or_a_contract_term_is_not_re_filed_as_advice(content: str, speaker: str) -> None:
    assert check("a-statute-applied-is-advice", content, category=Category.LAW, speaker=speaker) is None


def test_the_assistants_claim_is_advice() -> None:
    """The local model filed the assistant's "解除前先发书面催告" as 诉求 (dev3 e07, judged kind)."""
    assert check("answers-are-not-client-facts", "解除前先发书面催告。", category=Category.CLAIM,
                 speaker="assistant") == Category.ACTION
    assert check("answers-are-not-client-facts", "当事人要求退还押金。", category=Category.CLAIM, speaker="user") is None
