"""The chat reads memory as it held on a day (issue 54): a question that names one ("截至…",
"…那会儿", "as of …"), a moment it names by the firm's own advice ("我们第一次建议…的时候"), or
the date the lawyer chose is answered from the notes whose fact held then (world time), the "as
of" chip comes back in the ``recalled`` frame, and a value replaced later says so. bob and
charlie get nothing of the walled matter at any date; a bad chosen date is an error frame in the
reader's language and the socket stays usable."""
from __future__ import annotations

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from memory.models import Conversation, Note
from memory.services.conversations import save_message
from memory.services.notes import supersede_note
from remember.message_index import index_messages
from tests.chat.test_consumer import connected, frames_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@sync_to_async
def _deposit(world):
    """The deposit said as 2000 ten days ago, corrected to 3000 two days ago."""
    now = timezone.now()
    old = world.note("林晓雯交的押金是2000元。", matter=world.matter_deposit, said_at=now - timedelta(days=10))
    new = world.note("林晓雯交的押金是3000元。", matter=world.matter_deposit, said_at=now - timedelta(days=2))
    supersede_note(old, new, actor=world.alice, reason="刚才说错了，押金是3000不是2000")
    return Note.objects.get(pk=old.pk), new


@sync_to_async
def _advised_on_the_old_value(world):
    """alice's deposit-matter talk eight days ago: the client's account and the advice given on
    the deposit as it then stood (2000), indexed as the turn job indexes it."""
    talk = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit)
    now = timezone.now()
    save_message(talk, "user", "林晓雯说房东一直不退押金，押金当时交了2000元。", speaker="alice",
                 said_at=now - timedelta(days=8, minutes=5))
    advice = save_message(talk, "assistant", "建议先给房东发一封书面催告函，要求七日内退还押金2000元。",
                          speaker="assistant", said_at=now - timedelta(days=8))
    index_messages()
    return advice


def _day(days_ago: int) -> str:
    return f"{timezone.localdate() - timedelta(days=days_ago):%Y-%m-%d}"


async def _recalled(user, frame: dict) -> dict:
    communicator, _ = await connected(user)
    await communicator.send_json_to(frame)
    frames = await frames_until(communicator, "done")
    await communicator.disconnect()
    return next(f for f in frames if f["type"] == "recalled")


async def test_a_question_naming_a_day_is_answered_from_what_held_then(world, llm_offline):
    old, new = await _deposit(world)
    day = timezone.localdate() - timedelta(days=5)
    question = f"截至{day.year}年{day.month}月{day.day}日，林晓雯的押金是多少？"
    recalled = await _recalled(world.alice, {"type": "ask", "question": question, "matter_id": world.matter_deposit.pk})
    assert recalled["held_at"] == {"on": _day(5), "words": f"{day.year}年{day.month}月{day.day}日", "chosen": False}
    assert [n["id"] for n in recalled["notes"]][:1] == [str(old.pk)]
    assert str(new.pk) not in {n["id"] for n in recalled["notes"]}
    assert any("superseded later" in r or "之后于" in r for r in recalled["notes"][0]["reasons"])
    now = await _recalled(world.alice, {"type": "ask", "question": "林晓雯的押金是多少？", "matter_id": world.matter_deposit.pk})
    assert now["held_at"] is None and now["notes"][0]["id"] == str(new.pk)


async def test_a_moment_named_by_our_advice_is_read_then_with_the_advice_first(world, llm_offline):
    old, new = await _deposit(world)
    advice = await _advised_on_the_old_value(world)
    question = "我们第一次建议发催告函的时候，林晓雯的押金是多少？"
    recalled = await _recalled(world.alice, {"type": "ask", "question": question, "matter_id": world.matter_deposit.pk})
    assert recalled["held_at"] == {"on": _day(8), "words": "我们第一次建议发催告函的时候", "chosen": False}
    ids = [n["id"] for n in recalled["notes"]]
    assert ids[0] == f"message:{advice.pk}" and str(old.pk) in ids and str(new.pk) not in ids
    for user in (world.bob, world.charlie):  # walled: no moment, nothing of the matter
        walled = await _recalled(user, {"type": "ask", "question": question})
        assert walled["held_at"] is None and not {n["id"] for n in walled["notes"]} & set(ids), user.username


async def test_the_chosen_date_reads_memory_then(world, llm_offline):
    old, new = await _deposit(world)
    recalled = await _recalled(world.alice, {"type": "ask", "question": "押金是多少？", "as_of": _day(5),
                                             "matter_id": world.matter_deposit.pk})
    assert recalled["held_at"] == {"on": _day(5), "words": "", "chosen": True}
    assert recalled["notes"][0]["id"] == str(old.pk)


async def test_bob_and_charlie_get_nothing_of_the_matter_at_any_date(world, llm_offline):
    old, new = await _deposit(world)
    for user in (world.bob, world.charlie):
        for as_of in (_day(5), _day(0)):
            recalled = await _recalled(user, {"type": "ask", "question": "林晓雯的押金是多少？", "as_of": as_of})
            assert not {n.get("id") for n in recalled["notes"]} & {str(old.pk), str(new.pk)}, user.username


async def test_a_bad_chosen_date_is_an_error_frame_and_nothing_is_saved(world, llm_offline):
    communicator, _ = await connected(world.alice)
    await communicator.send_json_to({"type": "ask", "question": "押金是多少？", "as_of": "2026-02-30"})
    frame = await communicator.receive_json_from(timeout=5)
    assert frame["type"] == "error" and frame["code"] == "bad_as_of" and "2026-02-30" in frame["message"]
    await communicator.send_json_to({"type": "ask", "question": "押金是多少？"})
    assert (await frames_until(communicator, "done"))[-1]["status"] == "complete"
    await communicator.disconnect()
