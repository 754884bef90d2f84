"""Nothing said is lost: every visible raw message is a candidate of every layered search, fused
with the notes (one slot for a note and its source message), under the conversation's
visibility rule — alice sees her conversations, bob and charlie never do, and a conversation
about a matter leaves alice's results when she is taken off the matter."""
from __future__ import annotations

import json

import pytest
from django.utils.timezone import localtime

from memory.models import Conversation, Message
from memory.services.conversations import save_message
from remember.message_index import index_messages
from recall import build_system_message, search_memory
from memory.services.conversations import finish_reply
from memory.services.notes import supersede_note
from memory.services.tenancy import unassign_user
from tests.clients import client_for
from tests.remember.factories import at

pytestmark = pytest.mark.django_db

LEASE_EN = "By the way, the client signed the warehouse lease with Northwind on 3 March 2024, for five years."
NOISE_EN = [
    "Please remind me to call the court clerk about the hearing schedule tomorrow.",
    "The weather is terrible today, I will work from home.",
    "Our paralegal is preparing the exhibit list for the deposition.",
]
DEPOSIT_ZH = "房东在电话里答应下周五之前把三千元押金退回到我的银行卡。"
NOISE_ZH = ["明天上午十点要去法院立案庭交材料。", "这周事务所的打印机又坏了。"]


def said(conversation: Conversation, text: str, *, role: str = "user", day: int = 2, minute: int = 0) -> Message:
    speaker = conversation.user.username if role == "user" else "assistant"
    return save_message(conversation, role, text, speaker=speaker, said_at=at(day, 10, minute))


@pytest.fixture
def talk(world):
    """alice's conversation on the deposit matter (bob is walled off from it) and her matter-less
    one, every message stored and indexed the way the chat's turn job does it."""
    on_matter = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit)
    private = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=None)
    messages = {"lease": said(private, LEASE_EN, minute=1), "deposit": said(on_matter, DEPOSIT_ZH, minute=2)}
    for minute, text in enumerate(NOISE_EN, start=3):
        said(private, text, minute=minute)
    for minute, text in enumerate(NOISE_ZH, start=10):
        said(on_matter, text, minute=minute)
    assert index_messages() == 7
    return on_matter, private, messages


def message_ids(result) -> list[int]:
    return [hit.message.pk for hit in result.hits if hit.kind == "message"]


def test_an_english_question_finds_what_was_said_without_any_cue(world, talk):
    _, _, messages = talk
    result = search_memory(world.alice, "When did the client sign the lease?", k=5)
    assert not result.plan.search_messages  # no explicit reference to earlier talk
    top = result.hits[0]
    assert (top.kind, top.message.pk, top.layer) == ("message", messages["lease"].pk, "conversation")
    assert top.note is None
    assert top.source_message_ids == [messages["lease"].pk]
    assert top.breakdown.keyword > 0
    assert any("sign" in reason for reason in top.reasons)


def test_a_chinese_question_finds_what_was_said_without_any_cue(world, talk):
    _, _, messages = talk
    result = search_memory(world.alice, "房东什么时候退押金", k=5, matter_id=world.matter_deposit.pk)
    assert message_ids(result)[0] == messages["deposit"].pk
    assert result.messages[0].message.pk == messages["deposit"].pk


def test_a_message_not_yet_embedded_is_found_by_its_keywords(world, talk):
    on_matter, _, _ = talk
    fresh = said(on_matter, "仲裁委员会受理通知书编号为 HZ2024-118。", minute=30)
    assert Message.objects.get(pk=fresh.pk).embedding is None
    result = search_memory(world.alice, "受理通知书编号", k=5)
    assert fresh.pk in message_ids(result)


@pytest.mark.parametrize("who", ["bob", "charlie"])
def test_others_never_see_alices_messages(world, talk, who):
    user = getattr(world, who)
    everything = set(Message.objects.values_list("pk", flat=True))
    for question in ("When did the client sign the lease?", "房东什么时候退押金", "押金", "lease"):
        result = search_memory(user, question, k=50)
        assert not set(message_ids(result)) & everything
    with pytest.raises(Exception):
        search_memory(user, "押金", conversation=talk[0])


def test_bob_on_the_same_matter_still_does_not_see_alices_conversation(world):
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_laptop)
    message = said(conversation, "商家客服承认屏幕是出厂质量问题。")
    index_messages()
    assert message.pk in message_ids(search_memory(world.alice, "客服承认质量问题", k=5))
    assert message.pk not in message_ids(search_memory(world.bob, "客服承认质量问题", k=50))


