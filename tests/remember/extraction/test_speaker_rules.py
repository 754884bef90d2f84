"""Speaker-aware validation of LLM items (issue 30, docs/write-path.md "Speaker rules"): the
assistant's words are never the client's facts, a question never becomes an assertion, a fact's
numbers are the client's, items are whole sentences that keep names, and the five-item limit
keeps the most important items."""
from __future__ import annotations

from datetime import date

import pytest

from legaltext.numbers import amount_value, chinese_number
from remember.extraction import TurnText, validate_items
from remember.extraction.grounding import fragment_reason, unsaid_number

DEPOSIT_USER = "我叫王磊，2024年3月1日租了房子，月租金8,000元，押金七千元。租约到期房东不退押金，这合法吗？"
DEPOSIT_REPLY = ("押金一共是14000元。房东无正当理由不退押金属于违约，《民法典》第五百零九条规定当事人应当全面履行义务。"
                 "建议您先书面催告房东退还押金。")
#: Live chat: alice (the logged-in lawyer) asks, the product's assistant answers.
CHAT = TurnText(DEPOSIT_USER, DEPOSIT_REPLY, user_name="alice")


def check(*raw: dict, turn: TurnText = CHAT) -> tuple[list, list[str]]:
    return validate_items(list(raw), turn=turn)


# --- who said it ------------------------------------------------------------------------------


def test_the_assistants_advice_filed_as_a_fact_becomes_an_action_item() -> None:
    (item,), reasons = check({"content": "建议王磊先书面催告房东退还押金。", "category": "事实", "speaker": "assistant"})
    assert reasons == []
    assert (item.category, item.speaker, item.scope_hint) == ("行动建议", "assistant", "case")


@pytest.mark.parametrize("category", ["事实", "证据"])
def test_an_assistant_statement_is_never_a_client_fact_or_evidence(category: str) -> None:
    items, reasons = check({"content": "房东无正当理由不退押金属于违约。", "category": category, "speaker": "assistant"})
    assert items == []
    assert reasons == [
        f"item 1: said by the assistant: an answer is advice or law, never the client's {category}: "
        "'房东无正当理由不退押金属于违约。' [answers-are-not-client-facts]"
    ]


def test_the_assistants_law_and_the_users_facts_keep_their_categories() -> None:
    items, reasons = check(
        {"content": "《民法典》第五百零九条规定当事人应当全面履行义务。", "category": "法条", "speaker": "assistant"},
        {"content": "王磊于2024年3月1日租了房子，月租金8000元。", "category": "事实", "speaker": "user"},
    )
    assert reasons == []
    assert [(i.category, i.speaker) for i in items] == [("法条", "assistant"), ("事实", "user")]


def test_a_statute_nobody_in_the_turn_cited_is_refused() -> None:
    """The model's own addition, a law or an article the reply never named, is no source's."""
    items, reasons = check(
        {"content": "《民法典》第七百零三条规定租赁合同是出租人将租赁物交付承租人使用的合同。", "category": "法条",
         "speaker": "assistant"},
        {"content": "《消费者权益保护法》第二十四条规定经营者应当退货。", "category": "法条", "speaker": "assistant"},
    )
    assert items == []
    assert reasons == [
        "item 1: cites 《民法典》第703条, which the assistant did not cite: '《民法典》第七百零三条规定租赁合同是出租人将租赁物交付承租人…' [statutes-were-cited]",
        "item 2: cites 《消费者权益保护法》第24条, which the assistant did not cite: '《消费者权益保护法》第二十四条规定经营者应当退货。' [statutes-were-cited]",
    ]


def test_a_cited_statute_is_kept_whether_its_article_is_in_digits_or_words() -> None:
    turn = TurnText(DEPOSIT_USER, "依据《中华人民共和国民法典》第509条，房东应当履行约定。", user_name="alice")
    (item,), reasons = check({"content": "《民法典》第五百零九条规定当事人应当全面履行义务。", "category": "法条",
                              "speaker": "assistant"}, turn=turn)
    assert (reasons, item.category) == ([], "法条")


