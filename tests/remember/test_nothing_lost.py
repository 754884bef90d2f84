"""Issue 11, "nothing said is lost": an English conversation between two people imported
with import_conversation becomes active notes with English keywords and resolved dates,
and a statement that feeds persona evidence is also kept as an active episodic note."""
from __future__ import annotations

import json

from django.core.management import call_command
from django.utils import translation

from memory.models import Note, PersonaEvidence, RoutingDecision, TurnExtraction

ENGLISH_MESSAGES = [
    ("user", "Caroline", "2023-05-08T13:56:00+08:00",
     "Hey Mel! Good to see you!"),
    ("assistant", "Melanie", "2023-05-08T13:56:30+08:00",
     "Hey Caroline! Good to see you! I'm swamped with the kids & work."),
    ("user", "Caroline", "2023-05-08T13:57:00+08:00",
     "I went to a LGBTQ support group yesterday and it was so powerful."),
    ("assistant", "Melanie", "2023-05-08T13:57:30+08:00",
     "Wow, that's cool, Caroline! We took the kids to the pottery workshop last weekend and paid $120."),
    ("user", "Caroline", "2023-05-08T13:58:00+08:00",
     "The transgender stories were so inspiring, it made me think about counseling as a career."),
    ("assistant", "Melanie", "2023-05-08T13:58:30+08:00",
     "That's great!"),
    ("user", "Caroline", "2023-05-08T13:59:00+08:00", "ok thanks"),
    ("assistant", "Melanie", "2023-05-08T13:59:30+08:00", "Bye!"),
]


def english_transcript() -> dict:
    messages = [
        {"id": f"D1:{n}", "role": role, "speaker": speaker, "timestamp": when, "content": text}
        for n, (role, speaker, when, text) in enumerate(ENGLISH_MESSAGES, start=1)
    ]
    return {"firm": "alpha", "conversations": [{"id": "locomo-like-1", "user": "alice", "messages": messages}]}


@translation.override("en")  # asserts the command's English output
def test_an_english_conversation_becomes_active_notes(world, tmp_path, capsys):
    path = tmp_path / "english.json"
    path.write_text(json.dumps(english_transcript()), encoding="utf-8")
    call_command("import_conversation", str(path), "--no-progress")
    assert "4 turn(s), 4 processed now" in capsys.readouterr().out
    notes = Note.objects.filter(status=Note.Status.ACTIVE, conversation__external_id="locomo-like-1")
    contents = sorted(notes.values_list("content", flat=True))
    support = notes.get(content__contains="support group")
    assert support.content == "Caroline went to a LGBTQ support group yesterday (7 May 2023) and it was so powerful."
    assert {"LGBTQ", "support", "group"} <= set(support.keywords)
    assert "timeline" in support.tags
    assert support.speaker == "Caroline"
    pottery = notes.get(content__contains="pottery")
    assert pottery.content.startswith("Melanie said they took the kids to the pottery workshop")
    assert "last weekend (the weekend of 6 May 2023)" in pottery.content
    assert "$120" in pottery.content
    assert pottery.speaker == "Melanie"
    # what the lexicon cannot classify is still a note, in reported speech
    career = notes.get(content__contains="counseling")
    assert career.content.startswith("Caroline said ")
    assert "said" in career.tags
    assert career.importance <= 0.35
    # greetings and thanks are not notes; the trivial last turn is skipped
    assert not any("Good to see you" in c or "ok thanks" in c for c in contents), contents
    statuses = list(TurnExtraction.objects.order_by("pk").values_list("status", flat=True))
    assert statuses[-1] in ("skipped", "done")
    assert statuses.count("done") >= 3
    # alice owns the conversation; charlie (another firm) sees none of it
    assert Note.objects.visible_to(world.alice).filter(pk=support.pk).exists()
    assert not Note.objects.visible_to(world.charlie).filter(conversation__external_id="locomo-like-1").exists()


def test_a_persona_statement_is_also_an_active_episodic_note(world, laptop_conversation, make_turn):
    turn = make_turn(laptop_conversation, "她看到了自己最喜欢的企鹅。", "听起来很开心。")
    evidence = PersonaEvidence.objects.get()
    assert "企鹅" in evidence.content
    assert evidence.user == world.alice
    episodic = RoutingDecision.objects.get(turn=turn, action="add").note
    assert episodic.status == Note.Status.ACTIVE
    assert episodic.memory_scope == "case"
    assert episodic.content == "当事人提到：她看到了自己最喜欢的企鹅。"
    assert episodic.memory_type == "event"
    assert "企鹅" in episodic.keywords
    assert episodic.source_message_ids == [turn.user_message_id]
    # behind the matter's wall: bob (on the matter) sees it, charlie does not
    assert Note.objects.visible_to(world.bob).filter(pk=episodic.pk).exists()
    assert not Note.objects.visible_to(world.charlie).filter(pk=episodic.pk).exists()


def test_the_same_remark_on_another_day_is_a_mention_not_a_new_fact(world, laptop_conversation, make_turn):
    make_turn(laptop_conversation, "她看到了自己最喜欢的企鹅。", "听起来很开心。", day=1)
    again = make_turn(laptop_conversation, "她看到了自己最喜欢的企鹅。", "听起来很开心。", day=2)
    twin = Note.objects.get(content="当事人提到：她看到了自己最喜欢的企鹅。")
    assert twin.status == Note.Status.ACTIVE
    assert twin.mention_count == 2
    decision = RoutingDecision.objects.exclude(action="persona").get(turn=again)
    assert decision.action == "ignore"
    assert "duplicate" in decision.reason
    assert decision.note == twin
    assert PersonaEvidence.objects.count() == 2


def test_a_live_chat_reply_is_the_assistant_whatever_engine_wrote_it(world, laptop_conversation):
    """Chat stores the reply under its engine's name ("offline", "llm:<model>"): that is the
    product's assistant, not a second person, so its chatter never becomes a note."""
    from remember.turns import enqueue_turn_extraction, process_turn
    from memory.services.conversations import save_message
    from tests.remember.factories import at

    question = save_message(laptop_conversation, "user", "I went to the Apple store yesterday about my laptop.",
                            speaker="alice", said_at=at(8))
    reply = save_message(laptop_conversation, "assistant",
                         "I understand how frustrating this must be, and I think the shop behaved badly.",
                         speaker="offline", said_at=at(8, 10, 1))
    turn = process_turn(enqueue_turn_extraction(question, reply).pk)
    contents = list(Note.objects.filter(conversation=laptop_conversation).values_list("content", flat=True))
    # the login is never the client's name in a note (issue 50): "the client"
    assert contents == ["The client went to the Apple store yesterday (7 March 2026) about the client's laptop."]
    assert all(item["speaker"] == "user" for item in turn.items)
