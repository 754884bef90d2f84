"""Persona memory: evidence, the strength formula, promotion at the threshold, conflicts."""
from __future__ import annotations

import math
from datetime import timedelta

import pytest

from infra.embeddings import get_embedder
from remember.extraction import ExtractedItem
from memory.models import LinkType, MemoryScope, Note, NoteLink, PersonaEvidence, PersonaTrait, RoutingDecision
from memory.services.conversations import save_message
from remember.drafts import TurnSource
from remember import persona
from remember.persona import persona_strength, qualifies, time_decay
from remember.services.persona import do_record_persona_statement
from tests.remember.factories import at

PREFERENCE = "我希望你以后先给结论，再列证据清单，最后给协商、投诉、起诉路径。"
REPLY = "好的，以后我会先给结论，再列证据清单和维权路径。"
LIKES = "用户喜欢助手先给结论。"
DISLIKES = "用户不喜欢助手先给结论。"
AT_THRESHOLD = 0.65 / math.log(4)  # three mentions, no decay: strength exactly 0.65


def say(conversation, content: str, *, when, confidence: float = 0.8) -> RoutingDecision:
    """Record one preference statement through the real persona path (own message, own source)."""
    message = save_message(conversation, "user", content, speaker=conversation.user.username, said_at=when)
    source = TurnSource(conversation=conversation, user_message=message, assistant_message=None,
                        source_type="chat", source_id=f"test:{message.pk}", source_key=f"test:{message.pk}")
    item = ExtractedItem(content=content, category="偏好", memory_type="attribute", confidence=confidence,
                         keywords=[], tags=["偏好"], context="", importance=0.7, scope_hint="user_profile",
                         dates=[], amounts=[], speaker="user")
    vector = get_embedder().embed_passages([content])[0]
    return do_record_persona_statement(item, vector, source, actor="system:test", item_index=0)


def profile_notes():
    return Note.objects.filter(memory_scope=MemoryScope.USER_PROFILE)


def test_strength_formula_and_decay():
    t0 = at(1)
    assert persona_strength(0.8, 1, t0, t0) == pytest.approx(0.8 * math.log(2))
    half = t0 + timedelta(days=persona.PERSONA_HALF_LIFE_DAYS)
    assert time_decay(t0, half) == pytest.approx(0.5)
    assert persona_strength(0.8, 3, t0, half) == pytest.approx(0.8 * math.log(4) * 0.5)
    assert qualifies(0.65, 3)
    assert not qualifies(0.6499, 3)
    assert not qualifies(0.9, 2)


def test_the_tuning_is_a_parameter_a_test_can_pass():
    t0 = at(1)
    assert time_decay(t0, t0 + timedelta(days=10), half_life_days=10.0) == pytest.approx(0.5)
    assert qualifies(0.9, 2, min_evidence=2)


def test_a_preference_needs_three_mentions(world, laptop_conversation, make_turn):
    first = make_turn(laptop_conversation, PREFERENCE, REPLY, day=1)
    decision = RoutingDecision.objects.get(turn=first, action="persona")
    assert "new trait" in decision.reason
    assert "not promoted" in decision.reason
    # the statement is also kept as what was said (issue 11), whatever the persona decides
    twin = RoutingDecision.objects.get(turn=first, action="add").note
    assert twin.content.startswith("当事人提到")
    assert twin.memory_scope == MemoryScope.CASE
    second = make_turn(laptop_conversation, PREFERENCE, REPLY, day=2)
    trait = PersonaTrait.objects.get()
    # two mentions are already strong (0.8 × ln 3 = 0.88) but the evidence count is just below 3
    assert trait.evidence_count == 2
    assert trait.strength == pytest.approx(0.8 * math.log(3), abs=1e-4)
    assert not profile_notes().exists()
    assert "evidence 2/3" in trait.decision
    third = make_turn(laptop_conversation, PREFERENCE, REPLY, day=3)
    trait.refresh_from_db()
    note = profile_notes().get()
    assert trait.status == "promoted"
    assert trait.note == note
    assert (note.owner, note.category, note.memory_type, note.mention_count) == (world.alice, "preference", "attribute", 3)
    assert set(note.source_message_ids) == {first.user_message_id, second.user_message_id, third.user_message_id}
    assert note.matter is None
    assert "用户画像" in note.tags
    assert Note.objects.visible_to(world.alice).filter(pk=note.pk).exists()
    assert not Note.objects.visible_to(world.bob).filter(pk=note.pk).exists()
    make_turn(laptop_conversation, PREFERENCE, REPLY, day=4)
    note.refresh_from_db()
    assert note.mention_count == 4
    assert note.evolution_history[-1]["event"] == "mentioned"


