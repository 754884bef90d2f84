"""A conversation's own URL, and the memories recalled for each reply saved with it: the
messages API gives them back after a reload (as recalled, even if a note changes later), but
only those the reader may still see. Also: offline headings name the matter of what they list,
matters sorted by reference, control characters visible, the favicon."""
from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.test import Client
from django.utils.translation import override

from chat.answering import compose_offline_answer
from memory.models import Conversation, Note
from memory.services.conversations import save_message
from tests.chat.conftest import open_socket
from tests.clients import logged_in
from tests.factories import MatterFactory
from tests.fake_llm.replies import text_reply


async def ask(user, frame: dict) -> list[dict]:
    communicator = await open_socket(user)
    ok, _ = await communicator.connect()
    assert ok
    assert (await communicator.receive_json_from(timeout=5))["type"] == "ready"
    await communicator.send_json_to({"type": "ask", **frame})
    frames = []
    while not frames or frames[-1]["type"] not in ("done", "error"):
        frames.append(await communicator.receive_json_from(timeout=15))
    await communicator.disconnect()
    return frames


async def english_socket(user):
    """A connected socket of a page read in English (Django's language cookie)."""
    communicator = await open_socket(user)
    cookie = dict(communicator.scope["headers"])[b"cookie"]
    communicator.scope["headers"] = [
        (name, value) for name, value in communicator.scope["headers"] if name != b"cookie"
    ] + [(b"cookie", cookie + b"; django_language=en")]
    assert (await communicator.connect())[0]
    return communicator


@sync_to_async
def api_messages(user, conversation_id: int):
    return logged_in(user).get(f"/api/chat/conversations/{conversation_id}/messages/")


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_recalled_memories_come_back_with_the_reply_as_they_were_recalled(world, llm_online):
    note = await sync_to_async(world.note)("笔记本电脑在购买后约两周出现大面积花屏。", matter=world.matter_laptop)
    llm_online.script(text_reply("结论：可以要求退货。"))
    frames = await ask(world.bob, {"question": "电脑花屏了怎么办？"})  # no matter selected
    done = frames[-1]
    assert done["type"] == "done"
    assert done["status"] == "complete"

    await sync_to_async(Note.objects.filter(pk=note.pk).update)(content="已改写的内容")
    data = (await api_messages(world.bob, done["conversation_id"])).json()
    reply = data["results"][1]
    assert reply["id"] == done["message_id"]
    assert reply["status"] == "complete"
    assert [r["id"] for r in reply["recalled"]] == [str(note.pk)]
    shown = reply["recalled"][0]
    assert shown["content"] == "笔记本电脑在购买后约两周出现大面积花屏。"
    assert shown["changed"] is True
    assert shown["rank"] == 1
    assert shown["score"]["total"] > 0
    assert shown["layer"] == "case"
    assert shown["matter_id"] == world.matter_laptop.pk
    assert shown["matter_reference"] == world.matter_laptop.reference
    assert reply["recall_plan"]["layers"][0] == "case"
    assert data["results"][0]["recalled"] == []  # the question carries none

    # bob leaves the matter: the conversation (no matter) stays his, the note no longer shows
    await sync_to_async(world.matter_laptop.assignments.filter(user=world.bob).delete)()
    data = (await api_messages(world.bob, done["conversation_id"])).json()
    assert data["results"][1]["recalled"] == []
    assert "花屏" not in str(data["results"][1]["recalled"])
    for outsider in (world.alice, world.charlie):
        assert (await api_messages(outsider, done["conversation_id"])).status_code == 404


@pytest.mark.django_db
def test_memories_saved_before_the_snapshot_are_filled_from_the_visible_note(world):
    note = world.note("押金3000元，房东以墙面污损为由拒退。", matter=world.matter_deposit)
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, title="押金")
    save_message(conversation, "user", "押金怎么要回？", speaker="alice")
    reply = save_message(conversation, "assistant", "结论：可以要求返还。", speaker="offline")
    reply.recalled = [{"id": str(note.pk), "layer": "case", "score": {"total": 0.5}},
                      {"id": "00000000-0000-0000-0000-000000000000", "layer": "case", "score": {"total": 0.4}}]
    reply.save(update_fields=["recalled"])
    shown = logged_in(world.alice).get(f"/api/chat/conversations/{conversation.pk}/messages/").json()["results"][1]
    assert [(r["id"], r["content"], r["category"], r["changed"]) for r in shown["recalled"]] == [
        (str(note.pk), note.content, "fact", False)]


@pytest.mark.django_db
def test_each_conversation_has_its_own_page_and_others_get_404(world):
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit,
                                               title="押金\x07返还\n第二行")
    page = logged_in(world.alice).get(f"/chat/{conversation.pk}/")
    html = page.content.decode()
    assert page.status_code == 200
    assert f'data-conversation-id="{conversation.pk}"' in html
    assert f'<option value="{world.matter_deposit.pk}" selected>' in html
    assert "押金\\x07返还 第二行" in html
    assert "\x07" not in html  # one line, control char visible
    for outsider in (world.bob, world.charlie):
        response = logged_in(outsider).get(f"/chat/{conversation.pk}/")
        assert response.status_code == 404
        assert "押金" not in response.content.decode()
    assert Client().get(f"/chat/{conversation.pk}/").status_code == 302


