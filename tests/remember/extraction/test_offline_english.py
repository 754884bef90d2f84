"""The offline engine on English (and mixed) turns: categories, dates resolved against the
day said, amounts, third-person notes, reported speech for what it cannot classify, and
small talk that still gives nothing. Chinese behaviour is covered by test_offline.py."""

from __future__ import annotations

from datetime import date

import pytest

from remember.extraction import ExtractedItem, extract_offline, extract_amounts, keywords_for
from legaltext.dates_en import resolve

SAID_ON = date(2023, 5, 8)  # a Monday


def person_turn(user: str, reply: str = "That's great!") -> list[ExtractedItem]:
    """A turn of an imported conversation between two people, said on 8 May 2023."""
    return extract_offline(user, reply, user_name="Caroline", reply_name="Melanie", said_on=SAID_ON)


def only(items: list[ExtractedItem]) -> ExtractedItem:
    assert len(items) == 1, [i.content for i in items]
    return items[0]


def test_a_dated_event_is_written_in_the_third_person_with_its_date_resolved() -> None:
    item = only(person_turn("I went to a LGBTQ support group yesterday and it was so powerful."))
    assert item.content == "Caroline went to a LGBTQ support group yesterday (7 May 2023) and it was so powerful."
    assert (item.category, item.memory_type, item.scope_hint, item.speaker) == ("事实", "event", "case", "user")
    assert item.dates == ["7 May 2023"]
    assert item.confidence > 0.7  # clears routing's ADD bar
    assert "LGBTQ" in item.keywords
    assert "support" in item.keywords
    assert {"fact", "timeline"} <= set(item.tags)
    assert item.context.startswith("Event about")


@pytest.mark.parametrize(
    ("phrase", "resolved"),
    [
        ("yesterday", "7 May 2023"),
        ("last Tuesday", "2 May 2023"),
        ("the week before", "the week of 1 May 2023"),
        ("on May 7", "7 May 2023"),
        ("7 May 2023", "7 May 2023"),
        ("May 7th, 2022", "7 May 2022"),
        ("two weeks ago", "the week of 24 April 2023"),
        ("3 days ago", "5 May 2023"),
        ("last weekend", "the weekend of 6 May 2023"),
        ("last month", "April 2023"),
        ("last year", "2022"),
        ("next Friday", "12 May 2023"),
        ("2023-05-07", "7 May 2023"),
        ("two weekends ago", "the weekend of 29 April 2023"),
        ("in October", "October 2023"),
        ("last March", "March 2022"),
    ],
)
def test_dates_are_resolved_against_the_day_said(phrase: str, resolved: str) -> None:
    assert resolve(phrase, SAID_ON) == resolved


def test_unresolvable_dates_stay_as_written() -> None:
    assert resolve("a few days ago", SAID_ON) is None
    assert resolve("yesterday", None) is None  # nothing to resolve against
    item = only(extract_offline("I paid the deposit yesterday, the landlord has it.", ""))
    assert "yesterday" in item.content
    assert "(" not in item.content
    assert item.dates == ["yesterday"]


@pytest.mark.parametrize(
    ("text", "amount"),
    [("I paid $3,500 for it", "$3,500"), ("it cost 3,500 dollars", "3,500 dollars"),
     ("they owe RMB 20,000", "RMB 20,000"), ("a $2.5 million claim", "$2.5 million")],
)
def test_amounts_in_english_notations(text: str, amount: str) -> None:
    assert extract_amounts(text) == [amount]


def test_categories_of_english_statements() -> None:
    items = extract_offline(
        "I signed the lease on 1 March 2023 and paid a deposit of $3,500. "
        "I still have the receipts and the text messages from the landlord. "
        "I want my deposit back.",
        "",
        user_name="alice", said_on=SAID_ON,
    )
    assert [i.category for i in items] == ["事实", "证据", "诉求"]
    lease, evidence, claim = items
    assert lease.content == "alice signed the lease on 1 March 2023 and paid a deposit of $3,500."
    assert lease.dates == ["1 March 2023"]
    assert lease.amounts == ["$3,500"]
    assert lease.importance >= 0.8
    assert evidence.content == "alice still has the receipts and the text messages from the landlord."
    assert "receipts" in evidence.keywords
    assert claim.content == "alice wants alice's deposit back."
    assert all(i.speaker == "user" for i in items)


