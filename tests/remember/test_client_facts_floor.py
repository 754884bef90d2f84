"""The client's facts floor under an LLM's extraction (issue 30, items 2–3): the values a small
model leaves out of a turn are still noted from the client's own words, so a later correction
has a note to supersede; the assistant's unsourced verdict is advice, not a 法条 note; the
five-item limit keeps the client's facts before the assistant's items.

Turns go through the fake OpenAI-compatible server over real HTTP and the real write path."""
from __future__ import annotations

import pytest

from memory.models import Note, RoutingDecision, TurnExtraction
from tests.fake_llm import json_reply
from tests.remember.factories import ConversationFactory

RENT_TURN = "我叫王磊，2025年3月租了一套房子，月租金8000元，押金16000元。现在租约到期了，房东不退押金，我该怎么办？"


@pytest.fixture
def rent_conversation(world):
    return ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit, title="押金")


def _turn(fake_llm, make_turn, conversation, said: str, reply: str, *items: dict):
    fake_llm.script(json_reply({"knowledge": list(items)}))
    turn = make_turn(conversation, said, reply)
    assert turn.status == "done", turn.last_error
    return turn


def _item(content: str, category: str = "事实", speaker: str = "user") -> dict:
    return {"content": content, "category": category, "speaker": speaker}


def test_the_rent_the_model_left_out_is_noted_and_the_correction_supersedes_it(
    world, rent_conversation, make_turn, fake_llm, llm_settings
):
    """What the live Qwen 1.5B did: one item of the first turn, then the correction's value."""
    first = _turn(fake_llm, make_turn, rent_conversation, RENT_TURN, "建议您先书面催告房东退还押金。",
                  _item("房东不退押金是因为租约到期"))

    floor_items = [item for item in first.items if item["origin"] == "rules"]
    assert len(floor_items) == 1
    assert "8000元" in floor_items[0]["content"]
    assert floor_items[0]["content"].startswith("王磊，2025年3月")  # the client is named, not "用户叫王磊"
    assert floor_items[0]["speaker"] == "user"
    assert any(reason.startswith("added from the client's words") for reason in first.added)
    assert not any(reason.startswith("added") for reason in first.rejected)  # nothing was refused
    rent = Note.objects.get(content=floor_items[0]["content"])
    assert rent.status == "active"

    second = _turn(fake_llm, make_turn, rent_conversation, "更正：月租金是8500元，不是8000元。", "好的。",
                   _item("月租金是8500元"))

    assert [item["origin"] for item in second.items] == [""]  # 8500 stated, 8000 rejected: nothing to add
    assert RoutingDecision.objects.get(turn=second).action == "update"
    rent.refresh_from_db()
    assert rent.status == "superseded"
    # the stored note revised, not replaced by the bare correction: the date and deposit stay
    assert rent.superseded_by.content == "王磊，2025年3月租了一套房子，月租金8500元，押金16000元。"
    assert rent.superseded_by.status == "active"
    assert not Note.objects.filter(content="月租金是8500元").exists()


def test_nothing_is_added_when_the_model_kept_every_value(world, rent_conversation, make_turn, fake_llm, llm_settings):
    turn = _turn(fake_llm, make_turn, rent_conversation, RENT_TURN, "",
                 _item("王磊2025年3月租了一套房子，月租金8000元。"), _item("王磊交了押金16000元。"))

    assert [item["origin"] for item in turn.items] == ["", ""]
    assert turn.added == []
    assert Note.objects.filter(status="active").count() == 2


def test_the_assistants_unsourced_verdict_is_advice_and_a_cited_statute_stays_law(
    world, rent_conversation, make_turn, fake_llm, llm_settings
):
    turn = _turn(
        fake_llm, make_turn, rent_conversation, "房东说要扣一个月房租当违约金，这合法吗？",
        "房东扣一个月房租作为违约金是不合法的。根据《民法典》第五百八十五条，违约金过高的可以请求适当减少。",
        _item("房东扣一个月房租作为违约金是不合法的", "法条", "assistant"),
        _item("根据《民法典》第五百八十五条，约定的违约金过分高于造成的损失的，可以请求予以适当减少。", "法条", "assistant"),
    )

    assert [item["category"] for item in turn.items] == ["行动建议", "法条"]
    verdict = Note.objects.get(content="房东扣一个月房租作为违约金是不合法的")
    assert verdict.category == "action"
    assert verdict.memory_scope == "case"
    assert Note.objects.get(content__startswith="根据《民法典》第五百八十五条").category == "law"


def test_the_limit_keeps_the_clients_missed_facts_before_the_assistants_items(
    world, rent_conversation, make_turn, fake_llm, llm_settings
):
    advice = [_item(f"根据《民法典》第{n}条，出租人应当按照约定返还押金。", "法条", "assistant")
              for n in ("七百零三", "七百零四", "七百零五", "七百零六", "七百零七")]
    reply = "".join(item["content"] for item in advice)
    turn = _turn(fake_llm, make_turn, rent_conversation, RENT_TURN, reply, *advice)

    assert len(turn.items) == 5
    assert [item["origin"] for item in turn.items].count("rules") == 1
    assert any(reason.startswith("dropped: over the limit") for reason in turn.rejected)
    assert Note.objects.filter(content__contains="8000元", status="active").exists()