def test_a_repealed_law_the_assistant_cited_is_its_statement_not_law() -> None:
    """"《合同法》第四十条…" said in 2026 is the answer's claim, kept as its advice with the repeal said."""
    reply = "根据《合同法》第四十条，房东到期不退押金，您可以撤销合同。"
    turn = TurnText("房东到期不退押金，我能怎么办？", reply, user_name="alice", said_on=date(2026, 3, 10))
    (item,), reasons = check({"content": "《合同法》第四十条规定承租人可以撤销合同。", "category": "法条",
                              "speaker": "assistant"}, turn=turn)
    assert reasons == []
    assert (item.category, item.speaker, item.scope_hint) == ("行动建议", "assistant", "case")
    assert item.content == "《合同法》第四十条规定承租人可以撤销合同。（注：《合同法》已废止，现行为《民法典》。）"
    said_in_2019 = TurnText("房东到期不退押金，我能怎么办？", reply, user_name="alice", said_on=date(2019, 6, 1))
    (item,), _ = check({"content": "《合同法》第四十条规定承租人可以撤销合同。", "category": "法条",
                        "speaker": "assistant"}, turn=said_in_2019)
    assert (item.category, item.content) == ("法条", "《合同法》第四十条规定承租人可以撤销合同。")
    labour = TurnText("公司不续签，我能怎么办？", "依据《劳动合同法》第四十六条，公司应支付经济补偿。", said_on=date(2026, 3, 10))
    (item,), _ = check({"content": "《劳动合同法》第四十六条规定用人单位应支付经济补偿。", "category": "法条",
                        "speaker": "assistant"}, turn=labour)
    assert item.category == "法条"  # 劳动合同法 is in force: only the whole title counts


def test_a_client_named_earlier_is_named_in_a_turn_that_names_nobody() -> None:
    turn = TurnText("昨天我去鼓楼医院复查了，医生让我再休息两周。", "", user_name="alice", client_name="王磊")
    (item,), _ = check({"content": "昨天用户去鼓楼医院复查了，医生让用户再休息两周。", "category": "事实",
                        "speaker": "user"}, turn=turn)
    assert item.content == "昨天王磊去鼓楼医院复查了，医生让王磊再休息两周。"
    (preference,), _ = check({"content": "用户希望回答先给结论。", "category": "偏好", "speaker": "user"}, turn=turn)
    assert preference.content == "用户希望回答先给结论。"  # the product user's profile, not the client's
    # The other party named in the turn is not the speaker: 韩涛 does not replace "用户".
    other_party = TurnText("我看错了认定书，是韩涛主要责任，我次要责任。", "", user_name="b_zhou", client_name="周敏")
    (item,), _ = check({"content": "用户看错了认定书，韩涛主要责任，用户次要责任。", "category": "事实",
                        "speaker": "user"}, turn=other_party)
    assert item.content == "周敏看错了认定书，韩涛主要责任，周敏次要责任。"
    # A place jieba tags as a name ("余杭") names nobody.
    place = TurnText("我下午去余杭仲裁委递交了仲裁申请书。", "", user_name="alice")
    (item,), _ = check({"content": "用户下午去余杭仲裁委递交了仲裁申请书。", "category": "事实", "speaker": "user"},
                       turn=place)
    assert item.content == "用户下午去余杭仲裁委递交了仲裁申请书。"


def test_without_a_reply_every_item_is_the_users_and_an_unknown_speaker_is_the_turn() -> None:
    (alone,), _ = check({"content": "王磊的房东到期不退押金。", "category": "事实", "speaker": "assistant"},
                        turn=TurnText(DEPOSIT_USER))
    assert alone.speaker == "user"
    (both,), _ = check({"content": "王磊的房东到期不退押金。", "category": "事实", "speaker": "landlord"})
    assert both.speaker == "turn"


def test_a_named_second_person_is_not_the_assistant() -> None:
    """An imported conversation between two people: the reply's facts are Melanie's, kept."""
    turn = TurnText("I went to a pottery class yesterday.", "I adopted a second dog in 2022.",
                    user_name="Caroline", reply_name="Melanie")
    (item,), reasons = check({"content": "Melanie adopted a second dog in 2022.", "category": "fact",
                              "speaker": "assistant"}, turn=turn)
    assert reasons == []
    assert item.category == "事实"


def test_without_the_turn_only_the_item_itself_is_checked() -> None:
    """Callers that have no turn (a bench, a server probe) get the old checks: no speaker rules."""
    (item,), reasons = validate_items([{"content": "押金一共是14000元。", "category": "事实", "speaker": "assistant"}])
    assert reasons == []
    assert item.speaker == "assistant"