def test_strength_just_below_the_threshold_is_not_promoted(world, laptop_conversation):
    for day in (1, 2, 3):
        say(laptop_conversation, LIKES, when=at(day), confidence=AT_THRESHOLD - 0.001)
    trait = PersonaTrait.objects.get()
    assert trait.evidence_count == 3
    assert trait.strength < 0.65
    assert not profile_notes().exists()


def test_strength_at_the_threshold_is_promoted(world, laptop_conversation):
    for day in (1, 2, 3):
        say(laptop_conversation, LIKES, when=at(day), confidence=AT_THRESHOLD)
    trait = PersonaTrait.objects.get()
    assert trait.strength == pytest.approx(0.65, abs=1e-6)
    assert trait.status == "promoted"
    assert profile_notes().count() == 1


def test_stronger_contrary_evidence_updates_the_profile(world, laptop_conversation):
    for day in (1, 2, 3):
        say(laptop_conversation, LIKES, when=at(day))
    old_note = profile_notes().get()
    later = at(1) + timedelta(days=200)  # the old preference has decayed (0.5^(197/90))
    for offset in range(3):
        decision = say(laptop_conversation, DISLIKES, when=later + timedelta(hours=offset))
    assert "persona update" in decision.reason
    old_note.refresh_from_db()
    new_note = Note.objects.get(content=DISLIKES)
    assert old_note.status == "superseded"
    assert old_note.superseded_by == new_note
    assert old_note.valid_to
    assert NoteLink.objects.filter(source=new_note, target=old_note, link_type=LinkType.SUPERSEDES).exists()
    assert PersonaTrait.objects.get(content=LIKES).status == "superseded"
    assert profile_notes().active().get() == new_note


def test_evenly_matched_contrary_evidence_keeps_both_with_a_disagreement(world, laptop_conversation):
    for day in (1, 2, 3):
        say(laptop_conversation, LIKES, when=at(day))
    for day in (1, 2, 3):
        decision = say(laptop_conversation, DISLIKES, when=at(day, 11))
    assert "disagreement kept" in decision.reason
    likes, dislikes = Note.objects.get(content=LIKES), Note.objects.get(content=DISLIKES)
    assert likes.status == dislikes.status == "active"
    assert NoteLink.objects.filter(source=dislikes, target=likes, link_type=LinkType.CONTRADICTS).exists()
    assert "存在分歧" in likes.tags
    assert "存在分歧" in dislikes.tags
    assert set(PersonaTrait.objects.values_list("status", flat=True)) == {"disputed"}


def test_weaker_contrary_evidence_is_ignored(world, laptop_conversation):
    for day in (1, 2, 3, 4, 5, 6):
        say(laptop_conversation, LIKES, when=at(day))
    for day in (6, 6, 6):
        decision = say(laptop_conversation, DISLIKES, when=at(day, 12 + PersonaEvidence.objects.count() % 10))
    assert "ignored for now" in decision.reason
    assert profile_notes().count() == 1
    assert profile_notes().get().content == LIKES
    assert PersonaTrait.objects.get(content=DISLIKES).evidence.count() == 3  # the evidence is kept


def test_persona_is_per_user(world, laptop_conversation):
    from tests.remember.factories import ConversationFactory

    bobs = ConversationFactory(user=world.bob, firm=world.firm_a, matter=world.matter_laptop)
    for day in (1, 2):
        say(laptop_conversation, LIKES, when=at(day))
    say(bobs, LIKES, when=at(3))
    assert PersonaTrait.objects.filter(user=world.alice).get().evidence_count == 2
    assert PersonaTrait.objects.filter(user=world.bob).get().evidence_count == 1
    assert not profile_notes().exists()
