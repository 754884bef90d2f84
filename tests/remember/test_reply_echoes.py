"""Only new knowledge becomes memory: a reply's sentences that quote what was recalled for it, and
every answer the offline engine composed from memory, give no notes and no mentions; what the
reply adds (a statute not recalled, a computed deadline) does, with the reply's provenance."""
from __future__ import annotations

from remember.extraction.quotes import new_in_reply
from memory.models import Message, Note, TurnExtraction
from remember.turns import enqueue_turn_extraction, process_turn
from remember.extract import OFFLINE_ANSWER_ENGINE, extractable_reply

RECALLED_FACT = "房东扣留了押金8000元，理由是墙面污损。"
RECALLED_LAW = "根据《民法典》第七百一十条，承租人按约定使用租赁物致其损耗的，不承担赔偿责任。"
QUESTION = "押金这件事下一步怎么办？房东一直不回消息。"


def recalled(*texts: str) -> list[dict]:
    return [{"kind": "note", "id": f"n{i}", "content": text} for i, text in enumerate(texts)]


def reply_turn(conversation, make_turn, reply_text: str, *, engine: str, recall: list[dict]) -> TurnExtraction:
    user, reply = make_turn.save(conversation, QUESTION, reply_text)
    Message.objects.filter(pk=reply.pk).update(engine=engine, recalled=recall)
    reply.refresh_from_db()
    return process_turn(enqueue_turn_extraction(user, reply).pk)


def test_sentences_that_quote_recalled_memory_are_not_new():
    reply = (f"您之前提到，{RECALLED_FACT}\n{RECALLED_LAW}\n"
             "建议在7日内向房东寄送书面催告函，要求返还押金，并保留快递单号。")
    new = new_in_reply(reply, [RECALLED_FACT, RECALLED_LAW])
    assert "催告函" in new
    assert "7日内" in new
    assert "墙面污损" not in new
    assert "第七百一十条" not in new
    assert new_in_reply(reply, []) == reply  # nothing recalled: everything is the reply's own


def test_an_offline_composed_answer_gives_no_notes(world, laptop_conversation, make_turn):
    composed = ("【离线引擎】未配置大模型，以下内容由系统根据已召回的记忆整理，并非模型生成。\n\n"
                f"相关法律依据：\n- {RECALLED_LAW}\n\n建议：先核对上述事实与证据是否完整，再决定协商、投诉或诉讼的路径。")
    turn = reply_turn(laptop_conversation, make_turn, composed, engine=OFFLINE_ANSWER_ENGINE,
                      recall=recalled(RECALLED_LAW))
    assert extractable_reply(turn.assistant_message) == ""
    notes = Note.objects.filter(source_id=f"turn:{turn.pk}")
    assert not notes.filter(source_message_ids__contains=[turn.assistant_message.pk]).exists()
    assert not [n.content for n in notes if "第七百一十条" in n.content or "核对上述事实" in n.content]


def test_an_llm_reply_gives_notes_only_for_what_it_adds(world, laptop_conversation, make_turn):
    law = Note.objects.create(firm=world.firm_a, content=RECALLED_LAW, memory_scope="general_law", category="law",
                              owner=world.alice)
    answer = (f"{RECALLED_LAW}\n另外根据《民法典》第五百六十三条，房东迟延履行主要债务，经催告后在合理期限内仍未履行的，"
              "可以解除合同。建议您在3日内寄出书面催告函。")
    turn = reply_turn(laptop_conversation, make_turn, answer, engine="llm:qwen-local",
                      recall=recalled(RECALLED_LAW))
    from_reply = Note.objects.filter(source_id=f"turn:{turn.pk}",
                                     source_message_ids__contains=[turn.assistant_message.pk])
    contents = " ".join(from_reply.values_list("content", flat=True))
    assert "第五百六十三条" in contents  # the statute the reply added
    assert "第七百一十条" not in contents  # the one it only quoted
    law.refresh_from_db()
    assert law.mention_count == Note._meta.get_field("mention_count").default  # not counted again


def test_notes_made_from_echoes_before_are_found_and_deleted_with_an_audit_entry(world, laptop_conversation,
                                                                                make_turn):
    """Notes an older write path made from an offline answer are listed, then deleted and
    audited; a note made from the client's own words is left alone."""
    from django.core.management import call_command

    from memory.models import AuditEvent, AuditLog

    user, reply = make_turn.save(laptop_conversation, QUESTION, "相关法律依据。\n建议：先核对上述事实与证据是否完整。")
    Message.objects.filter(pk=reply.pk).update(engine=OFFLINE_ANSWER_ENGINE)
    echo = Note.objects.create(firm=world.firm_a, content="相关法律依据。", memory_scope="general_law",
                               category="law", owner=world.alice, source_message_ids=[reply.pk])
    client = Note.objects.create(firm=world.firm_a, content="房东一直不回消息。", memory_scope="case", category="fact",
                                 owner=world.alice, matter=world.matter_laptop, source_message_ids=[user.pk])
    call_command("clean_echo_notes")
    assert Note.objects.filter(pk=echo.pk).exists()  # listing changes nothing
    call_command("clean_echo_notes", "--apply")
    assert not Note.objects.filter(pk=echo.pk).exists()
    assert Note.objects.filter(pk=client.pk).exists()
    entry = AuditLog.objects.get(event_type=AuditEvent.NOTE_DELETED, object_id=str(echo.pk))
    assert entry.actor_label == "system:clean_echo_notes"


def test_english_sentences_keep_their_spaces():
    reply = "As you mentioned, the landlord kept the deposit of $2,400. File the claim within 14 days. Keep the receipt."
    assert new_in_reply(reply, ["The landlord kept the deposit of $2,400."]) == (
        "File the claim within 14 days. Keep the receipt.")


def test_a_reply_that_only_quotes_memory_is_not_recalled_beside_what_it_quoted(world, laptop_conversation, make_turn):
    """The turn job marks it: search then returns the memory it quoted, never the quotation too;
    a reply that adds something stays recallable."""
    from remember.message_index import index_messages
    from recall import search_memory

    quoting = reply_turn(laptop_conversation, make_turn, f"您之前提到，{RECALLED_FACT}\n{RECALLED_LAW}",
                         engine="llm:qwen-local", recall=recalled(RECALLED_FACT, RECALLED_LAW))
    adding = reply_turn(laptop_conversation, make_turn, f"{RECALLED_LAW}\n建议您在3日内向房东寄出书面催告函。",
                        engine="llm:qwen-local", recall=recalled(RECALLED_LAW))
    index_messages()

    assert Message.objects.get(pk=quoting.assistant_message.pk).repeats_memory
    assert not Message.objects.get(pk=adding.assistant_message.pk).repeats_memory
    result = search_memory(world.alice, "押金被扣 墙面污损 民法典第七百一十条 催告函", k=50)
    recalled_ids = {pk for hit in result.hits for pk in hit.source_message_ids}
    assert quoting.assistant_message.pk not in recalled_ids
    assert adding.assistant_message.pk in recalled_ids