# --- questions are not assertions --------------------------------------------------------------


def test_a_question_is_not_turned_into_an_assertion() -> None:
    items, reasons = check({"content": "房东到期不退押金不合法。", "category": "事实", "speaker": "user"})
    assert items == []
    assert reasons == ["item 1: turns the question '租约到期房东不退押金，这合法吗？' into an assertion: '房东到期不退押金不合法。' [questions-stay-questions]"]


def test_a_verdict_its_speaker_stated_is_kept() -> None:
    turn = TurnText("房东扣了我的押金，我觉得这不合法。", "我们来看看合同怎么约定。", user_name="bob")
    (item,), reasons = check({"content": "用户认为房东扣押金不合法。", "category": "事实", "speaker": "user"}, turn=turn)
    assert reasons == []
    assert item.content == "用户认为房东扣押金不合法。"


def test_the_assistants_answer_to_the_question_is_its_own_statement() -> None:
    turn = TurnText("公司不给加班费，这合法吗？", "公司拒付加班费是违法的。建议保留考勤记录。")
    items, reasons = check(
        {"content": "公司拒付加班费违法。", "category": "事实", "speaker": "user"},
        {"content": "公司拒付加班费是违法的。", "category": "法条", "speaker": "assistant"},
        turn=turn,
    )
    assert [i.content for i in items] == ["公司拒付加班费是违法的。"]
    assert reasons == ["item 1: turns the question '公司不给加班费，这合法吗？' into an assertion: '公司拒付加班费违法。' [questions-stay-questions]"]


# --- numbers are the client's -------------------------------------------------------------------


def test_a_sum_the_answer_made_up_is_not_the_clients_fact() -> None:
    items, reasons = check(
        {"content": "王磊的押金一共是14000元。", "category": "事实", "speaker": "turn"},
        {"content": "王磊的月租金是8000元，押金是7000元。", "category": "事实", "speaker": "turn"},
    )
    assert [i.content for i in items] == ["王磊的月租金是8000元，押金是7000元。"]  # 8,000 and 七千 said
    assert reasons == ["item 1: the number 14000元 is not in what the client said: '王磊的押金一共是14000元。' [numbers-were-said]"]


@pytest.mark.parametrize(
    ("content", "unsaid"),
    [
        ("王磊在2024年3月1日租了房子。", None),
        ("王磊在3月1日租了房子。", None),  # leaving out the year is fine
        ("王磊在2024年3月5日租了房子。", "2024年3月5日"),
        ("王磊在2023年3月1日租了房子。", "2023年3月1日"),
        ("王磊的月租金是八千元。", None),
        ("王磊的月租金是1.5万元。", "1.5万元"),
        ("王磊的租房合同编号为2024030188。", "2024030188"),
        ("王磊一个月后搬走了。", "一个月后"),
    ],
)
def test_dates_amounts_and_id_numbers_must_be_said(content: str, unsaid: str | None) -> None:
    assert unsaid_number(content, DEPOSIT_USER) == unsaid


def test_number_normalisation() -> None:
    assert chinese_number("一万四千") == 14000
    assert chinese_number("二〇二四") == 2024
    assert chinese_number("押金") is None
    assert amount_value("14,000元") == amount_value("一万四千元") == amount_value("1.4万元") == 14000
    assert unsaid_number("押金8,000元", "押金８０００元") is None


def test_advice_and_claims_may_hold_the_answers_numbers() -> None:
    (item,), reasons = check({"content": "建议王磊要求房东退还押金14000元。", "category": "行动建议", "speaker": "assistant"})
    assert reasons == []
    assert item.amounts == ["14000元"]


# --- names and whole sentences ---------------------------------------------------------------------


def test_the_person_the_turn_names_replaces_user_and_client() -> None:
    items, reasons = check(
        {"content": "用户于2024年3月1日租了房子。", "category": "事实", "speaker": "user"},
        {"content": "建议客户先书面催告房东退还押金。", "category": "行动建议", "speaker": "assistant"},
    )
    assert reasons == []
    assert [i.content for i in items] == ["王磊于2024年3月1日租了房子。", "建议王磊先书面催告房东退还押金。"]