def test_a_matter_conversation_leaves_the_results_when_alice_is_unassigned(world, talk):
    _, _, messages = talk
    assert messages["deposit"].pk in message_ids(search_memory(world.alice, "房东什么时候退押金", k=5))
    unassign_user(world.matter_deposit.assignments.get(user=world.alice), actor=world.alice)
    result = search_memory(world.alice, "房东什么时候退押金", k=50)
    assert messages["deposit"].pk not in message_ids(result)
    assert messages["lease"].pk in message_ids(search_memory(world.alice, "lease", k=5))  # matter-less stays


def test_a_note_and_its_source_message_take_one_slot(world, talk):
    on_matter, _, messages = talk
    note = world.note("房东承诺下周五前退还三千元押金。", matter=world.matter_deposit, conversation=on_matter,
                      source_message_ids=[messages["deposit"].pk])
    result = search_memory(world.alice, "房东什么时候退押金", k=5, matter_id=world.matter_deposit.pk)
    standing_for = [hit for hit in result.hits if messages["deposit"].pk in hit.source_message_ids]
    assert len(standing_for) == 1
    assert standing_for[0].kind == "note"
    assert standing_for[0].note.pk == note.pk
    assert any("合并为一条" in reason for reason in standing_for[0].reasons)
    assert len({(hit.kind, hit.note.pk if hit.note else hit.message.pk) for hit in result.hits}) == len(result.hits)
    assert [hit.rank for hit in result.hits] == list(range(1, len(result.hits) + 1))


def test_the_api_and_the_injected_context_say_which_is_which(world, talk):
    _, _, messages = talk
    world.note("仓库租约的违约金为三个月租金。", matter=world.matter_deposit)
    response = client_for(world.alice).post(
        "/api/memory/search", data=json.dumps({"query": "client lease 押金 租约", "k": 10}),
        content_type="application/json",
    )
    assert response.status_code == 200
    hits = response.json()["hits"]
    kinds = {hit["kind"] for hit in hits}
    assert kinds == {"note", "message"}
    for hit in hits:
        if hit["kind"] == "message":
            assert hit["note"] is None
            assert hit["message"]["id"] == hit["source_message_ids"][0]
            assert hit["layer"] == "conversation"
            assert hit["message"]["speaker"] == "alice"
        else:
            assert hit["message"] is None
            assert hit["note"]["id"]
    lease = next(hit for hit in hits if hit["kind"] == "message" and hit["message"]["id"] == messages["lease"].pk)
    assert lease["message"]["content"] == LEASE_EN
    injected = build_system_message(search_memory(world.alice, "client lease 押金 租约", k=10))["content"]
    assert "【对话原文】" in injected
    assert "2026-03-02 10:01 alice] " + LEASE_EN in injected


def test_charlie_gets_no_message_through_the_api(world, talk):
    response = client_for(world.charlie).post(
        "/api/memory/search", data=json.dumps({"query": "When did the client sign the lease?", "k": 50}),
        content_type="application/json",
    )
    assert response.status_code == 200
    assert all(hit["kind"] == "note" for hit in response.json()["hits"])


def test_a_history_question_returns_the_superseded_value_with_its_window_below_the_current(world):
    old = world.note("租赁合同约定月租金为5000元。", matter=world.matter_deposit)
    new = world.note("月租金自2026年起调整为6000元。", matter=world.matter_deposit)
    supersede_note(old, new, actor="system:test", reason="rent changed")
    result = search_memory(world.alice, "之前的租金是多少", k=10, matter_id=world.matter_deposit.pk)
    assert result.plan.history
    notes = [hit.note.pk for hit in result.hits if hit.kind == "note"]
    assert new.pk in notes
    assert old.pk in notes
    assert notes.index(new.pk) < notes.index(old.pk)
    earlier = next(hit for hit in result.hits if hit.note is not None and hit.note.pk == old.pk)
    assert earlier.note.valid_to is not None
    assert any("已被新版本取代" in reason and f"{localtime(earlier.note.valid_to):%Y-%m-%d}" in reason for reason in earlier.reasons)
    english = search_memory(world.alice, "what was the rent previously", k=10, matter_id=world.matter_deposit.pk)
    assert english.plan.history
    assert old.pk in [hit.note.pk for hit in english.hits if hit.note is not None]
    current_only = search_memory(world.alice, "租金是多少", k=10, matter_id=world.matter_deposit.pk)
    assert not current_only.plan.history
    assert old.pk not in [hit.note.pk for hit in current_only.hits if hit.note is not None]
    assert new.pk in [hit.note.pk for hit in current_only.hits if hit.note is not None]