@pytest.mark.django_db
def test_matter_pickers_are_sorted_by_reference(world):
    world.matter_laptop.reference, world.matter_deposit.reference = "M-002", "M-001"
    world.matter_laptop.save()
    world.matter_deposit.save()
    late = MatterFactory(firm=world.firm_a, title="阿尔法案", reference="M-010")
    late.assignments.create(user=world.alice)
    for url in ("/chat/", "/navigation/"):
        html = logged_in(world.alice).get(url).content.decode()
        positions = [html.index(f'value="{m.pk}"') for m in (world.matter_deposit, world.matter_laptop, late)]
        assert positions == sorted(positions), url
    home = logged_in(world.alice).get("/").content.decode()
    assert home.index(">M-001<") < home.index(">M-002<") < home.index(">M-010<")


@override("zh-hans")  # the answer's language is the page's; an earlier test may have left another active
def test_offline_heading_names_the_matter_of_what_it_lists():
    recalled = [
        {"layer": "case", "content": "押金3000元未退。", "matter_id": 2, "matter_reference": "M-002", "matter": "租房押金返还纠纷"},
        {"layer": "case", "content": "电脑两周后花屏。", "matter_id": 1, "matter_reference": "M-001", "matter": "电脑花屏退货纠纷"},
    ]
    unselected = compose_offline_answer("押金怎么办？", recalled)
    assert "当前案件事实" not in unselected
    assert "案件事实：M-001 电脑花屏退货纠纷：\n- 电脑两周后花屏。" in unselected
    assert "案件事实：M-002 租房押金返还纠纷：\n- 押金3000元未退。" in unselected
    selected = compose_offline_answer("押金怎么办？", recalled, current_matter_id=2)
    assert selected.index("当前案件事实：\n- 押金3000元未退。") < selected.index("其他案件的事实：M-001 电脑花屏退货纠纷")


@pytest.mark.django_db
def test_favicon_answers_on_every_page(world):
    response = Client().get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert b"<svg" in b"".join(response.streaming_content)
    assert 'rel="icon"' in logged_in(world.alice).get("/chat/").content.decode()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_offline_answer_follows_the_page_language(world, llm_offline):
    await sync_to_async(world.note)("押金3000元，房东以墙面污损为由拒退。", matter=world.matter_deposit)
    communicator = await english_socket(world.alice)
    assert (await communicator.receive_json_from(timeout=5))["engine"] == "offline"
    await communicator.send_json_to({"type": "ask", "question": "押金怎么要回？"})
    frame = {}
    while frame.get("type") != "done":
        frame = await communicator.receive_json_from(timeout=15)
    await communicator.disconnect()
    assert frame["reply"].startswith("[Offline engine]")
    assert f"Facts of matter {world.matter_deposit.reference} 租房押金返还纠纷:" in frame["reply"]


@pytest.mark.django_db
def test_erased_notes_leave_no_copy_in_saved_replies_and_forgotten_ones_are_not_shown(world):
    from records.services.reply_scrub import scrub_recalled_notes

    kept, erased = world.note("保留的记忆。", matter=world.matter_deposit), world.note("要删除的记忆。", matter=world.matter_deposit)
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, title="押金")
    reply = save_message(conversation, "assistant", "结论。", speaker="offline")
    reply.recalled = [{"id": str(note.pk), "content": note.content, "layer": "case", "score": {}} for note in (kept, erased)]
    reply.save(update_fields=["recalled"])
    assert scrub_recalled_notes([erased.pk]) == 1
    reply.refresh_from_db()
    assert [entry["id"] for entry in reply.recalled] == [str(kept.pk)]
    assert "要删除" not in str(reply.recalled)
    # a note in a state other than current / superseded (e.g. forgotten) is not shown again
    Note.objects.filter(pk=kept.pk).update(status="forgotten")
    shown = logged_in(world.alice).get(f"/api/chat/conversations/{conversation.pk}/messages/").json()["results"][0]
    assert shown["recalled"] == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_rejected_question_is_explained_in_the_page_language(world, llm_offline, settings):
    settings.CHAT_RATE_LIMIT_PER_MINUTE = 1
    communicator = await english_socket(world.alice)
    await communicator.receive_json_from(timeout=5)
    for question in ("What about the deposit?", "And the receipt?"):
        await communicator.send_json_to({"type": "ask", "question": question})
        frame = {}
        while frame.get("type") not in ("done", "error"):
            frame = await communicator.receive_json_from(timeout=15)
    await communicator.disconnect()
    assert frame == {"type": "error", "code": "rate_limited",
                     "message": "Too many questions in a short time; please try again in a minute."}