def test_names_are_only_substituted_when_unambiguous() -> None:
    two = TurnText("王磊和李强合租了一套房，房东不退押金。", "建议协商。", user_name="alice")
    (item,), _ = check({"content": "用户与室友合租了一套房。", "category": "事实", "speaker": "user"}, turn=two)
    assert item.content == "用户与室友合租了一套房。"
    # In live chat the speaker is the lawyer's login (alice), not the client: it names nobody.
    anonymous = TurnText("房东到期不退押金，我该怎么办？", "建议协商。", user_name="alice")
    (item,), _ = check({"content": "用户的房东到期不退押金。", "category": "事实", "speaker": "user"}, turn=anonymous)
    assert item.content == "用户的房东到期不退押金。"


def test_an_imported_speakers_name_replaces_the_user() -> None:
    turn = TurnText("I went to a pottery class yesterday.", "That sounds fun!", user_name="Caroline", reply_name="Melanie")
    (item,), _ = check({"content": "The user went to a pottery class.", "category": "fact", "speaker": "user"}, turn=turn)
    assert item.content == "Caroline went to a pottery class."


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("提出违约", "a fragment, not a sentence (under 6 characters)"),
        ("书面通知。", "a fragment, not a sentence (under 6 characters)"),
        ("房东到期不退押金，王磊可以按照以下方式进行主张：", "a fragment: it ends with a colon, introducing what is not there"),
        ("Written notice", "a fragment, not a sentence (under 3 words)"),
        ("The steps are:", "a fragment: it ends with a colon, introducing what is not there"),
        ("商家拒绝退款。", None),
        ("Send a letter.", None),
    ],
)
def test_fragments(content: str, reason: str | None) -> None:
    assert fragment_reason(content) == reason


def test_fragments_are_refused_with_their_reason() -> None:
    items, reasons = check(
        {"content": "提出违约", "category": "诉求", "speaker": "user"},
        {"content": "房东到期不退押金，王磊可以按照以下方式进行主张：", "category": "法条", "speaker": "assistant"},
    )
    assert items == []
    assert reasons == [
        "item 1: a fragment, not a sentence (under 6 characters): '提出违约' [whole-statement]",
        "item 2: a fragment: it ends with a colon, introducing what is not there: '房东到期不退押金，王磊可以按照以下方式进行主张：' [whole-statement]",
    ]


# --- the five-item limit ----------------------------------------------------------------------------


def test_the_limit_keeps_the_clients_most_important_items() -> None:
    raw = [
        {"content": "建议王磊先与房东协商退还押金。", "category": "行动建议", "speaker": "assistant"},
        {"content": "建议王磊保留租房合同和转账记录。", "category": "行动建议", "speaker": "assistant"},
        {"content": "《民法典》第五百零九条规定当事人应当全面履行义务。", "category": "法条", "speaker": "assistant"},
        {"content": "王磊于2024年3月1日租了房子，月租金8000元。", "category": "事实", "speaker": "user"},
        {"content": "王磊要求房东退还押金7000元。", "category": "诉求", "speaker": "user"},
        {"content": "王磊的房东到期不退押金。", "category": "事实", "speaker": "user"},
        {"content": "王磊希望回答先给结论。", "category": "偏好", "speaker": "user", "importance": 0.9},
    ]
    items, reasons = check(*raw)
    # the four user items, then the assistant's statute (law outranks advice); in the order given
    assert [i.content for i in items] == [raw[n]["content"] for n in (2, 3, 4, 5, 6)]
    least = "less important than item 3 (assistant, 法条), the least kept"
    assert reasons == [
        f"item 1: dropped: over the limit of 5 items per turn, {least}: '建议王磊先与房东协商退还押金。'",
        f"item 2: dropped: over the limit of 5 items per turn, {least}: '建议王磊保留租房合同和转账记录。'",
    ]


def test_refusals_and_drops_are_listed_in_item_order() -> None:
    raw = [{"content": f"王磊第{n}次催房东退还押金，房东仍拒绝。", "category": "事实", "speaker": "user"} for n in range(1, 7)]
    raw.insert(0, {"content": "押金一共是14000元。", "category": "事实", "speaker": "assistant"})
    items, reasons = check(*raw)
    assert len(items) == 5
    assert items[0].content.startswith("王磊第1次")
    assert [r.split(":")[0] for r in reasons] == ["item 1", "item 7"]
    assert "said by the assistant" in reasons[0]
    assert "dropped: over the limit" in reasons[1]