def test_a_question_for_the_first_version_ranks_the_corrected_note_above_its_correction(world):
    old = world.note("租赁合同约定月租金为5000元。", matter=world.matter_deposit)
    new = world.note("更正一下，租赁合同约定的月租金是5500元。", matter=world.matter_deposit)
    supersede_note(old, new, actor="system:test", reason="corrected")
    for question in ("我最早报给你的月租金是多少？", "What rent did I first give you?"):
        result = search_memory(world.alice, question, k=10, matter_id=world.matter_deposit.pk)
        assert result.plan.first_version, question
        notes = [hit.note.pk for hit in result.hits if hit.kind == "note"]
        assert notes.index(old.pk) < notes.index(new.pk), question
        first = next(hit for hit in result.hits if hit.note is not None and hit.note.pk == old.pk)
        assert any("最初的说法" in reason for reason in first.reasons), first.reasons
    current = search_memory(world.alice, "之前的租金是多少", k=10, matter_id=world.matter_deposit.pk)
    notes = [hit.note.pk for hit in current.hits if hit.kind == "note"]
    assert notes.index(new.pk) < notes.index(old.pk)  # other history words: the current value first


def test_an_explicit_reference_weights_the_conversations_own_messages_up(world, talk):
    on_matter, _, messages = talk
    result = search_memory(world.alice, "你之前说过押金什么时候退？", k=5, conversation=on_matter)
    assert result.plan.search_messages
    hit = next(hit for hit in result.hits if hit.message is not None and hit.message.pk == messages["deposit"].pk)
    assert hit.breakdown.layer_weight == 1.0
    assert any("问题提到了之前的对话" in reason for reason in hit.reasons)
    plain = search_memory(world.alice, "押金什么时候退？", k=5, conversation=on_matter)
    hit = next(hit for hit in plain.hits if hit.message is not None and hit.message.pk == messages["deposit"].pk)
    assert hit.breakdown.layer_weight < 1.0


def test_english_notes_match_other_word_forms(world):
    note = world.note("The tenant signed the settlement agreement in April.", matter=world.matter_deposit)
    result = search_memory(world.alice, "when was the agreement signing", k=5)
    hit = next(hit for hit in result.hits if hit.note is not None and hit.note.pk == note.pk)
    assert hit.breakdown.keyword == pytest.approx(2 / 2)  # "agreement" and "signing" ~ "signed"


def test_excluded_messages_are_not_recalled(world, talk):
    _, _, messages = talk
    result = search_memory(world.alice, LEASE_EN, k=5, exclude_message_ids=[messages["lease"].pk])
    assert messages["lease"].pk not in message_ids(result)


def test_the_hnsw_read_for_users_with_very_many_messages_finds_the_same(world, talk, settings):
    from recall import messages as message_reads

    _, _, messages = talk
    settings.EXACT_MESSAGE_MAX_ROWS = 0  # force the HNSW walk
    result = search_memory(world.alice, "When did the client sign the lease?", k=5)
    assert message_ids(result)[0] == messages["lease"].pk
    assert messages["deposit"].pk not in message_ids(search_memory(world.bob, "房东什么时候退押金", k=50))


def test_what_the_raw_baselines_rank_first_stays_in_the_top_k_among_well_scored_notes(world, talk):
    """Rank fusion: a message first in the raw dense and keyword rankings scores at least what the
    best note of the layered scorer alone does, so current-matter notes about other things —
    important, confident, fresh, in the plan's first layer — cannot push it out of the top k."""
    _, _, messages = talk
    for text in ("房东要求租客承担三千元的墙面维修费。", "房东下个月起把房租上调到每月六千元。",
                 "租客的银行卡尾号为 6621，用于收款。", "房东委托中介在周五上门检查房屋。",
                 "押金条原件由委托人保管在家中。", "房东的电话号码已经换过一次。"):
        world.note(text, matter=world.matter_deposit, importance=0.95, confidence=0.95)
    result = search_memory(world.alice, "房东什么时候退押金", k=3, matter_id=world.matter_deposit.pk)
    holding = [hit for hit in result.hits if messages["deposit"].pk in hit.source_message_ids]
    assert holding, [hit.reasons for hit in result.hits]
    fusion_reason = next(reason for reason in holding[0].reasons if reason.startswith("综合排名"))
    assert "对话原文语义第 1 名" in fusion_reason
    assert "对话原文关键词第 1 名" in fusion_reason
    assert holding[0].breakdown.dense_rank == 1
    assert holding[0].breakdown.keyword_rank == 1


GOVERNING_Q = "Which law governs the Northwind warehouse lease, and where would disputes go?"
GOVERNING_A = "Clause 14 says Delaware law governs the lease; disputes go to arbitration in Wilmington."


