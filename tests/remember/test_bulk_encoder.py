"""The bulk import's encoder (docs/performance.md): routing's texts go before queued messages,
and messages queued while the file is stored are embedded with no turn run."""
from __future__ import annotations

import uuid

from infra.embeddings import get_embedder
from memory.models import Message, TurnExtraction
from remember.bulk import BulkRun
from remember.encoder import FILLER_STEP, BackgroundEncoder
from remember.message_index import pending_messages
from memory.services.conversations import NewMessage, save_messages


def test_routing_texts_are_encoded_before_the_messages_queued_ahead_of_them():
    encoder = BackgroundEncoder(get_embedder())
    try:
        # Texts never seen before, so the model really encodes them (tests/embedding_cache.py).
        run = uuid.uuid4().hex[:8]
        messages = [f"alice: 第{i}条消息，关于押金和租期。{run}" for i in range(12 * FILLER_STEP)]
        filler = encoder.submit(messages, urgent=False)
        urgent = encoder.submit(["房东拒绝退还3000元押金。", "房东拒绝退还3000元押金。"])
        vectors = urgent.result(timeout=120)
        assert not filler.done()  # the messages wait: at most one step of them ran first
        assert vectors.shape == (2, encoder.embedder.dimensions)
        assert (vectors[0] == vectors[1]).all()
        assert filler.result(timeout=300).shape == (len(messages), encoder.embedder.dimensions)
        assert encoder.encoded == len(messages) + 1  # each distinct text once
        late = encoder.submit([messages[0]], urgent=False)
        assert late.result(timeout=60).shape == (1, encoder.embedder.dimensions)
        assert encoder.encoded == len(messages) + 1
    finally:
        encoder.close()


def test_messages_queued_while_stored_are_embedded_without_any_turn_running(world):
    from tests.remember.factories import ConversationFactory

    conversation = ConversationFactory(firm=world.firm_a, user=world.alice, matter=world.matter_laptop)
    save_messages(conversation, [NewMessage("user", "押金是3000元。", speaker="alice", external_id="m1"),
                                 NewMessage("assistant", "请保留转账记录。", speaker="assistant", external_id="m2")])
    assert pending_messages().count() == 2
    with BulkRun() as run:
        run.queue_messages(Message.objects.filter(conversation=conversation))
        run.store_messages(wait=True)
    assert run.outcome.messages_indexed == 2
    assert not pending_messages().exists()
    assert not TurnExtraction.objects.exists()