def test_a_preference_goes_to_the_users_profile() -> None:
    item = only(extract_offline("From now on, please always start with the conclusion and use bullet points.", "",
                                user_name="alice"))
    assert (item.category, item.memory_type, item.scope_hint) == ("偏好", "attribute", "user_profile")
    assert "answer style" in item.tags


def test_a_second_persons_taste_is_a_case_note_not_the_users_profile() -> None:
    items = person_turn("We had a picnic at the lake last weekend.", "I love painting sunsets with my kids.")
    picnic, taste = items
    assert picnic.content.startswith("Caroline said they had a picnic at the lake last weekend (the weekend of 6 May 2023)")
    assert taste.content == "Melanie loves painting sunsets with Melanie's kids."
    assert (taste.category, taste.scope_hint, taste.speaker) == ("偏好", "case", "assistant")


def test_what_cannot_be_classified_is_kept_as_low_importance_reported_speech() -> None:
    item = only(person_turn("I'm so proud of you, the painting looks like the ocean at dawn."))
    assert item.content == "Caroline said they are so proud of Melanie, the painting looks like the ocean at dawn."
    assert (item.category, item.memory_type, item.scope_hint) == ("事实", "event", "case")
    assert item.importance <= 0.35
    assert item.confidence > 0.7
    assert "said" in item.tags
    assert "painting" in item.keywords


def test_chinese_that_cannot_be_classified_is_kept_as_what_the_speaker_said() -> None:
    item = only(extract_offline("那家动物园的企鹅馆特别热闹。", "", user_name="alice"))
    assert item.content == "alice说：那家动物园的企鹅馆特别热闹。"
    assert (item.category, item.memory_type) == ("事实", "event")
    assert item.importance <= 0.35
    assert "原话" in item.tags
    assert "企鹅" in "".join(item.keywords)


@pytest.mark.parametrize(
    "message",
    ["ok thanks", "Hey Mel! Good to see you!", "Thank you so much!", "That's so cool, Caroline!",
     "What did you do last weekend?", "Wow, sounds amazing!", "好的谢谢", "Can you summarize this for me?",
     "Hey Caroline, hope all's good!", "Great to hear from you, Mel."],
)
def test_small_talk_and_questions_give_nothing(message: str) -> None:
    assert person_turn(message, "Haha, yes!") == []


def test_the_assistant_gives_only_advice_and_no_reported_speech() -> None:
    reply = "You should file a complaint with the regulator within 30 days. It was nice talking to you about it."
    advice = only(extract_offline("ok thanks a lot for this", reply, user_name="alice", reply_name="assistant"))
    assert advice.content == "The assistant advised: alice should file a complaint with the regulator within 30 days."
    assert (advice.category, advice.speaker) == ("行动建议", "assistant")


def test_mixed_chinese_and_english() -> None:
    item = only(extract_offline("我上周三在Apple Store花了RMB 8,000买了MacBook。", "好的。"))
    assert item.content == "用户上周三在Apple Store花了RMB 8,000买了MacBook。"
    assert item.amounts == ["RMB 8,000"]
    assert item.dates == ["上周三"]
    assert {"MacBook", "Apple"} <= set(item.keywords)


def test_an_english_sentence_around_a_chinese_term_is_written_as_english() -> None:
    said = "On Friday 13 March I got a bilingual 解除劳动合同通知书 by e-mail and in hard copy."
    item = only(extract_offline(said, "Noted.", user_name="claire", reply_name="assistant", said_on=date(2026, 3, 16)))
    assert item.content == "On Friday 13 March (13 March 2026) claire got a bilingual 解除劳动合同通知书 by e-mail and in hard copy."
    assert item.dates == ["13 March 2026"]
    assert "fact" in item.tags  # English tags, not 事实