@pytest.fixture
def turn(world, talk):
    """A question of alice's and the assistant's reply right after it (one turn), both indexed."""
    _, private, _ = talk
    question = said(private, GOVERNING_Q, minute=20)
    reply = said(private, GOVERNING_A, role="assistant", minute=21)
    said(private, "Thanks, noted.", minute=22)  # the next question: not part of that turn
    index_messages()
    return private, question, reply


def standing_for(result, *message_ids: int) -> list:
    return [hit for hit in result.hits if set(message_ids) & set(hit.source_message_ids)]


def test_a_question_and_its_reply_take_one_slot_and_the_hit_lists_both(world, turn):
    _, question, reply = turn
    result = search_memory(world.alice, "Delaware law arbitration Wilmington governs lease", k=10)
    slots = standing_for(result, question.pk, reply.pk)
    assert len(slots) == 1
    hit = slots[0]
    assert (hit.kind, hit.message.pk, hit.partner.pk) == ("message", question.pk, reply.pk)
    assert hit.source_message_ids == [question.pk, reply.pk]
    assert any("同一轮对话" in reason for reason in hit.reasons)
    injected = build_system_message(result)["content"]
    assert f"alice] {GOVERNING_Q}\n  ↳ [" in injected
    assert f"assistant] {GOVERNING_A}" in injected


def test_a_note_holds_the_question_it_cites_and_the_reply_stays_recallable(world, turn):
    """The note cites the question: the question is recalled through the note (never a second
    time as a raw line); the reply, which the note does not cite, is recalled as its turn."""
    private, question, reply = turn
    note = world.note("Northwind lease: Delaware law, arbitration in Wilmington (clause 14).", scope="global",
                      conversation=private, source_message_ids=[question.pk])
    result = search_memory(world.alice, "Delaware law arbitration Wilmington governs lease", k=10)
    assert [hit.note.pk for hit in result.hits if hit.kind == "note"][:1] == [note.pk]
    assert question.pk not in message_ids(result)  # never a raw hit of its own
    turn_hit = next(hit for hit in result.hits if hit.kind == "message" and hit.message.pk == reply.pk)
    assert turn_hit.partner.pk == question.pk  # shown as the turn it answers


def test_a_reply_whose_question_is_excluded_stands_alone(world, turn):
    _, question, reply = turn
    result = search_memory(world.alice, "Delaware law arbitration Wilmington", k=10,
                           exclude_message_ids=[question.pk])
    hit = next(hit for hit in result.hits if hit.kind == "message" and hit.message.pk == reply.pk)
    assert hit.partner is None
    assert hit.source_message_ids == [reply.pk]
    assert all(question.pk not in h.source_message_ids for h in result.hits if h.kind == "message")


def test_an_answer_the_offline_engine_composed_is_never_recalled(world, talk):
    """It only repeats what memory held: recalled, it would stand beside the original as a
    second hit (and be quoted again by the next answer)."""
    _, private, _ = talk
    question = said(private, GOVERNING_Q, minute=20)
    composed = finish_reply(said(private, GOVERNING_A, role="assistant", minute=21), recalled=[], timings={},
                            engine=Message.OFFLINE_ENGINE)
    written = finish_reply(said(private, GOVERNING_A + " (reviewed)", role="assistant", minute=23), recalled=[],
                           timings={}, engine="llm:qwen-local")
    index_messages()

    result = search_memory(world.alice, "Delaware law arbitration Wilmington governs lease", k=50)

    recalled = {pk for hit in result.hits for pk in hit.source_message_ids}
    assert composed.pk not in recalled
    assert question.pk in recalled
    assert written.pk in recalled
    assert all(hit.partner is None or hit.partner.pk != composed.pk for hit in result.hits if hit.kind == "message")


@pytest.mark.parametrize("who", ["bob", "charlie"])
def test_others_never_get_a_partner_from_alices_turns(world, turn, who):
    """bob's (or charlie's) own question is answered in alice's conversation a minute later: the
    partner comes from the question's own conversation only, so it is never alice's reply."""
    _, question, reply = turn
    user = getattr(world, who)
    firm = world.firm_a if who == "bob" else world.firm_b
    own = Conversation.objects.create(firm=firm, user=user, matter=None)
    asked = save_message(own, "user", "Does Delaware law govern the Northwind lease?", speaker=who,
                         said_at=at(2, 10, 20))
    index_messages()
    alices = {question.pk, reply.pk} | set(Message.objects.exclude(conversation=own).values_list("pk", flat=True))
    result = search_memory(user, "Delaware law arbitration Wilmington governs lease", k=50)
    mine = [hit for hit in result.hits if hit.kind == "message"]
    assert [hit.message.pk for hit in mine] == [asked.pk]
    assert mine[0].partner is None
    assert mine[0].source_message_ids == [asked.pk]
    assert not alices & {i for hit in result.hits for i in hit.source_message_ids}
