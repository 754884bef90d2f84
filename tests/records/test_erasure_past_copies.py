"""Erasure wins over history (issue 54): a subject's name is gone from the copies of the past that
rows kept by the erasure hold. A note corrected in place so that its wording no longer names the
client stays (it is not hers), but the step of its history that holds the old wording is redacted;
a reply that recalled the note while it still named her keeps no copy of it, and none of the
other side of a contradiction that was erased. Without this the note's page, the notes API (also
``?as_of=``) and the chat's saved recall showed the erased name as the memory stood before."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.models import Conversation, Firm, Message, Note
from memory.services.conversations import save_message
from memory.services.notes import correct_note
from records.erasure import erase, subject_unit
from records.erasure_plan import replay_unit
from records.fingerprints import Fingerprints
from records.verification import verify
from tests.clients import client_for
from tests.records.conftest import SECRET_NAME, tables_containing

pytestmark = pytest.mark.django_db

JOURNAL_ROWS = ("conversations", "messages", "notes", "retitled_conversations", "traits", "evidence", "documents",
                "audit_entries")


@pytest.fixture
def past_copies(world):
    """The deposit said with her name, corrected in place without it; a reply (whose turn does
    not name her) that recalled it as it was, beside her own statement it contradicted and a
    laptop note."""
    Firm.objects.filter(pk=world.firm_a.pk).update(created_at=timezone.now() - timedelta(days=30))
    kept = world.note(f"{SECRET_NAME}交的押金是2000元。", matter=world.matter_deposit)
    hers = world.note(f"{SECRET_NAME}说押金一分不该扣。", matter=world.matter_deposit)
    laptop = world.note("笔记本电脑在购买后约两周出现大面积花屏。", matter=world.matter_laptop)
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit,
                                               title="押金")
    save_message(conversation, "user", "押金是多少？", speaker="alice")
    reply = save_message(conversation, "assistant", "押金是两千元[1]，电脑花屏另案处理[2]。", speaker="assistant")
    recalled = [
        {"id": str(kept.pk), "kind": "note", "number": 1, "content": kept.content,
         "contradictions": [{"id": str(hers.pk), "content": hers.content}]},
        {"id": str(laptop.pk), "kind": "note", "number": 2, "content": laptop.content},
    ]
    cited = [{"number": 1, "id": str(kept.pk), "kind": "note"}, {"number": 2, "id": str(laptop.pk), "kind": "note"}]
    Message.objects.filter(pk=reply.pk).update(recalled=recalled, citations={"cited": cited, "marked": []})
    correct_note(kept, {"content": "押金是2000元。"}, actor=world.alice, reason="记录更正")
    return {"kept": kept, "hers": hers, "laptop": laptop, "conversation": conversation, "reply": reply}


def shown_to_alice(world, c) -> str:
    """What alice reads of the kept note and the reply: its page, the API (now and as of today),
    the conversation's messages."""
    api = client_for(world.alice)
    day = f"{timezone.localdate():%Y-%m-%d}"
    pages = [api.get(f"/api/memory/notes/{c['kept'].pk}/"), api.get("/api/memory/notes/", {"as_of": day}),
             api.get("/api/memory/notes/", {"as_of": day, "status": "superseded"}),
             api.get(f"/api/chat/conversations/{c['conversation'].pk}/messages/")]
    page = client_for(world.alice)
    page.force_login(world.alice)
    pages.append(page.get(f"/memory/{c['kept'].pk}/"))
    assert all(response.status_code == 200 for response in pages), [r.status_code for r in pages]
    return "\n".join(response.content.decode() for response in pages)


def assert_no_copy_left(world, c, tombstone) -> None:
    kept = Note.objects.get(pk=c["kept"].pk)  # not hers: it stays, as it reads now
    assert kept.content == "押金是2000元。"
    [corrected] = [step for step in kept.evolution_history if step.get("event") == "corrected"]
    assert corrected == {"at": corrected["at"], "event": "corrected", "redacted_by": tombstone.pk}
    reply = Message.objects.get(pk=c["reply"].pk)
    assert [item["id"] for item in reply.recalled] == [str(c["laptop"].pk)]
    assert [item["id"] for item in reply.citations["cited"]] == [str(c["laptop"].pk)]
    assert tables_containing(SECRET_NAME) == {}
    assert SECRET_NAME not in shown_to_alice(world, c)


def test_an_erased_subject_leaves_no_copy_in_a_kept_notes_history_or_a_kept_replys_recall(world, past_copies):
    c = past_copies
    assert SECRET_NAME in shown_to_alice(world, c)  # the note's history and the saved recall, before

    result = erase(subject_unit(world.firm_a, SECRET_NAME), actor=world.alice, reason="本人书面要求")

    assert not Note.objects.filter(pk=c["hers"].pk).exists()
    assert_no_copy_left(world, c, result.tombstone)
    verdict = verify(result.tombstone)
    assert verdict.clean, verdict.found


def test_a_replayed_subject_erasure_finds_the_same_copies_by_its_fingerprints(world, past_copies):
    """After a restore the journal names no subject: its fingerprints find the copies."""
    c = past_copies
    entry = {"tombstone": 1, "firm": world.firm_a.pk, "kind": "subject", "object_type": "subject",
             "object_id": "0" * 64, "label": "subject 000000000000", "matter": None,
             "rows": {**{name: [] for name in JOURNAL_ROWS}, "notes": [str(c["hers"].pk)]},
             "fingerprints": Fingerprints.of([c["hers"].content], [SECRET_NAME]).to_json()}

    result = erase(replay_unit(entry), actor="system:erase", reason="replay of erasure 1 after a restore")

    assert_no_copy_left(world, c, result.tombstone)