def test_a_quote_over_several_sentences_keeps_its_words() -> None:
    said = ("The English part of the notice: 'Pursuant to Article 40(3) of the Labor Contract Law, your labor "
            "contract will terminate on 31 March 2026. The Company will pay three months' base salary, totalling "
            "RMB 99,000.' Nobody ever offered me another role.")
    items = extract_offline(said, "Noted.", user_name="claire", reply_name="assistant", said_on=date(2026, 3, 16))
    text = " ".join(item.content for item in items)
    assert "your labor contract will terminate on 31 March 2026." in text
    assert "three months' base salary" in text
    assert "the assistant's" not in text and "The assistant's" not in text
    assert "claire said nobody ever offered them another role" in text


def test_a_hyphenated_verb_agrees_at_its_last_part() -> None:
    item = only(person_turn("I always re-check the lease before I sign anything on 7 May 2023."))
    assert item.content.startswith("Caroline always re-checks the lease")


def test_more_than_five_statements_are_folded_not_dropped() -> None:
    sentences = [f"I bought {n} new {thing} for the shop on 7 May 2023." for n, thing in
                 enumerate(["chairs", "tables", "lamps", "rugs", "shelves", "mirrors", "clocks"], start=2)]
    items = person_turn(" ".join(sentences))
    assert len(items) == 5
    text = " ".join(i.content for i in items)
    for thing in ["chairs", "tables", "lamps", "rugs", "shelves", "mirrors", "clocks"]:
        assert thing in text
    assert "said" in items[-1].tags


def test_english_keywords_use_the_vendored_stopword_list() -> None:
    keywords = keywords_for("Caroline said she really loves the pottery class with the kids")
    assert "pottery" in keywords
    assert "kids" in keywords
    assert not {"said", "she", "really", "the", "with"} & set(keywords)


def test_extraction_is_deterministic() -> None:
    text = "I adopted a puppy named Oscar last month! We walk him every morning by the river."
    assert person_turn(text) == person_turn(text)


def test_english_items_from_an_llm_get_english_keywords_dates_and_context() -> None:
    from remember.extraction import validate_items

    (item,), reasons = validate_items([{"content": "Caroline adopted a puppy named Oscar in 2022.", "category": "fact"}])
    assert reasons == []
    assert "Oscar" in item.keywords
    assert "puppy" in item.keywords
    assert item.dates == ["in 2022"]
    assert item.context == "Event about Oscar and Caroline"


def test_a_chinese_sentence_quoting_an_english_email_stays_chinese() -> None:
    said = ("Nordvik市场部回邮件了，原文：“All images in the NORDVIK 2025 Press Kit were shot by our in-house studio "
            "in Aarhus in August 2024. Nordvik ApS owns all copyrights.”")
    text = " ".join(item.content for item in extract_offline(said, "好的。", user_name="c_xu", reply_name="assistant"))
    assert "c_xu说" in text or text.startswith("Nordvik市场部")
    assert "c_xu said" not in text
    assert "“All images in the NORDVIK 2025 Press Kit were shot by our in-house studio in Aarhus" in text


def test_a_draft_the_assistant_proposes_keeps_the_clients_voice() -> None:
    reply = ("- Your claim: RMB 18,200.\n"
             "- Demand letter, Chinese (to send): 黄先生：根据租赁合同第8条，押金应于交房后7日内退还。逾期我将向南山区人民法院起诉。\n"
             "- English: Mr. Huang, under Clause 8 the deposit is due within 7 days of handover. Otherwise I will sue "
             "in the Nanshan District People's Court.")
    items = extract_offline("The landlord kept RMB 18,200 of my deposit on 24 May 2026.", reply,
                            user_name="claire", reply_name="assistant")
    text = " ".join(item.content for item in items if item.speaker == "assistant")
    assert "“黄先生：根据租赁合同第8条，押金应于交房后7日内退还。逾期我将向南山区人民法院起诉。”" in text
    assert "助手将" not in text and "the assistant will" not in text.lower()


def test_a_line_that_only_names_a_language_is_not_a_draft_for_a_second_person() -> None:
    # In a conversation between two people nobody drafts for the other: pronouns are rewritten as usual.
    items = extract_offline("ok", "Chinese: I bought the flat in Shekou on 7 May 2023.", user_name="Caroline",
                            reply_name="Melanie", said_on=SAID_ON)
    assert "Melanie bought the flat" in " ".join(item.content for item in items)