def test_the_offline_engine_revises_one_value_of_a_note_that_holds_more(world, rent_conversation, make_turn):
    """Without an LLM the first turn is one note holding rent, deposit and date; the correction
    revises the rent in it (it was added beside, leaving 8000 current)."""
    make_turn(rent_conversation, RENT_TURN, "")
    turn = make_turn(rent_conversation, "更正：月租金是8500元，不是8000元。", "")

    decision = RoutingDecision.objects.get(turn=turn)
    assert decision.action == "update", decision.reason
    active = list(Note.objects.filter(status="active", category="fact").values_list("content", flat=True))
    assert active == ["王磊，2025年3月租了一套房子，月租金8500元，押金16000元。"]  # named, not "用户叫王磊"


def test_a_deduction_from_the_deposit_revises_nothing(world, rent_conversation, make_turn):
    """"房东其实要扣押金3000元" names the deposit and a sum, but says more than the deposit clause:
    the stored 16000 stays."""
    make_turn(rent_conversation, RENT_TURN, "")
    make_turn(rent_conversation, "房东其实要扣押金3000元。", "")

    assert Note.objects.filter(status="active", content__contains="押金16000元").exists()
    assert not Note.objects.filter(status="superseded").exists()


def test_lines_added_before_the_added_column_move_out_of_the_refused_items(world, rent_conversation, make_turn):
    """Migration 0026: the floor's lines were kept among the refused items, where an auditor read
    them as refusals; they move to ``added``, the refusals stay."""
    from importlib import import_module

    from django.apps import apps

    migration = import_module("memory.migrations.0026_turn_extraction_added")
    turn = make_turn(rent_conversation, RENT_TURN, "建议您先书面催告房东退还押金。", run=False)
    added = "added from the client's words (the model's items leave out its values): '王磊，2025年3月租了一套房子'"
    refused = "item 1: cites 《民法典》第703条, which the assistant did not cite"
    TurnExtraction.objects.filter(pk=turn.pk).update(rejected=[refused, added], added=[])
    untouched = make_turn(rent_conversation, "押金的事怎么办？", "先催告。", run=False)
    TurnExtraction.objects.filter(pk=untouched.pk).update(rejected=[refused], added=[])

    migration.move_added_lines(apps, None)

    turn.refresh_from_db()
    untouched.refresh_from_db()
    assert (turn.rejected, turn.added) == ([refused], [added])
    assert (untouched.rejected, untouched.added) == ([refused], [])
    migration.keep_added_lines_among_rejected(apps, None)  # and back
    turn.refresh_from_db()
    assert turn.rejected == [refused, added]


DEPOSIT_TURN = "林晓雯的事情跟你说一下：她租了一套房，房东叫周海峰。去年3月15日起租，月租4500元，押金2000元。"


def test_a_date_the_model_wrote_as_said_is_stated_so_the_correction_leaves_no_copy_current(
    world, rent_conversation, make_turn, fake_llm, llm_settings
):
    """What the live Qwen 1.5B did on the note-truth set (d01): it copied the lawyer's message
    with "去年3月15日"; the floor, reading "去年3月15日（2025年3月15日）", added the same sentence
    again, and the correction revised one copy and left 2000 current in the other."""
    first = _turn(fake_llm, make_turn, rent_conversation, DEPOSIT_TURN, "",
                  _item("林晓雯去年3月15日起租，月租4500元，押金2000元。"))

    assert first.added == [] and [item["origin"] for item in first.items] == [""]
    second = _turn(fake_llm, make_turn, rent_conversation, "刚才说错了，押金是3000不是2000。", "好的，押金按3000元计算。",
                   _item("押金是3000元", speaker="user"))

    assert RoutingDecision.objects.get(turn=second, action="update")
    current = list(Note.objects.filter(status="active").values_list("content", flat=True))
    assert not [text for text in current if "2000" in text and "3000" not in text], current
    assert any("3000" in text for text in current), current


def test_a_date_the_model_left_vaguer_than_the_client_is_still_added(
    world, rent_conversation, make_turn, fake_llm, llm_settings
):
    turn = _turn(fake_llm, make_turn, rent_conversation, DEPOSIT_TURN, "",
                 _item("林晓雯3月起租，月租4500元，押金2000元。"))  # the day 15 left out

    assert [item["origin"] for item in turn.items] == ["", "rules"]


def test_a_correction_the_model_wrote_without_units_is_not_added_again(
    world, rent_conversation, make_turn, fake_llm, llm_settings
):
    """The live first hour: the model's "押金是3000不是2000" revised the 2000 note, and the floor,
    not reading a bare 3000 as 3000元, added "更正：押金是3000元，不是2000元。" beside it."""
    _turn(fake_llm, make_turn, rent_conversation, "林晓雯的押金是2000元，房东说要扣一半。", "",
          _item("林晓雯的押金是2000元，房东说要扣一半。"))
    second = _turn(fake_llm, make_turn, rent_conversation, "刚才说错了，押金是3000不是2000。", "",
                   _item("押金是3000不是2000"))

    assert second.added == [] and [item["origin"] for item in second.items] == [""]
    current = list(Note.objects.filter(status="active").values_list("content", flat=True))
    assert len(current) == 1 and "3000" in current[0] and "更正" not in current[0], current
