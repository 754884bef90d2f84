"""Exact identifiers first: a question naming an ID number, a case number, an invoice or contract
number or a phone number gets the notes and messages holding exactly that string first — only
those the asker may search: alice (assigned), bob (same firm, walled off from the deposit matter)
and charlie (another firm) each see only their own holders."""
from __future__ import annotations

import json

import pytest

from memory.models import Conversation, MemoryScope
from memory.services.conversations import save_message
from recall import search_memory
from recall.identifiers import identifiers_in
from tests.clients import client_for

pytestmark = pytest.mark.django_db

ID_NUMBER = "11010119900307123X"
CASE_NUMBER = "(2025)浙0106民初1234号"


@pytest.mark.parametrize("text, expected", [
    ("客户身份证号11010119900307123x，住北京", [("id_number", "11010119900307123X")]),
    ("案号（2025）浙0106民初1234号，下周开庭", [("case_number", "(2025)浙0106民初1234号")]),
    ("发票号码：04403212，金额6499元", [("invoice_number", "04403212")]),
    ("合同编号HT-2024-0315约定月租3500元", [("contract_number", "HT-2024-0315")]),
    ("invoice no. INV-2024-001 was paid", [("invoice_number", "INV-2024-001")]),
    ("房东电话13800138000，座机010-87654321", [("phone_number", "13800138000"), ("phone_number", "010-87654321")]),
    ("订单号JD20260220的电脑", [("code", "JD20260220")]),
    ("电子发票 12345678901234567890", [("number", "12345678901234567890")]),
    ("房东要扣2000元押金，2026年3月1日说的", []),
])
def test_identifiers_are_recognised_by_kind(text, expected):
    assert [(i.kind, i.text) for i in identifiers_in(text)] == expected


@pytest.fixture
def holders(world):
    """Notes and a message holding the ID number or the case number, look-alikes that do not,
    and notes about IDs in general that a plain search would bring back."""
    w = world
    n = {
        "id_deposit": w.note(f"租客身份证号{ID_NUMBER.lower()}，押金收据上的签名与此一致。", matter=w.matter_deposit),
        "id_other": w.note("租客的担保人身份证号110101199003071240。", matter=w.matter_deposit),
        "id_copy": w.note("客户已提供身份证复印件和租房合同。", matter=w.matter_deposit),
        "id_profile": w.note("alice 习惯核对当事人的身份证号码。", scope=MemoryScope.USER_PROFILE, owner=w.alice),
        "case_laptop": w.note("本案案号为（2025）浙0106民初1234号，3月20日开庭。", matter=w.matter_laptop),
        "case_other": w.note("另一案号为(2025)浙0106民初1235号，已经结案。", matter=w.matter_laptop),
        "id_secret": w.note(f"并购案联系人身份证号{ID_NUMBER}。", matter=w.matter_secret),
        "id_beta": w.note(f"Beta 客户身份证号{ID_NUMBER}。", firm=w.firm_b, matter=w.matter_b),
    }
    conversation = Conversation.objects.create(firm=w.firm_a, user=w.alice, matter=w.matter_deposit, title="押金")
    said = save_message(conversation, "user", f"租客的身份证号是{ID_NUMBER}，请记下。", speaker="alice")
    save_message(conversation, "assistant", "好的，已记录租客身份信息。", speaker="assistant")
    return n, said


def _note_ids(hits) -> list:
    return [hit.note.pk for hit in hits if hit.note is not None]


def test_the_holders_of_an_id_number_come_first_for_alice(world, holders):
    n, said = holders
    result = search_memory(world.alice, f"身份证号{ID_NUMBER}的租客交了多少押金？", k=10)
    first = result.hits[:2]
    assert {hit.note.pk if hit.note else hit.message.pk for hit in first} == {n["id_deposit"].pk, said.pk}
    assert all("精确匹配" in hit.reasons[0] or ID_NUMBER in " ".join(hit.reasons) for hit in first)
    shown = _note_ids(result.hits)
    for other in ("id_other", "id_copy", "id_profile"):  # may follow, never before a holder
        if n[other].pk in shown:
            assert shown.index(n[other].pk) > shown.index(n["id_deposit"].pk)
    assert not {n["id_secret"].pk, n["id_beta"].pk} & set(shown)
    assert [hit.rank for hit in result.hits] == list(range(1, len(result.hits) + 1))


def test_a_case_number_matches_whatever_the_width_of_its_brackets(world, holders):
    n, _said = holders
    result = search_memory(world.bob, f"{CASE_NUMBER}什么时候开庭？", k=5)
    assert _note_ids(result.hits)[0] == n["case_laptop"].pk
    holders_shown = [hit for hit in result.hits if hit.note is not None and "1235号" in hit.note.content]
    assert not holders_shown or result.hits.index(holders_shown[0]) > 0


@pytest.mark.parametrize("user_name, allowed", [
    ("alice", {"id_deposit"}),
    ("bob", set()),  # same firm, walled off from the deposit matter and the secret one
    ("charlie", {"id_beta"}),  # another firm: only its own holder
])
def test_nobody_gets_an_identifier_match_they_may_not_see(world, holders, user_name, allowed):
    n, said = holders
    user = getattr(world, user_name)
    every_holder = {key for key in n if ID_NUMBER in n[key].content.upper()}
    for strategy in ("layered", "semantic"):
        result = search_memory(user, ID_NUMBER, k=20, strategy=strategy)
        shown = set(_note_ids(result.hits))
        assert {key for key in every_holder if n[key].pk in shown} == allowed
        messages = {m.pk for hit in result.hits for m in hit.turn_messages}
        assert (said.pk in messages) == (user_name == "alice")
    response = client_for(user).post("/api/memory/search", data=json.dumps({"query": ID_NUMBER, "k": 20}),
                                      content_type="application/json")
    assert response.status_code == 200
    body = response.content.decode()
    for key in every_holder - allowed:
        assert str(n[key].pk) not in body and n[key].content not in body


def test_my_memory_lists_only_the_notes_holding_the_id_number(world, holders):
    n, _said = holders
    client = client_for(world.alice)
    page = client.get("/memory/", {"q": ID_NUMBER}).content.decode()
    assert str(n["id_deposit"].pk) in page
    for key in ("id_other", "id_copy", "id_profile", "case_laptop", "id_secret", "id_beta"):
        assert str(n[key].pk) not in page, key
    assert client_for(world.bob).get("/memory/", {"q": ID_NUMBER}).content.decode().count("data-note-id=") == 0
